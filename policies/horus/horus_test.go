package horus_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
	"github.com/aegis-sched/aegis/policies/horus"
	"github.com/aegis-sched/aegis/traces"
)

const capMiB = 40960

// on describes a job for a hand-built View: its profiled utilization and
// peak, and the GPUs it runs on (none: pending, in queue order).
type on struct {
	util, peak float64
	gpus       []int
}

// noSamples is a Telemetry with no samples: Horus reads profiles only.
type noSamples struct{}

func (noSamples) Samples(dst []policies.Sample, _, _ int) []policies.Sample { return dst }

// world builds a View of n 40 GB GPUs an hour into the run, every running
// job long out of its observation hold.
func world(n int, jobs ...on) *policies.View {
	v := &policies.View{Now: time.Hour, Telemetry: noSamples{}, Pressure: true}
	for g := range n {
		v.GPUs = append(v.GPUs, policies.GPU{Index: g, CapacityMiB: capMiB})
	}
	for i, spec := range jobs {
		j := policies.Job{ID: policies.JobID(i), GPUs: max(1, len(spec.gpus)), State: policies.Pending,
			Profile: policies.Profile{UtilPct: spec.util, PeakMiB: spec.peak, SoloS: 600}}
		if len(spec.gpus) == 0 {
			v.Queue = policies.ListOf(append(v.Queue.AppendTo(nil), j.ID)...)
		} else {
			j.State, j.On, j.Active, j.Attempts = policies.Running, spec.gpus, true, 1
			for _, g := range spec.gpus {
				v.GPUs[g].Jobs = append(v.GPUs[g].Jobs, j.ID)
			}
		}
		v.Jobs = append(v.Jobs, j)
	}
	return v
}

// newHorus returns the rule and the scheduler that params configure.
func newHorus(t *testing.T, params map[string]string) (horus.Rule, *colloc.Scheduler) {
	t.Helper()
	c, err := horus.ReadConfig(policies.NewParams(params))
	require.NoError(t, err)
	s, err := horus.New(params)
	require.NoError(t, err)
	require.Equal(t, c.Config, s.Config())
	return horus.Rule{Config: c}, s.Scheduler
}

func rule(t *testing.T, params map[string]string) *horus.Rule {
	r, _ := newHorus(t, params)
	return &r
}

func sched(t *testing.T, params map[string]string) *colloc.Scheduler {
	_, s := newHorus(t, params)
	return s
}

var original = map[string]string{"variant": "original"}

// The candidate is always the last job; GPU 0 is the one asked about.
func TestAdmit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		params  map[string]string
		running []on
		cand    on
		want    colloc.Reason
	}{
		{"paper: util sum exactly 100", nil, []on{{60, 1000, []int{0}}}, on{util: 40}, ""},
		{"paper: util sum 100.01", nil, []on{{60, 1000, []int{0}}}, on{util: 40.01}, "utilization"},
		{"paper: three jobs summing to 100", nil, []on{{33.3, 1000, []int{0}}, {33.3, 1000, []int{0}}}, on{util: 33.4}, ""},
		{"paper: memory is not checked", nil, []on{{10, 40000, []int{0}}}, on{util: 10, peak: 40000}, ""},
		{"paper: no job cap", nil, []on{{10, 0, []int{0}}, {10, 0, []int{0}}, {10, 0, []int{0}}}, on{util: 10}, ""},
		{"paper: util_cap 80", map[string]string{"util_cap": "80"}, []on{{60, 0, []int{0}}}, on{util: 20.5}, "utilization"},
		{"paper: a 2-GPU neighbour counts", nil, []on{{70, 0, []int{0, 1}}}, on{util: 30.01}, "utilization"},
		{"original: third job admitted", original, []on{{10, 0, []int{0}}, {10, 0, []int{0}}}, on{util: 10}, ""},
		{"original: fourth job rejected", original, []on{{10, 0, []int{0}}, {10, 0, []int{0}}, {10, 0, []int{0}}}, on{util: 10}, "jobs"},
		{"original: max_jobs 2", map[string]string{"variant": "original", "max_jobs": "2"}, []on{{10, 0, []int{0}}, {10, 0, []int{0}}}, on{util: 10}, "jobs"},
		{"original: headroom exactly 500", original, []on{{10, 20000, []int{0}}}, on{util: 10, peak: capMiB - 500 - 20000}, ""},
		{"original: headroom 499", original, []on{{10, 20000, []int{0}}}, on{util: 10, peak: capMiB - 500 - 20000 + 1}, "memory"},
		{"original: headroom_mib 0", map[string]string{"variant": "original", "headroom_mib": "0"}, []on{{10, 20000, []int{0}}}, on{util: 10, peak: capMiB - 20000}, ""},
		{"original: over 100 % admitted", original, []on{{90, 1000, []int{0}}}, on{util: 90}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := world(2, append(tc.running, tc.cand)...)
			j := v.Job(v.Queue.At(0))
			require.Equal(t, tc.want, rule(t, tc.params).Admit(v, j, 0))
		})
	}
}

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		params  map[string]string
		running []on
		cand    on
		want    float64
	}{
		{"paper: projected utilization", nil, []on{{35, 9000, []int{0}}}, on{util: 40, peak: 4000}, 75},
		{"paper: two neighbours", nil, []on{{20, 0, []int{0}}, {30, 0, []int{0}}}, on{util: 25}, 75},
		// 1.3·(10240+10240)/40960 + (100−80)/100 + 1 job
		{"original: under 100 %", original, []on{{40, 10240, []int{0}}}, on{util: 40, peak: 10240}, 1.3*0.5 + 0.2 + 1},
		{"original: exactly 100 %", original, []on{{60, 4096, []int{0}}}, on{util: 40, peak: 4096}, 1.3*0.2 + 0 + 1},
		// over 100: 1.6·(130−100)/100
		{"original: over 100 %", original, []on{{70, 8192, []int{0}}}, on{util: 60, peak: 0}, 1.3*0.2 + 1.6*0.3 + 1},
		{"original: two running jobs", original, []on{{10, 0, []int{0}}, {10, 0, []int{0}}}, on{util: 30, peak: 20480}, 1.3*0.5 + 0.5 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := world(2, append(tc.running, tc.cand)...)
			j := v.Job(v.Queue.At(0))
			require.InDelta(t, tc.want, rule(t, tc.params).Score(v, j, 0), 1e-12)
		})
	}
}

// placed returns the Place actions of a decision.
func placed(acts []policies.Action) []policies.Action {
	var out []policies.Action
	for _, a := range acts {
		if a.Kind == policies.Place {
			out = append(out, a)
		}
	}
	return out
}

// With every GPU busy, the paper variant picks the lowest projected
// utilization; the original variant weighs in memory and job counts.
func TestScheduleChoosesLowestScore(t *testing.T) {
	running := []on{
		{50, 2000, []int{0}},
		{30, 30000, []int{1}},
		{20, 1000, []int{2}}, {20, 1000, []int{2}},
	}
	v := world(3, append(running, on{util: 20, peak: 2000})...)
	require.Equal(t, []policies.Action{{Kind: policies.Place, Job: 4, GPUs: []int{1}}}, placed(sched(t, nil).Schedule(v)))
	// original costs: GPU 0 1.3·0.098+0.3+1 = 1.43, GPU 1 1.3·0.78+0.5+1 = 2.52,
	// GPU 2 1.3·0.098+0.4+2 = 2.53.
	require.Equal(t, []policies.Action{{Kind: policies.Place, Job: 4, GPUs: []int{0}}}, placed(sched(t, original).Schedule(v)))
}

// The original variant looks past a blocked head (up to 5 queued jobs);
// the paper variant blocks behind it.
func TestLookahead(t *testing.T) {
	full := []on{{50, 39000, []int{0}}} // no memory left under the 500 MiB headroom
	queue := []on{{util: 10, peak: 2000}, {util: 10, peak: 2000}, {util: 10, peak: 2000}, {util: 10, peak: 2000}, {util: 10, peak: 2000}, {util: 10, peak: 100}}
	v := world(1, append(full, queue...)...)
	require.Empty(t, placed(sched(t, original).Schedule(v)), "the sixth job is past the lookahead")
	v = world(1, append(full, append(queue[:4:4], on{util: 10, peak: 100})...)...)
	require.Equal(t, []policies.Action{{Kind: policies.Place, Job: 5, GPUs: []int{0}}}, placed(sched(t, original).Schedule(v)))
	v = world(1, on{95, 1000, []int{0}}, on{util: 10}, on{util: 5})
	require.Empty(t, placed(sched(t, nil).Schedule(v)), "paper: strict FIFO")
	require.Equal(t, []policies.Action{{Kind: policies.Place, Job: 2, GPUs: []int{0}}}, placed(sched(t, map[string]string{"lookahead": "2"}).Schedule(v)))
}

func TestNew(t *testing.T) {
	p := rule(t, nil)
	require.Equal(t, horus.Paper, p.Variant)
	require.Equal(t, 1, p.Lookahead)
	require.Equal(t, 30*time.Second, p.Hold)
	require.Equal(t, "horus", sched(t, nil).Name())
	o := rule(t, original)
	require.Equal(t, horus.Original, o.Variant)
	require.Equal(t, 5, o.Lookahead)
	require.Equal(t, 3, o.MaxJobs)
	require.Equal(t, 500.0, o.HeadroomMiB)
	o = rule(t, map[string]string{"variant": "original", "lookahead": "2", "hold": "10s", "recovery": "ladder"})
	require.Equal(t, 2, o.Lookahead)
	require.Equal(t, 10*time.Second, o.Hold)
	require.Equal(t, "ladder", o.Recovery)
	for msg, params := range map[string]map[string]string{
		`unknown parameter "x"`:                   {"x": "1"},
		`variant="both"`:                          {"variant": "both"},
		`max_jobs="0"`:                            {"variant": "original", "max_jobs": "0"},
		`util_cap="-1"`:                           {"util_cap": "-1"},
		`headroom_mib="lots"`:                     {"headroom_mib": "lots"},
		`recovery="retry"`:                        {"recovery": "retry"},
		"valid: headroom_mib (original: MiB kept": {"nope": "1"},
	} {
		_, err := horus.New(params)
		require.ErrorContains(t, err, msg)
		_, err = horus.ReadConfig(policies.NewParams(params))
		require.ErrorContains(t, err, msg)
		require.ErrorContains(t, err, "horus: ")
	}
}

// End to end on the demo trace: every job finishes, under both variants.
func TestDemoTraceFinishes(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	for _, params := range []map[string]string{nil, original} {
		o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "horus", Params: params, Seed: 1}, nil)
		require.NoError(t, err)
		require.Equal(t, len(tr.Jobs), o.Summary.Finished, "variant %v", params)
		require.Zero(t, o.Summary.Stopped)
		// The paper variant checks no memory and can OOM: every OOM is recovered.
		require.Equal(t, o.Summary.FailedAttempts, o.Summary.RecoveredAttempts)
		for _, j := range o.Jobs {
			require.Equal(t, policies.Done, j.State, "job %s", j.Name)
		}
	}
}

// The rule keeps no state and reads no queue: the scheduler may skip
// decisions at arrivals behind a blocked job (colloc.Stateless).
func TestStateless(t *testing.T) {
	require.Implements(t, (*colloc.Stateless)(nil), horus.Rule{})
}
