package exclusive

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

func view(busy []bool, jobs ...policies.Job) *policies.View {
	v := &policies.View{}
	for g, b := range busy {
		gp := policies.GPU{Index: g, CapacityMiB: 40960}
		if b {
			gp.Jobs = []policies.JobID{99}
		}
		v.GPUs = append(v.GPUs, gp)
	}
	for i, j := range jobs {
		j.ID = policies.JobID(i)
		j.State = policies.Pending
		v.Jobs = append(v.Jobs, j)
		v.Queue = policies.ListOf(append(v.Queue.AppendTo(nil), j.ID)...)
	}
	return v
}

func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		name string
		busy []bool
		jobs []policies.Job
		want []policies.Action
	}{
		{"lowest idle GPUs first", []bool{true, false, false}, []policies.Job{{GPUs: 1}, {GPUs: 1}},
			[]policies.Action{{Kind: policies.Place, Job: 0, GPUs: []int{1}}, {Kind: policies.Place, Job: 1, GPUs: []int{2}}}},
		{"multi-GPU job all at once", []bool{false, true, false}, []policies.Job{{GPUs: 2}},
			[]policies.Action{{Kind: policies.Place, Job: 0, GPUs: []int{0, 2}}}},
		{"head-of-line blocking", []bool{false, true, true}, []policies.Job{{GPUs: 2}, {GPUs: 1}}, nil},
		{"a job that failed alone is stopped", []bool{false}, []policies.Job{{GPUs: 1, Attempts: 1, LastFailure: policies.OOM}, {GPUs: 1}},
			[]policies.Action{{Kind: policies.Stop, Job: 0, Reason: "failed exclusively: oom"}, {Kind: policies.Place, Job: 1, GPUs: []int{0}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, (&Policy{}).Schedule(view(tc.busy, tc.jobs...)))
		})
	}
	_, err := New(map[string]string{"hold": "30s"})
	require.ErrorContains(t, err, `unknown parameter "hold"`)
}

// What Schedule returns is a buffer the next decision reuses, as
// policies.Policy allows, but the placements' GPU lists come from an arena
// that is never reused: a result kept across decisions (copied, as the
// contract asks) stays as it was, and appending to a result or a GPU list
// does not write into the next one's.
func TestScheduleResultsStay(t *testing.T) {
	p := &Policy{}
	got := p.Schedule(view([]bool{false, false, true, false}, policies.Job{GPUs: 2}, policies.Job{GPUs: 1}))
	want := []policies.Action{{Kind: policies.Place, Job: 0, GPUs: []int{0, 1}}, {Kind: policies.Place, Job: 1, GPUs: []int{3}}}
	require.Equal(t, want, got)
	first := slices.Clone(got)
	_ = append(got, policies.Action{Kind: policies.Stop, Job: 7})
	_ = append(first[0].GPUs, 9)
	for range 300 { // past the arenas' first arrays
		second := p.Schedule(view([]bool{true, false, false, false}, policies.Job{GPUs: 3}))
		require.Equal(t, []policies.Action{{Kind: policies.Place, Job: 0, GPUs: []int{1, 2, 3}}}, second)
	}
	require.Equal(t, want, first)
	require.Nil(t, p.Schedule(view([]bool{true, true}, policies.Job{GPUs: 1})))
}

// Each search for idle GPUs starts after the last GPU the decision gave:
// the choices are those of searching from GPU 0 with View.IdleGPUs every
// time (reference), on random pools and queues of mixed sizes.
func TestScheduleSearchesOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		busy := make([]bool, 1+rng.IntN(40))
		for g := range busy {
			busy[g] = rng.IntN(3) == 0
		}
		var jobs []policies.Job
		for range rng.IntN(12) {
			j := policies.Job{GPUs: 1 + rng.IntN(4)}
			if rng.IntN(8) == 0 {
				j.Attempts, j.LastFailure = 1, policies.OOM
			}
			jobs = append(jobs, j)
		}
		v := view(busy, jobs...)
		var want []policies.Action
		taken := make([]bool, len(busy))
		for _, id := range v.Queue.All() {
			j := v.Job(id)
			if j.Attempts > 0 && j.LastFailure != policies.NoFailure {
				want = append(want, policies.Action{Kind: policies.Stop, Job: id, Reason: "failed exclusively: oom"})
				continue
			}
			gpus := v.IdleGPUs(taken, j.GPUs)
			if gpus == nil {
				break
			}
			for _, g := range gpus {
				taken[g] = true
			}
			want = append(want, policies.Action{Kind: policies.Place, Job: id, GPUs: gpus})
		}
		require.Equal(t, want, (&Policy{}).Schedule(v), "busy %v jobs %v", busy, jobs)
	}
}
