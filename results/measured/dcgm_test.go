package measured

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results/runfiles"
)

func tel(gpus ...[]policies.Sample) *runfiles.Telemetry {
	for _, g := range gpus {
		for k := range g {
			g[k].At = time.Duration(k) * time.Second
		}
	}
	return &runfiles.Telemetry{S: gpus}
}

// Two GPUs over 4 s: GPU 0 holds job 0 from 0 s and job 1 from 2 s, GPU 1
// job 2 from 1 s to 3 s.
func TestDepthsAndSignals(t *testing.T) {
	s := func(a, o, d float64) policies.Sample { return policies.Sample{SMACT: a, SMOCC: o, DRAMA: d} }
	tl := tel(
		[]policies.Sample{s(0.5, 0.2, 0.2), s(0.5, 0.2, 0.2), s(0.9, 0.4, 0.1), s(0.9, 0.1, 0.6)},
		[]policies.Sample{s(0, 0, 0), s(0.7, 0.5, 0.1), s(0.7, 0.1, 0.1), s(0, 0, 0)},
	)
	att := []runfiles.Attempt{
		{Job: 0, GPUs: []int{0}, Start: 0, End: -1},
		{Job: 1, GPUs: []int{0}, Start: 1.5, End: 4},
		{Job: 2, GPUs: []int{1}, Start: 1, End: 3},
	}
	rows := Depths([]*runfiles.Telemetry{tl}, [][]runfiles.Attempt{att}, [3]float64{0.65, 0.35, 0.5})
	require.Equal(t, []DepthRow{
		{Depth: 0, Share: 2.0 / 8, Mean: [3]float64{0, 0, 0}},
		{Depth: 1, Share: 4.0 / 8, Mean: [3]float64{(0.5 + 0.5 + 0.7 + 0.7) / 4, (0.2 + 0.2 + 0.5 + 0.1) / 4, (0.2 + 0.2 + 0.1 + 0.1) / 4}, OverRule: 0.25},
		{Depth: 2, Share: 2.0 / 8, Mean: [3]float64{0.9, 0.25, 0.35}, OverRule: 1},
	}, roundRows(rows))
	sig := SignalsOf(tl)
	require.InDelta(t, (0.5+0.5+0.9+0.9+0.7+0.7)/8, sig.Mean[0], 1e-12)
	require.InDelta(t, 0.6, sig.P50[0], 1e-12)
	require.Equal(t, 0.0, MeanAbsError(sig, sig))
	r := Readings{Measured: &sig, Ours: []Signals{sig}, Depth: rows, Tau: [3]float64{0.65, 0.35, 0.5}}
	var b strings.Builder
	require.NoError(t, r.WriteMarkdown(&b))
	require.Contains(t, b.String(), "| 2 | 0.250 | 0.90 | 0.25 | 0.35 | 1.00 |")
	require.Contains(t, b.String(), "Mean |ours − measured| over the three signals and statistics: 0.000.")
}

func roundRows(rows []DepthRow) []DepthRow {
	r := func(x float64) float64 { return float64(int64(x*1e9+0.5)) / 1e9 }
	for i := range rows {
		rows[i].Share, rows[i].OverRule = r(rows[i].Share), r(rows[i].OverRule)
		for k := range rows[i].Mean {
			rows[i].Mean[k] = r(rows[i].Mean[k])
		}
	}
	return rows
}

func TestReadDCGM(t *testing.T) {
	head := "trace,raw_label,metric,column,stat,value\n"
	var b strings.Builder
	b.WriteString(head)
	for _, m := range SignalNames {
		for j, st := range []string{"mean", "p50", "p95", "max"} {
			b.WriteString("philly,run_a," + m + "," + m + "," + st + "," + []string{"0.1", "0.2", "0.3", "0.4"}[j] + "\n")
			b.WriteString("saturn,run_a," + m + "," + m + "," + st + ",0.9\n")
		}
	}
	b.WriteString("philly,run_a,power,power,mean,250\n")
	s, err := ReadDCGM("d.csv", strings.NewReader(b.String()), "philly", "run_a")
	require.NoError(t, err)
	require.Equal(t, Signals{Mean: [3]float64{0.1, 0.1, 0.1}, P50: [3]float64{0.2, 0.2, 0.2}, P95: [3]float64{0.3, 0.3, 0.3}}, s)
	_, err = ReadDCGM("d.csv", strings.NewReader(b.String()), "venus", "run_a")
	require.ErrorContains(t, err, `d.csv: no smact mean row for trace "venus", run "run_a"`)
	_, err = ReadDCGM("d.csv", strings.NewReader(head+"philly,run_a,smact,smact,mean,x\n"), "philly", "run_a")
	require.ErrorContains(t, err, "d.csv:2: column value")
}
