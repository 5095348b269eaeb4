package lucid_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
	"github.com/aegis-sched/aegis/policies/lucid"
	"github.com/aegis-sched/aegis/traces"
)

const (
	capMiB = 40960
	limit  = capMiB - 512 // the most summed peak memory a GPU may hold
)

// Sharing classes.
const (
	tiny, medium, jumbo = 0, 1, 2
)

// spec describes a job for a hand-built View.
type spec struct {
	class int
	peak  float64
	solo  float64 // profiled solo seconds; 0 means 1000
	gpus  int     // GPUs needed; 0 means 1
	at    []int   // the GPUs it runs on; none: pending, in queue order
}

// fake is a Telemetry that has no samples: Lucid reads profiles only.
type fake struct{}

func (fake) Samples(dst []policies.Sample, _, _ int) []policies.Sample { return dst }

// build returns a View of n 40 GB GPUs long after every running job's
// observation hold, with the given jobs in id order.
func build(n int, specs ...spec) *policies.View {
	v := &policies.View{Now: 2 * time.Hour, Telemetry: fake{}}
	v.GPUs = make([]policies.GPU, n)
	for g := range v.GPUs {
		v.GPUs[g] = policies.GPU{Index: g, CapacityMiB: capMiB}
	}
	for id, s := range specs {
		solo := s.solo
		if solo == 0 {
			solo = 1000
		}
		gpus := max(s.gpus, len(s.at), 1)
		j := policies.Job{ID: policies.JobID(id), GPUs: gpus,
			Profile: policies.Profile{Lucid: s.class, PeakMiB: s.peak, SoloS: solo}}
		switch {
		case len(s.at) > 0:
			j.State, j.On, j.Active, j.Attempts = policies.Running, s.at, true, 1
			for _, g := range s.at {
				v.GPUs[g].Jobs = append(v.GPUs[g].Jobs, j.ID)
			}
		default:
			j.State = policies.Pending
			v.Queue = policies.ListOf(append(v.Queue.AppendTo(nil), j.ID)...)
		}
		v.Jobs = append(v.Jobs, j)
	}
	return v
}

// policy returns the rule of a variant with default settings.
func policy(t *testing.T, variant string) *lucid.Rule {
	t.Helper()
	c, err := lucid.ReadConfig(policies.NewParams(map[string]string{"variant": variant}))
	require.NoError(t, err)
	return &lucid.Rule{Config: c}
}

// Each case puts partner jobs on GPU 0 and asks about the pending job.
// want holds the paper's and the original's verdict.
func TestAdmit(t *testing.T) {
	on0 := []int{0}
	for _, tc := range []struct {
		name     string
		partners []spec
		cand     spec
		want     [2]colloc.Reason // paper, original
	}{
		{"tiny joins tiny", []spec{{class: tiny, peak: 1000, at: on0}}, spec{class: tiny, peak: 1000}, [2]colloc.Reason{"", ""}},
		{"class sum 2: medium+medium", []spec{{class: medium, peak: 1000, at: on0}}, spec{class: medium, peak: 1000}, [2]colloc.Reason{"", ""}},
		{"class sum 2: tiny joins jumbo", []spec{{class: jumbo, peak: 1000, at: on0}}, spec{class: tiny, peak: 1000}, [2]colloc.Reason{"", ""}},
		{"class sum 2: jumbo joins tiny", []spec{{class: tiny, peak: 1000, at: on0}}, spec{class: jumbo, peak: 1000}, [2]colloc.Reason{"", "class-join"}},
		{"class sum 3", []spec{{class: medium, peak: 1000, at: on0}}, spec{class: jumbo, peak: 1000}, [2]colloc.Reason{"class", "class"}},
		{"class sum 3 the other way", []spec{{class: jumbo, peak: 1000, at: on0}}, spec{class: medium, peak: 1000}, [2]colloc.Reason{"class", "class"}},
		{"third job", []spec{{class: tiny, peak: 100, at: on0}, {class: tiny, peak: 100, at: on0}}, spec{class: tiny, peak: 100}, [2]colloc.Reason{"jobs", "jobs"}},
		{"memory exactly capacity-512", []spec{{class: tiny, peak: 20000, at: on0}}, spec{class: tiny, peak: limit - 20000}, [2]colloc.Reason{"", ""}},
		{"memory 1 MiB over", []spec{{class: tiny, peak: 20000, at: on0}}, spec{class: tiny, peak: limit - 20000 + 1}, [2]colloc.Reason{"memory", "memory"}},
		{"unequal GPU counts", []spec{{class: tiny, peak: 1000, at: []int{0, 1}}}, spec{class: tiny, peak: 1000}, [2]colloc.Reason{"", "gpu-count"}},
		{"equal GPU counts of 2", []spec{{class: tiny, peak: 1000, at: []int{0, 1}}}, spec{class: tiny, peak: 1000, gpus: 2}, [2]colloc.Reason{"", ""}},
		{"2-GPU job joins a 1-GPU job", []spec{{class: tiny, peak: 1000, at: on0}}, spec{class: tiny, peak: 1000, gpus: 2}, [2]colloc.Reason{"", "gpu-count"}},
		{"priority exactly 2x", []spec{{class: tiny, peak: 1000, solo: 500, at: on0}}, spec{class: tiny, peak: 1000, solo: 1000}, [2]colloc.Reason{"", ""}},
		{"priority over 2x", []spec{{class: tiny, peak: 1000, solo: 500, at: on0}}, spec{class: tiny, peak: 1000, solo: 1000.01}, [2]colloc.Reason{"", "priority"}},
		{"shorter job joins a long one", []spec{{class: tiny, peak: 1000, solo: 90000, at: on0}}, spec{class: tiny, peak: 1000, solo: 60}, [2]colloc.Reason{"", ""}},
		// GPU time = solo × GPUs: 2×600 = 1200 ≤ 2×(2×300) = 1200.
		{"priority of 2-GPU jobs exactly 2x", []spec{{class: tiny, peak: 1000, solo: 300, at: []int{0, 1}}}, spec{class: tiny, peak: 1000, solo: 600, gpus: 2}, [2]colloc.Reason{"", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := build(2, append(tc.partners, tc.cand)...)
			j := v.Job(v.Queue.At(0))
			require.Equal(t, tc.want[0], policy(t, lucid.Paper).Admit(v, j, 0), "paper")
			require.Equal(t, tc.want[1], policy(t, lucid.Original).Admit(v, j, 0), "original")
		})
	}
}

func TestPriorityRatioParam(t *testing.T) {
	v := build(1, spec{class: tiny, peak: 100, solo: 100, at: []int{0}}, spec{class: tiny, peak: 100, solo: 300})
	c, err := lucid.ReadConfig(policies.NewParams(map[string]string{"variant": "original", "priority_ratio": "3"}))
	require.NoError(t, err)
	require.Equal(t, colloc.Admitted, (&lucid.Rule{Config: c}).Admit(v, v.Job(1), 0))
	require.Equal(t, lucid.DeferPriority, policy(t, lucid.Original).Admit(v, v.Job(1), 0))
	require.Equal(t, 300.0, lucid.Priority(v.Job(1)))
}

func TestGuardParam(t *testing.T) {
	v := build(1, spec{class: tiny, peak: 20000, at: []int{0}}, spec{class: tiny, peak: capMiB - 20000 - 100})
	c, err := lucid.ReadConfig(policies.NewParams(map[string]string{"guard_mib": "100"}))
	require.NoError(t, err)
	require.Equal(t, colloc.Admitted, (&lucid.Rule{Config: c}).Admit(v, v.Job(1), 0))
	require.Equal(t, colloc.DeferMemory, policy(t, lucid.Paper).Admit(v, v.Job(1), 0))
}

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		partner spec
		cand    spec
		want    float64
	}{
		{"tiny+tiny, no memory", spec{class: tiny, at: []int{0}}, spec{class: tiny}, 0},
		{"medium+tiny, half the memory", spec{class: medium, peak: 10240, at: []int{0}}, spec{class: tiny, peak: 10240}, 1 + 0.25},
		{"jumbo+tiny at the memory limit", spec{class: jumbo, peak: 30000, at: []int{0}}, spec{class: tiny, peak: limit - 30000}, 2 + limit/float64(capMiB)/2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := build(1, tc.partner, tc.cand)
			for _, variant := range []string{lucid.Paper, lucid.Original} {
				require.InDelta(t, tc.want, policy(t, variant).Score(v, v.Job(1), 0), 1e-12, variant)
			}
		})
	}
}

// decide returns the GPUs the head job is placed on in one decision, or nil.
func decide(t *testing.T, variant string, v *policies.View) []int {
	t.Helper()
	s, err := lucid.New(map[string]string{"variant": variant})
	require.NoError(t, err)
	for _, a := range s.Schedule(v) {
		if a.Kind == policies.Place {
			return a.GPUs
		}
	}
	return nil
}

// The lowest projected class sum wins over more free memory; among equal
// class sums the least memory wins.
func TestScheduleOrder(t *testing.T) {
	v := build(3,
		spec{class: medium, peak: 1000, at: []int{0}},
		spec{class: tiny, peak: 30000, at: []int{1}},
		spec{class: tiny, peak: 20000, at: []int{2}},
		spec{class: tiny, peak: 5000})
	require.Equal(t, []int{2}, decide(t, lucid.Paper, v))
	v.GPUs[2].Jobs = append(v.GPUs[2].Jobs, 0) // GPU 2 full (two jobs): GPU 1 is next
	require.Equal(t, []int{1}, decide(t, lucid.Paper, v))
}

// A 2-GPU job pairs with a 2-GPU partner in the original variant; a 1-GPU
// neighbour blocks it there, not in the paper's.
func TestScheduleEqualGPUCounts(t *testing.T) {
	v := build(2,
		spec{class: tiny, peak: 1000, at: []int{0}},
		spec{class: tiny, peak: 1000, at: []int{1}},
		spec{class: tiny, peak: 1000, gpus: 2})
	require.Equal(t, []int{0, 1}, decide(t, lucid.Paper, v))
	require.Nil(t, decide(t, lucid.Original, v))
	v = build(2,
		spec{class: tiny, peak: 1000, at: []int{0, 1}},
		spec{class: medium, peak: 1000, gpus: 2})
	require.Equal(t, []int{0, 1}, decide(t, lucid.Original, v))
}

func TestNew(t *testing.T) {
	s, err := lucid.New(nil)
	require.NoError(t, err)
	require.Equal(t, "lucid", s.Name())
	require.Equal(t, 30*time.Second, s.Config().Hold)
	c, err := lucid.ReadConfig(policies.NewParams(nil))
	require.NoError(t, err)
	require.Equal(t, lucid.Paper, c.Variant)
	require.Equal(t, 2, c.MaxJobs)
	require.Equal(t, 2, c.ClassCap)
	require.Equal(t, 512.0, c.GuardMiB)
	require.Equal(t, 2.0, c.PriorityRatio)
	require.Equal(t, 1, c.Lookahead)
	c, err = lucid.ReadConfig(policies.NewParams(map[string]string{"variant": "original", "hold": "5", "tick": "2s"}))
	require.NoError(t, err)
	require.Equal(t, lucid.Original, c.Variant)
	require.Equal(t, 5*time.Second, c.Hold)
	require.Equal(t, 2*time.Second, c.Tick)
	for _, tc := range []struct {
		params map[string]string
		msg    string
	}{
		{map[string]string{"variant": "asplos"}, `variant="asplos": want one of paper, original`},
		{map[string]string{"priority_ratio": "0.5"}, `priority_ratio="0.5"`},
		{map[string]string{"guard_mib": "-1"}, `guard_mib="-1"`},
		{map[string]string{"lookahead": "0"}, `lookahead="0"`},
		{map[string]string{"max_jobs": "3"}, `unknown parameter "max_jobs"; valid: guard_mib (`},
	} {
		_, err := lucid.New(tc.params)
		require.ErrorContains(t, err, tc.msg)
		require.ErrorContains(t, err, "lucid: ")
	}
}

// End to end on the demo trace: every job finishes, under both variants.
func TestDemoTraceFinishes(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	for _, variant := range []string{lucid.Paper, lucid.Original} {
		t.Run(variant, func(t *testing.T) {
			run := assemble.Run{Trace: tr, Server: srv, Policy: "lucid", Params: map[string]string{"variant": variant}, Seed: 1}
			o, err := assemble.Simulate(context.Background(), run, nil)
			require.NoError(t, err)
			require.Equal(t, len(tr.Jobs), o.Summary.Finished)
			require.Zero(t, o.Summary.Stopped)
			// Should an attempt OOM, colloc's recovery brings the job home.
			require.Equal(t, o.Summary.FailedAttempts, o.Summary.RecoveredAttempts)
			for _, j := range o.Jobs {
				require.Equal(t, policies.Done, j.State, "job %s", j.Name)
			}
		})
	}
}

// The rule keeps no state and reads no queue: the scheduler may skip
// decisions at arrivals behind a blocked job (colloc.Stateless).
func TestStateless(t *testing.T) {
	require.Implements(t, (*colloc.Stateless)(nil), lucid.Rule{})
}
