package experiments

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

func summary(t *testing.T, trace string, params map[string]string) results.Summary {
	t.Helper()
	tr, err := traces.Load(trace)
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "aegis", Params: params, Seed: 42}, nil)
	require.NoError(t, err)
	require.Equal(t, len(tr.Jobs), o.Summary.Finished, "every job finishes")
	return o.Summary
}

// The AEGIS acceptance properties on the paper's three traces, where they
// follow from the mechanisms:
//   - Est-free measures memory instead of estimating it, so jobs that start
//     ramping next to a co-runner can OOM; recovery retries them
//     exclusively, where they fit, so every failed attempt is recovered.
//   - PeakMem demands the profiled peak in measured free memory, and the
//     observation hold (30 s) outlasts the memory ramp (15 s), so what it
//     measures already includes its co-runners' peaks: no OOM.
//   - RR places with no memory check, so it fails more often than MFM.
//   - The pressure filter turns GPUs away on every trace (pressure
//     deferrals), and without it (NF) nothing is deferred for pressure.
//     (Whether that stretches execution depends on what the filter sees:
//     since jobs show their measured solo windows, heavy CNNs score under
//     τ1 and the filter admits next to them, so at seed 42 the filter's mean
//     exec over the three traces, 9,403 s, exceeds NF's, 9,363 s;
//     docs/crowding.md.)
func TestAegisMechanismsOnPaperTraces(t *testing.T) {
	var failsMFM, failsRR, failsEstFree int
	for _, trace := range []string{"philly", "saturn", "venus"} {
		t.Run(trace, func(t *testing.T) {
			est := summary(t, trace, nil)
			require.Equal(t, est.FailedAttempts, est.RecoveredAttempts)
			require.Zero(t, est.SharedRetries, "recovery=exclusive retries alone")
			require.Equal(t, est.FailedAttempts, est.ExclusiveRetries)
			failsEstFree += est.FailedAttempts
			failsMFM += est.FailedAttempts

			peak := summary(t, trace, map[string]string{"memory": "peakmem"})
			require.Zero(t, peak.FailedAttempts)

			rr := summary(t, trace, map[string]string{"placement": "rr"})
			require.Equal(t, rr.FailedAttempts, rr.RecoveredAttempts)
			failsRR += rr.FailedAttempts

			nf := summary(t, trace, map[string]string{"filter": "nf"})
			require.Positive(t, est.DeferralDecisions["pressure"])
			require.Zero(t, nf.DeferralDecisions["pressure"])
		})
	}
	require.Positive(t, failsEstFree)
	require.Greater(t, failsRR, failsMFM)
}

// With recovery=ladder, retries may collocate at the ladder's free-memory
// levels; every failed attempt is still recovered.
func TestAegisLadderRecovery(t *testing.T) {
	s := summary(t, "philly", map[string]string{"recovery": "ladder"})
	require.Positive(t, s.SharedRetries)
	require.Equal(t, s.FailedAttempts, s.RecoveredAttempts)
}

// prober wraps a policy and reads every GPU's last 100 samples before each
// decision: asking for telemetry must not change the run.
type prober struct{ policies.Policy }

func (p prober) Schedule(v *policies.View) []policies.Action {
	for g := range v.GPUs {
		v.Telemetry.Samples(nil, g, 100)
	}
	return p.Policy.Schedule(v)
}

func TestReadingTelemetryChangesNothing(t *testing.T) {
	run := func(probe bool) string {
		tr, err := traces.Load("saturn")
		require.NoError(t, err)
		srv, err := models.ParseServer("a100-40gb:3")
		require.NoError(t, err)
		cat, err := models.CatalogFor(srv.Type)
		require.NoError(t, err)
		specs := make([]traces.Job, len(tr.Jobs))
		for i, j := range tr.Jobs {
			specs[i] = traces.Job{ID: j.ID, Workload: j.Workload, GPUs: j.GPUs, Submit: j.Submit}
		}
		s, err := sim.New(sim.Config{Server: srv, Catalog: cat, Interference: models.DefaultInterference(),
			Truth: sim.DefaultTruth(), Seed: 5}, specs)
		require.NoError(t, err)
		var p policies.Policy
		p, err = registry.New("aegis", nil)
		require.NoError(t, err)
		if probe {
			p = prober{p}
		}
		var ev bytes.Buffer
		col := results.NewCollector(s.Jobs(), results.NewEventLog(&ev))
		require.NoError(t, loop.Run(context.Background(), s, p, col))
		var jobs bytes.Buffer
		require.NoError(t, results.WriteJobsCSV(&jobs, col.Jobs()))
		return jobs.String()
	}
	require.Equal(t, run(false), run(true))
}

// With run-to-run variation of true peaks, PeakMem's profiled peaks can be
// exceeded: collocations then OOM and are recovered. Recovery holds for every
// seed (a varied peak never exceeds the GPU, so a retry alone fits); whether
// a seed sees an OOM at all depends on which jobs draw high peaks while they
// share a GPU, so OOMs are required over the seeds together, not per seed.
func TestPeakMemWithPeakJitter(t *testing.T) {
	tr, err := traces.Load("saturn")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	truth, err := sim.ParseTruth(map[string]string{"peak_jitter": "0.5"})
	require.NoError(t, err)
	failed := 0
	for seed := uint64(1); seed <= 6; seed++ {
		o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "aegis", Params: map[string]string{"memory": "peakmem"},
			Seed: seed, Truth: &truth}, nil)
		require.NoError(t, err)
		require.Equal(t, o.Summary.FailedAttempts, o.Summary.RecoveredAttempts, "seed %d", seed)
		require.Zero(t, o.Summary.Stopped, "seed %d", seed)
		failed += o.Summary.FailedAttempts
	}
	require.Positive(t, failed)
}
