package colloc

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/jobslots"
	"github.com/aegis-sched/aegis/policies"
)

// jobGPUs keeps the same GPU lists as a map by job would, for any job id
// (negative ones and those past the array in its map), with its lists
// reused after a job's end and everything forgotten at a reset.
func TestJobGPUsAnyID(t *testing.T) {
	ids := []policies.JobID{0, 1, 2, 7, 1000, 5000, jobslots.MaxDense - 1, jobslots.MaxDense, jobslots.MaxDense + 3, -1, -42, 1 << 40}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 9))
		var x jobGPUs
		want := map[policies.JobID][]int{}
		for step := range 500 {
			id := ids[rng.IntN(len(ids))]
			switch r := rng.IntN(10); {
			case r == 0:
				x.reset()
				clear(want)
			case r < 5:
				if _, ok := want[id]; !ok {
					gpus := rng.Perm(8)[:1+rng.IntN(4)]
					x.add(id, gpus)
					want[id] = slices.Clone(gpus)
					gpus[0] = -7 // add copies
				}
			default:
				if i := x.get(id); i >= 0 {
					x.drop(id, i)
				}
				delete(want, id)
			}
			for _, id := range ids {
				i := x.get(id)
				gpus, ok := want[id]
				require.Equal(t, ok, i >= 0, "seed %d step %d job %d", seed, step, id)
				if ok {
					require.Equal(t, gpus, x.lists[i].gpus, "seed %d step %d job %d", seed, step, id)
				}
			}
		}
		require.LessOrEqual(t, len(x.lists), len(ids), "seed %d: lists not reused", seed)
	}
}

// localRule defers every job on every GPU and records the GPUs Admit was
// asked about (gpuLocalRule is the same, GPULocal).
type localRule struct {
	asked *[]int
}

func (r localRule) Admit(_ *policies.View, _ *policies.Job, g int) Reason {
	*r.asked = append(*r.asked, g)
	return DeferMemory
}
func (localRule) Score(*policies.View, *policies.Job, int) float64           { return 0 }
func (localRule) ChangesAt(*policies.View, *policies.Job, int) time.Duration { return Never }
func (localRule) EventsOnly()                                                {}

// gpuLocalRule is a localRule that is GPULocal.
type gpuLocalRule struct{ localRule }

func (gpuLocalRule) GPULocal() {}

// A GPULocal rule is asked about a GPU again only when something happened
// on it (a start, a first activity, an end) or for another job or attempt;
// other rules, and a scheduler that sees no events, are asked at every
// decision. Every decision defers the same jobs for the same reasons
// (reported as changes); the previous decision's deferrals are kept
// without a look at the GPU (under a GPULocal rule, with events) but on
// the GPUs read again since.
func TestVerdictsKeptUntilTheGPUChanges(t *testing.T) {
	const h = time.Hour
	// GPUs 0, 1 and 2 run jobs 0, 1 and 2 (active long ago: out of hold);
	// jobs 3 and 4 wait.
	view := func() *policies.View {
		v := &policies.View{Now: h, Queue: policies.ListOf(3, 4)}
		for g := range 3 {
			v.GPUs = append(v.GPUs, policies.GPU{Index: g, CapacityMiB: 40960, Jobs: []policies.JobID{policies.JobID(g)}})
			v.Jobs = append(v.Jobs, policies.Job{ID: policies.JobID(g), GPUs: 1, State: policies.Running, On: []int{g}, Attempts: 1, Active: true})
		}
		v.Jobs = append(v.Jobs, policies.Job{ID: 3, GPUs: 1, State: policies.Pending}, policies.Job{ID: 4, GPUs: 1, State: policies.Pending})
		return v
	}
	for _, c := range []struct {
		name    string
		local   bool
		observe bool
		// want: the GPUs asked about in each of the five decisions; kept:
		// how many of the previous decision's answers each kept without
		// a look at the GPU (keepFrom).
		want [][]int
		kept []int
	}{
		{"GPULocal", true, true, [][]int{{0, 1, 2}, {}, {1}, {}, {0, 1, 2}}, []int{0, 3, 2, 3, 0}},
		{"not GPULocal", false, true, [][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}, []int{0, 0, 0, 0, 0}},
		{"no events", true, false, [][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}, []int{0, 0, 0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked []int
			var rule Rule = localRule{asked: &asked}
			if c.local {
				rule = gpuLocalRule{localRule{asked: &asked}}
			}
			s := New("t", DefaultConfig(), rule)
			s.ReportDeferralChanges()
			observe := func(e policies.Event) {
				if c.observe {
					s.Observe(e)
				}
			}
			v := view()
			var defers []policies.Action
			var kept []int
			decide := func() {
				asked = asked[:0]
				defers = defers[:0]
				k := s.keptAnswers
				defer func() { kept = append(kept, s.keptAnswers-k) }()
				for _, a := range s.Schedule(v) {
					if a.Kind == policies.Defer {
						defers = append(defers, a)
					}
				}
			}
			observe(policies.Event{Kind: policies.Wakeup, T: h})
			var got [][]int
			decide() // job 3 waits: asked about every GPU
			got = append(got, slices.Clone(asked))
			require.Len(t, defers, 3)
			decide() // nothing happened
			got = append(got, slices.Clone(asked))
			// Job 5 starts beside job 1 on GPU 1.
			v.Jobs = append(v.Jobs, policies.Job{ID: 5, GPUs: 1, State: policies.Running, On: []int{1}, Attempts: 1, Active: true, ActiveAt: 0})
			v.GPUs[1].Jobs = append(v.GPUs[1].Jobs, 5)
			observe(policies.Event{Kind: policies.JobStarted, T: h, Job: 5, Attempt: 1, GPUs: []int{1}})
			observe(policies.Event{Kind: policies.JobActive, T: h, Job: 5, Attempt: 1})
			decide()
			got = append(got, slices.Clone(asked))
			decide()
			got = append(got, slices.Clone(asked))
			// Job 4 comes first now: another job.
			v.Queue = policies.ListOf(4, 3)
			decide()
			got = append(got, slices.Clone(asked))
			for i := range got {
				if got[i] == nil {
					got[i] = []int{}
				}
			}
			require.Equal(t, c.want, got)
			require.Equal(t, c.kept, kept)
		})
	}
}

// appendGPUs is append(dst, gpus...), whatever the lengths and room.
func TestAppendGPUsIsAppend(t *testing.T) {
	for _, c := range []struct{ dst, gpus []int }{
		{nil, nil}, {nil, []int{3}}, {[]int{1}, []int{3}}, {make([]int, 2, 8), []int{3}},
		{[]int{1, 2}, []int{3, 4, 5}}, {make([]int, 0, 1), []int{7, 8}},
	} {
		want := append(slices.Clip(slices.Clone(c.dst)), c.gpus...)
		require.Equal(t, want, appendGPUs(slices.Clone(c.dst), c.gpus))
	}
}
