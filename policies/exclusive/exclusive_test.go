package exclusive

import (
	"fmt"
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

// A policy kept up to date by events decides as one that reads every GPU,
// on a random world of finishes, failures, stops, failed placements and
// starts reported late (after the next decision), including a multi-GPU
// attempt's GPUs freed together. A tracker that misses a release (an
// event kind not read) places later than the reference and fails this.
func TestObservedIdleSetMatchesSearch(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 9))
		nGPU := 1 + rng.IntN(70)
		v := &policies.View{GPUs: make([]policies.GPU, nGPU)}
		for g := range v.GPUs {
			v.GPUs[g] = policies.GPU{Index: g, CapacityMiB: 40960}
		}
		var queue []policies.JobID
		var late []policies.Event // starts the backend reports after the next decision
		p := &Policy{}
		emit := func(e policies.Event) { p.Observe(e) }
		end := func(id policies.JobID, kind policies.EventKind) {
			j := &v.Jobs[id]
			for _, g := range j.On {
				v.GPUs[g].Jobs = slices.DeleteFunc(v.GPUs[g].Jobs, func(x policies.JobID) bool { return x == id })
			}
			if kind == policies.JobFinished {
				j.State = policies.Done
			} else {
				j.State, j.LastFailure = policies.Pending, policies.OOM
				queue = append(queue, id)
				slices.Sort(queue)
			}
			j.On = nil
			emit(policies.Event{Kind: kind, Job: id})
		}
		for step := range 400 {
			for range rng.IntN(5) { // arrivals
				id := policies.JobID(len(v.Jobs))
				v.Jobs = append(v.Jobs, policies.Job{ID: id, State: policies.Pending, GPUs: 1 + rng.IntN(min(4, nGPU))})
				queue = append(queue, id)
				emit(policies.Event{Kind: policies.JobArrived, Job: id})
			}
			for _, e := range late {
				emit(e)
			}
			late = late[:0]
			for id := range v.Jobs { // ends
				if v.Jobs[id].State == policies.Running && rng.IntN(10) == 0 {
					kind := policies.JobFinished
					if rng.IntN(3) == 0 {
						kind = policies.JobFailed
					}
					end(policies.JobID(id), kind)
				}
			}
			v.Queue = policies.ListOf(queue...)
			want := (&Policy{}).Schedule(v) // reads every GPU
			got := p.Schedule(v)
			require.Equal(t, want, got, "seed %d step %d", seed, step)
			for _, a := range slices.Clone(got) {
				queue = slices.DeleteFunc(queue, func(x policies.JobID) bool { return x == a.Job })
				j := &v.Jobs[a.Job]
				if a.Kind == policies.Stop {
					j.State = policies.Stopped
					emit(policies.Event{Kind: policies.JobStopped, Job: a.Job})
					continue
				}
				if rng.IntN(10) == 0 {
					queue = append(queue, a.Job)
					slices.Sort(queue)
					emit(policies.Event{Kind: policies.PlaceFailed, Job: a.Job, GPUs: slices.Clone(a.GPUs)})
					continue
				}
				j.State, j.On, j.Attempts, j.LastFailure = policies.Running, slices.Clone(a.GPUs), j.Attempts+1, policies.NoFailure
				for _, g := range a.GPUs {
					v.GPUs[g].Jobs = append(v.GPUs[g].Jobs, a.Job)
				}
				e := policies.Event{Kind: policies.JobStarted, Job: a.Job, GPUs: slices.Clone(a.GPUs)}
				if rng.IntN(3) == 0 {
					late = append(late, e)
				} else {
					emit(e)
				}
			}
		}
		require.Equal(t, 1, p.reads, "seed %d: the view was read whole again (the set fell out of step)", seed)
	}
}

// TestFirstGPUsIsAMap holds the running attempts' first GPUs, kept in an
// open-addressing table, to a map: random sets, takes and clears of small,
// negative and very large ids (the table grows to hundreds of entries),
// with stretches of a few ids set and taken again and again.
func TestFirstGPUsIsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var f firstGPUs
	want := map[policies.JobID]int{}
	ids := func() policies.JobID {
		switch rng.IntN(6) {
		case 0:
			return -policies.JobID(rng.IntN(5)) - 1
		case 1:
			return 1<<40 + policies.JobID(rng.IntN(4))<<30
		default:
			return policies.JobID(rng.IntN(3000))
		}
	}
	for step := range 20000 {
		id := ids()
		if step%5000 >= 2500 {
			id = policies.JobID(rng.IntN(60))
		}
		switch rng.IntN(10) {
		case 0, 1, 2, 3:
			g := rng.IntN(200)
			f.set(id, g)
			want[id] = g
		case 4, 5, 6:
			g, ok := f.take(id)
			w, wok := want[id]
			delete(want, id)
			require.Equal(t, wok, ok, "step %d id %d", step, id)
			require.Equal(t, w, g, "step %d id %d", step, id)
		case 7:
			if rng.IntN(100) == 0 {
				f.clear()
				clear(want)
			}
		}
		_, wok := want[id]
		require.Equal(t, wok, f.has(id), "step %d id %d", step, id)
	}
}

// Exclusive as New makes it searches a view of at most searchFullUpTo
// GPUs in full at each decision, keeping no idle set from events (the view
// is never read whole for it), and keeps the set on a larger one: the
// same decisions either way.
func TestSmallViewsSearchedInFull(t *testing.T) {
	for _, c := range []struct {
		gpus, reads int
	}{{1, 0}, {8, 0}, {searchFullUpTo, 0}, {searchFullUpTo + 1, 1}} {
		t.Run(fmt.Sprint(c.gpus), func(t *testing.T) {
			v := &policies.View{GPUs: make([]policies.GPU, c.gpus)}
			for g := range v.GPUs {
				v.GPUs[g] = policies.GPU{Index: g, CapacityMiB: 40960}
			}
			p, err := New(nil)
			require.NoError(t, err)
			var queue []policies.JobID
			for step := range 3 * c.gpus {
				id := policies.JobID(len(v.Jobs))
				v.Jobs = append(v.Jobs, policies.Job{ID: id, State: policies.Pending, GPUs: 1})
				queue = append(queue, id)
				p.Observe(policies.Event{Kind: policies.JobArrived, Job: id})
				if step%3 == 2 { // an end
					for i := range v.Jobs {
						if j := &v.Jobs[i]; j.State == policies.Running {
							g := j.On[0]
							v.GPUs[g].Jobs, j.State, j.On = nil, policies.Done, nil
							p.Observe(policies.Event{Kind: policies.JobFinished, Job: j.ID})
							break
						}
					}
				}
				v.Queue = policies.ListOf(queue...)
				want := slices.Clone((&Policy{}).Schedule(v)) // reads every GPU
				got := p.Schedule(v)
				require.Equal(t, want, got, "step %d", step)
				for _, a := range got {
					queue = slices.DeleteFunc(queue, func(x policies.JobID) bool { return x == a.Job })
					j := &v.Jobs[a.Job]
					j.State, j.On = policies.Running, slices.Clone(a.GPUs)
					v.GPUs[a.GPUs[0]].Jobs = []policies.JobID{a.Job}
					p.Observe(policies.Event{Kind: policies.JobStarted, Job: a.Job, GPUs: slices.Clone(a.GPUs)})
				}
			}
			require.Equal(t, c.reads, p.reads)
		})
	}
}
