package experiments

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/runfiles"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// seen records the newest sample of every GPU at each decision, as the
// policy's view gives it.
type seen struct {
	policies.Policy
	got map[[2]int64]policies.Sample
}

func (s seen) Schedule(v *policies.View) []policies.Action {
	sec := int64(v.Now / time.Second)
	for g := range v.GPUs {
		if x := v.Telemetry.Samples(nil, g, 1); len(x) == 1 {
			s.got[[2]int64{int64(g), sec}] = x[0]
		}
	}
	return s.Policy.Schedule(v)
}

// telemetryRun runs the demo trace under AEGIS, optionally writing
// telemetry.csv and wrapping the policy; it returns jobs.csv, summary.csv,
// events.jsonl and telemetry.csv.
func telemetryRun(t *testing.T, telemetry bool) (out [4]string) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	var ev, tel, jb, sm bytes.Buffer
	r := assemble.Run{Trace: tr, Server: srv, Policy: "aegis", Seed: 3}
	if telemetry {
		r.Telemetry = &tel
	}
	o, err := assemble.Simulate(context.Background(), r, &ev)
	require.NoError(t, err)
	require.NoError(t, results.WriteJobsCSV(&jb, o.Jobs))
	require.NoError(t, results.WriteSummaryCSV(&sm, o.Summary))
	return [4]string{jb.String(), sm.String(), ev.String(), tel.String()}
}

func TestTelemetryChangesNothingElse(t *testing.T) {
	without := telemetryRun(t, false)
	with := telemetryRun(t, true)
	again := telemetryRun(t, true)
	require.Equal(t, without[:3], with[:3], "writing telemetry.csv changed another output")
	require.Equal(t, with[3], again[3], "telemetry.csv is not deterministic")
	require.Empty(t, without[3])
	tel, err := runfiles.ParseTelemetry("telemetry.csv", strings.NewReader(with[3]))
	require.NoError(t, err)
	require.Equal(t, 3, tel.GPUs())
	// Every GPU has every second up to the run's last event.
	evs, err := runfiles.ParseEvents("events.jsonl", strings.NewReader(with[2]))
	require.NoError(t, err)
	last := int(evs[len(evs)-1].T)
	for g := range 3 {
		require.Len(t, tel.S[g], last+1, "GPU %d", g)
	}
	require.Equal(t, 1+3*(last+1), strings.Count(with[3], "\n"))
}

// TestTelemetryPower checks telemetry.csv's power_w (results.PowerColumn,
// last, as aegis exec writes it) against the run's metered energy: each
// GPU's second is charged what the meter charges it, so the column summed
// over every row is the summary's energy_j plus the idle power of the GPUs
// before the first submission and from the last finish to the end of the
// last row's second (energy_j covers the first submission to the last
// finish), to the column's rounding (0.05 W a row). A GPU type without a
// power model (h200-141gb) leaves the cells empty.
func TestTelemetryPower(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	for _, tc := range []struct {
		server string
		idleW  float64 // 0: no power model
	}{
		{"a100-40gb:3", models.A100Power().IdleW},
		{"h200-141gb:2", 0},
	} {
		t.Run(tc.server, func(t *testing.T) {
			srv, err := models.ParseServer(tc.server)
			require.NoError(t, err)
			var tel bytes.Buffer
			o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "aegis", Seed: 3, Telemetry: &tel}, nil)
			require.NoError(t, err)
			head, _, _ := strings.Cut(tel.String(), "\n")
			require.Equal(t, strings.Join(append(append([]string(nil), results.TelemetryColumns...), results.PowerColumn), ","), head)
			tab, err := runfiles.ParseTable("telemetry.csv", &tel, results.PowerColumn)
			require.NoError(t, err)
			require.Greater(t, tab.Len(), 100)
			var sum float64
			for i := range tab.Len() {
				w, err := tab.OptFloat(i, results.PowerColumn)
				require.NoError(t, err)
				if tc.idleW == 0 {
					require.True(t, math.IsNaN(w), "row %d: power %v without a power model", i, w)
					continue
				}
				require.False(t, math.IsNaN(w), "row %d: no power", i)
				sum += w
			}
			if tc.idleW == 0 {
				require.Nil(t, o.Summary.Energy)
				return
			}
			require.NotNil(t, o.Summary.Energy)
			first := tr.Jobs[0].Submit
			for _, j := range tr.Jobs {
				first = min(first, j.Submit)
			}
			rows := float64(tab.Len()) / float64(srv.GPUs) // seconds per GPU
			idle := float64(srv.GPUs) * tc.idleW * (first.Seconds() + rows - (first.Seconds() + o.Summary.MakespanS))
			require.InDelta(t, o.Summary.Energy.J+idle, sum, 0.05*float64(tab.Len()), "power_w summed vs energy_j")
		})
	}
}

// The telemetry written is the telemetry the policy decides on.
func TestTelemetryIsWhatPoliciesSee(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	cat, err := models.CatalogFor(srv.Type)
	require.NoError(t, err)
	specs := make([]traces.Job, len(tr.Jobs))
	for i, j := range tr.Jobs {
		specs[i] = traces.Job{ID: j.ID, Workload: j.Workload, GPUs: j.GPUs, Submit: j.Submit}
	}
	var tel bytes.Buffer
	tw := results.NewTelemetryWriter(&tel, results.TelemetryPower)
	s, err := sim.New(sim.Config{Server: srv, Catalog: cat, Interference: models.DefaultInterference(),
		Truth: sim.DefaultTruth(), Seed: 3, Samples: tw.SamplePower}, specs)
	require.NoError(t, err)
	p, err := registry.New("aegis", nil)
	require.NoError(t, err)
	rec := seen{Policy: p, got: map[[2]int64]policies.Sample{}}
	require.NoError(t, loop.Run(context.Background(), s, rec, results.NewCollector(s.Jobs())))
	require.NoError(t, tw.Flush())
	parsed, err := runfiles.ParseTelemetry("telemetry.csv", &tel)
	require.NoError(t, err)
	require.Greater(t, len(rec.got), 100)
	active := 0
	for k, want := range rec.got {
		got := parsed.S[k[0]][k[1]]
		require.InDelta(t, want.SMACT, got.SMACT, 5e-5, "GPU %d second %d", k[0], k[1])
		require.InDelta(t, want.SMOCC, got.SMOCC, 5e-5)
		require.InDelta(t, want.DRAMA, got.DRAMA, 5e-5)
		require.InDelta(t, want.UtilPct, got.UtilPct, 5e-3)
		require.InDelta(t, want.UsedMiB, got.UsedMiB, 0.05)
		if want.SMACT > 0 {
			active++
		}
	}
	require.Greater(t, active, 50)
}

// BenchmarkTelemetry is the cost of writing telemetry.csv: AEGIS on the
// Philly trace (3 × A100, about 27,700 simulated seconds) with and without it.
func BenchmarkTelemetry(b *testing.B) {
	tr, err := traces.Load("philly")
	require.NoError(b, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(b, err)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				r := assemble.Run{Trace: tr, Server: srv, Policy: "aegis", Seed: 42}
				if on {
					r.Telemetry = io.Discard
				}
				if _, err := assemble.Simulate(context.Background(), r, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
