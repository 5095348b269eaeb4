package stability_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results/runfiles"
	"github.com/aegis-sched/aegis/results/stability"
	"github.com/aegis-sched/aegis/traces"
)

// series makes n seconds of telemetry with SMACT f(k) and the other signals
// derived from it.
func series(n int, f func(k int) float64) []policies.Sample {
	s := make([]policies.Sample, n)
	for k := range s {
		v := f(k)
		s[k] = policies.Sample{SMACT: v, SMOCC: v / 2, DRAMA: v / 4, UtilPct: 100 * v}
	}
	return s
}

func att(job int, gpus []int, active, end float64) runfiles.Attempt {
	return runfiles.Attempt{Job: job, Attempt: 1, GPUs: gpus, Start: active - 5, Active: active, End: end, Outcome: "finished"}
}

func byKey(pts []stability.Point) map[[2]any]stability.Point {
	m := map[[2]any]stability.Point{}
	for _, p := range pts {
		m[[2]any{p.WindowS, p.Signal}] = p
	}
	return m
}

func TestConstantSignalHasNoError(t *testing.T) {
	r := stability.Run{Name: "r", Tel: &runfiles.Telemetry{S: [][]policies.Sample{series(500, func(k int) float64 {
		if k < 5 {
			return 0
		}
		return 0.6
	})}}, Attempts: []runfiles.Attempt{att(0, []int{0}, 5, 450)}}
	pts, err := stability.Compute(stability.DefaultConfig(), r)
	require.NoError(t, err)
	require.Len(t, pts, 12*len(stability.Signals))
	for _, p := range pts {
		require.InDelta(t, 0, p.WMAE, 1e-12, "%+v", p)
		require.Equal(t, 1, p.Anchors)
	}
}

// The window error is the anchored window's score (what the policy scores:
// the samples after the anchor, up to the decision) against the reference,
// weighted by how long each mix lasted; mixes shorter than the reference
// are left out.
func TestWindowErrorsAndWeights(t *testing.T) {
	const a = 10 // anchor second on GPU 0
	transient := func(k int) float64 {
		switch {
		case k < a:
			return 0
		case k < a+15:
			return 1 // a start-up burst
		}
		return 0.5
	}
	gpu0 := series(1200, transient)
	gpu1 := series(1200, func(int) float64 { return 0.3 })
	r := stability.Run{Name: "r", Tel: &runfiles.Telemetry{S: [][]policies.Sample{gpu0, gpu1}},
		Attempts: []runfiles.Attempt{
			att(0, []int{0}, a, 1010),    // mix of 1000 s on GPU 0
			att(1, []int{1}, 100, 400),   // 300 s alone on GPU 1 ...
			att(2, []int{1}, 400, 450),   // ... then a 50 s mix: too short, left out
			att(3, []int{1}, 1100, 1200), // 100 s, up to the telemetry's end: left out
		}}
	c := stability.Config{Windows: []int{10, 30, 120}, Reference: 200}
	pts, err := stability.Compute(c, r)
	require.NoError(t, err)
	got := byKey(pts)
	score := func(from, to int) float64 { // seconds [from, to]
		var xs []float64
		for k := from; k <= to; k++ {
			xs = append(xs, gpu0[k].SMACT)
		}
		return policies.Score(xs, nil)
	}
	ref := score(a+1, a+200)
	for _, w := range c.Windows {
		// GPU 1's constant mix adds weight 300 with zero error.
		want := 1000 * math.Abs(score(a+1, a+w)-ref) / (1000 + 300)
		require.InDelta(t, want, got[[2]any{w, "smact"}].WMAE, 1e-12, "window %d", w)
		require.InDelta(t, want/2, got[[2]any{w, "smocc"}].WMAE, 1e-12)
		require.InDelta(t, want, got[[2]any{w, "util"}].WMAE, 1e-12, "util is scored as a fraction")
		require.Equal(t, 2, got[[2]any{w, "smact"}].Anchors)
	}
	require.Greater(t, got[[2]any{10, "smact"}].WMAE, got[[2]any{120, "smact"}].WMAE)
}

func TestComputeErrors(t *testing.T) {
	r := stability.Run{Name: "r", Tel: &runfiles.Telemetry{S: [][]policies.Sample{series(10, func(int) float64 { return 0 })}}}
	_, err := stability.Compute(stability.Config{Windows: []int{300}, Reference: 200}, r)
	require.ErrorContains(t, err, "window 300 s")
	_, err = stability.Compute(stability.Config{Reference: 200}, r)
	require.Error(t, err)
	_, err = stability.Compute(stability.DefaultConfig(), stability.Run{Name: "empty"})
	require.ErrorContains(t, err, "run empty has no telemetry")
}

// End to end: a simulated run's telemetry.csv and events.jsonl give a
// stability.csv with every window and signal.
func TestWriteDirFromSimulatedRun(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	var ev, tel bytes.Buffer
	_, err = assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "aegis", Seed: 1, Telemetry: &tel}, &ev)
	require.NoError(t, err)
	run := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(run, "telemetry.csv"), tel.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(run, "events.jsonl"), ev.Bytes(), 0o644))
	out := t.TempDir()
	require.NoError(t, stability.WriteDir(out, stability.DefaultConfig(), run))
	b, err := os.ReadFile(filepath.Join(out, "stability.csv"))
	require.NoError(t, err)
	tb, err := runfiles.ParseTable("stability.csv", bytes.NewReader(b), "window_s", "signal", "wmae")
	require.NoError(t, err)
	require.Equal(t, 12*len(stability.Signals), tb.Len())
	first, err := tb.Float(0, "wmae")
	require.NoError(t, err)
	last, err := tb.Float(tb.Len()-len(stability.Signals), "wmae")
	require.NoError(t, err)
	require.Greater(t, first, last, "a 10 s window errs more than a 120 s one on noisy telemetry")
	require.True(t, strings.HasPrefix(string(b), "window_s,signal,wmae,anchors\n10,smact,"))
	n, err := tb.Int(0, "anchors")
	require.NoError(t, err)
	require.Greater(t, n, 10)

	_, err = stability.ReadRun(t.TempDir())
	require.ErrorContains(t, err, "telemetry.csv")
}
