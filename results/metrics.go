// Package results turns a run's events into the paper's metrics (per job and
// per run) and writes them as CSV, JSON Lines and aligned text tables.
package results

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/aegis-sched/aegis/internal/jobslots"
	"github.com/aegis-sched/aegis/policies"
)

// Job is one job's outcome.
type Job struct {
	ID       policies.JobID
	Name     string
	Workload string
	GPUs     int
	SoloS    float64
	State    policies.State
	Submit   time.Duration
	Start    time.Duration // first attempt's launch; -1 if never started
	Finish   time.Duration // completion; -1 if it never finished
	Exec     time.Duration // sum of attempt run times, failed attempts included
	Attempts int
	Failed   int // failed attempts
	// Retries started alone on their GPUs, and next to other jobs.
	ExclusiveRetries, SharedRetries int
}

// JCT is finish − submit (0 for a job that never finished).
func (j *Job) JCT() time.Duration {
	if j.Finish < 0 {
		return 0
	}
	return j.Finish - j.Submit
}

// Queue is JCT − exec: time spent waiting, before and between attempts.
func (j *Job) Queue() time.Duration { return j.JCT() - j.Exec }

// NormJCT is JCT divided by the solo runtime.
func (j *Job) NormJCT() float64 { return j.JCT().Seconds() / j.SoloS }

// Collector builds per-job outcomes and counters from a run's events and
// actions. It implements the loop's Recorder.
//
// By default it keeps every job's outcome until the end (Jobs). After
// StreamJobs it writes each job's jobs.csv row as soon as the job and every
// job of a lower id have reached a final state (done or stopped), folds the
// job into the summary and forgets it, so that its memory stays in
// proportion to the jobs not yet final.
type Collector struct {
	// jobs[i] and started[i] are job base+i's outcome and current
	// attempt's launch; jobs below base have been streamed and forgotten.
	// A row is made from jobOf when an event first names its job (or one
	// of a higher id), or when every row is asked for: jobs base+len(jobs)
	// to n-1 have none yet, and are as jobOf lists them, waiting. The rows
	// live in rows (streamed: from its start again once most are
	// forgotten, so that a streamed run touches memory in proportion to
	// the jobs not yet final, not to all of them).
	jobs        []Job
	started     []time.Duration
	rows        []Job
	startedRows []time.Duration
	base, n     int
	jobOf       func(i int) Spec
	stream      *jobStream
	done        summaryAcc // the streamed jobs
	stops       int
	events      int
	forward     []Recorder
	inPlace     []InPlaceRecorder       // forward, each read in place (byValue for those that take an event by value)
	actAt       []InPlaceActionRecorder // forward, each reading actions in place (actionsByValue for the others)

	// Deferral episodes: a job deferred on a GPU for one reason in
	// consecutive decisions.
	grid      time.Duration       // decision grid (0: count decisions seen)
	decision  int                 // decisions seen so far
	decidedAt time.Duration       // time of the latest decision
	eps       deferIndex[episode] // episodes still open, by job and GPU
	open      []int32             // their slots in eps
	// Deferral reasons, in order of first use, with their index in
	// reasons, the episodes (closed and open) and the decisions spanned by
	// closed episodes, by reason index.
	reasons    []string
	reasonAt   map[string]int32
	episodes   []int
	spans      []int
	lastReason int32 // the reason index looked up last, -1 if none
	// changes: the deferrals come as changes from the previous decision's
	// (TakeDeferralChanges); open episodes then need no list: each is
	// repeated by every decision until its Undefer or another reason.
	// jobEps is then each job's first open episode (the others follow
	// through episode.next), for an Undefer of all its GPUs.
	changes bool
	jobEps  jobslots.Table

	deciders []interface{ Decision(time.Duration) } // the forward recorders that take decisions
	// log is the one forward recorder when it is an event log (a run's
	// usual one), called directly instead of through inPlace and actAt.
	log *EventLog
}

// episode is one open deferral episode.
type episode struct {
	reason int32         // index in Collector.reasons
	start  time.Duration // its first decision
	// last is the latest decision that repeated it; with changes, its
	// first decision (every later one repeats it until it ends).
	last int
	seen int // decisions that repeated it (used without a grid; not kept with changes)
	// prev, next (with changes) are the slots of the job's other open
	// episodes, -1 for none; n (with changes, in the job's first) counts
	// them.
	prev, next int32
	n          int32
}

// walkEpisodes bounds the open episodes of a job (with changes) that the
// collector finds by walking the job's list: beyond, their keys are put in
// the index's table. A loaded decision opens a job's episodes on a few
// GPUs at a time, and ends them all at once when it is placed: walking a
// short list is cheaper than keeping the table.
const walkEpisodes = 16

// episodeOf returns the slot of the open episode of job on gpu, -1 if none
// (with changes): through the job's list while it is short, else the
// table.
func (c *Collector) episodeOf(job policies.JobID, gpu int) int32 {
	first := c.jobEps.Get(int(job))
	if first < 0 {
		return -1
	}
	if c.eps.val(first).n > walkEpisodes {
		return c.eps.get(deferKey{job, gpu})
	}
	for s := first; s >= 0; s = c.eps.val(s).next {
		if c.eps.key(s).gpu == gpu {
			return s
		}
	}
	return -1
}

// Recorder receives a run's events and actions (the loop's Recorder).
type Recorder interface {
	Event(policies.Event)
	Action(policies.Action)
}

// InPlaceRecorder is a Recorder that also reads an event in place (the
// loop's InPlaceRecorder): EventAt(e) is Event(*e), without the copy of
// the event a call by value makes. It neither keeps e nor changes it.
type InPlaceRecorder interface {
	Recorder
	EventAt(e *policies.Event)
}

// byValue is an InPlaceRecorder of a Recorder that takes events by value.
type byValue struct{ Recorder }

func (b byValue) EventAt(e *policies.Event) { b.Event(*e) }

// InPlaceActionRecorder is a Recorder that also reads an action in place
// (the loop's InPlaceActionRecorder): ActionAt(a) is Action(*a), without
// the copy of the action a call by value makes. It neither keeps a nor
// changes it.
type InPlaceActionRecorder interface {
	Recorder
	ActionAt(a *policies.Action)
}

// actionsByValue is an InPlaceActionRecorder of a Recorder that takes
// actions by value.
type actionsByValue struct{ Recorder }

func (b actionsByValue) ActionAt(a *policies.Action) { b.Action(*a) }

// Spec is what a job's row takes from the job as submitted.
type Spec struct {
	ID             policies.JobID
	Name, Workload string
	GPUs           int
	SoloS          float64
	Submit         time.Duration
}

// SpecOf is j's Spec.
func SpecOf(j *policies.Job) Spec {
	return Spec{ID: j.ID, Name: j.Name, Workload: j.Workload, GPUs: j.GPUs, SoloS: j.SoloS, Submit: j.Submit}
}

// NewCollector prepares a collector for the jobs of a run (as the backend's
// initial view lists them). Events and actions are forwarded to the extra
// recorders, in order.
func NewCollector(jobs []policies.Job, forward ...Recorder) *Collector {
	return NewCollectorOf(len(jobs), func(i int) Spec { return SpecOf(&jobs[i]) }, forward...)
}

// NewCollectorOf is NewCollector for n jobs read one at a time: job(i) is
// what job i's row takes from the job as the backend lists it (so that no
// slice of every job is needed, nor a whole policies.Job built for a row).
// job(i) must give job i as it was submitted, the same at every call until
// the collector's last use: the rows are made from it when needed.
func NewCollectorOf(n int, job func(i int) Spec, forward ...Recorder) *Collector {
	c := &Collector{rows: make([]Job, n), startedRows: make([]time.Duration, n), n: n, jobOf: job,
		forward: forward, eps: newDeferIndex[episode](), reasonAt: map[string]int32{}, lastReason: -1,
		done: newSummaryAcc()}
	c.jobs, c.started = c.rows[:0], c.startedRows[:0]
	for _, f := range forward {
		in, ok := f.(InPlaceRecorder)
		if !ok {
			in = byValue{f}
		}
		c.inPlace = append(c.inPlace, in)
		act, ok := f.(InPlaceActionRecorder)
		if !ok {
			act = actionsByValue{f}
		}
		c.actAt = append(c.actAt, act)
		if d, ok := f.(interface{ Decision(time.Duration) }); ok {
			c.deciders = append(c.deciders, d)
		}
	}
	if len(forward) == 1 {
		c.log, _ = forward[0].(*EventLog)
	}
	return c
}

// fill makes the rows of the jobs below upto (at most n) that have none.
// The rows are made in the arrays' room past the window (jobs is never
// longer than rows).
func (c *Collector) fill(upto int) {
	upto = min(upto, c.n)
	for i := c.base + len(c.jobs); i < upto; i++ {
		j := c.jobOf(i)
		c.jobs = append(c.jobs, Job{ID: j.ID, Name: j.Name, Workload: j.Workload, GPUs: j.GPUs, SoloS: j.SoloS,
			Submit: j.Submit, Start: -1, Finish: -1, State: policies.Waiting})
		c.started = append(c.started, 0)
	}
}

// Add registers a job submitted after the run started (a live queue), as
// the backend lists it; its id must be the next index.
func (c *Collector) Add(j policies.Job) error {
	if int(j.ID) != c.n {
		return fmt.Errorf("results: added job %d (%s), expected id %d", j.ID, j.Name, c.n)
	}
	c.fill(c.n)
	c.jobs = append(c.jobs, Job{ID: j.ID, Name: j.Name, Workload: j.Workload, GPUs: j.GPUs, SoloS: j.SoloS,
		Submit: j.Submit, Start: -1, Finish: -1, State: policies.Waiting})
	c.started = append(c.started, 0)
	c.n++
	return nil
}

// job returns job id's outcome, or nil when it was streamed already (no
// event concerns a job after its final one) or is unknown.
func (c *Collector) job(id policies.JobID) *Job {
	i := int(id) - c.base
	if i >= len(c.jobs) && int(id) < c.n {
		c.fill(int(id) + 1)
	}
	if i < 0 || i >= len(c.jobs) {
		return nil
	}
	return &c.jobs[i]
}

// Event implements the Recorder.
func (c *Collector) Event(e policies.Event) { c.EventAt(&e) }

// EventAt implements InPlaceRecorder: Event, e read in place (and handed on
// in place to the forward recorders that read events so).
func (c *Collector) EventAt(e *policies.Event) {
	c.events++
	switch e.Kind {
	case policies.JobArrived:
		if j := c.job(e.Job); j != nil {
			j.State = policies.Pending
		}
	case policies.JobStarted:
		if j := c.job(e.Job); j != nil {
			if j.Start < 0 {
				j.Start = e.T
			}
			j.Attempts++
			j.State = policies.Running
			if e.Attempt > 1 {
				if e.Shared {
					j.SharedRetries++
				} else {
					j.ExclusiveRetries++
				}
			}
			c.started[int(e.Job)-c.base] = e.T
		}
	case policies.JobFinished:
		if j := c.job(e.Job); j != nil {
			j.Exec += e.T - c.started[int(e.Job)-c.base]
			j.Finish = e.T
			j.State = policies.Done
		}
	case policies.JobFailed:
		if j := c.job(e.Job); j != nil {
			j.Exec += e.T - c.started[int(e.Job)-c.base]
			j.Failed++
			j.State = policies.Pending
		}
	case policies.JobStopped:
		if j := c.job(e.Job); j != nil {
			j.State = policies.Stopped
		}
		c.stops++
	}
	if c.log != nil {
		c.log.EventAt(e)
	} else {
		for _, f := range c.inPlace {
			f.EventAt(e)
		}
	}
	if c.stream != nil {
		switch e.Kind {
		case policies.JobFinished, policies.JobStopped:
			c.flush()
		}
	}
}

// jobStream writes jobs.csv rows as jobs become final.
type jobStream struct {
	w   csvRows
	add func(row []string, id policies.JobID) []string // the extra columns' fields, or nil
	row []string
	// pipe, when not nil, has the rows made and written on a goroutine
	// of their own (PipeJobs), which owns w.
	pipe *rowPipe
}

// rowPipe hands final jobs over, in batches, to the goroutine that makes
// and writes their rows.
type rowPipe struct {
	cur     []Job
	full    chan []Job
	free    chan []Job
	done    chan error // w's Flush, once every row is written
	flushed bool
	err     error
}

// rowBatch is how many jobs a batch of rowPipe holds (128 kB).
const rowBatch = 1024

// PipeJobs makes the rows StreamJobs writes made and written on a
// goroutine of their own: with a second core, a sixth of `aegis simulate`'s
// work runs beside the simulation, for the copy of each final job (128
// bytes). The bytes are the same (TestPipedJobsAreStreamedJobs). Call it
// after StreamJobs (without extra columns, which read other recorders'
// state as the run goes on) and before the first event; FlushJobs must be
// called at the end, even after a failed run, to stop the goroutine.
func (c *Collector) PipeJobs() error {
	st := c.stream
	if st == nil || c.events > 0 || st.pipe != nil || st.add != nil {
		return fmt.Errorf("results: PipeJobs: not after StreamJobs without extra columns and before the first event")
	}
	const batches = 3 // one being filled, one being written, one waiting
	p := &rowPipe{cur: make([]Job, 0, rowBatch), full: make(chan []Job, batches), free: make(chan []Job, batches), done: make(chan error, 1)}
	for range batches - 1 {
		p.free <- make([]Job, 0, rowBatch)
	}
	st.pipe = p
	go func() {
		for b := range p.full {
			for i := range b {
				st.w.jobRow(&b[i])
				st.w.end()
			}
			clear(b) // drop the references to names
			p.free <- b[:0]
		}
		p.done <- st.w.Flush()
	}()
	return nil
}

// add hands j's row over.
func (p *rowPipe) add(j *Job) {
	p.cur = append(p.cur, *j)
	if len(p.cur) == cap(p.cur) {
		p.full <- p.cur
		p.cur = <-p.free
	}
}

// flush hands the rest over, waits until every row is written and reports
// the first write error (again when called again).
func (p *rowPipe) flush() error {
	if !p.flushed {
		p.flushed = true
		if len(p.cur) > 0 {
			p.full <- p.cur
		}
		p.cur = nil
		close(p.full)
		p.err = <-p.done
	}
	return p.err
}

// StreamJobs makes the collector write jobs.csv to w while the run goes on:
// the header now, then each job's row (WriteJobsCSV's bytes, or with
// server not nil WriteClusterJobsCSV's, server giving a job's server
// column) once it and every job of a lower id are final, so that the rows
// come in id order. Streamed jobs are forgotten (Jobs no longer lists
// them); Summary still covers them. Call FlushJobs at the end. It must be
// called before the first event.
func (c *Collector) StreamJobs(w io.Writer, server func(policies.JobID) string) error {
	if server == nil {
		return c.StreamJobsWith(w, nil, nil)
	}
	return c.StreamJobsWith(w, []string{"server"}, func(row []string, id policies.JobID) []string {
		return append(row, server(id))
	})
}

// StreamJobsWith is StreamJobs with extra last columns (WriteJobsCSVWith's
// bytes): their names, and add appending a job's fields of them to its row.
func (c *Collector) StreamJobsWith(w io.Writer, names []string, add func(row []string, id policies.JobID) []string) error {
	if c.events > 0 || c.stream != nil {
		return fmt.Errorf("results: StreamJobs after the run began")
	}
	if (len(names) > 0) != (add != nil) {
		return fmt.Errorf("results: StreamJobsWith: %d extra columns but add is nil: %v", len(names), add == nil)
	}
	c.stream = &jobStream{w: csvRows{w: w}, add: add}
	n := c.n // the values of every job known now, allocated once
	c.done.jct, c.done.queue = make([]float64, 0, n), make([]float64, 0, n)
	c.done.exec, c.done.norm = make([]float64, 0, n), make([]float64, 0, n)
	head := JobColumns
	if len(names) > 0 {
		head = append(slices.Clone(JobColumns), names...)
	}
	c.stream.w.row(head)
	return nil
}

// flush streams the final jobs at the front of the window.
func (c *Collector) flush() {
	st := c.stream
	k := 0
	for k < len(c.jobs) && (c.jobs[k].State == policies.Done || c.jobs[k].State == policies.Stopped) {
		j := &c.jobs[k]
		if st.pipe != nil {
			if !st.pipe.flushed {
				st.pipe.add(j)
			}
			c.done.add(j)
			k++
			continue
		}
		st.w.jobRow(j)
		if st.add != nil {
			st.row = st.add(st.row[:0], j.ID)
			for _, f := range st.row {
				st.w.field(false, f)
			}
		}
		st.w.end()
		c.done.add(j)
		k++
	}
	if k == 0 {
		return
	}
	c.base += k
	// Forget the streamed jobs; the window moves back to the arrays'
	// start once most of what lies before it is dead, so memory follows
	// the window.
	c.jobs, c.started = c.jobs[k:], c.started[k:]
	dead := len(c.rows) - cap(c.jobs)
	if dead >= 1024 && len(c.jobs) < dead && len(c.rows)-cap(c.started) == dead && c.inRows() {
		c.jobs = c.rows[:copy(c.rows, c.jobs)]
		c.started = c.startedRows[:copy(c.startedRows, c.started)]
	}
}

// inRows reports whether the window still lies at the end of rows and
// startedRows (Add may have moved it to larger arrays).
func (c *Collector) inRows() bool {
	if len(c.jobs) == 0 || cap(c.jobs) > len(c.rows) || cap(c.started) > len(c.startedRows) {
		return len(c.jobs) == 0
	}
	return &c.jobs[0] == &c.rows[len(c.rows)-cap(c.jobs)] && &c.started[0] == &c.startedRows[len(c.startedRows)-cap(c.started)]
}

// FlushJobs writes out the rows streamed so far (StreamJobs) and reports the
// first write error. Jobs not final at the end of a run are not written.
func (c *Collector) FlushJobs() error {
	if c.stream == nil {
		return nil
	}
	var err error
	if c.stream.pipe != nil {
		err = c.stream.pipe.flush()
	} else {
		err = c.stream.w.Flush()
	}
	if err != nil {
		return fmt.Errorf("jobs.csv: %w", err)
	}
	return nil
}

// SetDecisionGrid sets the policy's decision grid (policies.Ticker): the
// decisions a deferral episode spans are counted in ticks of it. Without a
// grid they are the decisions the collector saw.
func (c *Collector) SetDecisionGrid(tick time.Duration) { c.grid = tick }

// Decision implements the loop's DecisionRecorder: a decision is made now.
// Episodes that the previous decision did not repeat end.
func (c *Collector) Decision(now time.Duration) {
	if !c.changes {
		c.closeStale(c.decision)
	}
	c.decision++
	c.decidedAt = now
	for _, d := range c.deciders {
		d.Decision(now)
	}
}

// closeStale ends the open episodes not repeated by decision dec, at the
// time of the decision after it (the current one).
func (c *Collector) closeStale(dec int) {
	k := 0
	for _, s := range c.open {
		e := c.eps.val(s)
		if e.last == dec {
			c.open[k] = s
			k++
			continue
		}
		c.spans[e.reason] += c.span(e, c.decidedAt)
		c.eps.remove(s)
	}
	c.open = c.open[:k]
}

// span is the number of decisions an episode that began at e.start and
// ended at the decision at end (which did not repeat it) lasted: its first
// decision plus every tick of the decision grid strictly between the two.
// Decisions at events in between are not counted, so the count does not
// depend on which ticks the policy skipped.
func (c *Collector) span(e *episode, end time.Duration) int {
	if c.grid <= 0 {
		return e.seen
	}
	n := 1
	if end > e.start {
		n += max(0, int((end-1)/c.grid-e.start/c.grid))
	}
	return n
}

// Action implements the Recorder. A deferral of a job on a GPU for the same
// reason as in the previous decision continues that episode; otherwise it
// begins a new one (ending the job's episode on that GPU with another
// reason). With changes (TakeDeferralChanges) an Undefer ends the job's
// episode on the GPU, and an episode no action names continues.
func (c *Collector) Action(a policies.Action) { c.ActionAt(&a) }

// ActionAt implements InPlaceActionRecorder: Action, a read in place (and
// handed on in place to the forward recorders that read actions so).
func (c *Collector) ActionAt(a *policies.Action) {
	switch a.Kind {
	case policies.Defer:
		if c.changes {
			c.change(a)
		} else {
			c.deferral(a)
		}
	case policies.Undefer:
		if c.changes {
			c.undefer(a)
			return // the forwards take changes without Undefers (TakeDeferralChanges)
		}
	}
	if c.log != nil {
		c.log.ActionAt(a)
		return
	}
	for _, f := range c.actAt {
		f.ActionAt(a)
	}
}

// TakeDeferralChanges implements the loop's DeferralChangeRecorder: the
// collector takes deferrals as changes when every recorder it forwards to
// does (or takes no deferrals: it implements TakeDeferralChanges too). It
// then forwards the Defers but not the Undefers, which the forwards do not
// need: the event log writes a deferral only when its reason differs from
// the one last logged for the job and GPU, which an Undefer does not change.
// Its episodes and the decisions they span are those of the full lists:
// an episode that no action names continues (as a repeated deferral
// does), an Undefer ends it at the decision (as closeStale does at the
// next one, at the time of the one that did not repeat it), and without a
// grid its decisions are counted from its first one.
func (c *Collector) TakeDeferralChanges() bool {
	if c.decision > 0 {
		return c.changes
	}
	for _, f := range c.forward {
		if t, ok := f.(interface{ TakeDeferralChanges() bool }); !ok || !t.TakeDeferralChanges() {
			return false
		}
	}
	c.changes = true
	// Handed changes only, the indexes' look-ups rarely repeat a
	// sequence: guessing the next slot cost more than it saved (1.2 % of a
	// loaded Horus run's instructions, both indexes).
	c.eps.noGuess = true
	for _, f := range c.forward {
		if l, ok := f.(*EventLog); ok {
			l.defers.noGuess = true
		}
	}
	return true
}

// change records a Defer given as a change: a new episode, another reason
// (ending the old episode now), or a repeat (a job started since).
func (c *Collector) change(d *policies.Action) {
	if s := c.episodeOf(d.Job, d.GPU); s >= 0 {
		e := c.eps.val(s)
		if same(c.reasons[e.reason], d.Reason) {
			return // repeated
		}
		c.end(e)
		r := c.reason(d.Reason)
		*e = episode{reason: r, start: c.decidedAt, last: c.decision, prev: e.prev, next: e.next, n: e.n}
		c.episodes[r]++
		return
	}
	r := c.reason(d.Reason)
	first := c.jobEps.Get(int(d.Job))
	n := int32(1)
	if first >= 0 {
		n += c.eps.val(first).n
	}
	s := c.eps.addUnindexed(deferKey{d.Job, d.GPU}, episode{reason: r, start: c.decidedAt, last: c.decision, prev: -1, next: first, n: n})
	if first >= 0 {
		c.eps.val(first).prev = s
	}
	c.jobEps.Set(int(d.Job), s)
	c.episodes[r]++
	switch {
	case n == walkEpisodes+1: // from now on in the table
		for x := s; x >= 0; x = c.eps.val(x).next {
			c.eps.index(x)
		}
	case n > walkEpisodes+1:
		c.eps.index(s)
	}
}

// end counts open episode e as ended at this decision, the first that did
// not repeat it (with changes).
func (c *Collector) end(e *episode) {
	e.seen = c.decision - e.last
	c.spans[e.reason] += c.span(e, c.decidedAt)
}

// undefer ends the episode of an Undefer's job and GPU, or all the job's
// episodes (policies.AllGPUs), at this decision.
func (c *Collector) undefer(d *policies.Action) {
	if d.GPU == policies.AllGPUs {
		for s := c.jobEps.Get(int(d.Job)); s >= 0; {
			e := c.eps.val(s)
			c.end(e)
			next := e.next
			c.eps.remove(s)
			s = next
		}
		c.jobEps.Set(int(d.Job), -1)
		return
	}
	s := c.episodeOf(d.Job, d.GPU)
	if s < 0 {
		return
	}
	e := c.eps.val(s)
	c.end(e)
	if e.prev >= 0 {
		c.eps.val(e.prev).next = e.next
		c.eps.val(c.jobEps.Get(int(d.Job))).n--
	} else {
		c.jobEps.Set(int(d.Job), e.next)
		if e.next >= 0 {
			c.eps.val(e.next).n = e.n - 1
		}
	}
	if e.next >= 0 {
		c.eps.val(e.next).prev = e.prev
	}
	c.eps.remove(s)
}

func (c *Collector) deferral(d *policies.Action) {
	k := deferKey{d.Job, d.GPU}
	if s := c.eps.get(k); s >= 0 {
		e := c.eps.val(s)
		if same(c.reasons[e.reason], d.Reason) && (e.last == c.decision-1 || e.last == c.decision) {
			if e.last != c.decision {
				e.last = c.decision
				e.seen++
			}
			return
		}
		// Another reason now (or the same one after a gap): the old
		// episode ends at this decision.
		c.spans[e.reason] += c.span(e, c.decidedAt)
		r := c.reason(d.Reason)
		*e = episode{reason: r, start: c.decidedAt, last: c.decision, seen: 1}
		c.episodes[r]++
		return
	}
	r := c.reason(d.Reason)
	c.open = append(c.open, c.eps.add(k, episode{reason: r, start: c.decidedAt, last: c.decision, seen: 1}))
	c.episodes[r]++
}

// reason returns the index of a deferral reason, adding it if new.
func (c *Collector) reason(r string) int32 {
	if i := c.lastReason; i >= 0 && same(c.reasons[i], r) {
		return i
	}
	// A run has a handful of reasons, and a loaded one alternates between
	// them: compared in turn (a string equal to the policy's constant is
	// the same pointer), the map only past the first few (its hash was
	// 1.5 % of a loaded Horus run's profile).
	for i, x := range c.reasons[:min(len(c.reasons), scanReasons)] {
		if same(x, r) {
			c.lastReason = int32(i)
			return int32(i)
		}
	}
	i, ok := c.reasonAt[r]
	if !ok {
		i = int32(len(c.reasons))
		c.reasons = append(c.reasons, r)
		c.episodes = append(c.episodes, 0)
		c.spans = append(c.spans, 0)
		c.reasonAt[r] = i
	}
	c.lastReason = i
	return i
}

// same is a == b for deferral reasons, their bytes' addresses compared
// first: a policy's reasons are its constants, so equal ones mostly share
// their bytes, and == calls memequal once the lengths match.
func same(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// scanReasons is how many of the first reasons Collector.reason compares
// before it asks its map.
const scanReasons = 8

// byReason returns counts by reason index as a map by reason.
func (c *Collector) byReason(n []int) map[string]int {
	out := make(map[string]int, len(n))
	for i, v := range n {
		out[c.reasons[i]] = v
	}
	return out
}

// Jobs returns the per-job outcomes, by job id: every job's, or after
// StreamJobs those of the jobs not streamed yet (from the lowest id not
// final, in id order).
func (c *Collector) Jobs() []Job {
	c.fill(c.n)
	return c.jobs
}

// Events returns how many backend events the run had.
func (c *Collector) Events() int { return c.events }

// Deferrals returns the deferral episodes by reason: a job deferred on a
// GPU for one reason in consecutive decisions, until the reason changes or
// it is placed (or the decisions stop deferring it there).
func (c *Collector) Deferrals() map[string]int { return c.byReason(c.episodes) }

// DeferralDecisions returns, by reason, how many decisions the deferral
// episodes spanned, counted in ticks of the decision grid (see
// SetDecisionGrid). Episodes still open at the end count up to the last
// decision, included when it repeated them.
func (c *Collector) DeferralDecisions() map[string]int {
	spans := slices.Clone(c.spans)
	if c.changes { // every open episode was repeated by the last decision
		for s := range c.eps.slots {
			if c.eps.slots[s].live {
				e := c.eps.slots[s].val
				e.seen = c.decision - e.last + 1
				spans[e.reason] += c.span(&e, c.decidedAt+1)
			}
		}
		return c.byReason(spans)
	}
	for _, s := range c.open {
		e := *c.eps.val(s)
		end := c.decidedAt
		if e.last == c.decision {
			end++
		}
		spans[e.reason] += c.span(&e, end)
	}
	return c.byReason(spans)
}

// Summary summarizes the run so far: Summarize over the jobs, with the
// deferral episodes and the decisions they spanned.
func (c *Collector) Summary() Summary {
	// With every job streamed, summary sorts the streamed values where
	// they are (no copy): that changes no later Summary, which sorts its
	// values before reading them.
	c.fill(c.n)
	a := c.done
	if len(c.jobs) > 0 {
		a = c.done.clone()
		a.grow(len(c.jobs))
		for i := range c.jobs {
			a.add(&c.jobs[i])
		}
	}
	s := a.summary(c.Deferrals())
	s.DeferralDecisions = c.DeferralDecisions()
	return s
}

// Summary is a run's metrics. Times are in seconds. Percentiles use
// policies.Quantile (linear interpolation between closest ranks).
type Summary struct {
	Jobs, Finished, Stopped int
	MakespanS               float64 // last finish − first submit
	MeanJCTS, P95JCTS       float64
	MeanQueueS, P95QueueS   float64
	MeanExecS, P95ExecS     float64
	MeanNormJCT             float64
	FailedAttempts          int // attempts that failed
	RecoveredAttempts       int // failed attempts of jobs that later finished
	// Retries (attempts after a failure) started alone on their GPUs (the
	// exclusive fallback) and next to other jobs (the recovery ladder).
	ExclusiveRetries, SharedRetries int
	// Deferrals counts deferral episodes by reason (Collector.Deferrals).
	Deferrals map[string]int
	// DeferralDecisions counts the decisions those episodes spanned, by
	// reason, in ticks of the decision grid (Collector.DeferralDecisions).
	DeferralDecisions map[string]int
	// Energy is the run's energy to solution; nil when it was not
	// metered, and then EnergyNote says why (e.g. a GPU type without a
	// measured power model).
	Energy     *Energy
	EnergyNote string
}

// Energy is what a run's GPUs drew over its makespan.
type Energy struct {
	// J is the joules over every GPU of the server, from the first
	// submission to the last finish.
	J float64
	// GPUs is the number of GPUs metered.
	GPUs int
}

// MeanGPUPowerW is the mean power of one GPU over the makespan (0 without
// one).
func (s Summary) MeanGPUPowerW() float64 {
	if s.Energy == nil || s.MakespanS <= 0 || s.Energy.GPUs == 0 {
		return 0
	}
	return s.Energy.J / s.MakespanS / float64(s.Energy.GPUs)
}

// EnergyPerJobJ is the energy per finished job (0 when none finished).
func (s Summary) EnergyPerJobJ() float64 {
	if s.Energy == nil || s.Finished == 0 {
		return 0
	}
	return s.Energy.J / float64(s.Finished)
}

// Summarize computes the run metrics over the jobs that finished.
func Summarize(jobs []Job, deferrals map[string]int) Summary {
	a := newSummaryAcc()
	a.grow(len(jobs))
	for i := range jobs {
		a.add(&jobs[i])
	}
	return a.summary(deferrals)
}

// summaryAcc accumulates Summarize's metrics job by job, in any order: the
// counts and extremes as they come, and the finished jobs' values, which
// summary sorts before taking means and quantiles (so the result does not
// depend on the order, to the bit).
type summaryAcc struct {
	s Summary
	// jct, queue and exec hold durations' bits (durationBits), norm
	// the ratios.
	jct, queue, exec, norm []float64
	first, last            time.Duration
}

func newSummaryAcc() summaryAcc { return summaryAcc{first: -1, last: -1} }

func (a *summaryAcc) add(j *Job) {
	s := &a.s
	s.Jobs++
	if a.first < 0 || j.Submit < a.first {
		a.first = j.Submit
	}
	s.FailedAttempts += j.Failed
	s.ExclusiveRetries += j.ExclusiveRetries
	s.SharedRetries += j.SharedRetries
	switch j.State {
	case policies.Stopped:
		s.Stopped++
	case policies.Done:
		s.Finished++
		s.RecoveredAttempts += j.Failed
		a.last = max(a.last, j.Finish)
		a.jct = append(a.jct, durationBits(j.JCT()))
		a.queue = append(a.queue, durationBits(j.Queue()))
		a.exec = append(a.exec, durationBits(j.Exec))
		a.norm = append(a.norm, j.NormJCT())
	}
}

// grow makes room for the values of n more finished jobs, so that adding
// them appends without copying.
func (a *summaryAcc) grow(n int) {
	a.jct, a.queue = slices.Grow(a.jct, n), slices.Grow(a.queue, n)
	a.exec, a.norm = slices.Grow(a.exec, n), slices.Grow(a.norm, n)
}

// clone returns a copy sharing no memory with a.
func (a *summaryAcc) clone() summaryAcc {
	b := *a
	b.jct, b.queue = slices.Clone(a.jct), slices.Clone(a.queue)
	b.exec, b.norm = slices.Clone(a.exec), slices.Clone(a.norm)
	return b
}

// summary returns the metrics of the jobs added (it sorts a's values).
func (a *summaryAcc) summary(deferrals map[string]int) Summary {
	s := a.s
	s.Deferrals = deferrals
	if a.last >= 0 {
		s.MakespanS = (a.last - a.first).Seconds()
	}
	// One scratch array for the four sorts; from parallelSortMin values
	// on, two, the first two sorts on a goroutine of their own (a second
	// core's work, the same values).
	n := max(len(a.jct), len(a.queue), len(a.exec), len(a.norm))
	var scratch []uint64
	if n >= radixMin {
		scratch = make([]uint64, n)
	}
	var wg sync.WaitGroup
	if n >= parallelSortMin {
		wg.Go(func() {
			scratch := make([]uint64, n)
			s.MeanJCTS, s.P95JCTS = durationsMeanP95(a.jct, scratch)
			s.MeanQueueS, s.P95QueueS = durationsMeanP95(a.queue, scratch)
		})
	} else {
		s.MeanJCTS, s.P95JCTS = durationsMeanP95(a.jct, scratch)
		s.MeanQueueS, s.P95QueueS = durationsMeanP95(a.queue, scratch)
	}
	s.MeanExecS, s.P95ExecS = durationsMeanP95(a.exec, scratch)
	s.MeanNormJCT, _ = meanP95(a.norm, scratch)
	wg.Wait()
	return s
}

// parallelSortMin is the number of jobs from which a summary's sorts run on
// two goroutines (some 0.3 ms of sorting each).
const parallelSortMin = 8192

func meanP95(xs []float64, scratch []uint64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	sortFloatsIn(xs, scratch)
	return policies.Mean(xs), policies.SortedQuantile(xs, 0.95)
}

// radixMin is the shortest input sortFloats radix-sorts.
const radixMin = 512

// sortFloats sorts xs in increasing order, as slices.Sort does: a radix
// sort of the values' bits (mapped so that their unsigned order is the
// numbers' order), several times faster on the hundreds of thousands of
// values of a large run. Short inputs, and inputs with a NaN or a negative
// zero (whose place slices.Sort leaves open), go to slices.Sort.
func sortFloats(xs []float64) { sortFloatsIn(xs, nil) }

// sortFloatsIn is sortFloats using scratch as its working memory when it
// holds len(xs) values (else it allocates). The passes move the keys
// between scratch and xs itself, whose float64s hold a key's bits as they
// are (math.Float64frombits and back: memory moves, which keep every bit,
// a NaN's too), so that a sort of a million values takes 8 MB of scratch,
// not 16. The keys are sorted by their eight bytes, least significant
// first, with every byte's counts taken in the one pass that makes the keys
// (nine passes over the values, not two for each byte); a byte that is the
// same in every key is skipped. (Digits of 11 bits, six passes, executed
// fewer instructions but were slower on a million values: 2,048 places
// written at once.)
func sortFloatsIn(xs []float64, scratch []uint64) {
	if len(xs) < radixMin || uint64(len(xs)) > math.MaxUint32 {
		slices.Sort(xs)
		return
	}
	if len(scratch) < len(xs) {
		scratch = make([]uint64, len(xs))
	}
	keys := scratch[:len(xs)]
	var count [radixPasses][radixSize]uint32
	for i, x := range xs {
		b := math.Float64bits(x)
		if x != x || b == 1<<63 {
			slices.Sort(xs)
			return
		}
		if b>>63 == 1 {
			b = ^b // negative: larger magnitudes first
		} else {
			b |= 1 << 63
		}
		keys[i] = b
		countDigits(&count, b)
	}
	inKeys := radixSort(keys, xs, &count)
	for i := range xs {
		k := keys[i]
		if !inKeys {
			k = math.Float64bits(xs[i])
		}
		if k>>63 == 1 {
			k &^= 1 << 63
		} else {
			k = ^k
		}
		xs[i] = math.Float64frombits(k)
	}
}

// radixSort sorts keys by their bytes, least significant first, from the
// counts of each byte's digits, moving them between keys and xs (whose
// float64s hold a key's bits as they are); it reports whether the sorted
// keys are in keys, else in xs. A byte that is the same in every key is
// skipped.
func radixSort(keys []uint64, xs []float64, count *[radixPasses][radixSize]uint32) bool {
	inKeys := true // the keys are in keys, else in xs
	for pass := range radixPasses {
		shift := uint(pass * radixBits)
		c := &count[pass]
		if c[keys[0]>>shift&radixMask] == uint32(len(xs)) {
			continue // one digit for all: this pass would change nothing
		}
		sum := uint32(0)
		for d, n := range c {
			c[d] = sum
			sum += n
		}
		if inKeys {
			for _, k := range keys {
				d := k >> shift & radixMask
				xs[c[d]] = math.Float64frombits(k)
				c[d]++
			}
		} else {
			for _, x := range xs {
				k := math.Float64bits(x)
				d := k >> shift & radixMask
				keys[c[d]] = k
				c[d]++
			}
		}
		inKeys = !inKeys
	}
	return inKeys
}

// countDigits adds key b's bytes to count.
func countDigits(count *[radixPasses][radixSize]uint32, b uint64) {
	count[0][b&radixMask]++
	count[1][b>>8&radixMask]++
	count[2][b>>16&radixMask]++
	count[3][b>>24&radixMask]++
	count[4][b>>32&radixMask]++
	count[5][b>>40&radixMask]++
	count[6][b>>48&radixMask]++
	count[7][b>>56]++
}

// durationBits is d's bits in a float64 (summaryAcc's durations, which
// durationsMeanP95 sorts as durations).
func durationBits(d time.Duration) float64 { return math.Float64frombits(uint64(d)) }

// bitsSeconds is the seconds of the duration whose bits x holds.
func bitsSeconds(x float64) float64 { return time.Duration(math.Float64bits(x)).Seconds() }

// durationsMeanP95 is meanP95 of the seconds of the durations whose bits xs
// holds (durationBits), to the bit: it sorts them as durations, which
// leaves their seconds in the same order (Seconds never orders two
// durations the other way), as integers, whose high bytes, the same in
// every duration of a run shorter than some 78 hours, take no pass of the
// radix sort (a float's all differ); they stay durations, so that a later
// summary of the same values reads them so.
func durationsMeanP95(xs []float64, scratch []uint64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	sortDurationsIn(xs, scratch)
	sum := 0.0
	for _, x := range xs {
		sum += bitsSeconds(x)
	}
	// policies.SortedQuantile(seconds, 0.95), as it computes it.
	last := len(xs) - 1
	pos := 0.95 * float64(last)
	i := int(math.Floor(pos))
	if i >= last {
		return sum / float64(len(xs)), bitsSeconds(xs[last])
	}
	f := pos - float64(i)
	lo, hi := bitsSeconds(xs[i]), bitsSeconds(xs[i+1])
	return sum / float64(len(xs)), lo + f*(hi-lo)
}

// sortDurationsIn sorts xs, whose float64s hold time.Durations' bits
// (durationBits), by duration, using scratch as sortFloatsIn does.
func sortDurationsIn(xs []float64, scratch []uint64) {
	if len(xs) < radixMin || uint64(len(xs)) > math.MaxUint32 {
		slices.SortFunc(xs, func(a, b float64) int {
			return cmp.Compare(int64(math.Float64bits(a)), int64(math.Float64bits(b)))
		})
		return
	}
	if len(scratch) < len(xs) {
		scratch = make([]uint64, len(xs))
	}
	keys := scratch[:len(xs)]
	var count [radixPasses][radixSize]uint32
	for i, x := range xs {
		b := math.Float64bits(x) ^ 1<<63 // a duration's order as unsigned
		keys[i] = b
		countDigits(&count, b)
	}
	inKeys := radixSort(keys, xs, &count)
	for i := range xs {
		k := keys[i]
		if !inKeys {
			k = math.Float64bits(xs[i])
		}
		xs[i] = math.Float64frombits(k ^ 1<<63)
	}
}

// The radix sort's digits: radixPasses bytes of a key.
const (
	radixBits   = 8
	radixPasses = 64 / radixBits
	radixSize   = 1 << radixBits
	radixMask   = radixSize - 1
)
