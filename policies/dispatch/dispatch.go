// Package dispatch is the cluster dispatcher: it runs one instance of a
// per-server policy for each server of a cluster, gives each a View
// restricted to its server's GPUs (numbered from 0), routes the pending jobs
// among the servers, and places jobs larger than a server on whole idle
// servers itself.
//
// The backend simulates the cluster's GPUs as one pool, server 0's GPUs
// first; the dispatcher keeps every job inside one server unless it needs
// more GPUs than the largest server has. In a cluster of several GPU types
// (SetTypes) it routes each job only to servers of the types it may run on.
package dispatch

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Dispatch strategies: which server receives a job that fits on the idle
// GPUs of several.
const (
	// BestFit picks the server with the fewest idle GPUs that still hold
	// the job (the tightest fit, like Lucid's consolidating placer).
	BestFit = "bestfit"
	// FirstFit picks the lowest-numbered server whose idle GPUs hold it.
	FirstFit = "firstfit"
	// LeastLoaded picks the server with the most idle GPUs.
	LeastLoaded = "leastloaded"
)

// Config is the dispatcher's settings.
type Config struct {
	// Strategy is BestFit, FirstFit or LeastLoaded.
	Strategy string
	// Depth bounds routing: per decision a server is given at most its GPU
	// count plus Depth queued jobs (see Dispatcher.Schedule). A per-server
	// policy trying more unplaced jobs per decision (a lookahead above
	// Depth) sees a shortened queue.
	Depth int
}

// ReadConfig reads the dispatcher's own parameters, dispatch and
// route_depth, from p.
func ReadConfig(p *policies.Params) Config {
	return Config{
		Strategy: p.String("dispatch", BestFit, "cluster runs: which server gets a job that fits on several servers' idle GPUs",
			BestFit, FirstFit, LeastLoaded),
		Depth: p.Int("route_depth", 16, 1, 1000, "cluster runs: queued jobs offered to a server per decision beyond its GPU count (>= the policy's lookahead)"),
	}
}

// Dispatcher is a policies.Policy over a cluster: one per-server policy per
// server behind a router.
type Dispatcher struct {
	strategy string
	servers  []server
	maxGPUs  int   // GPUs of the largest server
	ofGPU    []int // server of each cluster GPU
	wake     time.Duration

	// Scratch reused across decisions.
	idle     []int  // per server: idle GPUs not yet promised in this decision
	whole    []bool // per server: every GPU idle and none promised
	gone     []bool // per server: given whole to a larger job in this decision
	on       []int
	dest     []int32  // per job: its server in this decision, or unrouted or dispatched
	stamp    []uint32 // per job: the decision whose dest it holds
	epoch    uint32   // the decision
	open     int      // servers not yet given their GPUs plus depth jobs
	depth    int
	observed bool // Observe has been called: skipping unchanged servers is safe
	// stale: an event other than a wake-up, or a placement or stop of the
	// last decision, may have changed what routing reads since it last ran.
	stale, routed bool
	// Per job: the server of its latest attempt (none: -1; several, for a
	// job larger than a server: spans, in span).
	jobSrv   []int32
	span     map[policies.JobID][]int
	ids      []int // 0, 1, ...: serversOf's answers for one server
	counting bool  // routed jobs count towards a server's fill
	rr       int   // the server that got the decision's last job fitting nowhere, -1 before
	// idleSum is the sum of idle: no job of more GPUs fits anywhere.
	idleSum int
	// What Wants knows of the last decision: one has been made, it
	// deferred a job, and jobs are left pending after its actions.
	decided, deferred, pending bool
	acts                       []policies.Action // the last decision's
	// Per server: its idle GPUs as last counted, and whether a job may
	// have started on or left its GPUs since (then route counts them
	// again).
	idleN   []int
	recount []bool
	// The servers with jobs routed to them by the latest routing (filled)
	// and with jobs at their latest decision (asked); order: their union.
	filled, asked, order []int
	// jobs is the per-server views' jobs (see decide); seen the jobs a
	// server's decision has copied into it.
	jobs []policies.Job
	seen []policies.JobID

	// A cluster of several GPU types (SetTypes; nil types otherwise):
	// each type's largest server and each job's types (0: not asked yet).
	types   *Types
	typeMax []int
	runs    []uint8
}

// Types describes a cluster of several GPU types to the dispatcher.
type Types struct {
	// Server holds each server's type, a number below 8.
	Server []int
	// Pressure tells per type whether its GPUs have DCGM pressure
	// indicators: each server's policy sees its own type's.
	Pressure []bool
	// Runs returns the types job id may run on (bit k: type k); the
	// dispatcher routes it only to servers of these types, and a job
	// larger than their largest server onto whole servers of one of them.
	Runs func(id policies.JobID) uint8
	// Profile, when not nil, returns job id's profile on type k (where
	// the types' workload catalogs differ): a server's policy sees its
	// type's profile of the queued jobs routed to it.
	Profile func(id policies.JobID, k int) (policies.Profile, bool)
}

// Routing marks of a job in a decision besides a server number.
const (
	unrouted   = -1
	dispatched = -2 // larger than a server: placed (or left waiting) by the dispatcher
)

type server struct {
	first, n int // its GPUs: first .. first+n-1
	p        policies.Policy
	view     policies.View
	queue    []policies.JobID
	failed   []policies.JobID
	got      int // jobs routed to it in this decision
	// What its policy decided on last: the jobs routed to it, whether an
	// event touched it since, the Wake it asked for (-1: none), its Defer
	// actions (cluster numbering).
	lastQueue, lastFailed []policies.JobID
	dirty                 bool
	wake                  time.Duration
	defers                []policies.Action
	tel                   foresightShift // its view's telemetry (restrict)
}

// New returns a dispatcher with the given settings over servers of the given
// GPU counts (in cluster order), building each server's policy with build.
func New(cfg Config, sizes []int, build func() (policies.Policy, error)) (*Dispatcher, error) {
	switch cfg.Strategy {
	case BestFit, FirstFit, LeastLoaded:
	default:
		return nil, fmt.Errorf("dispatch: dispatch %q: want %s, %s or %s", cfg.Strategy, BestFit, FirstFit, LeastLoaded)
	}
	if cfg.Depth < 1 {
		return nil, fmt.Errorf("dispatch: route_depth %d: want at least 1", cfg.Depth)
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("dispatch: no servers")
	}
	d := &Dispatcher{strategy: cfg.Strategy, depth: cfg.Depth}
	first := 0
	for i, n := range sizes {
		if n < 1 {
			return nil, fmt.Errorf("dispatch: server %d has %d GPUs", i, n)
		}
		p, err := build()
		if err != nil {
			return nil, err
		}
		if _, opt := p.(policies.OptionalObserver); !opt && isObserver(p) {
			if c, ok := p.(io.Closer); ok {
				c.Close()
			}
			return nil, fmt.Errorf("dispatch: policy %s keeps state from events (an external policy), and the dispatcher passes none on: it cannot run on a cluster", p.Name())
		}
		d.servers = append(d.servers, server{first: first, n: n, p: p, dirty: true, wake: -1})
		for range n {
			d.ofGPU = append(d.ofGPU, i)
		}
		first += n
		d.maxGPUs = max(d.maxGPUs, n)
	}
	d.idle = make([]int, len(sizes))
	d.ids = make([]int, len(sizes))
	for i := range d.ids {
		d.ids[i] = i
	}
	d.idleN = make([]int, len(sizes))
	d.recount = make([]bool, len(sizes))
	for i := range d.recount {
		d.recount[i] = true
	}
	d.whole = make([]bool, len(sizes))
	d.gone = make([]bool, len(sizes))
	return d, nil
}

// SetTypes makes the dispatcher route by GPU type; call it before the
// first Schedule.
func (d *Dispatcher) SetTypes(t Types) error {
	if len(t.Server) != len(d.servers) {
		return fmt.Errorf("dispatch: the types of %d servers for %d servers", len(t.Server), len(d.servers))
	}
	if t.Runs == nil {
		return fmt.Errorf("dispatch: types without Runs")
	}
	d.typeMax = make([]int, len(t.Pressure))
	for i, k := range t.Server {
		if k < 0 || k >= len(t.Pressure) || k >= 8 {
			return fmt.Errorf("dispatch: server %d: type %d of %d", i, k, len(t.Pressure))
		}
		d.typeMax[k] = max(d.typeMax[k], d.servers[i].n)
	}
	d.types = &t
	return nil
}

// jobTypes returns the types job id may run on (all when the cluster has
// one type).
func (d *Dispatcher) jobTypes(id policies.JobID) uint8 {
	if d.types == nil {
		return 0xff
	}
	for int(id) >= len(d.runs) {
		d.runs = append(d.runs, 0)
	}
	if d.runs[id] == 0 {
		d.runs[id] = d.types.Runs(id)
	}
	return d.runs[id]
}

// serves reports whether server i is of a type in mask.
func (d *Dispatcher) serves(i int, mask uint8) bool {
	return d.types == nil || mask&(1<<d.types.Server[i]) != 0
}

// largest is the GPU count of the largest server of a type in mask.
func (d *Dispatcher) largest(mask uint8) int {
	if d.types == nil {
		return d.maxGPUs
	}
	m := 0
	for k, n := range d.typeMax {
		if mask&(1<<k) != 0 {
			m = max(m, n)
		}
	}
	return m
}

// Name implements policies.Policy: the per-server policy's name.
func (d *Dispatcher) Name() string { return d.servers[0].p.Name() }

// Tick implements policies.Ticker: the per-server policy's grid, 0 when it
// has none.
func (d *Dispatcher) Tick() time.Duration {
	if t, ok := d.servers[0].p.(policies.Ticker); ok {
		return t.Tick()
	}
	return 0
}

// Validate implements policies.Validator by asking the per-server policy.
func (d *Dispatcher) Validate(v *policies.View) error {
	if val, ok := d.servers[0].p.(policies.Validator); ok {
		return val.Validate(v)
	}
	return nil
}

// Observe implements policies.Observer: it notes which servers an event
// touched, so that a server whose view did not change is not asked again
// before the time it asked for (its policy would decide the same: its
// Defer actions are repeated for it). It forwards nothing: the per-server
// policies of this package's contract are pure.
func (d *Dispatcher) Observe(e policies.Event) { d.ObserveAt(&e) }

// ObserveAt implements policies.InPlaceObserver: Observe, e read in place.
func (d *Dispatcher) ObserveAt(e *policies.Event) {
	d.observed = true
	if e.Kind != policies.Wakeup {
		d.stale = true
	}
	switch e.Kind {
	case policies.JobStarted:
		d.started(e.Job, e.GPUs)
		d.touch(e.Job, true)
	case policies.JobActive:
		if !d.declined(e) {
			d.touch(e.Job, false)
		}
	case policies.JobFinished:
		d.touch(e.Job, true)
	case policies.JobFailed:
		d.touch(e.Job, true)
	case policies.PlaceFailed:
		for _, g := range e.GPUs {
			if g >= 0 && g < len(d.ofGPU) {
				d.servers[d.ofGPU[g]].dirty = true
				d.recount[d.ofGPU[g]] = true
			}
		}
	}
}

// Marks of jobSrv besides a server number.
const (
	noServer = -1
	spans    = -2
)

// started notes the servers of job id's new attempt on gpus.
func (d *Dispatcher) started(id policies.JobID, gpus []int) {
	for int(id) >= len(d.jobSrv) {
		d.jobSrv = append(d.jobSrv, noServer)
	}
	if d.jobSrv[id] == spans {
		delete(d.span, id)
	}
	d.jobSrv[id] = noServer
	for _, g := range gpus {
		if g < 0 || g >= len(d.ofGPU) {
			continue
		}
		switch i := int32(d.ofGPU[g]); d.jobSrv[id] {
		case noServer:
			d.jobSrv[id] = i
		case i, spans:
		default:
			d.jobSrv[id] = spans
		}
	}
	if d.jobSrv[id] != spans {
		return
	}
	var srv []int
	for _, g := range gpus {
		if g >= 0 && g < len(d.ofGPU) && !slices.Contains(srv, d.ofGPU[g]) {
			srv = append(srv, d.ofGPU[g])
		}
	}
	if d.span == nil {
		d.span = map[policies.JobID][]int{}
	}
	d.span[id] = srv
}

// serversOf returns the servers of job id's latest attempt, read-only.
func (d *Dispatcher) serversOf(id policies.JobID) []int {
	if int(id) >= len(d.jobSrv) {
		return nil
	}
	switch k := d.jobSrv[id]; k {
	case noServer:
		return nil
	case spans:
		return d.span[id]
	default:
		return d.ids[k : k+1]
	}
}

// touch marks the servers of job id's latest attempt, and, when the job
// started on or left their GPUs (gpus), their idle GPUs for counting.
func (d *Dispatcher) touch(id policies.JobID, gpus bool) {
	for _, i := range d.serversOf(id) {
		d.servers[i].dirty = true
		d.recount[i] = d.recount[i] || gpus
	}
}

// ServerOf returns the server of cluster GPU g.
func (d *Dispatcher) ServerOf(g int) int { return d.ofGPU[g] }

// Schedule implements policies.Policy. One decision:
//  1. Each server's idle GPUs are counted.
//  2. The pending jobs are routed in order, the failed ones first (by
//     failure), then the queue (by submission). A job of at most the
//     largest server's GPUs goes to a server whose idle GPUs hold it, chosen
//     by the strategy, and those GPUs count as promised. One that fits no
//     server's idle GPUs goes, if it is the decision's first such job, to
//     the server with the most idle GPUs (lowest number on ties), else to
//     the next server in turn after the last one that got such a job; its
//     policy may collocate it or keep it waiting. A larger job is placed
//     here on the lowest-numbered whole idle servers it needs (its GPUs in
//     cluster order), or waits; jobs behind it are not held back.
//  3. Routing stops once every server has been given its GPU count plus
//     depth queued jobs (failed ones not counted): a server's policy places
//     at most one job per GPU in a decision, so one that tries at most depth
//     unplaced jobs (lookahead <= depth) decides as it would on the whole
//     queue, and the decision costs O(servers × (GPUs + depth)), not
//     O(queue).
//  4. Each server's policy decides on its restricted view holding the jobs
//     routed to it; its actions are returned with cluster GPU numbers, and
//     the earliest Wake of all servers.
//
// The returned slice is valid until the next call (its buffer is reused).
func (d *Dispatcher) Schedule(v *policies.View) []policies.Action {
	if len(v.GPUs) != len(d.ofGPU) {
		// A backend of another size: nothing sensible to route.
		d.decided = false
		return []policies.Action{{Kind: policies.Wake, At: v.Now + time.Hour}}
	}
	// The actions are returned in a buffer reused by the next decision
	// (the loop carries them out before it asks again), so that repeating
	// the servers' deferrals allocates nothing.
	acts := d.acts[:0]
	if !d.observed || d.stale || !d.routed {
		acts = d.route(v, acts)
	}
	// Otherwise only a wake-up happened since the last decision, which
	// placed and stopped nothing: the queue, the failed jobs and the idle
	// GPUs are as they were, and so is every server's share of them.
	d.routed, d.stale = true, false
	d.wake = -1
	// Only the servers with jobs routed to them now or at their last
	// decision need one: every other is as a decision on nothing leaves
	// it.
	d.order = append(append(d.order[:0], d.filled...), d.asked...)
	slices.Sort(d.order)
	d.order = slices.Compact(d.order)
	d.asked = d.asked[:0]
	for _, i := range d.order {
		acts = d.decide(v, i, acts)
		if len(d.servers[i].lastQueue) > 0 {
			d.asked = append(d.asked, i)
		}
	}
	if d.wake >= 0 {
		acts = append(acts, policies.Action{Kind: policies.Wake, At: d.wake})
	}
	left := v.Queue.Len() // the failed jobs are queued too
	d.decided, d.deferred = true, false
	for _, a := range acts {
		switch a.Kind {
		case policies.Place, policies.Stop:
			d.stale = true
			left--
		case policies.Defer:
			d.deferred = true
		}
	}
	d.pending = left > 0
	d.acts = acts
	return acts
}

// Wants implements policies.Selective: it reports whether event e could
// change the dispatcher's decision, which is the routing of the pending
// jobs plus each server's policy's decision on its share. Before the first
// decision every event is wanted.
//
// After a decision that left nothing pending and deferred nothing, only an
// arrival, a failure or a failed placement can give the next one something
// to do: a decision on an empty queue returns no action, whatever started,
// finished or woke meanwhile (after deferrals it would end their
// episodes, so then the rules below apply).
//
// Otherwise the routing reads the queue, the failed jobs and which GPUs
// are idle. A start or a stop (the events of the dispatcher's own
// placements and stops: the view has changed by its actions), a finish
// (GPUs freed), a failure and a failed placement are wanted. An arrival is
// wanted unless the last routing stopped short of the queue's end (every
// server had its fill): a job queued behind is routed nowhere. A job's
// first activity changes no routing: it is wanted unless declined (see
// declined). A wake-up is wanted when a server's requested decision time
// has come. Wants changes nothing.
func (d *Dispatcher) Wants(e policies.Event) bool { return d.WantsAt(&e) }

// WantsAt implements policies.InPlaceSelective: Wants, e read in place.
func (d *Dispatcher) WantsAt(e *policies.Event) bool {
	if !d.decided || !d.observed {
		return true
	}
	if !d.pending && !d.deferred {
		switch e.Kind {
		case policies.JobArrived, policies.JobFailed, policies.PlaceFailed:
			return true
		}
		return false
	}
	switch e.Kind {
	case policies.JobArrived:
		return d.open > 0
	case policies.JobActive:
		return !d.declined(e)
	case policies.Wakeup:
		return d.wake >= 0 && e.T >= d.wake
	}
	return true
}

// declined reports whether first activity e, after a decision that left
// jobs pending or deferred some, is declined: no server the job runs on
// that has jobs routed to it has a policy that wants e (policies.Selective;
// a policy that is not selective wants every event). A decision then would
// ask those servers again and get their last decisions back (by the
// Selective contract, each repeats itself), so Observe leaves them as they
// were: clean if they were clean, so that a later decision repeats them as
// one now would have, instead of asking them at a later time (which could
// see, e.g., a hold that ended between ticks).
func (d *Dispatcher) declined(e *policies.Event) bool {
	if !d.decided || !(d.pending || d.deferred) || int(e.Job) >= len(d.jobSrv) {
		return false
	}
	for _, i := range d.serversOf(e.Job) {
		s := &d.servers[i]
		if len(s.lastQueue) == 0 {
			continue // nothing routed to it: it decides nothing
		}
		if wantsAt(s.p, e) {
			return false
		}
	}
	return true
}

// wantsAt reports whether policy p wants event e: in place when p is a
// policies.InPlaceSelective, by value when it is only Selective, and yes
// when it is neither.
func wantsAt(p policies.Policy, e *policies.Event) bool {
	switch sel := p.(type) {
	case policies.InPlaceSelective:
		return sel.WantsAt(e)
	case policies.Selective:
		return sel.Wants(*e)
	}
	return true
}

// route gives each server its queue and failed jobs for this decision
// (steps 1–3 of Schedule) and appends to acts the placements and stops of
// jobs larger than a server.
func (d *Dispatcher) route(v *policies.View, acts []policies.Action) []policies.Action {
	d.idleSum, d.open = 0, len(d.servers)
	for _, i := range d.filled {
		s := &d.servers[i]
		s.queue, s.failed, s.got = s.queue[:0], s.failed[:0], 0
	}
	d.filled = d.filled[:0]
	for i := range d.servers {
		if d.recount[i] || !d.observed {
			// Only a start, finish, failure or failed placement on its
			// GPUs changes which of them are idle, and the dispatcher
			// observes each.
			s := &d.servers[i]
			d.idleN[i], d.recount[i] = 0, false
			for g := s.first; g < s.first+s.n; g++ {
				if len(v.GPUs[g].Jobs) == 0 {
					d.idleN[i]++
				}
			}
		}
		d.idle[i] = d.idleN[i]
		d.whole[i] = d.idle[i] == d.servers[i].n
		d.gone[i] = false
		d.idleSum += d.idle[i]
	}
	if len(d.dest) < len(v.Jobs) {
		d.dest = append(d.dest, make([]int32, len(v.Jobs)-len(d.dest))...)
		d.stamp = append(d.stamp, make([]uint32, len(v.Jobs)-len(d.stamp))...)
	}
	d.epoch++
	route := func(id policies.JobID) {
		if d.stamp[id] == d.epoch {
			return
		}
		d.stamp[id], d.dest[id] = d.epoch, dispatched
		mask := d.jobTypes(id)
		if j := v.Job(id); j.GPUs > d.maxGPUs || (d.types != nil && j.GPUs > d.largest(mask)) {
			if a, ok := d.big(j, mask); ok {
				acts = append(acts, a)
			}
			return
		}
		d.dest[id] = int32(d.pick(v.Job(id).GPUs, mask))
	}
	d.rr, d.counting = -1, false
	for _, id := range v.Failed {
		route(id)
	}
	d.counting = true
	stop := v.Queue.Len()
	for k, id := range v.Queue.All() {
		if d.open == 0 {
			stop = k
			break
		}
		route(id)
	}
	// Each server's queue keeps submission order, its failed list failure
	// order (failed jobs past the stop at the end).
	for k := range stop {
		id := v.Queue.At(k)
		if s := d.dest[id]; s >= 0 {
			d.enqueue(int(s), id)
		}
	}
	for _, id := range v.Failed {
		if s := d.dest[id]; s >= 0 {
			d.servers[s].failed = append(d.servers[s].failed, id)
			if !slices.Contains(d.servers[s].queue, id) {
				d.enqueue(int(s), id)
			}
		}
	}
	return acts
}

// enqueue appends job id to server i's queue of this decision.
func (d *Dispatcher) enqueue(i int, id policies.JobID) {
	s := &d.servers[i]
	if len(s.queue) == 0 {
		d.filled = append(d.filled, i)
	}
	s.queue = append(s.queue, id)
}

// give records that server i got one more routed job.
func (d *Dispatcher) give(i int) {
	s := &d.servers[i]
	if !d.counting {
		return // failed jobs are not in the policies' lookahead
	}
	if s.got++; s.got == s.n+d.depth {
		d.open--
	}
}

// pick chooses the server for a job of n GPUs that may run on the types
// in mask and promises its GPUs, or returns unrouted when every server
// able to hold it has its fill.
func (d *Dispatcher) pick(n int, mask uint8) int {
	best := -1
	for i := range d.servers {
		if d.idleSum < n {
			break // no server's idle GPUs can hold it
		}
		if d.idle[i] < n || d.servers[i].n < n || !d.serves(i, mask) {
			continue
		}
		switch {
		case best < 0:
			best = i
		case d.strategy == BestFit && d.idle[i] < d.idle[best]:
			best = i
		case d.strategy == LeastLoaded && d.idle[i] > d.idle[best]:
			best = i
		}
	}
	if best >= 0 {
		d.idleSum -= n
		d.idle[best] -= n
		d.whole[best] = false
		d.give(best)
		return best
	}
	// No server's idle GPUs hold it: the first such job of the decision
	// goes to the most idle server that is large enough, each later one to
	// the next large enough server in turn, where it may collocate or wait.
	// A server given whole to a larger job in this decision is not: its
	// policy would still see its GPUs idle and place a job beside it.
	open := func(i int) bool {
		return d.servers[i].n >= n && d.servers[i].got < d.servers[i].n+d.depth && !d.gone[i] && d.serves(i, mask)
	}
	if d.rr < 0 {
		for i := range d.servers {
			if open(i) && (best < 0 || d.idle[i] > d.idle[best]) {
				best = i
			}
		}
	} else {
		for k := 1; k <= len(d.servers); k++ {
			if i := (d.rr + k) % len(d.servers); open(i) {
				best = i
				break
			}
		}
	}
	if best < 0 {
		return unrouted
	}
	d.rr = best
	d.idleSum -= d.idle[best]
	d.idle[best] = 0
	d.whole[best] = false
	d.give(best)
	return best
}

// big places job j, larger than any server of the types in mask, on the
// lowest-numbered whole idle servers that together hold it, all of one
// type (the first type in mask that has enough), if there are enough.
func (d *Dispatcher) big(j *policies.Job, mask uint8) (policies.Action, bool) {
	var take []int
	have := 0
	for k := range 8 {
		if d.types == nil && k > 0 {
			break
		}
		if d.types != nil && (mask&(1<<k) == 0 || k >= len(d.typeMax)) {
			continue
		}
		take, have = take[:0], 0
		for i := range d.servers {
			if d.whole[i] && (d.types == nil || d.types.Server[i] == k) {
				take = append(take, i)
				if have += d.servers[i].n; have >= j.GPUs {
					break
				}
			}
		}
		if have >= j.GPUs {
			break
		}
	}
	if have < j.GPUs {
		return policies.Action{}, false
	}
	if j.Attempts > 0 && j.LastFailure != policies.NoFailure {
		// It failed alone on whole servers: retrying cannot help.
		return policies.Action{Kind: policies.Stop, Job: j.ID, Reason: "failed on whole servers: " + j.LastFailure.String()}, true
	}
	gpus := make([]int, 0, j.GPUs)
	for _, i := range take {
		d.idleSum -= d.idle[i]
		d.whole[i], d.idle[i], d.gone[i] = false, 0, true
		for g := d.servers[i].first; g < d.servers[i].first+d.servers[i].n && len(gpus) < j.GPUs; g++ {
			gpus = append(gpus, g)
		}
	}
	return policies.Action{Kind: policies.Place, Job: j.ID, GPUs: gpus}, true
}

// decide runs server i's policy on its restricted view and appends its
// actions in cluster numbering. The view handed in is not changed: the
// server's view has jobs of its own (d.jobs), where the jobs its policy
// can see (its queue, and the jobs on its GPUs) are copied from v's
// before each of its decisions, with their GPUs renumbered and, in a
// cluster of several types, their profiles on its type. The other entries
// are of earlier decisions: a policy reads jobs by the ids its view lists.
func (d *Dispatcher) decide(v *policies.View, i int, acts []policies.Action) []policies.Action {
	s := &d.servers[i]
	if len(s.queue) == 0 {
		s.lastQueue, s.lastFailed, s.wake, s.defers = s.lastQueue[:0], s.lastFailed[:0], -1, s.defers[:0]
		return acts // nothing pending to decide on
	}
	if d.observed && !s.dirty && (s.wake < 0 || s.wake > v.Now) &&
		slices.Equal(s.queue, s.lastQueue) && slices.Equal(s.failed, s.lastFailed) {
		// Nothing it sees changed and its time has not come: it would
		// decide as it did.
		if s.wake >= 0 && (d.wake < 0 || s.wake < d.wake) {
			d.wake = s.wake
		}
		return append(acts, s.defers...)
	}
	s.dirty, s.wake, s.defers = false, -1, s.defers[:0]
	s.lastQueue = append(s.lastQueue[:0], s.queue...)
	s.lastFailed = append(s.lastFailed[:0], s.failed...)
	for _, a := range s.p.Schedule(d.view(v, i)) {
		switch a.Kind {
		case policies.Place:
			s.dirty = true // its placements are its next view's change
			gpus := make([]int, len(a.GPUs))
			for k, g := range a.GPUs {
				gpus[k] = g + s.first
			}
			acts = append(acts, policies.Action{Kind: policies.Place, Job: a.Job, GPUs: gpus})
		case policies.Defer:
			if a.GPU >= 0 {
				a.GPU += s.first
			}
			acts = append(acts, a)
			s.defers = append(s.defers, a)
		case policies.Wake:
			if s.wake < 0 || a.At < s.wake {
				s.wake = a.At
			}
			if d.wake < 0 || a.At < d.wake {
				d.wake = a.At
			}
		default:
			acts = append(acts, a)
		}
	}
	return acts
}

// ReadsJobsOnly implements policies.JobsReader: the dispatcher writes into
// no job of the view it is handed (its servers' policies decide on copies,
// d.jobs, whose GPU lists are its own).
func (d *Dispatcher) ReadsJobsOnly() {}

// view builds server i's view of this decision (see decide).
func (d *Dispatcher) view(v *policies.View, i int) *policies.View {
	s := &d.servers[i]
	if n := len(d.jobs); n < len(v.Jobs) {
		d.jobs = append(d.jobs, v.Jobs[n:]...)
		for k := n; k < len(d.jobs); k++ {
			d.jobs[k].On = slices.Clone(d.jobs[k].On) // v's lists are not the servers' to write
		}
	}
	sv := &s.view
	sv.Now, sv.Pressure = v.Now, v.Pressure
	sv.Jobs = d.jobs[:len(v.Jobs)]
	sv.Queue, sv.Failed = policies.ListOf(s.queue...), s.failed
	sv.Telemetry = s.restrict(v.Telemetry)
	for _, id := range s.queue {
		d.jobs[id] = v.Jobs[id]
		d.jobs[id].On = slices.Clone(d.jobs[id].On) // nil: a queued job runs nowhere
	}
	if d.types != nil {
		k := d.types.Server[i]
		sv.Pressure = d.types.Pressure[k]
		if d.types.Profile != nil {
			for _, id := range s.queue {
				if p, ok := d.types.Profile(id, k); ok {
					d.jobs[id].Profile = p
				}
			}
		}
	}
	if cap(sv.GPUs) < s.n {
		sv.GPUs = make([]policies.GPU, s.n)
	}
	sv.GPUs = sv.GPUs[:s.n]
	d.on, d.seen = d.on[:0], d.seen[:0]
	for k := range s.n {
		g := v.GPUs[s.first+k]
		g.Index = k
		sv.GPUs[k] = g
		for _, id := range g.Jobs {
			if !slices.Contains(d.seen, id) {
				d.seen = append(d.seen, id)
				d.renumber(v, s, id)
			}
		}
	}
	return sv
}

// renumber copies running job id into d.jobs with its GPUs on server s
// numbered from 0 (GPUs of other servers, which only a job larger than a
// server has, left out).
func (d *Dispatcher) renumber(v *policies.View, s *server, id policies.JobID) {
	j := &d.jobs[id]
	*j = v.Jobs[id]
	start := len(d.on)
	for _, g := range j.On {
		if g >= s.first && g < s.first+s.n {
			d.on = append(d.on, g-s.first)
		}
	}
	j.On = slices.Clip(d.on[start:])
}

// restrict returns t with GPU numbers shifted to server s's, held in s
// (a pointer to it: building the view allocates nothing).
func (s *server) restrict(t policies.Telemetry) policies.Telemetry {
	if t == nil {
		return nil
	}
	if fs, ok := t.(foresight); ok {
		s.tel = foresightShift{steadyShift{shift{t, s.first}, fs}, fs}
		return &s.tel
	}
	if st, ok := t.(steady); ok {
		s.tel.steadyShift = steadyShift{shift{t, s.first}, st}
		return &s.tel.steadyShift
	}
	s.tel.shift = shift{t, s.first}
	return &s.tel.shift
}

type steady interface {
	policies.Telemetry
	policies.SteadyTelemetry
}

type foresight interface {
	policies.Telemetry
	policies.Foresight
}

type shift struct {
	t     policies.Telemetry
	first int
}

func (s shift) Samples(dst []policies.Sample, gpu, n int) []policies.Sample {
	return s.t.Samples(dst, gpu+s.first, n)
}

type steadyShift struct {
	shift
	st policies.SteadyTelemetry
}

func (s steadyShift) UsedMiBChangesAt(gpu int) time.Duration {
	return s.st.UsedMiBChangesAt(gpu + s.first)
}

func (s steadyShift) SampleRange(gpu int) (lo, hi policies.Sample) {
	return s.st.SampleRange(gpu + s.first)
}

type foresightShift struct {
	steadyShift
	fs policies.Foresight
}

func (s foresightShift) Ahead(dst []policies.Sample, gpu int, after time.Duration, n int) []policies.Sample {
	return s.fs.Ahead(dst, gpu+s.first, after, n)
}

func (s foresightShift) Regime(gpu int) uint64 { return s.fs.Regime(gpu + s.first) }

func (s foresightShift) RegimeSince(gpu int) time.Duration { return s.fs.RegimeSince(gpu + s.first) }

// isObserver reports whether p keeps state from events.
func isObserver(p policies.Policy) bool {
	_, ok := p.(policies.Observer)
	return ok
}
