package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// consistent is a view with job 0 running on GPU 1 and job 1 queued.
func consistent() *policies.View {
	return &policies.View{
		GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}, {Index: 1, CapacityMiB: 100, UsedMiB: 50, Jobs: []policies.JobID{0}}},
		Jobs: []policies.Job{
			{ID: 0, GPUs: 1, State: policies.Running, On: []int{1}},
			{ID: 1, GPUs: 1, State: policies.Pending},
		},
		Queue: policies.ListOf(1),
	}
}

func TestCheck(t *testing.T) {
	require.NoError(t, Check(consistent()))
	for _, tc := range []struct {
		name   string
		mutate func(v *policies.View)
		err    string
	}{
		{"memory over capacity", func(v *policies.View) { v.GPUs[1].UsedMiB = 101 }, "measured memory"},
		{"negative memory", func(v *policies.View) { v.GPUs[0].UsedMiB = -1 }, "measured memory"},
		{"GPU lists a pending job", func(v *policies.View) { v.GPUs[0].Jobs = []policies.JobID{1} }, "GPU 0 lists job 1"},
		{"job runs on an unlisting GPU", func(v *policies.View) { v.Jobs[0].On = []int{1, 0}; v.Jobs[0].GPUs = 2 }, "does not list it"},
		{"wrong GPU count", func(v *policies.View) { v.Jobs[0].GPUs = 2 }, "needs 2"},
		{"queued job not pending", func(v *policies.View) { v.Queue = policies.ListOf(append(v.Queue.AppendTo(nil), 0)...) }, "queued job 0"},
		{"failed list without failure", func(v *policies.View) { v.Failed = []policies.JobID{1} }, "failed-list job 1"},
		{"bad index", func(v *policies.View) { v.GPUs[1].Index = 7 }, "reports index 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := consistent()
			tc.mutate(v)
			require.ErrorContains(t, Check(v), tc.err)
		})
	}
}

// corrupting is a backend that wakes up every second and, from its tenth
// instant on, lists its done job 0 in the queue without any event about it.
type corrupting struct {
	v *policies.View
	n int
}

func (c *corrupting) Next() ([]policies.Event, error) {
	c.n++
	c.v.Now = time.Duration(c.n) * time.Second
	if c.n == 10 {
		c.v.Queue = policies.ListOf(append(c.v.Queue.AppendTo(nil), 0)...)
	}
	if c.n > 1000 {
		return nil, nil
	}
	return []policies.Event{{Kind: policies.Wakeup, T: c.v.Now}}, nil
}
func (c *corrupting) View() *policies.View        { return c.v }
func (c *corrupting) Apply(policies.Action) error { return nil }

type idle struct{}

func (idle) Name() string                              { return "idle" }
func (idle) Schedule(*policies.View) []policies.Action { return nil }

type discard struct{}

func (discard) Event(policies.Event)   {}
func (discard) Action(policies.Action) {}

// The loop checks only what changed at most decisions, but the whole view
// periodically: a queue corrupted without an event is still reported.
func TestCorruptQueueFound(t *testing.T) {
	v := &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
		Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	err := Run(context.Background(), &corrupting{v: v}, idle{}, discard{})
	require.ErrorContains(t, err, "queued job 0 is not pending")
	require.ErrorContains(t, err, "t=")
}

// memBackend wakes up every second; at its fifth instant it moves GPU 1's
// measured memory to mem (no event: memory changes without one), and from
// then on its memory stays there.
type memBackend struct {
	v   *policies.View
	n   int
	mem float64
}

func (b *memBackend) Next() ([]policies.Event, error) {
	b.n++
	b.v.Now = time.Duration(b.n) * time.Second
	if b.n == 5 {
		b.v.GPUs[1].UsedMiB = b.mem
	}
	if b.n > 20 {
		return nil, nil
	}
	return []policies.Event{{Kind: policies.Wakeup, T: b.v.Now}}, nil
}
func (b *memBackend) View() *policies.View        { return b.v }
func (b *memBackend) Apply(policies.Action) error { return nil }

// watcher records GPU 1's memory as each decision sees it, and scribbles
// on its snapshot (which the next decision must not see).
type watcher struct{ seen []float64 }

func (w *watcher) Name() string { return "watcher" }
func (w *watcher) Schedule(v *policies.View) []policies.Action {
	w.seen = append(w.seen, v.GPUs[1].UsedMiB)
	v.GPUs[0].UsedMiB = 77
	v.GPUs[0].Jobs = append(v.GPUs[0].Jobs, 9)
	return nil
}

// Between full checks the loop copies and checks only the GPUs that differ
// from the snapshot: a memory change without an event reaches the policy at
// once, a GPU the policy scribbled on is restored, and a memory reading out
// of range is reported at the decision that first sees it, not at the next
// full check.
func TestSnapshotChangedGPUs(t *testing.T) {
	done := func() *policies.View {
		return &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}, {Index: 1, CapacityMiB: 100}},
			Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	}
	w := &watcher{}
	b := &memBackend{v: done(), mem: 40}
	require.NoError(t, Run(context.Background(), b, policyFunc{w}, discard{}))
	require.Len(t, w.seen, 20)
	require.Equal(t, []float64{0, 0, 0, 0, 40, 40}, w.seen[:6])

	b = &memBackend{v: done(), mem: 140}
	err := Run(context.Background(), b, idle{}, discard{})
	require.ErrorContains(t, err, "measured memory 140")
	require.ErrorContains(t, err, "t=5s")
}

// policyFunc checks that a scribbling watcher never sees its own writes.
type policyFunc struct{ w *watcher }

func (p policyFunc) Name() string { return "checked" }
func (p policyFunc) Schedule(v *policies.View) []policies.Action {
	if v.GPUs[0].UsedMiB != 0 || len(v.GPUs[0].Jobs) != 0 {
		panic("the policy saw its own writes to the snapshot")
	}
	return p.w.Schedule(v)
}

// script is a backend that returns one instant of events per Next, and
// fails the first placement it is asked for.
type script struct {
	v       *policies.View
	instant [][]policies.Event
	failed  bool
}

func (b *script) Next() ([]policies.Event, error) {
	if len(b.instant) == 0 {
		return nil, nil
	}
	evs := b.instant[0]
	b.instant = b.instant[1:]
	b.v.Now = evs[0].At()
	return evs, nil
}
func (b *script) View() *policies.View { return b.v }
func (b *script) Apply(a policies.Action) error {
	if a.Kind == policies.Place && !b.failed {
		b.failed = true
		return &PlaceError{T: b.v.Now, Job: a.Job, GPUs: a.GPUs, Err: errTest}
	}
	return nil
}

var errTest = errors.New("test")

// picky wants only finishes and failed placements; it places job 0 once
// (which the backend fails) and observes every event.
type picky struct {
	decided  []time.Duration
	observed int
}

func (p *picky) Name() string { return "picky" }
func (p *picky) Schedule(v *policies.View) []policies.Action {
	p.decided = append(p.decided, v.Now)
	if len(p.decided) == 1 {
		return []policies.Action{{Kind: policies.Place, Job: 0, GPUs: []int{0}}}
	}
	return nil
}
func (p *picky) Observe(policies.Event) { p.observed++ }
func (p *picky) Wants(e policies.Event) bool {
	switch e.Kind {
	case policies.JobFinished, policies.PlaceFailed:
		return true
	}
	return false
}

type counter struct{ n int }

func (c *counter) Event(policies.Event)   { c.n++ }
func (c *counter) Action(policies.Action) {}

// A Selective policy is asked to decide at the first instant, at instants
// with an event it wants, and after a failed placement; every event is
// still observed and recorded.
func TestSelectiveSkipsDecisions(t *testing.T) {
	v := &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
		Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	b := &script{v: v, instant: [][]policies.Event{
		{policies.Event{Kind: policies.Wakeup, T: 1 * time.Second}},
		{policies.Event{Kind: policies.Wakeup, T: 2 * time.Second}}, // after the failed placement
		{policies.Event{Kind: policies.Wakeup, T: 3 * time.Second}},
		{policies.Event{Kind: policies.JobArrived, T: 4 * time.Second, Job: 0}},
		{policies.Event{Kind: policies.Wakeup, T: 5 * time.Second}, policies.Event{Kind: policies.JobFinished, T: 5 * time.Second, Job: 0}},
		{policies.Event{Kind: policies.Wakeup, T: 6 * time.Second}},
	}}
	p, rec := &picky{}, &counter{}
	require.NoError(t, Run(context.Background(), b, p, rec))
	require.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 5 * time.Second}, p.decided)
	require.Equal(t, 8, p.observed, "7 events and the failed placement")
	require.Equal(t, 8, rec.n)
}

// inPlaceCounter is an InPlaceRecorder that keeps where each event it read
// in place was, and counts those it was handed by value.
type inPlaceCounter struct {
	counter
	at []*policies.Event
}

func (c *inPlaceCounter) EventAt(e *policies.Event) { c.at = append(c.at, e) }

// An InPlaceRecorder reads each of the backend's events where the backend
// returned it (EventAt, no copy); a failed placement, the loop's own event,
// comes by value (Event). A plain Recorder gets every event by value.
func TestInPlaceRecorderReadsBackendsEvents(t *testing.T) {
	instants := func() [][]policies.Event {
		return [][]policies.Event{
			{{Kind: policies.Wakeup, T: 1 * time.Second}},
			{{Kind: policies.JobArrived, T: 2 * time.Second, Job: 0}, {Kind: policies.JobFinished, T: 2 * time.Second, Job: 0}},
		}
	}
	view := func() *policies.View {
		return &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
			Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	}
	evs := instants()
	in := &inPlaceCounter{}
	require.NoError(t, Run(context.Background(), &script{v: view(), instant: evs}, &picky{}, in))
	want := []*policies.Event{&evs[0][0], &evs[1][0], &evs[1][1]}
	require.Len(t, in.at, len(want))
	for i := range want {
		require.Same(t, want[i], in.at[i], "event %d read in place", i)
	}
	require.Equal(t, 1, in.n, "the failed placement")
	plain := &counter{}
	require.NoError(t, Run(context.Background(), &script{v: view(), instant: instants()}, &picky{}, plain))
	require.Equal(t, 4, plain.n)
}

// keptActs is picky whose first decision returns acts, kept so that where
// the loop hands them on can be checked.
type keptActs struct {
	picky
	acts []policies.Action
}

func (p *keptActs) Schedule(v *policies.View) []policies.Action {
	if p.picky.Schedule(v) == nil {
		return nil
	}
	return p.acts
}

// inPlaceActions is an InPlaceActionRecorder that keeps where each action
// it read in place was, and counts those it was handed by value.
type inPlaceActions struct {
	counter
	at      []*policies.Action
	byValue int
}

func (c *inPlaceActions) Action(policies.Action)      { c.byValue++ }
func (c *inPlaceActions) ActionAt(a *policies.Action) { c.at = append(c.at, a) }

// An InPlaceActionRecorder reads each of the policy's actions where the
// policy returned it (ActionAt, no copy); a plain Recorder gets them by
// value.
func TestInPlaceActionRecorderReadsPolicysActions(t *testing.T) {
	view := func() *policies.View {
		return &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
			Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	}
	instants := [][]policies.Event{{{Kind: policies.Wakeup, T: 1 * time.Second}}}
	p := &keptActs{acts: []policies.Action{{Kind: policies.Defer, Job: 0, GPU: 0, Reason: "r"}, {Kind: policies.Place, Job: 0, GPUs: []int{0}}}}
	in := &inPlaceActions{}
	require.NoError(t, Run(context.Background(), &script{v: view(), instant: instants}, p, in))
	require.Len(t, in.at, len(p.acts))
	for i := range p.acts {
		require.Same(t, &p.acts[i], in.at[i], "action %d read in place", i)
	}
	require.Zero(t, in.byValue)
}

// inPlacePicky is picky reading events in place: it keeps where each
// event it observed or was asked about in place was, and counts those
// handed by value.
type inPlacePicky struct {
	picky
	observedAt, wantsAt []*policies.Event
	byValue             int
}

func (p *inPlacePicky) Observe(policies.Event) { p.byValue++ }
func (p *inPlacePicky) Wants(e policies.Event) bool {
	p.byValue++
	return p.picky.Wants(e)
}
func (p *inPlacePicky) ObserveAt(e *policies.Event) { p.observedAt = append(p.observedAt, e) }
func (p *inPlacePicky) WantsAt(e *policies.Event) bool {
	p.wantsAt = append(p.wantsAt, e)
	return p.picky.Wants(*e)
}

// A policy that reads events in place (policies.InPlaceObserver,
// policies.InPlaceSelective) observes each of the backend's events where
// the backend returned it, and is asked whether it wants them so until one
// is wanted; a failed placement, the loop's own event, comes by value. It
// decides when picky would.
func TestInPlacePolicyReadsBackendsEvents(t *testing.T) {
	evs := [][]policies.Event{
		{{Kind: policies.Wakeup, T: 1 * time.Second}}, // decides: the first instant
		{{Kind: policies.Wakeup, T: 2 * time.Second}}, // after the failed placement
		{{Kind: policies.Wakeup, T: 3 * time.Second}, {Kind: policies.JobFinished, T: 3 * time.Second, Job: 0}, {Kind: policies.Wakeup, T: 3 * time.Second}},
	}
	v := &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
		Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	p := &inPlacePicky{}
	require.NoError(t, Run(context.Background(), &script{v: v, instant: evs}, p, discard{}))
	require.Equal(t, []time.Duration{1 * time.Second, 2 * time.Second, 3 * time.Second}, p.decided)
	same := func(want, got []*policies.Event) {
		t.Helper()
		require.Len(t, got, len(want))
		for i := range want {
			require.Same(t, want[i], got[i], "event %d read in place", i)
		}
	}
	same([]*policies.Event{&evs[0][0], &evs[1][0], &evs[2][0], &evs[2][1], &evs[2][2]}, p.observedAt)
	// Not asked about the first two instants' events (the first instant
	// always has a decision, and the failed placement was wanted), nor
	// about the third's last event (its finish was wanted).
	same([]*policies.Event{&evs[2][0], &evs[2][1]}, p.wantsAt)
	require.Equal(t, 2, p.byValue, "the failed placement, observed and asked about")
}

// A long queue is checked in full less often, in proportion to its length
// (fullCheckCost entries per decision on average), and an entry a backend
// corrupted is still found: here at the first full check after the tenth
// instant, the 501st decision instead of the 65th.
func TestLongQueueCheckedLessOften(t *testing.T) {
	const n = 4000
	jobs := []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}
	var queue []policies.JobID
	for i := 1; i <= n; i++ {
		jobs = append(jobs, policies.Job{ID: policies.JobID(i), GPUs: 1, State: policies.Pending})
		queue = append(queue, policies.JobID(i))
	}
	v := &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}}, Jobs: jobs, Queue: policies.ListOf(queue...)}
	err := Run(context.Background(), &corrupting{v: v}, idle{}, discard{})
	require.ErrorContains(t, err, "queued job 0 is not pending")
	require.ErrorContains(t, err, fmt.Sprintf("t=%v ", time.Duration(1+(n+1)/fullCheckCost)*time.Second))
}

// reporting is a backend of n GPUs that wakes up every second, reports the
// GPUs whose view entry it changed (ChangeReporter), and moves GPU 1's
// memory to 40 MiB at its fifth instant; at its eighth it moves GPU 2's to
// 30 MiB without reporting it when quiet (a backend that breaks the
// contract), and at its tenth GPU 3's to 140 MiB, reported.
type reporting struct {
	memBackend
	changed []int
	quiet   bool
	reads   int // ChangedGPUs calls
}

func (b *reporting) Next() ([]policies.Event, error) {
	b.n++
	b.v.Now = time.Duration(b.n) * time.Second
	switch b.n {
	case 5:
		b.v.GPUs[1].UsedMiB = 40
		b.changed = append(b.changed, 1)
	case 8:
		b.v.GPUs[2].UsedMiB = 30
		if !b.quiet {
			b.changed = append(b.changed, 2)
		}
	case 10:
		b.v.GPUs[3].UsedMiB = b.mem
		b.changed = append(b.changed, 3)
	}
	if b.n > 40 {
		return nil, nil
	}
	return []policies.Event{{Kind: policies.Wakeup, T: b.v.Now}}, nil
}

func (b *reporting) ChangedGPUs(dst []int) []int {
	b.reads++
	dst = append(dst, b.changed...)
	b.changed = b.changed[:0]
	return dst
}

// spoiler records GPUs 1 and 2's memory as each decision sees it and
// scribbles on GPU 0 of its snapshot at its third decision.
type spoiler struct {
	seen    [][2]float64
	spoiled []float64 // GPU 0's memory as each decision sees it
}

func (p *spoiler) Name() string { return "spoiler" }
func (p *spoiler) Schedule(v *policies.View) []policies.Action {
	p.seen = append(p.seen, [2]float64{v.GPUs[1].UsedMiB, v.GPUs[2].UsedMiB})
	p.spoiled = append(p.spoiled, v.GPUs[0].UsedMiB)
	if len(p.seen) == 3 {
		v.GPUs[0].UsedMiB = 77
	}
	return nil
}

// With a backend that reports the GPUs it changed, the loop compares and
// copies only those, and fullCheckCost more in turn: a reported change
// reaches the policy at once, and so does a memory reading out of range; a
// GPU the policy scribbled on is restored within len(GPUs)/fullCheckCost
// decisions, and so is a change the backend failed to report.
func TestReportedGPUs(t *testing.T) {
	const n = 4 * fullCheckCost
	view := func() *policies.View {
		v := &policies.View{Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
		for g := range n {
			v.GPUs = append(v.GPUs, policies.GPU{Index: g, CapacityMiB: 100})
		}
		return v
	}
	for _, quiet := range []bool{false, true} {
		p := &spoiler{}
		b := &reporting{memBackend: memBackend{v: view(), mem: 50}, quiet: quiet}
		require.NoError(t, Run(context.Background(), b, p, discard{}))
		require.Len(t, p.seen, 40)
		for i, s := range p.seen {
			require.Equal(t, float64(map[bool]int{true: 40}[i >= 4]), s[0], "GPU 1 at decision %d", i+1)
			if !quiet || i < 7 {
				require.Equal(t, float64(map[bool]int{true: 30}[i >= 7]), s[1], "GPU 2 at decision %d", i+1)
			}
		}
		// The first decision checks the whole view; each later one
		// fullCheckCost GPUs in turn, GPU 0 at the second and the sixth:
		// the scribble of the third is seen until then.
		require.Equal(t, []float64{0, 0, 0, 77, 77, 0}, p.spoiled[:6])
		require.NotContains(t, p.spoiled[6:], 77.0)
		if quiet { // GPU 2 unreported: within a turn of the guard
			require.Contains(t, p.seen[7+n/fullCheckCost:], [2]float64{40, 30})
		}
	}
	b := &reporting{memBackend: memBackend{v: view(), mem: 140}}
	err := Run(context.Background(), b, idle{}, discard{})
	require.ErrorContains(t, err, "measured memory 140")
	require.ErrorContains(t, err, "t=10s")
}

// jobsSeen records where the jobs of each view it decides on lie.
type jobsSeen struct{ at []*policies.Job }

func (p *jobsSeen) Name() string { return "seen" }
func (p *jobsSeen) Schedule(v *policies.View) []policies.Action {
	p.at = append(p.at, &v.Jobs[0])
	return nil
}

// readingJobs is a jobsSeen that says it only reads jobs.
type readingJobs struct{ jobsSeen }

func (*readingJobs) ReadsJobsOnly() {}

// A policy that only reads jobs (policies.JobsReader) decides on the
// backend's own jobs, every other on copies of them, and both see the
// same jobs.
func TestJobsReaderSharesJobs(t *testing.T) {
	done := func() *policies.View {
		return &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}, {Index: 1, CapacityMiB: 100}},
			Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done, Name: "a"}}}
	}
	copying, reading := &jobsSeen{}, &readingJobs{}
	for _, p := range []policies.Policy{copying, reading} {
		b := &memBackend{v: done(), mem: 40}
		require.NoError(t, Run(context.Background(), b, p, discard{}))
		seen := copying
		if p == policies.Policy(reading) {
			seen = &reading.jobsSeen
		}
		require.Len(t, seen.at, 20)
		for _, j := range seen.at {
			require.Equal(t, b.v.Jobs[0], *j)
			require.Equal(t, p == policies.Policy(reading), j == &b.v.Jobs[0])
		}
	}
}

// listing is a backend of two GPUs that wakes up every second for 100
// seconds; at its fifth instant GPU 1 lists job 0, which is done (broken
// bookkeeping), and at its instant memAt (0: never) GPU 0's measured
// memory goes past its capacity.
type listing struct {
	v     *policies.View
	n     int
	memAt int
}

func (b *listing) Next() ([]policies.Event, error) {
	b.n++
	b.v.Now = time.Duration(b.n) * time.Second
	switch b.n {
	case 5:
		b.v.GPUs[1].Jobs = []policies.JobID{0}
	case b.memAt:
		b.v.GPUs[0].UsedMiB = 500
	}
	if b.n > 100 {
		return nil, nil
	}
	return []policies.Event{{Kind: policies.Wakeup, T: b.v.Now}}, nil
}
func (b *listing) View() *policies.View        { return b.v }
func (b *listing) Apply(policies.Action) error { return nil }

// selfChecking is listing declaring that it checks its own bookkeeping.
type selfChecking struct{ *listing }

func (selfChecking) ChecksBookkeeping() {}

// A backend that checks its own bookkeeping (SelfChecker) has the loop
// cross-check GPUs and jobs only at its full checks: a GPU listing a job
// that does not run there is found at the first full check (the 65th
// decision) instead of at once; a GPU's measured memory out of range is
// still found at the decision that first sees it.
func TestSelfCheckerLeavesBookkeeping(t *testing.T) {
	view := func() *policies.View {
		return &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}, {Index: 1, CapacityMiB: 100}},
			Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	}
	for _, c := range []struct {
		name    string
		b       Backend
		want, t string
	}{
		{"plain", &listing{v: view()}, "GPU 1 lists job 0", "t=5s "},
		{"self-checking", selfChecking{&listing{v: view()}}, "GPU 1 lists job 0", fmt.Sprintf("t=%v ", time.Duration(1+fullCheckEvery)*time.Second)},
		{"self-checking, memory", selfChecking{&listing{v: view(), memAt: 3}}, "GPU 0: measured memory 500 MiB", "t=3s "},
	} {
		err := Run(context.Background(), c.b, idle{}, discard{})
		require.ErrorContains(t, err, c.want, c.name)
		require.ErrorContains(t, err, c.t, c.name)
	}
}

// deferBackend wakes the policy three times on a view with no job and
// records the kinds of the actions applied.
type deferBackend struct {
	v       policies.View
	n       int
	applied []policies.ActionKind
}

func (b *deferBackend) Next() ([]policies.Event, error) {
	if b.n++; b.n > 3 {
		return nil, nil
	}
	b.v.Now = time.Duration(b.n) * time.Second
	return []policies.Event{{Kind: policies.Wakeup, T: b.v.Now}}, nil
}
func (b *deferBackend) View() *policies.View { return &b.v }
func (b *deferBackend) Apply(a policies.Action) error {
	b.applied = append(b.applied, a.Kind)
	return nil
}

type ignoringBackend struct{ *deferBackend }

func (ignoringBackend) IgnoresDeferrals() {}

// changer defers and undefers at every decision and notes whether it was
// switched to deferral changes.
type changer struct{ switched bool }

func (*changer) Name() string { return "changer" }
func (*changer) Schedule(*policies.View) []policies.Action {
	return []policies.Action{{Kind: policies.Defer, Job: 0, GPU: 0, Reason: "x"}, {Kind: policies.Undefer, Job: 0, GPU: 1}}
}
func (c *changer) ReportDeferralChanges() { c.switched = true }

type changeRecorder struct {
	takes bool
	asked int
	kinds []policies.ActionKind
}

func (*changeRecorder) Event(policies.Event) {}
func (r *changeRecorder) Action(a policies.Action) {
	r.kinds = append(r.kinds, a.Kind)
}
func (r *changeRecorder) TakeDeferralChanges() bool {
	r.asked++
	return r.takes
}

// TestDeferralChangesNegotiated: the loop switches a policy to deferral
// changes only when its backend ignores deferrals and its recorder takes
// them; it records every action, applies no Defer to a backend that
// ignores them and no Undefer to any backend.
func TestDeferralChangesNegotiated(t *testing.T) {
	for _, c := range []struct {
		ignores, takes, switched bool
		applied                  []policies.ActionKind
	}{
		{true, true, true, nil},
		{true, false, false, nil},
		{false, true, false, []policies.ActionKind{policies.Defer, policies.Defer, policies.Defer}},
	} {
		t.Run(fmt.Sprintf("ignores=%v/takes=%v", c.ignores, c.takes), func(t *testing.T) {
			db := &deferBackend{v: policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 1}, {Index: 1, CapacityMiB: 1}}}}
			var b Backend = db
			if c.ignores {
				b = ignoringBackend{db}
			}
			p, rec := &changer{}, &changeRecorder{takes: c.takes}
			require.NoError(t, Run(context.Background(), b, p, rec))
			require.Equal(t, c.switched, p.switched)
			require.Equal(t, c.applied, db.applied)
			require.Len(t, rec.kinds, 6)
			if !c.ignores {
				require.Zero(t, rec.asked) // not asked: the policy could not be switched
			}
		})
	}
}

// The loop reads a backend's changed GPUs (ChangeReporter) only on a view
// of more than fullCheckCost GPUs, where check uses them: on a smaller one
// every GPU is compared, and a GPU changed unreported is still seen at the
// next decision.
func TestChangedGPUsReadOnlyWhenUsed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gpus  int
		reads bool
	}{
		{"small view: compared in full", fullCheckCost, false},
		{"large view: the reports", fullCheckCost + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &policies.View{Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
			for g := range tc.gpus {
				v.GPUs = append(v.GPUs, policies.GPU{Index: g, CapacityMiB: 100})
			}
			p := &spoiler{}
			b := &reporting{memBackend: memBackend{v: v, mem: 50}, quiet: true}
			require.NoError(t, Run(context.Background(), b, p, discard{}))
			require.Len(t, p.seen, 40)
			if tc.reads {
				require.Equal(t, 40, b.reads)
			} else {
				require.Zero(t, b.reads)
				require.Equal(t, [2]float64{40, 30}, p.seen[7]) // GPU 2, unreported, seen at once
			}
		})
	}
}
