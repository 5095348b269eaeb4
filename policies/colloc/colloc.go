// Package colloc is the scheduling machinery that the collocating policies
// (AEGIS, Lucid, Horus) share: FIFO and recovery queues, exclusive-first
// admission, the post-placement observation hold, the decision tick, the
// OOM recovery ladder, and choosing GPUs by a policy's admission rule and
// score. A policy supplies only its Rule.
package colloc

import (
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/aegis-sched/aegis/policies"
)

// Rule is what distinguishes one collocating policy from another.
type Rule interface {
	// Admit reports why GPU g may not take job j now (Admitted admits it).
	// It is asked only for GPUs that already run jobs and are out of hold.
	Admit(v *policies.View, j *policies.Job, g int) Reason
	// Score ranks admitted GPUs for j: lower is better, ties go to the
	// lower GPU index.
	Score(v *policies.View, j *policies.Job, g int) float64
}

// Reason says why a job may not go on a GPU now: the Reason of a Defer
// action, in words that event logs and deferral counts show.
type Reason string

// Deferral reasons of the machinery, and those several rules give.
const (
	// Admitted is no reason: the GPU may take the job.
	Admitted Reason = ""
	// DeferHold: the GPU is in its observation hold, or took a job in
	// this decision.
	DeferHold Reason = "hold"
	// DeferRecoveryMemory: the GPU's usable free memory is below the
	// ladder level of the job's retry.
	DeferRecoveryMemory Reason = "recovery-memory"
	// DeferRecoveryExclusive: the job has used up the ladder and retries
	// only on idle GPUs.
	DeferRecoveryExclusive Reason = "recovery-exclusive"
	// DeferMemory: the job does not fit the GPU's memory as the rule
	// measures it.
	DeferMemory Reason = "memory"
	// DeferJobs: the GPU already holds as many jobs as the rule allows.
	DeferJobs Reason = "jobs"
)

// Horizon is implemented by rules whose answers can change while nothing
// happens (no event): because time passes (a telemetry window gains
// samples) or a measurement moves. ChangesAt returns the earliest time at which
// Admit(v, j, g) could answer differently if no event happens before; a
// time at or before v.Now means it cannot tell, and Never that it cannot
// change. It is asked only when the decision's horizon matters (the
// decision leaves a job waiting, or the rule is Stateless), after the
// decision's last Admit and before its Refine, once for each (j, g) Admit
// was asked in the decision, in that order, with the same view: a rule
// answers for the decision it just made (and may leave the work of a
// horizon undone when it is not asked). The scheduler decides again at the
// first tick at or after the earliest such time (or the next event),
// instead of at every tick: the skipped ticks are the ones that could not
// have decided anything else. A rule without Horizon is asked again at
// every tick.
type Horizon interface {
	ChangesAt(v *policies.View, j *policies.Job, g int) time.Duration
}

// Refiner is implemented by Horizon rules whose ChangesAt answers may be lower
// bounds that more work can raise. When a decision leaves a job waiting,
// the scheduler calls Refine with the earliest horizon of the decision's
// other answers (hold ends, ladder memory; Never: none); Refine returns the
// earliest time at which any of the rule's answers of this decision could
// change, raised at least as far as limit where it can be (beyond limit it
// need not be: the decision comes at limit anyway).
type Refiner interface {
	Refine(v *policies.View, limit time.Duration) time.Duration
}

// Stateless is implemented by rules that keep no state across decisions
// and whose Admit and Score read only the job asked about, the GPUs and the
// jobs on them (never the queue). For such rules the scheduler implements
// policies.Selective: an arrival that queues behind the job a decision
// stopped at, before any of that decision's answers could change (its
// horizon), would be decided exactly as that decision was, so the loop need
// not ask.
type Stateless interface {
	// Stateless marks the rule; it is never called for a result.
	Stateless()
}

// EventsOnly is implemented by Horizon rules whose answers change only with
// events: ChangesAt always answers Never. The scheduler then does not ask
// it (nor keep the questions for it).
type EventsOnly interface {
	Horizon
	// EventsOnly marks the rule; it is never called for a result.
	EventsOnly()
}

// GPULocal is implemented by EventsOnly rules whose Admit(v, j, g) reads
// only job j and GPU g: g's capacity, its job list and the fields of the
// jobs on it (never the time, measured memory, other GPUs or the queue).
// When the scheduler sees the backend's events, it then keeps each GPU's
// latest answer and gives it again without asking for the same job (with
// the same Attempts) while nothing happened on the GPU: no job started on
// it, showed its first activity or ended there, no placement on it failed,
// and no decision placed a job on it. A loaded decision otherwise asks the
// same questions as the one before and gets the same answers.
type GPULocal interface {
	EventsOnly
	// GPULocal marks the rule; it is never called for a result.
	GPULocal()
}

// Never is a Horizon answer: no change without an event.
const Never = time.Duration(math.MaxInt64)

// MemoryChangesAt returns the earliest time at which GPU g's measured
// memory (GPU.UsedMiB) could change if nothing happens: the backend's answer
// when its telemetry is policies.SteadyTelemetry, else v.Now (it may change
// at any time).
func MemoryChangesAt(v *policies.View, g int) time.Duration {
	if m, ok := v.Telemetry.(policies.SteadyTelemetry); ok {
		return m.UsedMiBChangesAt(g)
	}
	return v.Now
}

// Placer is implemented by rules that keep state about their placements
// (e.g. a round-robin cursor).
type Placer interface {
	Placed(j *policies.Job, gpus []int)
}

// Recovery modes for OOM-failed jobs.
const (
	// RecoverExclusive retries a failed job only on idle GPUs: what the
	// AEGIS artifact's loop effectively did, since it tried collocation
	// only while the recovery queue was empty.
	RecoverExclusive = "exclusive"
	// RecoverLadder lets the k-th retry collocate on GPUs whose usable free
	// memory reaches the k-th ladder level, then falls back to exclusive.
	RecoverLadder = "ladder"
)

// Config holds the machinery's settings.
type Config struct {
	// Hold is the post-placement observation hold: a GPU that received a
	// job takes nothing else until the job shows GPU activity and Hold more
	// has passed, or the job has exited.
	Hold time.Duration
	// Tick is the decision interval while the head job is blocked.
	Tick time.Duration
	// Lookahead is how many unplaced main-queue jobs a decision tries, in
	// order, each for idle GPUs and then for collocation (1 = strict FIFO
	// with head-of-line blocking; more lets later jobs backfill).
	Lookahead int
	// Recovery is RecoverExclusive or RecoverLadder.
	Recovery string
	// LadderFractions are the capacity fractions of the recovery ladder;
	// intermediate steps are added so no step exceeds LadderStepMiB.
	LadderFractions []float64
	LadderStepMiB   float64
	// WholePartners makes a multi-GPU job collocate only on exactly the GPU
	// set of one running job with as many GPUs, every one of them admitted
	// (Lucid's pairing of whole jobs); otherwise it may combine any admitted
	// GPUs, and idle ones.
	WholePartners bool
	// EveryTick decides at every tick while a job waits, as if no rule had
	// a Horizon (the same outputs, slower; for recorders that sample each
	// decision).
	EveryTick bool
}

// DefaultConfig is the AEGIS paper's setting: 30 s hold, 1 s tick, strict
// FIFO, exclusive recovery, ladder 25/50/75 % in steps of at most 8 GiB.
func DefaultConfig() Config {
	return Config{Hold: 30 * time.Second, Tick: time.Second, Lookahead: 1, Recovery: RecoverExclusive,
		LadderFractions: []float64{0.25, 0.5, 0.75}, LadderStepMiB: 8192}
}

// ReadParams reads the machinery's parameters (hold, tick, lookahead,
// recovery) with the given defaults.
func ReadParams(p *policies.Params, def Config) Config {
	c := def
	c.Hold = p.Duration("hold", def.Hold, 0, 24*time.Hour, "observation hold after first activity, e.g. 30s")
	c.Tick = p.Duration("tick", def.Tick, time.Millisecond, time.Hour, "decision tick while the head job is blocked, e.g. 1s")
	c.Lookahead = p.Int("lookahead", def.Lookahead, 1, 1000, "unplaced queued jobs tried per decision (1: strict FIFO)")
	c.Recovery = p.String("recovery", def.Recovery, "OOM recovery", RecoverExclusive, RecoverLadder)
	c.EveryTick = p.String("skip", "on", "skip the ticks that cannot change a decision (off: decide at every tick)", "on", "off") == "off"
	return c
}

// Ladder returns the recovery ladder's free-memory levels in MiB for a GPU
// of the given capacity: the fractions of capacity, with intermediate steps
// inserted so that no step between levels exceeds the step size. On
// 40960 MiB: 10240, 18432, 20480, 28672, 30720.
func (c Config) Ladder(capMiB float64) []float64 {
	var out []float64
	for i, f := range c.LadderFractions {
		target := f * capMiB
		if i == 0 {
			out = append(out, target)
			continue
		}
		prev := out[len(out)-1]
		for c.LadderStepMiB > 0 && target-prev > c.LadderStepMiB {
			prev += c.LadderStepMiB
			out = append(out, prev)
		}
		out = append(out, target)
	}
	return out
}

// UsableFree is a GPU's last measured free memory less a safety margin of
// max(512 MiB, 1 % of capacity).
func UsableFree(g *policies.GPU) float64 {
	return g.FreeMiB() - max(512, 0.01*g.CapacityMiB)
}

// Held reports whether GPU g is in its observation hold: some job on it has
// not shown activity yet, or did so less than hold ago.
func Held(v *policies.View, g int, hold time.Duration) bool {
	for _, id := range v.GPUs[g].Jobs {
		j := v.Job(id)
		if !j.Active || v.Now < j.ActiveAt+hold {
			return true
		}
	}
	return false
}

// Scheduler runs a Rule under the shared machinery. It implements
// policies.Policy.
type Scheduler struct {
	name string
	cfg  Config
	rule Rule
	// Scratch space reused across decisions; busyAt lists the GPUs set
	// in busy (the decision's placements'), unset at the next decision.
	busy    []bool
	busyAt  []int
	recover []policies.JobID
	gw      gpuWalk
	// changesAt is the earliest time at which this decision's answers could
	// change without an event (Never: only an event changes them), the
	// rule's Horizon answers counted from wake on, where they are asked;
	// other is the same for the answers not the rule's Horizon's.
	changesAt, other time.Duration
	acts             []policies.Action
	// asks are the (job, GPU) pairs Admit was asked in this decision, for
	// a Horizon rule's ChangesAt.
	asks []ask
	// decided is set by the first decision. Of the last one: idle when it
	// left nothing waiting and deferred nothing; settled when the next
	// decision would repeat it less its placements (it stopped no job, and
	// placed no recovered job, none it also deferred and none after a job
	// it left waiting, which saw the GPU free); stopAt is the id
	// of the main-queue job it stopped at (0 when it stopped in the
	// recovery queue, -1 when it did not stop or is not settled): only
	// arrivals with a lower id queue ahead of it (the queue is in id order).
	decided, idle, settled bool
	stopAt                 policies.JobID
	// holds keeps the GPUs' hold ends from events; cached: they are used
	// in this decision.
	holds
	cached bool
	// changes: the deferrals are reported as changes from the previous
	// decision's (ReportDeferralChanges), kept in book.
	changes bool
	book    deferBook
	// What the rule implements (asked once, not at each GPU).
	horizonRule           Horizon
	refiner               Refiner
	stateless, eventsOnly bool
	gpuLocal              bool
	// verdicts are each GPU's latest Admit answer (GPULocal rules, when
	// the hold ends are kept from events).
	verdicts []verdict
	// keptAnswers counts the previous decision's answers a walk kept
	// without asking (keepFrom; tests).
	keptAnswers int
	// slab is an arena of the placements' GPU lists, never reused: an
	// action or a Placer that keeps one keeps it as it was (a list of its
	// own each had been an allocation a placement).
	slab []int
}

// verdict is a GPULocal rule's latest answer for a GPU: for job, at the
// job's attempts, while the GPU's generation (holds.gen) is gen.
type verdict struct {
	job      policies.JobID
	attempts int
	gen      uint32
	reason   Reason
}

// ask is one Admit question of a decision.
type ask struct {
	j *policies.Job
	g int
}

// deferral returns the Defer action of job on GPU g for reason.
func (s *Scheduler) deferral(job policies.JobID, g int, reason Reason) policies.Action {
	return policies.Action{Kind: policies.Defer, Job: job, GPU: g, Reason: string(reason)}
}

// New returns a scheduler named name applying rule under cfg.
func New(name string, cfg Config, rule Rule) *Scheduler {
	s := &Scheduler{name: name, cfg: cfg, rule: rule}
	s.horizonRule, _ = rule.(Horizon)
	s.refiner, _ = rule.(Refiner)
	_, s.stateless = rule.(Stateless)
	_, s.eventsOnly = rule.(EventsOnly)
	_, s.gpuLocal = rule.(GPULocal)
	return s
}

// Reader is a Scheduler whose rule only reads the jobs of the views it is
// given (Admit and Score write into no Job nor its GPU list, nor keep one
// past a decision): it implements policies.JobsReader, so that the loop
// hands it the backend's jobs instead of a copy of every job. The machinery
// itself only reads jobs (it copies the GPU lists it keeps or places on).
// Horus and Lucid are Readers; TestJobsReadersWriteNoJob holds them to it.
// A rule that writes into a job (or a Placer that keeps one) needs a plain
// Scheduler.
type Reader struct{ *Scheduler }

// ReadsJobsOnly implements policies.JobsReader.
func (Reader) ReadsJobsOnly() {}

// Name implements policies.Policy.
func (s *Scheduler) Name() string { return s.name }

// ReportDeferralChanges implements policies.DeferralChanges: from the next
// decision on, a deferral that repeats the previous decision's (the same
// job, GPU and reason, the job's Attempts unchanged: no start since) is
// not listed, and each deferral of the previous decision not made again
// is ended by an Undefer (deferBook).
func (s *Scheduler) ReportDeferralChanges() { s.changes = true }

// Tick implements policies.Ticker: the decision grid.
func (s *Scheduler) Tick() time.Duration { return s.cfg.Tick }

// Config returns the scheduler's settings.
func (s *Scheduler) Config() Config { return s.cfg }

// Schedule implements policies.Policy. One decision:
//  1. Jobs whose last attempt failed for a reason other than OOM, or with an
//     OOM while alone on their GPUs, are stopped: retrying cannot help.
//  2. The recovery queue (OOM-failed jobs, by failure time) comes before the
//     main queue (submission order). Each head job, in turn, takes enough
//     idle GPUs (lowest index first) if there are.
//  3. Otherwise it may collocate: a main-queue job only while the recovery
//     queue is empty, on GPUs out of hold that the rule admits, best score
//     first; a recovered job only in ladder mode, on GPUs out of hold that
//     the rule admits and whose usable free memory also reaches the job's
//     ladder level (so each retry demands more).
//  4. A job that cannot be placed blocks the ones behind it, and a decision
//     tick is requested. With Lookahead n > 1, up to n unplaced main-queue
//     jobs are tried in turn, each for idle GPUs first and then for
//     collocation: later jobs may backfill GPUs a blocked head cannot use
//     (Horus's look-ahead), which can delay the head.
func (s *Scheduler) Schedule(v *policies.View) []policies.Action {
	acts := s.acts[:0] // reused: the caller is done with it before the next decision
	if cap(s.busy) < len(v.GPUs) {
		s.busy, s.busyAt = make([]bool, len(v.GPUs)), s.busyAt[:0]
	}
	for _, g := range s.busyAt { // the last decision's: no clear (a call) of every GPU
		s.busy[g] = false
	}
	s.busyAt = s.busyAt[:0]
	d := pass{v: v, busy: s.busy[:len(v.GPUs)]} // busy: received a job in this decision
	d.acts = s.triage(v, acts)
	d.stopped = len(d.acts) > 0 // triage's actions are Stops
	d.recovery = s.recover
	s.changesAt, s.other = Never, Never
	s.asks = s.asks[:0]
	s.cached = s.observed && s.refresh(v)
	s.walk(&d)
	acts = s.wake(&d)
	if s.changes {
		acts = s.book.finish(acts)
	}
	s.acts = acts[:0] // without a defer: a deferred closure cost 40 instructions a decision
	return acts
}

// triage stops the failed jobs that will not run again and lists the OOM
// failures to recover (s.recover).
func (s *Scheduler) triage(v *policies.View, acts []policies.Action) []policies.Action {
	recovery := s.recover[:0]
	for _, id := range v.Failed {
		j := v.Job(id)
		switch {
		case j.LastFailure == policies.OtherFailure:
			acts = append(acts, policies.Action{Kind: policies.Stop, Job: id, Reason: "failed (not OOM)"})
		case j.LastFailure == policies.OOM && !j.FailedShared:
			acts = append(acts, policies.Action{Kind: policies.Stop, Job: id, Reason: "OOM while running exclusively"})
		default:
			recovery = append(recovery, id)
		}
	}
	s.recover = recovery
	return acts
}

// pass is one decision's walk over the jobs it may place.
type pass struct {
	v        *policies.View
	busy     []bool // GPUs that received a job in this decision
	acts     []policies.Action
	recovery []policies.JobID // failed jobs to recover, first
	unplaced int
	// stopped, deferred: acts has a Stop, a Defer (kept as they are
	// appended rather than found again in acts: reading a loaded
	// decision's deferrals again was 2 % of Horus's run).
	stopped, deferred bool
}

// walk considers the jobs to recover, then the queue, until one blocks
// the jobs behind it.
func (s *Scheduler) walk(d *pass) {
	blocked := false
	s.decided, s.stopAt, s.settled = true, -1, true
	for _, id := range d.recovery {
		if blocked = s.consider(d, d.v.Job(id)); blocked {
			s.stopAt = 0
			break
		}
	}
	for i := 0; !blocked && i < d.v.Queue.Len(); i++ {
		if j := d.v.Job(d.v.Queue.At(i)); j.LastFailure == policies.NoFailure {
			if blocked = s.consider(d, j); blocked {
				s.stopAt = j.ID
			}
		}
	}
}

// consider tries to place one job and reports whether the jobs behind it
// must wait.
func (s *Scheduler) consider(d *pass, j *policies.Job) (blocked bool) {
	recovering := j.OOMs > 0
	if gpus := s.idleGPUs(d.v, d.busy, j.GPUs); gpus != nil {
		d.acts = s.place(d.acts, d.busy, j, gpus)
		s.settled = s.settled && !recovering && d.unplaced == 0
		return false
	}
	if (recovering && s.cfg.Recovery == RecoverLadder) || (!recovering && len(d.recovery) == 0) {
		var gpus []int
		var deferred int
		gpus, d.acts, deferred = s.collocate(d.v, d.busy, j, d.acts) // appends Defers only
		d.deferred = d.deferred || deferred > 0
		if gpus != nil {
			d.acts = s.place(d.acts, d.busy, j, gpus)
			// Deferred on some GPUs and placed on others: the episodes
			// end at the next decision.
			s.settled = s.settled && !recovering && d.unplaced == 0 && deferred == 0
			return false
		}
	}
	d.unplaced++
	// Head-of-line blocking; recovered jobs have strict priority.
	return recovering || d.unplaced >= s.cfg.Lookahead
}

// wake settles what the decision's actions say about the next one and,
// while jobs wait, asks for a decision at the first tick at which this
// one's answers could change.
func (s *Scheduler) wake(d *pass) []policies.Action {
	v, acts, unplaced := d.v, d.acts, d.unplaced
	deferred := d.deferred
	if d.stopped {
		s.settled = false
	}
	if !s.settled {
		// The decision its actions' events bring differs from this one:
		// until then, every event is wanted.
		s.stopAt = -1
	}
	if h := s.horizonRule; h != nil && (s.stateless || unplaced > 0) {
		for _, a := range s.asks {
			s.changesAt = min(s.changesAt, h.ChangesAt(v, a.j, a.g))
		}
	}
	if r := s.refiner; r != nil && unplaced > 0 && s.changesAt < s.other && !s.cfg.EveryTick {
		s.changesAt = min(s.other, r.Refine(v, s.other))
	}
	s.idle = !deferred && unplaced == 0
	if s.cfg.EveryTick {
		s.changesAt = min(s.changesAt, v.Now)
	}
	if unplaced > 0 && s.changesAt != Never {
		// The first tick on the grid of multiples of Tick at or after the
		// earliest possible change (so that decisions triggered by events do
		// not start ticking chains of their own); every tick before it would
		// decide exactly as this decision did.
		next := (v.Now/s.cfg.Tick + 1) * s.cfg.Tick
		if s.changesAt > next {
			next = s.changesAt
			if r := next % s.cfg.Tick; r != 0 {
				next += s.cfg.Tick - r
			}
		}
		acts = append(acts, policies.Action{Kind: policies.Wake, At: next})
	}
	return acts
}

// Wants implements policies.Selective; with skip=off, and before the first
// decision, every event is wanted.
//
// After a decision that left nothing waiting (no queued or failed job)
// and deferred nothing, only an arrival or a failure can give the next one
// something to do: starts, first activities, finishes and wake-ups are not
// wanted (a decision then would return no action, whatever the rule).
//
// Under a Stateless rule, a settled decision (see Scheduler.settled)
// decides again exactly as it did, less its placements, until one of its
// answers can change: at an event other than a start or an arrival, at an
// arrival queued ahead of the job it stopped at, or at its horizon (a hold
// ending, the measured memory of a ladder retry moving). The starts of its
// own placements (the view has them already: a GPU taken is held until its
// new job shows activity, as it was busy in the decision), arrivals behind
// the blocked job before the horizon, and, with a hold, a job's first
// activity before the horizon when its hold ends no earlier (its GPUs were
// held and stay so; the horizon stays) are not wanted: the decision would
// repeat the last one's deferrals and wake-up, which record nothing new
// (the deferral episodes continue; the Wake is already due).
func (s *Scheduler) Wants(e policies.Event) bool { return s.WantsAt(&e) }

// WantsAt implements policies.InPlaceSelective: Wants, e read in place.
func (s *Scheduler) WantsAt(e *policies.Event) bool {
	if s.cfg.EveryTick || !s.decided {
		return true
	}
	stateless := s.stateless
	switch e.Kind {
	case policies.JobStarted:
		return !s.idle && !(stateless && s.settled && e.T < s.changesAt)
	case policies.JobActive:
		// Its GPUs were held (or taken) and stay held until e.T + Hold:
		// only the horizon could move, and not when it comes first.
		return !s.idle && !(stateless && s.settled && e.T < s.changesAt && e.T+s.cfg.Hold >= s.changesAt)
	case policies.JobFinished, policies.Wakeup:
		return !s.idle
	case policies.JobArrived:
		if !stateless || s.idle {
			return true
		}
		return s.stopAt < 0 || e.Job < s.stopAt || e.T >= s.changesAt
	}
	return true
}

// horizon lowers the decision's horizon to t, an answer not the rule's
// Horizon's.
func (s *Scheduler) horizon(t time.Duration) {
	s.changesAt = min(s.changesAt, t)
	s.other = min(s.other, t)
}

// holdEnds is when GPU g's observation hold ends if nothing happens: the
// latest first activity plus the hold, or Never while a job on it has not
// shown activity (that takes an event).
func holdEnds(v *policies.View, g int, hold time.Duration) time.Duration {
	var t time.Duration
	for _, id := range v.GPUs[g].Jobs {
		j := v.Job(id)
		if !j.Active {
			return Never
		}
		t = max(t, j.ActiveAt+hold)
	}
	return t
}

// gpuList returns an empty list with room for n GPUs (n > 0) from s's
// arena: a placement's, not written by s once returned.
func (s *Scheduler) gpuList(n int) []int {
	if len(s.slab) < n {
		s.slab = make([]int, max(1024, n))
	}
	l := s.slab[:0:n]
	s.slab = s.slab[n:]
	return l
}

// idleGPUs is v.IdleGPUs(taken, n) (the n lowest-indexed GPUs that run
// no job and are not taken, or nil), its result from s's arena.
func (s *Scheduler) idleGPUs(v *policies.View, taken []bool, n int) []int {
	if n <= 0 {
		return nil // as IdleGPUs: no list reaches n
	}
	if len(s.slab) < n {
		s.slab = make([]int, max(1024, n))
	}
	gpus := s.slab[:0:n]
	gs := v.GPUs // in a register: not read again through v at each GPU
	taken = taken[:len(gs)]
	for g := range gs {
		if len(gs[g].Jobs) == 0 && !taken[g] {
			if gpus = append(gpus, g); len(gpus) == n {
				s.slab = s.slab[n:]
				return gpus
			}
		}
	}
	return nil
}

func (s *Scheduler) place(acts []policies.Action, busy []bool, j *policies.Job, gpus []int) []policies.Action {
	for _, g := range gpus {
		busy[g] = true
	}
	s.busyAt = appendGPUs(s.busyAt, gpus)
	if s.cached { // read again at the next decision
		s.recheck = appendGPUs(s.recheck, gpus)
	}
	if p, ok := s.rule.(Placer); ok {
		p.Placed(j, gpus)
	}
	return append(acts, policies.Action{Kind: policies.Place, Job: j.ID, GPUs: gpus})
}

type cand struct {
	g     int
	score float64
}

// collocate picks GPUs for j among occupied GPUs, recording a deferral for
// each GPU it rejects (as a change, with changes), or returns nil; it
// also returns how many GPUs it rejected. A multi-GPU job may combine
// admitted occupied GPUs with idle ones (idle ones first).
func (s *Scheduler) collocate(v *policies.View, busy []bool, j *policies.Job, acts []policies.Action) ([]int, []policies.Action, int) {
	// The walk's state is kept in s.gw, not in local variables: a loop
	// carrying a dozen values in registers restored them all after each
	// call it made (Admit, holdEnd), some 30 instructions a GPU.
	w := &s.gw
	w.acts, w.cands, w.idle, w.mine, w.was, w.deferred, w.again = acts, w.cands[:0], w.idle[:0], nil, nil, 0, 0
	var vs []verdict
	if s.gpuLocal && s.cached {
		if len(s.verdicts) != len(v.GPUs) {
			s.verdicts = make([]verdict, len(v.GPUs)) // generation 0: no answer
		}
		vs = s.verdicts
	}
	w.verdicts = vs
	var was []Reason
	if vs != nil && s.changes && j.OOMs == 0 && !s.sinceAll { // keepFrom's test, in line
		was = s.keepFrom(v, j)
	}
	for g := range v.GPUs {
		if was != nil {
			if r := was[g]; r != Admitted && !busy[g] && s.readAt[g] != s.refreshes && !sameReason(r, DeferHold) {
				w.mine[g] = r // the previous decision's answer
				w.deferred++
				w.again++
				s.keptAnswers++
				continue
			}
		}
		var reason Reason
		switch {
		case busy[g]:
			reason = DeferHold
		case len(v.GPUs[g].Jobs) == 0:
			w.idle = append(w.idle, g)
			continue
		default:
			reason = s.answer(v, j, g)
		}
		if reason == Admitted {
			w.cands = append(w.cands, cand{g, s.rule.Score(v, j, g)})
			continue
		}
		w.deferred++
		if s.changes {
			if w.mine == nil {
				w.mine, w.was = s.book.job(j, len(v.GPUs))
			}
			if w.mine[g] = reason; w.was != nil {
				if r := w.was[g]; r != Admitted {
					w.again++
					if sameReason(r, reason) {
						continue // the previous decision's
					}
				}
			}
		}
		w.acts = append(w.acts, s.deferral(j.ID, g, reason))
	}
	if w.mine != nil {
		s.book.deferred(w.deferred, w.again)
	}
	acts, cands, idle, deferred := w.acts, w.cands, w.idle, w.deferred
	if s.cfg.WholePartners && j.GPUs > 1 {
		return s.partner(v, j, cands), acts, deferred
	}
	if len(cands) == 0 || len(cands)+len(idle) < j.GPUs {
		return nil, acts, deferred
	}
	gpus := append(s.gpuList(j.GPUs), idle[:min(len(idle), j.GPUs-1)]...)
	for _, c := range best(cands, j.GPUs-len(gpus)) {
		gpus = append(gpus, c.g)
	}
	slices.Sort(gpus)
	return gpus, acts, deferred
}

// keepFrom returns j's answers in the previous decision when this decision
// may keep some of them without asking (and gives j its entry in the book,
// gw.mine and gw.was, now): the rule is GPULocal and its answers are kept
// from events (verdicts), j is no retry and has the same Attempts, and
// the last refresh did not read every GPU; else nil. The walk then keeps
// each of them that is a deferral of the rule's (not a hold's) on a GPU
// not read again since (no event on it, no placement on it then) that
// takes no job in this decision: a loaded decision mostly repeats the one
// before, and only the GPUs an event touched (and those in their hold) can
// answer otherwise.
//
// collocate makes the test (gw.verdicts set, changes, no retry, not
// sinceAll) before the call, in line.
func (s *Scheduler) keepFrom(v *policies.View, j *policies.Job) []Reason {
	w := &s.gw
	w.mine, w.was = s.book.job(j, len(v.GPUs))
	return w.was
}

// gpuWalk is collocate's state while it walks the GPUs for a job.
type gpuWalk struct {
	acts     []policies.Action
	cands    []cand
	idle     []int
	deferred int
	// again counts the deferrals on GPUs was defers on.
	again int
	// j's deferral reasons by GPU in this decision and in the previous one
	// (with changes; was nil: list every deferral).
	mine, was []Reason
	// verdicts: GPU g's latest answer is Admit's for j while verdicts[g]
	// matches j and g's generation (GPULocal rules, hold ends from events).
	verdicts []verdict
}

// answer is why GPU g, which runs jobs and is not taken in this decision,
// may not take j now (Admitted: it may): its hold, the rule's Admit (or
// its kept verdict), the ladder level of a retry; it lowers the decision's
// horizon as the answers say.
func (s *Scheduler) answer(v *policies.View, j *policies.Job, g int) Reason {
	var ends time.Duration // when g's hold ends (holdEnds)
	if s.cached {
		if ends = s.holds.ends[g]; ends == unknownEnd { // else holdEnd's kept answer, without the call
			ends = s.holdEnd(v, g, true)
		}
	} else {
		ends = s.holdEnd(v, g, false)
	}
	if v.Now < ends { // Held
		s.horizon(ends)
		return DeferHold
	}
	var reason Reason
	if vs := s.gw.verdicts; vs != nil {
		if m := &vs[g]; m.gen == s.gen[g] && m.job == j.ID && m.attempts == j.Attempts {
			reason = m.reason
		} else {
			reason = s.rule.Admit(v, j, g)
			// Field by field: a composite literal was built aside and
			// copied, its string through a write barrier's check.
			m.job, m.attempts, m.gen, m.reason = j.ID, j.Attempts, s.gen[g], reason
		}
	} else {
		reason = s.rule.Admit(v, j, g)
	}
	switch {
	case s.eventsOnly: // its horizon is Never
	case s.horizonRule != nil:
		s.asks = append(s.asks, ask{j, g}) // asked in wake
	default:
		s.horizon(v.Now)
	}
	if reason == Admitted && j.OOMs > 0 {
		reason = s.ladderAdmit(v, j, g)
		if reason == DeferRecoveryMemory || reason == Admitted {
			s.horizon(MemoryChangesAt(v, g))
		}
	}
	return reason
}

// sameReason reports whether a == b, comparing the strings' bytes only
// when they are not the same bytes: a rule's reasons are its constants, and
// a loaded decision compares each deferral's reason with the previous
// decision's (string ==, a call of runtime.memequal each time, was 1 % of
// a loaded Horus run's instructions with the spills around it).
func sameReason(a, b Reason) bool {
	if len(a) != len(b) {
		return false
	}
	return unsafe.StringData(string(a)) == unsafe.StringData(string(b)) || a == b
}

// better orders candidates: lower score first, ties to the lower GPU.
func better(a, b cand) int {
	switch {
	case a.score < b.score:
		return -1
	case a.score > b.score:
		return 1
	}
	return a.g - b.g
}

// best moves the n best candidates (better) to the front of cands, in
// order, and returns them: the first n of cands sorted by better, found
// in one pass for a few (most jobs take one GPU) instead of a sort of
// every admitted GPU.
func best(cands []cand, n int) []cand {
	if n > 4 {
		slices.SortStableFunc(cands, better)
		return cands[:n]
	}
	for i := range n {
		m := i
		for k := i + 1; k < len(cands); k++ {
			if better(cands[k], cands[m]) < 0 {
				m = k
			}
		}
		cands[i], cands[m] = cands[m], cands[i]
	}
	return cands[:n]
}

// partner returns the GPU set of the running job with j's GPU count whose
// GPUs are all admitted and have the lowest summed score (ties: the lowest
// GPUs), or nil.
func (s *Scheduler) partner(v *policies.View, j *policies.Job, cands []cand) []int {
	score := make(map[int]float64, len(cands))
	for _, c := range cands {
		score[c.g] = c.score
	}
	var best []int
	bestScore := 0.0
	for _, c := range cands {
		for _, id := range v.GPUs[c.g].Jobs {
			r := v.Job(id)
			if r.GPUs != j.GPUs || r.On[0] != c.g { // each partner once, from its first GPU
				continue
			}
			sum, ok := 0.0, true
			for _, g := range r.On {
				sc, admitted := score[g]
				ok = ok && admitted
				sum += sc
			}
			if ok && (best == nil || sum < bestScore) {
				best, bestScore = r.On, sum
			}
		}
	}
	return slices.Clone(best)
}

// ladderAdmit admits GPU g for a retry of j if its usable free memory
// reaches the ladder level for j's retry number; past the ladder only
// exclusive placement remains.
func (s *Scheduler) ladderAdmit(v *policies.View, j *policies.Job, g int) Reason {
	ladder := s.cfg.Ladder(v.GPUs[g].CapacityMiB)
	k := j.OOMs - 1
	if k >= len(ladder) {
		return DeferRecoveryExclusive
	}
	if UsableFree(&v.GPUs[g]) < ladder[k] {
		return DeferRecoveryMemory
	}
	return Admitted
}

// String describes the configuration.
func (c Config) String() string {
	return fmt.Sprintf("hold=%v tick=%v lookahead=%d recovery=%s", c.Hold, c.Tick, c.Lookahead, c.Recovery)
}
