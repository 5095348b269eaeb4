package models

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPower(t *testing.T) {
	m := &PowerModel{GPU: "g", IdleW: 60, BusyW: 100, SMACTW: 10, DRAMAW: 20, SMOCCW: 30, MemWPerGiB: 2, BoardW: 300}
	for _, tc := range []struct {
		name string
		a    Activity
		want float64
	}{
		{"idle: no job, whatever the signals", Activity{SMACT: 1, MemGiB: 40}, 60},
		{"busy", Activity{Busy: true}, 160},
		{"each term", Activity{Busy: true, SMACT: 0.5, DRAMA: 0.5, SMOCC: 0.5, MemGiB: 10}, 160 + 5 + 10 + 15 + 20},
		{"capped at the board limit", Activity{Busy: true, SMACT: 1, DRAMA: 1, SMOCC: 1, MemGiB: 40}, 300},
	} {
		t.Run(tc.name, func(t *testing.T) { require.InDelta(t, tc.want, m.Power(tc.a), 1e-9) })
	}
}

func TestPowerFor(t *testing.T) {
	a, err := LookupGPU("a100-40gb")
	require.NoError(t, err)
	m, err := PowerFor(a)
	require.NoError(t, err)
	require.Same(t, A100Power(), m)
	require.NoError(t, m.Check(40))
	for _, n := range []string{"legacy-11gb", "h200-141gb"} {
		g, err := LookupGPU(n)
		require.NoError(t, err)
		_, err = PowerFor(g)
		require.ErrorIs(t, err, ErrNoPower)
		require.Contains(t, err.Error(), n)
	}
}

func TestReadPowerModelErrors(t *testing.T) {
	base := "gpu: g\nidle_w: 60\nbusy_w: 100\nboard_w: 400\n"
	_, err := ReadPowerModel([]byte(base), "p.yaml")
	require.NoError(t, err)
	for _, tc := range []struct{ in, err string }{
		{"gpu: g\nidle_w: 60\nboard_w: 400\n", "p.yaml:1: missing required key busy_w"},
		{base + "watts: 3\n", "watts"},
		{strings.Replace(base, "idle_w: 60", "idle_w: 500", 1), "idle_w 500.0 W"},
		{base + "smact_w: -5\n", "smact_w -5.00: negative"},
		{base + "smact_w: 300\n", "full-load power 460.0 W: above board_w 400 W"},
	} {
		_, err := ReadPowerModel([]byte(tc.in), "p.yaml")
		require.ErrorContains(t, err, tc.err, tc.in)
	}
}

// TestFitPowerRecovers fits runs made from a known model whose power
// depends on memory only: the fit keeps mem, drops the other terms, and
// finds the parameters.
func TestFitPowerRecovers(t *testing.T) {
	truth := &PowerModel{IdleW: 55, BusyW: 120, MemWPerGiB: 3, BoardW: 400}
	var b strings.Builder
	b.WriteString(strings.Join(powerRunColumns, ",") + "\n")
	for i := range 8 {
		a := Activity{Busy: true, SMACT: 0.3 + 0.05*float64(i%3), SMOCC: 0.2 + 0.03*float64(i%4), DRAMA: 0.25 + 0.01*float64(i%5), MemGiB: 10 + 2.5*float64(i)}
		f := 0.8 + 0.01*float64(i)
		r := PowerRun{GPUs: 3, DurationS: 30000, ActiveFrac: f, Active: a}
		e := truth.PredictEnergy(&r)
		active := truth.Power(a)
		fmt.Fprintf(&b, "tr%d,run%d,%v,%v,%v,%v,%v,3,%v,%v,%v,%v\n", i%2, i, r.DurationS, f, (1-f)*truth.IdleW+f*active, active, e, a.SMACT, a.SMOCC, a.DRAMA, a.MemGiB)
	}
	runs, err := ReadPowerRuns(strings.NewReader(b.String()), "runs.csv")
	require.NoError(t, err)
	fit, err := FitPower(runs, "g", "test", 400, 40)
	require.NoError(t, err)
	require.Equal(t, []string{"mem"}, fit.Model.Fit.Terms)
	require.InDelta(t, 55, fit.Model.IdleW, 1e-6)
	require.InDelta(t, 120, fit.Model.BusyW, 1e-6)
	require.InDelta(t, 3, fit.Model.MemWPerGiB, 1e-6)
	require.Less(t, fit.Chosen.LOOMedian, 1e-9)
}

func TestReadPowerRunsErrors(t *testing.T) {
	head := strings.Join(powerRunColumns, ",") + "\n"
	for _, tc := range []struct{ in, err string }{
		{"trace\n", `runs.csv: header: missing column "raw_label"`},
		{head, "runs.csv: no runs"},
		{head + "p,x,100,0.5,200,250,60000,3,0.5,0.2,0.3,10\n", ""},
		{head + "p,x,100,1,200,250,60000,3,0.5,0.2,0.3,10\n", "runs.csv:2: active_row_fraction: 1: want in (0, 1)"},
		{head + "p,x,abc,0.5,200,250,60000,3,0.5,0.2,0.3,10\n", `runs.csv:2: window_duration_s: "abc"`},
		{head + "p,x,100,0.5,200,250,60000,2.5,0.5,0.2,0.3,10\n", "energy_gpu_count: 2.5"},
		{head + "p,x,100,0.5,100,250,60000,3,0.5,0.2,0.3,10\n", "imply idle power -50.0 W"},
	} {
		_, err := ReadPowerRuns(strings.NewReader(tc.in), "runs.csv")
		if tc.err == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, tc.err)
		require.False(t, errors.Is(err, ErrNoPower))
	}
}
