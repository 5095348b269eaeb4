package colloc

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// byGPU admits every GPU and scores it from a table.
type byGPU map[int]float64

func (byGPU) Admit(*policies.View, *policies.Job, int) Reason          { return "" }
func (b byGPU) Score(_ *policies.View, _ *policies.Job, g int) float64 { return b[g] }

// Two 2-GPU jobs run on GPUs {0,1} and {2,3}; a third 2-GPU job arrives.
// GPUs 0 and 2 score best one by one, but the best whole partner is {0,1}.
func TestWholePartners(t *testing.T) {
	v := &policies.View{Now: time.Hour}
	for g := range 4 {
		v.GPUs = append(v.GPUs, policies.GPU{Index: g, CapacityMiB: 40960})
	}
	for i, on := range [][]int{{0, 1}, {2, 3}} {
		id := policies.JobID(i)
		v.Jobs = append(v.Jobs, policies.Job{ID: id, GPUs: 2, State: policies.Running, On: on, Active: true})
		for _, g := range on {
			v.GPUs[g].Jobs = append(v.GPUs[g].Jobs, id)
		}
	}
	v.Jobs = append(v.Jobs, policies.Job{ID: 2, GPUs: 2, State: policies.Pending})
	v.Queue = policies.ListOf(2)
	scores := byGPU{0: 0, 1: 5, 2: 1, 3: 6}
	for _, tc := range []struct {
		whole bool
		want  []int
	}{{false, []int{0, 2}}, {true, []int{0, 1}}} {
		cfg := DefaultConfig()
		cfg.WholePartners = tc.whole
		var got []int
		for _, a := range New("t", cfg, scores).Schedule(v) {
			if a.Kind == policies.Place {
				got = a.GPUs
			}
		}
		require.Equal(t, tc.want, got, "whole partners: %v", tc.whole)
	}
}

func TestLadderLevels(t *testing.T) {
	c := DefaultConfig()
	require.Equal(t, []float64{10240, 18432, 20480, 28672, 30720}, c.Ladder(40960))
	require.Equal(t, []float64{2816, 5632, 8448}, c.Ladder(11264))
}

// horizonRule rejects every GPU ("busy") and says when that could change.
type horizonRule struct{ changesAt time.Duration }

func (horizonRule) Admit(*policies.View, *policies.Job, int) Reason              { return "busy" }
func (horizonRule) Score(*policies.View, *policies.Job, int) float64             { return 0 }
func (r horizonRule) ChangesAt(*policies.View, *policies.Job, int) time.Duration { return r.changesAt }

// rejectRule rejects every GPU and cannot tell when that changes.
type rejectRule struct{}

func (rejectRule) Admit(*policies.View, *policies.Job, int) Reason  { return "busy" }
func (rejectRule) Score(*policies.View, *policies.Job, int) float64 { return 0 }

// A blocked head asks for the first tick at or after the earliest time a
// rule's answer or a hold could change, not for the next tick; a rule
// without a horizon, or skip=off, ticks as before.
func TestWakeAtHorizon(t *testing.T) {
	const s = time.Second
	view := func(activeAt time.Duration, active bool) *policies.View {
		v := &policies.View{Now: 100*s + 300*time.Millisecond,
			GPUs: []policies.GPU{{Index: 0, CapacityMiB: 40960, Jobs: []policies.JobID{0}}},
			Jobs: []policies.Job{
				{ID: 0, GPUs: 1, State: policies.Running, On: []int{0}, Active: active, ActiveAt: activeAt},
				{ID: 1, GPUs: 1, State: policies.Pending},
			},
			Queue: policies.ListOf(1)}
		return v
	}
	wake := func(acts []policies.Action) time.Duration {
		for _, a := range acts {
			if a.Kind == policies.Wake {
				return a.At
			}
		}
		return -1
	}
	for _, c := range []struct {
		name     string
		rule     Rule
		activeAt time.Duration
		active   bool
		every    bool
		want     time.Duration
	}{
		{"rule horizon on a tick", horizonRule{120 * s}, 0, true, false, 120 * s},
		{"rule horizon between ticks", horizonRule{120*s + 1}, 0, true, false, 121 * s},
		{"rule horizon already due", horizonRule{50 * s}, 0, true, false, 101 * s},
		{"never: wait for an event", horizonRule{Never}, 0, true, false, -1},
		{"no horizon: next tick", rejectRule{}, 0, true, false, 101 * s},
		{"skip off: next tick", horizonRule{Never}, 0, true, true, 101 * s},
		{"hold ends", horizonRule{Never}, 90 * s, true, false, 120 * s},
		{"hold until activity: an event", horizonRule{Never}, 0, false, false, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.EveryTick = c.every
			got := wake(New("t", cfg, c.rule).Schedule(view(c.activeAt, c.active)))
			require.Equal(t, c.want, got)
		})
	}
}

// refineRule answers with a lower bound (ChangesAt) that Refine raises, and
// records the limit it was given.
type refineRule struct {
	horizonRule
	refined time.Duration
	limit   *time.Duration
}

func (r refineRule) Refine(_ *policies.View, limit time.Duration) time.Duration {
	*r.limit = limit
	return r.refined
}

// A Refiner's raised horizon replaces its lower bounds, and is asked for
// with the earliest other answer as limit (here GPU 1's hold), which still
// wins when earlier.
func TestWakeAtRefinedHorizon(t *testing.T) {
	const s = time.Second
	for _, c := range []struct {
		name      string
		holdEnd   time.Duration // GPU 1's job's first activity + 30 s; 0: no GPU 1
		refined   time.Duration
		want      time.Duration
		wantLimit time.Duration
	}{
		{"refined", 0, 150 * s, 150 * s, Never},
		{"refined to never", 0, Never, -1, Never},
		{"a hold ends first", 130 * s, 150 * s, 130 * s, 130 * s},
		{"refined before the hold", 140 * s, 120 * s, 120 * s, 140 * s},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := &policies.View{Now: 100*s + 300*time.Millisecond,
				GPUs: []policies.GPU{{Index: 0, CapacityMiB: 40960, Jobs: []policies.JobID{0}}},
				Jobs: []policies.Job{
					{ID: 0, GPUs: 1, State: policies.Running, On: []int{0}, Active: true},
					{ID: 1, GPUs: 1, State: policies.Pending},
				},
				Queue: policies.ListOf(1)}
			if c.holdEnd > 0 {
				v.GPUs = append(v.GPUs, policies.GPU{Index: 1, CapacityMiB: 40960, Jobs: []policies.JobID{2}})
				v.Jobs = append(v.Jobs, policies.Job{ID: 2, GPUs: 1, State: policies.Running, On: []int{1}, Active: true, ActiveAt: c.holdEnd - 30*s})
			}
			limit := time.Duration(-1)
			acts := New("t", DefaultConfig(), refineRule{horizonRule{110 * s}, c.refined, &limit}).Schedule(v)
			got := time.Duration(-1)
			for _, a := range acts {
				if a.Kind == policies.Wake {
					got = a.At
				}
			}
			require.Equal(t, c.want, got)
			require.Equal(t, c.wantLimit, limit)
		})
	}
}

// statelessRule is a horizonRule that declares itself Stateless.
type statelessRule struct{ horizonRule }

func (statelessRule) Stateless() {}

// Under a Stateless rule, a decision that stopped at a blocked job is not
// asked again for arrivals queued behind it before its horizon (a hold
// ending); under any rule, a decision that found nothing waiting is asked
// again only for an arrival or a failure; everything else is wanted.
func TestWantsSkipsArrivalsBehindBlockedJob(t *testing.T) {
	const s = time.Second
	// GPU 0's job became active at 90 s (hold ends at 120 s); GPU 1's long
	// ago. Job 5 waits, rejected by the rule; with failed, job 4 waits for
	// an OOM retry on an idle GPU (exclusive recovery) ahead of everything.
	view := func(failed bool, queue ...policies.JobID) *policies.View {
		v := &policies.View{Now: 100*s + 300*time.Millisecond,
			GPUs: []policies.GPU{
				{Index: 0, CapacityMiB: 40960, Jobs: []policies.JobID{0}},
				{Index: 1, CapacityMiB: 40960, Jobs: []policies.JobID{1}},
			},
			Queue: policies.ListOf(queue...)}
		for id := range 6 {
			v.Jobs = append(v.Jobs, policies.Job{ID: policies.JobID(id), GPUs: 1, State: policies.Pending})
		}
		v.Jobs[0] = policies.Job{ID: 0, GPUs: 1, State: policies.Running, On: []int{0}, Active: true, ActiveAt: 90 * s}
		v.Jobs[1] = policies.Job{ID: 1, GPUs: 1, State: policies.Running, On: []int{1}, Active: true}
		if failed {
			v.Jobs[4] = policies.Job{ID: 4, GPUs: 1, State: policies.Pending, Attempts: 1, OOMs: 1,
				LastFailure: policies.OOM, FailedShared: true}
			v.Failed = []policies.JobID{4}
		}
		return v
	}
	arrival := func(id policies.JobID, at time.Duration) policies.Event {
		return policies.Event{Kind: policies.JobArrived, T: at, Job: id}
	}
	for _, c := range []struct {
		name   string
		rule   Rule
		every  bool
		decide *policies.View // nil: no decision yet
		event  policies.Event
		want   bool
	}{
		{"before the first decision", statelessRule{horizonRule{Never}}, false, nil, arrival(6, 105*s), true},
		{"behind the blocked job", statelessRule{horizonRule{Never}}, false, view(false, 5), arrival(6, 105*s), false},
		{"ahead of the blocked job", statelessRule{horizonRule{Never}}, false, view(false, 5), arrival(3, 105*s), true},
		{"at the hold's end", statelessRule{horizonRule{Never}}, false, view(false, 5), arrival(6, 120*s), true},
		{"a finish", statelessRule{horizonRule{Never}}, false, view(false, 5), policies.Event{Kind: policies.JobFinished, T: 105 * s, Job: 1}, true},
		{"a wake-up", statelessRule{horizonRule{Never}}, false, view(false, 5), policies.Event{Kind: policies.Wakeup, T: 105 * s}, true},
		{"nothing blocked", statelessRule{horizonRule{Never}}, false, view(false), arrival(6, 105*s), true},
		{"blocked in recovery", statelessRule{horizonRule{Never}}, false, view(true, 4, 5), arrival(3, 105*s), false},
		{"the rule's horizon", statelessRule{horizonRule{110 * s}}, false, view(false, 5), arrival(6, 110*s), true},
		{"before the rule's horizon", statelessRule{horizonRule{110 * s}}, false, view(false, 5), arrival(6, 109*s), false},
		{"not stateless", horizonRule{Never}, false, view(false, 5), arrival(6, 105*s), true},
		{"nothing waiting: a finish", horizonRule{Never}, false, view(false), policies.Event{Kind: policies.JobFinished, T: 105 * s, Job: 1}, false},
		{"nothing waiting: a start", rejectRule{}, false, view(false), policies.Event{Kind: policies.JobStarted, T: 105 * s, Job: 1}, false},
		{"nothing waiting: a first activity", rejectRule{}, false, view(false), policies.Event{Kind: policies.JobActive, T: 105 * s, Job: 1}, false},
		{"nothing waiting: a wake-up", rejectRule{}, false, view(false), policies.Event{Kind: policies.Wakeup, T: 105 * s}, false},
		{"nothing waiting: an arrival", rejectRule{}, false, view(false), arrival(6, 105*s), true},
		{"nothing waiting: a failure", rejectRule{}, false, view(false), policies.Event{Kind: policies.JobFailed, T: 105 * s, Job: 1}, true},
		{"a retry waits, no deferral", rejectRule{}, false, view(true, 4), policies.Event{Kind: policies.JobFinished, T: 105 * s, Job: 1}, true},
		{"nothing waiting, skip off", rejectRule{}, true, view(false), policies.Event{Kind: policies.JobFinished, T: 105 * s, Job: 1}, true},
		{"skip off", statelessRule{horizonRule{Never}}, true, view(false, 5), arrival(6, 105*s), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.EveryTick = c.every
			sch := New("t", cfg, c.rule)
			if c.decide != nil {
				sch.Schedule(c.decide)
			}
			require.Equal(t, c.want, sch.Wants(c.event))
		})
	}
}

// onlyGPU admits only GPU 2 and never changes its mind without an event.
type onlyGPU struct{ statelessRule }

func (onlyGPU) Admit(_ *policies.View, _ *policies.Job, g int) Reason {
	if g == 2 {
		return ""
	}
	return "busy"
}

// After a decision that placed jobs, the starts of its placements are not
// wanted when the next decision would repeat it less the placements (nor
// the arrivals behind its blocked job, nor a first activity before the
// horizon whose hold ends no earlier); they are when a placed job was also
// deferred, was a retry, followed a job left waiting (which saw its GPU
// free) or came with a job stopped, and under a rule that is not Stateless.
func TestWantsAfterPlacing(t *testing.T) {
	const h = time.Hour
	// GPU 0 is idle, GPUs 1 and 2 run jobs 0 and 1 (active long ago); jobs
	// 2 to 5 are pending with the GPU counts given.
	view := func(gpus []int, failed bool, queue ...policies.JobID) *policies.View {
		v := &policies.View{Now: h,
			GPUs: []policies.GPU{{Index: 0, CapacityMiB: 40960}, {Index: 1, CapacityMiB: 40960, Jobs: []policies.JobID{0}},
				{Index: 2, CapacityMiB: 40960, Jobs: []policies.JobID{1}}},
			Jobs: []policies.Job{
				{ID: 0, GPUs: 1, State: policies.Running, On: []int{1}, Active: true},
				{ID: 1, GPUs: 1, State: policies.Running, On: []int{2}, Active: true},
			},
			Queue: policies.ListOf(queue...)}
		for i, n := range gpus {
			v.Jobs = append(v.Jobs, policies.Job{ID: policies.JobID(2 + i), GPUs: n, State: policies.Pending})
		}
		if failed {
			v.Jobs[2].Attempts, v.Jobs[2].OOMs, v.Jobs[2].LastFailure, v.Jobs[2].FailedShared = 1, 1, policies.OOM, true
			v.Failed = []policies.JobID{2}
		}
		return v
	}
	started := policies.Event{Kind: policies.JobStarted, T: h, Job: 2, Attempt: 1, GPUs: []int{0}}
	// Job 2 failed for another reason than OOM (stopped), job 3 placed,
	// job 4 (3 GPUs) left waiting.
	stopped := view([]int{1, 1, 3}, true, 3, 4)
	stopped.Jobs[2].OOMs, stopped.Jobs[2].LastFailure = 0, policies.OtherFailure
	for _, c := range []struct {
		name      string
		rule      Rule
		lookahead int
		v         *policies.View
		event     policies.Event
		want      bool
	}{
		{"settled: its start", statelessRule{horizonRule{Never}}, 1, view([]int{1, 1}, false, 2, 3), started, false},
		{"settled: an arrival behind", statelessRule{horizonRule{Never}}, 1, view([]int{1, 1}, false, 2, 3), policies.Event{Kind: policies.JobArrived, T: h, Job: 6}, false},
		{"settled: a finish", statelessRule{horizonRule{Never}}, 1, view([]int{1, 1}, false, 2, 3), policies.Event{Kind: policies.JobFinished, T: h, Job: 0}, true},
		{"not stateless", horizonRule{Never}, 1, view([]int{1, 1}, false, 2, 3), started, true},
		{"placed after a waiting job", statelessRule{horizonRule{Never}}, 2, view([]int{2, 1}, false, 2, 3), policies.Event{Kind: policies.JobStarted, T: h, Job: 3}, true},
		{"placed where also deferred", onlyGPU{}, 1, view([]int{1, 1, 1}, false, 2, 3), policies.Event{Kind: policies.JobStarted, T: h, Job: 2}, true},
		{"a retry placed", statelessRule{horizonRule{Never}}, 1, view([]int{1, 1}, true, 2, 3), started, true},
		{"a job stopped", statelessRule{horizonRule{Never}}, 1, stopped, policies.Event{Kind: policies.JobStarted, T: h, Job: 3, Attempt: 1, GPUs: []int{0}}, true},
		{"settled: a first activity before the horizon", statelessRule{horizonRule{h + 10*time.Second}}, 1,
			view([]int{1, 1}, false, 2, 3), policies.Event{Kind: policies.JobActive, T: h, Job: 2, Attempt: 1}, false},
		{"settled: a first activity whose hold ends first", statelessRule{horizonRule{h + 40*time.Second}}, 1,
			view([]int{1, 1}, false, 2, 3), policies.Event{Kind: policies.JobActive, T: h, Job: 2, Attempt: 1}, true},
		{"settled: a first activity at the horizon", statelessRule{horizonRule{h}}, 1,
			view([]int{1, 1}, false, 2, 3), policies.Event{Kind: policies.JobActive, T: h, Job: 2, Attempt: 1}, true},
		{"not settled: a first activity", statelessRule{horizonRule{h + 10*time.Second}}, 2,
			view([]int{2, 1}, false, 2, 3), policies.Event{Kind: policies.JobActive, T: h, Job: 3, Attempt: 1}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Lookahead = c.lookahead
			sch := New("t", cfg, c.rule)
			placed := false
			for _, a := range sch.Schedule(c.v) {
				ok := a.Kind == policies.Place
				placed = placed || ok
			}
			require.True(t, placed)
			require.Equal(t, c.want, sch.Wants(c.event))
		})
	}
}

// countRule answers admit on every GPU and counts the ChangesAt questions.
type countRule struct {
	admit Reason
	asked *[]int
}

func (r countRule) Admit(*policies.View, *policies.Job, int) Reason { return r.admit }
func (countRule) Score(*policies.View, *policies.Job, int) float64  { return 0 }
func (r countRule) ChangesAt(_ *policies.View, _ *policies.Job, g int) time.Duration {
	*r.asked = append(*r.asked, g)
	return Never
}

// A decision asks the rule's ChangesAt only when its horizon matters: not
// when it leaves nothing waiting (the job collocated), and once for each
// GPU Admit was asked about, in order, when the job waits.
func TestChangesAtAskedWhenAJobWaits(t *testing.T) {
	v := &policies.View{Now: 100 * time.Second,
		GPUs: []policies.GPU{{Index: 0, CapacityMiB: 40960, Jobs: []policies.JobID{0}},
			{Index: 1, CapacityMiB: 40960, Jobs: []policies.JobID{0}}},
		Jobs: []policies.Job{
			{ID: 0, GPUs: 2, State: policies.Running, On: []int{0, 1}, Active: true},
			{ID: 1, GPUs: 1, State: policies.Pending},
		},
		Queue: policies.ListOf(1)}
	cfg := DefaultConfig()
	cfg.Hold = 0
	var asked []int
	New("t", cfg, countRule{Admitted, &asked}).Schedule(v)
	require.Empty(t, asked, "placed: no horizon asked")
	New("t", cfg, countRule{"busy", &asked}).Schedule(v)
	require.Equal(t, []int{0, 1}, asked)
}

// best picks the first n candidates of a stable sort by (score, GPU), on
// random candidates with many ties, for every n.
func TestBestIsSortedPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var cands []cand
		for g := range r.IntN(40) + 1 {
			if r.IntN(3) > 0 {
				cands = append(cands, cand{g, float64(r.IntN(6)) - 3})
			}
		}
		want := slices.Clone(cands)
		slices.SortStableFunc(want, better)
		for n := 0; n <= len(cands); n++ {
			require.Equal(t, want[:n], best(slices.Clone(cands), n), "n=%d of %v", n, cands)
		}
	}
}

// A held GPU is one whose hold has not ended (holdEnds), as Held says.
func TestHeldIsBeforeHoldEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		v := &policies.View{Now: time.Duration(r.IntN(100)) * time.Second, GPUs: []policies.GPU{{}}}
		for i := range r.IntN(4) + 1 {
			v.Jobs = append(v.Jobs, policies.Job{ID: policies.JobID(i), Active: r.IntN(4) > 0, ActiveAt: time.Duration(r.IntN(100)) * time.Second})
			v.GPUs[0].Jobs = append(v.GPUs[0].Jobs, policies.JobID(i))
		}
		for _, hold := range []time.Duration{0, 10 * time.Second, 30 * time.Second} {
			require.Equal(t, Held(v, 0, hold), v.Now < holdEnds(v, 0, hold))
		}
	}
}

// The hold ends kept from events are those read from every GPU's jobs, on
// a random world of collocated starts (some reported after the next
// decision, whose placements the decision itself marks), first activities,
// finishes, failures, stops and failed placements; the view is read whole
// once. A hold end that misses an event (a first activity, an end) fails
// it.
func TestHoldEndsKeptFromEvents(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		s := New("t", DefaultConfig(), nil)
		v := &policies.View{GPUs: make([]policies.GPU, 1+rng.IntN(20))}
		var late []policies.Event
		var running []policies.JobID
		s.Observe(policies.Event{Kind: policies.Wakeup})
		for step := range 300 {
			v.Now += time.Duration(1+rng.IntN(20)) * time.Second
			for _, e := range late {
				s.Observe(e)
			}
			late = late[:0]
			for k := 0; k < len(running); k++ { // first activity, ends
				id := running[k]
				j := &v.Jobs[id]
				switch r := rng.IntN(10); {
				case r == 0 && !j.Active:
					j.Active, j.ActiveAt = true, v.Now-time.Duration(rng.IntN(5))*time.Second
					s.Observe(policies.Event{Kind: policies.JobActive, Job: id})
				case r == 1:
					for _, g := range j.On {
						v.GPUs[g].Jobs = slices.DeleteFunc(v.GPUs[g].Jobs, func(x policies.JobID) bool { return x == id })
					}
					j.State = policies.Done
					kind := []policies.EventKind{policies.JobFinished, policies.JobFailed, policies.JobStopped}[rng.IntN(3)]
					s.Observe(policies.Event{Kind: kind, Job: id})
					running = slices.Delete(running, k, k+1)
					k--
				}
			}
			// A decision: the cached hold ends against every GPU's jobs.
			cached := s.refresh(v)
			require.True(t, cached)
			for g := range v.GPUs {
				if len(v.GPUs[g].Jobs) > 0 {
					require.Equal(t, holdEnds(v, g, s.cfg.Hold), s.holdEnd(v, g, true), "seed %d step %d GPU %d", seed, step, g)
				}
			}
			for range rng.IntN(3) { // its placements
				id := policies.JobID(len(v.Jobs))
				gpus := rng.Perm(len(v.GPUs))[:1+rng.IntN(min(3, len(v.GPUs)))]
				v.Jobs = append(v.Jobs, policies.Job{ID: id, GPUs: len(gpus)})
				if rng.IntN(8) == 0 {
					s.Observe(policies.Event{Kind: policies.PlaceFailed, Job: id, GPUs: gpus})
					continue
				}
				v.Jobs[id].State, v.Jobs[id].On = policies.Running, gpus
				for _, g := range gpus {
					v.GPUs[g].Jobs = append(v.GPUs[g].Jobs, id)
				}
				running = append(running, id)
				s.recheck = append(s.recheck, gpus...) // as Schedule does
				e := policies.Event{Kind: policies.JobStarted, Job: id, GPUs: slices.Clone(gpus)}
				if rng.IntN(3) == 0 {
					late = append(late, e)
				} else {
					s.Observe(e)
				}
			}
		}
		require.Equal(t, 1, s.reads, "seed %d: the view was read whole again", seed)
	}
}

// A Reader is a JobsReader and keeps every interface of its Scheduler; a
// plain Scheduler (whose rule may write into jobs) is no JobsReader.
func TestReader(t *testing.T) {
	var p policies.Policy = &Reader{Scheduler: New("r", DefaultConfig(), byGPU{})}
	for _, ok := range []bool{
		is[policies.JobsReader](p), is[policies.OptionalObserver](p),
		is[policies.Selective](p), is[policies.Ticker](p),
	} {
		require.True(t, ok)
	}
	require.Equal(t, "r", p.Name())
	require.False(t, is[policies.JobsReader](New("s", DefaultConfig(), byGPU{})))
}

func is[T any](p policies.Policy) bool { _, ok := p.(T); return ok }

// A decision's placements take their GPU lists from the scheduler's
// arena, no allocation each (on idle GPUs, and collocated with a job
// already running), each list its own: as long as its capacity, and
// never written again.
func TestPlacementsFromArena(t *testing.T) {
	for _, c := range []struct {
		name string
		busy bool // GPU 0 runs a job: the new one is collocated with it
	}{{"idle", false}, {"collocated", true}} {
		t.Run(c.name, func(t *testing.T) {
			v := &policies.View{Now: time.Hour, GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
				Jobs:  []policies.Job{{ID: 0, GPUs: 1, State: policies.Pending}, {ID: 1, GPUs: 1, State: policies.Running, On: []int{0}, Active: true}},
				Queue: policies.ListOf(0)}
			if c.busy {
				v.GPUs[0].Jobs = []policies.JobID{1}
			}
			s := New("t", DefaultConfig(), byGPU{})
			var lists [][]int
			place := func() {
				for _, a := range s.Schedule(v) {
					if a.Kind == policies.Place {
						lists = append(lists, a.GPUs)
					}
				}
			}
			place()
			require.Less(t, testing.AllocsPerRun(100, place), 0.1)
			for _, l := range lists {
				require.Equal(t, []int{0}, l)
				require.Equal(t, 1, cap(l))
			}
			require.Len(t, lists, 102)
		})
	}
}
