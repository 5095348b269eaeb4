package dispatch

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// greedy places each queued job on idle GPUs when enough are, else defers it
// on GPU 0 and asks for a decision in a minute; it records what it saw.
type greedy struct {
	seen []seen
}

type seen struct {
	gpus  []int                    // the view's GPU indices
	queue []policies.JobID         // its queue
	on    map[policies.JobID][]int // running jobs' GPUs as it sees them
	tel   []int                    // the GPU Samples was asked for, per view GPU
}

func (*greedy) Name() string { return "greedy" }

func (p *greedy) Schedule(v *policies.View) []policies.Action {
	s := seen{queue: v.Queue.AppendTo(nil), on: map[policies.JobID][]int{}}
	for i, g := range v.GPUs {
		s.gpus = append(s.gpus, g.Index)
		for _, id := range g.Jobs {
			s.on[id] = append([]int(nil), v.Job(id).On...)
		}
		if v.Telemetry != nil {
			x := v.Telemetry.Samples(nil, i, 1)
			s.tel = append(s.tel, int(x[0].UsedMiB))
		}
	}
	p.seen = append(p.seen, s)
	var acts []policies.Action
	taken := make([]bool, len(v.GPUs))
	for _, id := range v.Queue.All() {
		gpus := v.IdleGPUs(taken, v.Job(id).GPUs)
		if gpus == nil {
			acts = append(acts, policies.Action{Kind: policies.Defer, Job: id, GPU: 0, Reason: "busy"}, policies.Action{Kind: policies.Wake, At: v.Now + time.Minute})
			break
		}
		for _, g := range gpus {
			taken[g] = true
		}
		acts = append(acts, policies.Action{Kind: policies.Place, Job: id, GPUs: gpus})
	}
	return acts
}

// gpuTel answers each GPU's sample with UsedMiB = the GPU asked for.
type gpuTel struct{}

func (gpuTel) Samples(dst []policies.Sample, gpu, n int) []policies.Sample {
	return append(dst, policies.Sample{UsedMiB: float64(gpu)})
}

// view builds a cluster view of n GPUs where running[id] are the GPUs of a
// running job and queue the pending jobs with their GPU counts.
func view(n int, running map[policies.JobID][]int, queue [][2]int) *policies.View {
	v := &policies.View{Now: time.Hour, GPUs: make([]policies.GPU, n), Telemetry: gpuTel{}}
	for g := range v.GPUs {
		v.GPUs[g] = policies.GPU{Index: g, CapacityMiB: 40960}
	}
	for id := range policies.JobID(len(running) + len(queue)) {
		v.Jobs = append(v.Jobs, policies.Job{ID: id})
	}
	for id, gpus := range running {
		j := &v.Jobs[id]
		j.State, j.GPUs, j.On = policies.Running, len(gpus), gpus
		for _, g := range gpus {
			v.GPUs[g].Jobs = append(v.GPUs[g].Jobs, id)
		}
	}
	for _, q := range queue {
		id := policies.JobID(q[0])
		v.Jobs[id].State, v.Jobs[id].GPUs = policies.Pending, q[1]
		v.Queue = policies.ListOf(append(v.Queue.AppendTo(nil), id)...)
	}
	return v
}

func newGreedy(t *testing.T, strategy string, sizes []int) (*Dispatcher, []*greedy) {
	var ps []*greedy
	d, err := New(Config{Strategy: strategy, Depth: 16}, sizes, func() (policies.Policy, error) {
		p := &greedy{}
		ps = append(ps, p)
		return p, nil
	})
	require.NoError(t, err)
	return d, ps
}

func places(acts []policies.Action) map[policies.JobID][]int {
	m := map[policies.JobID][]int{}
	for _, a := range acts {
		if a.Kind == policies.Place {
			m[a.Job] = a.GPUs
		}
	}
	return m
}

// TestStrategies: servers of 4 GPUs with 2, 4 and 3 idle; one job of n
// GPUs goes where the strategy says.
func TestStrategies(t *testing.T) {
	running := map[policies.JobID][]int{0: {0, 1}, 1: {8}}
	for _, tc := range []struct {
		strategy string
		gpus     int
		want     []int
	}{
		{BestFit, 2, []int{2, 3}},
		{FirstFit, 2, []int{2, 3}},
		{LeastLoaded, 2, []int{4, 5}},
		{BestFit, 3, []int{9, 10, 11}},
		{FirstFit, 3, []int{4, 5, 6}},
		{LeastLoaded, 3, []int{4, 5, 6}},
		{BestFit, 1, []int{2}},
		{LeastLoaded, 4, []int{4, 5, 6, 7}},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			d, _ := newGreedy(t, tc.strategy, []int{4, 4, 4})
			acts := d.Schedule(view(12, running, [][2]int{{2, tc.gpus}}))
			require.Equal(t, map[policies.JobID][]int{2: tc.want}, places(acts))
		})
	}
}

// TestPromises: jobs routed in one decision take the idle GPUs they were
// promised, so best fit spreads a queue over servers instead of sending
// every job to the same tight server.
func TestPromises(t *testing.T) {
	d, _ := newGreedy(t, BestFit, []int{4, 4})
	acts := d.Schedule(view(8, map[policies.JobID][]int{0: {0, 1}}, [][2]int{{1, 2}, {2, 2}, {3, 4}, {4, 1}}))
	// Job 1 fits server 0 tightly, job 2 then only server 1, job 3 nowhere
	// (it goes to the most idle server, 1, and waits there), job 4 too.
	require.Equal(t, map[policies.JobID][]int{1: {2, 3}, 2: {4, 5}}, places(acts))
}

// TestRestrictedView: each server's policy sees its own GPUs numbered from
// 0, its running jobs' GPUs renumbered, its telemetry shifted, and only the
// jobs routed to it; its Defer and Wake come back in cluster terms.
func TestRestrictedView(t *testing.T) {
	d, ps := newGreedy(t, FirstFit, []int{2, 3})
	v := view(5, map[policies.JobID][]int{0: {0, 1}, 1: {3}}, [][2]int{{2, 1}, {3, 2}})
	acts := d.Schedule(v)
	require.Equal(t, map[policies.JobID][]int{2: {2}}, places(acts))
	require.Empty(t, ps[0].seen, "server 0 has nothing routed to it")
	require.Len(t, ps[1].seen, 1)
	s := ps[1].seen[0]
	require.Equal(t, []int{0, 1, 2}, s.gpus)
	require.Equal(t, []int{2, 3, 4}, s.tel)
	require.Equal(t, []policies.JobID{2, 3}, s.queue)
	require.Equal(t, map[policies.JobID][]int{1: {1}}, s.on)
	require.Contains(t, acts, policies.Action{Kind: policies.Defer, Job: 3, GPU: 2, Reason: "busy"})
	require.Contains(t, acts, policies.Action{Kind: policies.Wake, At: v.Now + time.Minute})
	require.Equal(t, []int{0, 1}, v.Jobs[0].On, "the cluster view is not modified")
}

// watcher is greedy that also records, during each decision, job 1's GPUs
// and profile in the cluster view.
type watcher struct {
	*greedy
	cluster *policies.View
	on      [][]int
	solo    []float64
}

func (w *watcher) Schedule(v *policies.View) []policies.Action {
	w.on = append(w.on, slices.Clone(w.cluster.Jobs[1].On))
	w.solo = append(w.solo, w.cluster.Jobs[2].SoloS)
	return w.greedy.Schedule(v)
}

// TestViewUnchangedDuring: the cluster view handed to Schedule is not
// changed while the servers' policies decide either (each has a view of
// its own): running jobs' GPUs keep cluster numbers, queued jobs the
// profile of the cluster view, while the server's policy sees its own.
func TestViewUnchangedDuring(t *testing.T) {
	v := view(5, map[policies.JobID][]int{0: {0, 1}, 1: {3}}, [][2]int{{2, 1}, {3, 2}})
	v.Jobs[2].SoloS = 100
	var ws []*watcher
	d, err := New(Config{Strategy: FirstFit, Depth: 16}, []int{2, 3}, func() (policies.Policy, error) {
		w := &watcher{greedy: &greedy{}, cluster: v}
		ws = append(ws, w)
		return w, nil
	})
	require.NoError(t, err)
	require.NoError(t, d.SetTypes(Types{Server: []int{0, 1}, Pressure: []bool{false, false},
		Runs: func(policies.JobID) uint8 { return 3 },
		Profile: func(id policies.JobID, k int) (policies.Profile, bool) {
			return policies.Profile{SoloS: float64(200 + k)}, true
		}}))
	d.Schedule(v)
	require.Equal(t, [][]int{{3}}, ws[1].on, "during the decision")
	require.Equal(t, []float64{100}, ws[1].solo, "during the decision")
	require.Equal(t, map[policies.JobID][]int{1: {1}}, ws[1].seen[0].on, "the server's policy sees its numbering")
	require.Equal(t, []int{3}, v.Jobs[1].On)
	require.Equal(t, 100.0, v.Jobs[2].SoloS)
}

// TestBigJobs: a job larger than a server takes the lowest-numbered whole
// idle servers, or waits without holding back smaller jobs; a big job that
// failed alone is stopped.
func TestBigJobs(t *testing.T) {
	d, _ := newGreedy(t, BestFit, []int{4, 4, 4, 4})
	acts := d.Schedule(view(16, map[policies.JobID][]int{0: {5}}, [][2]int{{1, 6}, {2, 12}, {3, 1}}))
	require.Equal(t, map[policies.JobID][]int{1: {0, 1, 2, 3, 8, 9}, 3: {4}}, places(acts))

	// A small job that fits no idle GPU is not routed to a server a big
	// job took whole in the same decision (its policy would place it
	// beside the big job, on GPUs it still sees idle).
	two, _ := newGreedy(t, BestFit, []int{4, 4})
	acts = two.Schedule(view(8, nil, [][2]int{{0, 8}, {1, 1}}))
	require.Equal(t, map[policies.JobID][]int{0: {0, 1, 2, 3, 4, 5, 6, 7}}, places(acts))

	v := view(16, nil, [][2]int{{0, 16}})
	v.Jobs[0].Attempts, v.Jobs[0].LastFailure = 1, policies.OOM
	v.Failed = []policies.JobID{0}
	require.Equal(t, []policies.Action{{Kind: policies.Stop, Job: 0, Reason: "failed on whole servers: oom"}}, d.Schedule(v))
}

func TestNewErrors(t *testing.T) {
	build := func() (policies.Policy, error) { return &greedy{}, nil }
	_, err := New(Config{Strategy: "random", Depth: 1}, []int{8}, build)
	require.ErrorContains(t, err, `dispatch "random": want bestfit, firstfit or leastloaded`)
	_, err = New(Config{Strategy: BestFit, Depth: 1}, nil, build)
	require.ErrorContains(t, err, "no servers")
	_, err = New(Config{Strategy: BestFit, Depth: 1}, []int{8, 0}, build)
	require.ErrorContains(t, err, "server 1 has 0 GPUs")
	_, err = New(Config{Strategy: BestFit}, []int{8}, build)
	require.ErrorContains(t, err, "route_depth 0: want at least 1")
}

func TestReadConfig(t *testing.T) {
	p := policies.NewParams(map[string]string{"dispatch": "leastloaded", "route_depth": "3"})
	require.Equal(t, Config{LeastLoaded, 3}, ReadConfig(p))
	require.NoError(t, p.Done("cluster"))
	p = policies.NewParams(map[string]string{"dispatch": "worst"})
	ReadConfig(p)
	require.ErrorContains(t, p.Done("cluster"), "worst")
	require.Equal(t, Config{BestFit, 16}, ReadConfig(policies.NewParams(nil)))
}

// TestDepth: with no idle GPU, a server is offered its GPU count plus
// depth queued jobs per decision, the rest stay unrouted.
func TestDepth(t *testing.T) {
	var queue [][2]int
	for id := 2; id < 40; id++ {
		queue = append(queue, [2]int{id, 1})
	}
	var ps []*greedy
	d, err := New(Config{Strategy: BestFit, Depth: 3}, []int{2, 2}, func() (policies.Policy, error) {
		p := &greedy{}
		ps = append(ps, p)
		return p, nil
	})
	require.NoError(t, err)
	d.Schedule(view(4, map[policies.JobID][]int{0: {0, 1}, 1: {2, 3}}, queue))
	// Round robin from server 0 (both equally idle): 2, 4, 6, 8, 10 to
	// server 0; 3, 5, 7, 9, 11 to server 1; then routing stops.
	require.Equal(t, []policies.JobID{2, 4, 6, 8, 10}, ps[0].seen[0].queue)
	require.Equal(t, []policies.JobID{3, 5, 7, 9, 11}, ps[1].seen[0].queue)
}

// TestSkipUnchanged: once it observes events, the dispatcher does not ask
// a server again while nothing it sees changed and its Wake has not come,
// repeating its Defer actions; an event on its GPUs or its Wake time makes
// it decide again.
func TestSkipUnchanged(t *testing.T) {
	d, ps := newGreedy(t, BestFit, []int{2, 2})
	running := map[policies.JobID][]int{0: {0, 1}, 1: {2, 3}}
	d.Observe(policies.Event{Kind: policies.JobStarted, Job: 0, GPUs: []int{0, 1}})
	d.Observe(policies.Event{Kind: policies.JobStarted, Job: 1, GPUs: []int{2, 3}})
	v := view(4, running, [][2]int{{2, 1}})
	first := slices.Clone(d.Schedule(v)) // the next decision reuses its buffer
	require.Len(t, ps[0].seen, 1)
	v.Now += time.Second
	require.Equal(t, first, d.Schedule(v))
	require.Len(t, ps[0].seen, 1, "nothing changed: not asked")
	d.Observe(policies.Event{Kind: policies.JobActive, Job: 1})
	d.Schedule(v)
	require.Len(t, ps[0].seen, 1, "an event on server 1 does not concern server 0")
	d.Observe(policies.Event{Kind: policies.JobFinished, Job: 0})
	d.Schedule(v)
	require.Len(t, ps[0].seen, 2, "an event on its GPUs")
	v.Now += time.Minute
	d.Schedule(v)
	require.Len(t, ps[0].seen, 3, "its Wake came")
}

// picky is greedy with a Wants that declines every event.
type picky struct{ *greedy }

func (picky) Wants(policies.Event) bool { return false }

// TestWants: what the dispatcher asks to decide on after a decision.
func TestWants(t *testing.T) {
	ev := func(k policies.EventKind, id policies.JobID, at time.Duration) policies.Event {
		return policies.Event{Kind: k, Job: id, T: at}
	}
	t.Run("nothing pending", func(t *testing.T) {
		d, _ := newGreedy(t, BestFit, []int{2, 2})
		require.True(t, d.Wants(ev(policies.JobArrived, 0, 0)), "before the first decision")
		d.Observe(ev(policies.JobArrived, 0, time.Hour))
		require.Len(t, places(d.Schedule(view(4, nil, [][2]int{{0, 2}}))), 1)
		for k, want := range map[policies.EventKind]bool{
			policies.JobStarted: false, policies.JobActive: false, policies.JobFinished: false,
			policies.Wakeup: false, policies.JobStopped: false,
			policies.JobArrived: true, policies.JobFailed: true, policies.PlaceFailed: true,
		} {
			require.Equal(t, want, d.Wants(ev(k, 0, time.Hour)), "%v", k)
		}
	})
	// Two servers of 2 busy GPUs, 38 queued jobs of 1 GPU: routing stops
	// after 5 jobs per server (depth 3); each server defers its head and
	// wakes in a minute.
	saturated := func(t *testing.T, build func() policies.Policy) *Dispatcher {
		var queue [][2]int
		for id := 2; id < 40; id++ {
			queue = append(queue, [2]int{id, 1})
		}
		d, err := New(Config{Strategy: BestFit, Depth: 3}, []int{2, 2}, func() (policies.Policy, error) { return build(), nil })
		require.NoError(t, err)
		d.Observe(policies.Event{Kind: policies.JobStarted, Job: 0, GPUs: []int{0, 1}})
		d.Observe(policies.Event{Kind: policies.JobStarted, Job: 1, GPUs: []int{2, 3}})
		require.Empty(t, places(d.Schedule(view(4, map[policies.JobID][]int{0: {0, 1}, 1: {2, 3}}, queue))))
		return d
	}
	t.Run("saturated", func(t *testing.T) {
		d := saturated(t, func() policies.Policy { return &greedy{} })
		require.False(t, d.Wants(ev(policies.JobArrived, 40, time.Hour)), "routed nowhere")
		require.True(t, d.Wants(ev(policies.JobFinished, 0, time.Hour)))
		require.True(t, d.Wants(ev(policies.JobFailed, 0, time.Hour)))
		require.True(t, d.Wants(ev(policies.JobActive, 1, time.Hour)), "server 1's policy is not selective")
		require.False(t, d.Wants(ev(policies.Wakeup, -1, time.Hour)), "no server's time has come")
		require.True(t, d.Wants(ev(policies.Wakeup, -1, time.Hour+time.Minute)))
	})
	t.Run("server declines", func(t *testing.T) {
		d := saturated(t, func() policies.Policy { return picky{&greedy{}} })
		require.False(t, d.Wants(ev(policies.JobActive, 1, time.Hour)))
		require.True(t, d.Wants(ev(policies.JobFinished, 1, time.Hour)), "routing reads freed GPUs")
	})
	// Asking changes nothing: a dispatcher asked about every event decides
	// as one never asked, after the same events.
	t.Run("asking changes nothing", func(t *testing.T) {
		for _, build := range []func() policies.Policy{
			func() policies.Policy { return &greedy{} },
			func() policies.Policy { return picky{&greedy{}} },
		} {
			asked, quiet := saturated(t, build), saturated(t, build)
			for _, e := range []policies.Event{ev(policies.JobActive, 1, time.Hour), ev(policies.Wakeup, -1, time.Hour+time.Second)} {
				asked.Observe(e)
				quiet.Observe(e)
				for k := policies.JobArrived; k <= policies.PlaceFailed; k++ {
					asked.Wants(ev(k, 1, e.T))
				}
				v := view(4, map[policies.JobID][]int{0: {0, 1}, 1: {2, 3}}, [][2]int{{2, 1}})
				v.Now = e.T
				require.Equal(t, slices.Clone(quiet.Schedule(v)), slices.Clone(asked.Schedule(v)))
				for i := range asked.servers {
					require.Equal(t, quiet.servers[i].dirty, asked.servers[i].dirty, "server %d", i)
				}
			}
		}
	})
}

// TestIdleCounted: the dispatcher counts a server's idle GPUs again only
// after an event that starts a job on or takes one off its GPUs (the view
// below changes behind its back to show that it does not count otherwise).
func TestIdleCounted(t *testing.T) {
	d, _ := newGreedy(t, BestFit, []int{2, 2})
	d.Observe(policies.Event{Kind: policies.JobStarted, Job: 0, GPUs: []int{0, 1}})
	v := view(4, map[policies.JobID][]int{0: {0, 1}}, [][2]int{{1, 1}})
	require.Equal(t, []int{2}, places(d.Schedule(v))[1], "server 0 is busy")
	v.GPUs[0].Jobs, v.GPUs[1].Jobs = nil, nil
	d.Observe(policies.Event{Kind: policies.JobActive, Job: 0})
	require.Equal(t, []int{2}, places(d.Schedule(v))[1], "no event took a job off server 0")
	d.Observe(policies.Event{Kind: policies.JobFinished, Job: 0})
	require.Equal(t, []int{0}, places(d.Schedule(v))[1], "both servers idle: the first")
}

// TestSpanningJob: the events of a job on whole servers touch every one of
// them.
func TestSpanningJob(t *testing.T) {
	d, _ := newGreedy(t, BestFit, []int{2, 2, 2})
	d.Observe(policies.Event{Kind: policies.JobStarted, Job: 0, GPUs: []int{2, 3, 4, 5}})
	d.Schedule(view(6, map[policies.JobID][]int{0: {2, 3, 4, 5}}, [][2]int{{1, 1}}))
	require.Equal(t, []int{1, 2}, d.serversOf(0))
	require.Equal(t, []bool{false, false, false}, d.recount)
	d.Observe(policies.Event{Kind: policies.JobFinished, Job: 0})
	require.Equal(t, []bool{false, true, true}, d.recount)
	d.Observe(policies.Event{Kind: policies.JobStarted, Job: 0, GPUs: []int{1}})
	require.Equal(t, []int{0}, d.serversOf(0), "a new attempt on one server")
}

// scribbler is greedy that writes into the GPU list of every job of its
// view.
type scribbler struct{ *greedy }

func (s scribbler) Schedule(v *policies.View) []policies.Action {
	for i := range v.Jobs {
		for k := range v.Jobs[i].On {
			v.Jobs[i].On[k] = 99
		}
	}
	return s.greedy.Schedule(v)
}

// TestServersWriteOwnJobs: what the servers' policies write into their
// views' jobs never reaches the view the dispatcher was handed, whose jobs
// the loop does not copy for it (ReadsJobsOnly): a job running on another
// server, listed in a server's view as it was first seen, has a GPU list
// of the dispatcher's own.
func TestServersWriteOwnJobs(t *testing.T) {
	var _ policies.JobsReader = (*Dispatcher)(nil)
	d, err := New(Config{Strategy: FirstFit, Depth: 16}, []int{2, 3}, func() (policies.Policy, error) {
		return scribbler{&greedy{}}, nil
	})
	require.NoError(t, err)
	v := view(5, map[policies.JobID][]int{0: {3}}, [][2]int{{1, 1}})
	require.Equal(t, map[policies.JobID][]int{1: {0}}, places(d.Schedule(v)))
	require.Equal(t, []int{3}, v.Jobs[0].On)
}
