// Package policies is the contract between scheduling policies and the
// backends that run them: the read-only View a policy sees, the Events it
// observes and the Actions it returns. It uses the standard library only.
//
// A Policy is pure decision code: it reads no wall clock, does no I/O and uses
// no global randomness. View.Now is the only time it knows.
package policies

import (
	"fmt"
	"iter"
	"slices"
	"time"
)

// JobID identifies a job within one run: its index in the trace.
type JobID int

// State is where a job is in its life. It is one byte, so that Job packs
// it with the other small fields (a million-job run lists every job in
// several views).
type State uint8

// Job states.
const (
	Waiting State = iota // not yet submitted
	Pending              // submitted (or failed and awaiting a retry), not running
	Running              // an attempt holds GPUs
	Done                 // finished successfully
	Stopped              // given up by the policy
)

func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Pending:
		return "pending"
	case Running:
		return "running"
	case Done:
		return "done"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Failure classifies why an attempt ended without finishing. It is one
// byte, as State is.
type Failure uint8

// Failure kinds. Only OOM failures are worth retrying.
const (
	NoFailure Failure = iota
	OOM
	OtherFailure
)

func (f Failure) String() string {
	switch f {
	case NoFailure:
		return "none"
	case OOM:
		return "oom"
	case OtherFailure:
		return "other"
	}
	return fmt.Sprintf("Failure(%d)", int(f))
}

// Profile is what a scheduler may know about a job's workload before running
// it: profiled solo figures and memory estimates. It is never simulator truth
// beyond what profiling would have measured.
type Profile struct {
	Workload string
	SoloS    float64 // solo runtime, seconds: the trace's per-job solo_s when given, else the profiled one
	PeakMiB  float64 // profiled solo peak memory on its busiest GPU
	UtilPct  float64 // profiled mean nvidia-smi utilization, percent
	SMACT    float64 // profiled mean SM activity
	SMOCC    float64 // profiled mean SM occupancy
	DRAMA    float64 // profiled mean DRAM bandwidth activity
	Lucid    int     // Lucid sharing class: tiny 0, medium 1, jumbo 2
	// Memory estimates in MiB; 0 means the estimator is unavailable.
	Analytical, FakeTensor, GPUMemNet float64
}

// Job is a policy's view of one job.
type Job struct {
	ID     JobID
	Name   string // the trace's job id
	GPUs   int    // GPUs needed
	Submit time.Duration
	Profile

	// The one-byte fields sit together (one word for the four; Job is
	// 208 bytes, and a million-job run keeps several lists of every job).
	State       State
	LastFailure Failure // why the last attempt failed
	// FailedShared reports whether the last failed attempt shared a GPU
	// with another job when it failed.
	FailedShared bool
	Active       bool          // the current attempt has shown GPU activity
	Attempts     int           // attempts started so far
	OOMs         int           // attempts that failed with OOM
	FailedAt     time.Duration // when the last attempt failed

	// The current attempt, while Running.
	On       []int         // its GPUs
	Started  time.Duration // launch time
	ActiveAt time.Duration // first activity, when Active
}

// GPU is a policy's view of one GPU: observations only.
type GPU struct {
	Index       int
	CapacityMiB float64
	UsedMiB     float64 // last measured used memory
	Jobs        []JobID // jobs with a running attempt on it
}

// FreeMiB is the last measured free memory.
func (g *GPU) FreeMiB() float64 { return g.CapacityMiB - g.UsedMiB }

// IdleGPUs returns the n lowest-indexed GPUs that run no job and are not
// taken (taken[g]: given to another job in the same decision), or nil when
// fewer are idle. Every policy that places jobs on idle GPUs uses it.
func (v *View) IdleGPUs(taken []bool, n int) []int {
	var gpus []int
	for g := range v.GPUs {
		if len(v.GPUs[g].Jobs) == 0 && !taken[g] {
			if gpus = append(gpus, g); len(gpus) == n {
				return gpus
			}
		}
	}
	return nil
}

// CheckPlace says why a backend cannot carry out p in this view: the job
// does not exist or is not pending, or the GPU list has the wrong length, a
// GPU that does not exist or one GPU twice. Both backends check placements
// with it before acting.
func (v *View) CheckPlace(p Action) error {
	if p.Job < 0 || int(p.Job) >= len(v.Jobs) {
		return fmt.Errorf("place: no job %d", p.Job)
	}
	j := &v.Jobs[p.Job]
	if j.State != Pending {
		return fmt.Errorf("place job %d: it is %s, not pending", p.Job, j.State)
	}
	if len(p.GPUs) != j.GPUs {
		return fmt.Errorf("place job %d on %d GPUs; it needs %d", p.Job, len(p.GPUs), j.GPUs)
	}
	for i, g := range p.GPUs {
		if g < 0 || g >= len(v.GPUs) {
			return fmt.Errorf("place job %d: no GPU %d", p.Job, g)
		}
		if slices.Contains(p.GPUs[:i], g) {
			return fmt.Errorf("place job %d: GPU %d given twice", p.Job, g)
		}
	}
	return nil
}

// Sample is one 1 Hz telemetry sample of a GPU. Pressure indicators are
// fractions in [0,1]; UtilPct is nvidia-smi utilization in percent.
type Sample struct {
	// At is when the sample was taken, in run time. A backend that misses
	// or delays a sample leaves a gap; windows are placed by At, never by a
	// sample's position in the list.
	At                  time.Duration
	SMACT, SMOCC, DRAMA float64
	UtilPct             float64
	UsedMiB             float64
}

// Telemetry gives a GPU's recent 1 Hz samples.
type Telemetry interface {
	// Samples appends to dst GPU gpu's samples taken in the last n whole
	// seconds up to Now (At in (Now-n s, Now], Now truncated to the second),
	// oldest first; fewer when the run is younger than n seconds or samples
	// were missed.
	Samples(dst []Sample, gpu, n int) []Sample
}

// SteadyTelemetry is implemented by Telemetry readers (a simulator's) that
// promise a sample at every whole second, never missed or late, and know
// how long a GPU's measured memory (GPU.UsedMiB) will stay as it is:
// UsedMiBChangesAt returns the earliest time at which it could change if no
// event happens before (a time at or before Now: at any time). Policies use
// it only to skip decisions that could not change; a backend that cannot
// promise this (a real GPU) does not implement it, and policies then decide
// at every tick.
type SteadyTelemetry interface {
	UsedMiBChangesAt(gpu int) time.Duration
	// SampleRange bounds, field by field, every sample of the GPU from now
	// until the next event.
	SampleRange(gpu int) (lo, hi Sample)
}

// Foresight is implemented by steady telemetry whose future samples are
// determined until something changes the GPU's telemetry (a simulator's,
// whose samples are drawn from a seeded function of the GPU, the second and
// its jobs). Ahead appends the samples GPU gpu reports at the n whole
// seconds after the whole second after (oldest first): those up to Now as
// Samples gives them, later ones as they will be if no event changes the
// GPU's telemetry before (fewer, or none, when such a change is already due:
// the backend knows a job's finish); Regime identifies the GPU's telemetry
// now and changes whenever what Ahead returns may have changed (its jobs,
// their activity or their rates). Policies use it only to find the first
// tick at which a decision could differ, never to decide: every decision
// still reads only Samples (TestForesightNeverDecides in policies/aegis
// runs AEGIS with and without foresight and requires the same decisions).
// RegimeSince is when the GPU's current regime
// began: its samples at every whole second at or after it, up to the next
// change of regime, lie within SampleRange (a policy may then know a
// verdict that every such window gives without reading the window).
type Foresight interface {
	SteadyTelemetry
	Ahead(dst []Sample, gpu int, after time.Duration, n int) []Sample
	Regime(gpu int) uint64
	RegimeSince(gpu int) time.Duration
}

// View is the read-only world a policy decides on.
type View struct {
	Now  time.Duration
	GPUs []GPU
	// Jobs holds every job of the run, indexed by JobID. A job not yet
	// submitted shows only its ID and state Waiting.
	Jobs []Job
	// Queue lists the pending jobs in submission order. It is read-only
	// by construction: a backend hands out its own list without copying it.
	Queue JobList
	// Failed lists the pending jobs whose last attempt failed, in the order
	// of their failures (a subset of Queue).
	Failed []JobID
	// Telemetry reads the GPUs' recent samples.
	Telemetry Telemetry
	// Pressure reports whether DCGM pressure indicators (SMACT, SMOCC, DRAMA)
	// are available; without them samples carry utilization and memory only.
	Pressure bool
}

// Job returns the job with the given id.
func (v *View) Job(id JobID) *Job { return &v.Jobs[id] }

// JobList is a read-only list of job IDs. A backend's view shares its own
// list with every policy (copying a long queue at every decision would cost
// time in proportion to the queue, not to what changed), so no policy can
// change it. A list is valid for the decision it was given to; the backend
// may change its contents afterwards (copy it with AppendTo to keep it).
type JobList struct{ ids []JobID }

// ListOf returns the list of ids. It shares ids: whoever builds a view
// must not change them while a policy may read the list.
func ListOf(ids ...JobID) JobList { return JobList{ids} }

// Len returns the number of IDs in l.
func (l JobList) Len() int { return len(l.ids) }

// At returns the i-th ID of l.
func (l JobList) At(i int) JobID { return l.ids[i] }

// All yields l's positions and IDs in order.
func (l JobList) All() iter.Seq2[int, JobID] {
	return func(yield func(int, JobID) bool) {
		for i, id := range l.ids {
			if !yield(i, id) {
				return
			}
		}
	}
}

// AppendTo appends l's IDs to dst and returns the result.
func (l JobList) AppendTo(dst []JobID) []JobID { return append(dst, l.ids...) }

// Policy decides what to run.
type Policy interface {
	Name() string
	// Schedule returns the actions to take now. It must not modify v.
	// The returned slice may be a buffer the policy reuses: it is valid
	// until the next call of Schedule, which may overwrite it (the loop
	// carries the actions out before it asks again; a caller that keeps
	// them copies the slice).
	Schedule(v *View) []Action
}

// Ticker is implemented by policies that decide on a grid of ticks (the
// multiples of Tick) while jobs wait. Recorders count how many decisions a
// deferral lasted in ticks of this grid, so that the count does not depend
// on which ticks a policy skips because nothing could change in them.
type Ticker interface{ Tick() time.Duration }

// Observer is implemented by policies that keep state across decisions.
type Observer interface{ Observe(e Event) }

// InPlaceObserver is an Observer that also reads an event in place:
// ObserveAt(e) is Observe(*e), without the copy of the event (104 bytes)
// a call by value makes; the loop calls ObserveAt instead of Observe. It
// must neither keep e nor change it.
type InPlaceObserver interface {
	Observer
	ObserveAt(e *Event)
}

// OptionalObserver is an Observer whose decisions do not depend on being
// given events: observing them only makes its decisions cheaper (Exclusive
// keeps its idle GPUs from them). A caller that passes no events on (the
// cluster dispatcher) may run it.
type OptionalObserver interface {
	Observer
	ObservesOptionally()
}

// Selective is implemented by policies that know which events could change
// their decision. Wants reports whether e could; when no event of an
// instant is wanted, the loop does not ask for a decision then (the events
// are still observed and recorded, and the next decision sees everything
// they changed). A policy may say no only when its decision would return
// no action, or exactly the deferrals and wake-up of its previous decision
// (a Wake still due), so that skipping it changes no output: the deferral
// episodes continue, counted in ticks of its decision grid.
type Selective interface{ Wants(e Event) bool }

// InPlaceSelective is a Selective policy that also reads an event in
// place: WantsAt(e) is Wants(*e), without the copy of the event a call by
// value makes; the loop calls WantsAt instead of Wants. It must neither
// keep e nor change it.
type InPlaceSelective interface {
	Selective
	WantsAt(e *Event) bool
}

// JobsReader is implemented by policies that only read their view's jobs,
// never writing into a Job or its GPU list (On) nor handing them to code
// that may: the loop then lists the backend's own jobs in the view a
// decision gets instead of a copy of every job (which a million-job run
// pays for with some 200 MB). The cluster dispatcher is one: its servers'
// policies decide on jobs of its own.
type JobsReader interface{ ReadsJobsOnly() }

// DeferralChanges is implemented by policies that can list a decision's
// deferrals as changes from their previous decision's: a loaded run defers
// the same waiting jobs on the same GPUs for the same reasons decision
// after decision, and handing each of them on again is most of what
// recording such a run costs.
//
// ReportDeferralChanges is called (by the loop, before the first decision,
// when its backend and recorder take changes: loop.DeferralIgnorer,
// loop.DeferralChangeRecorder) to switch the policy to them. From then on
// each decision returns, besides its other actions:
//   - a Defer for each deferral the previous decision did not make (a job
//     and GPU it did not defer, or deferred for another reason), and for
//     each deferral of a job that has started an attempt (a JobStarted
//     event) since the previous decision; it may also repeat others;
//   - an Undefer (Job, GPU) for each deferral of the previous decision
//     that it does not make again, or one (Job, AllGPUs) for a job it
//     defers on no GPU now;
//
// and every other deferral of the previous decision it makes again without
// listing it. A decision defers a job on a GPU at most once. A decision the
// loop skips (Selective) changes nothing, as before. The recorders then
// count and log exactly what the full lists give them.
type DeferralChanges interface{ ReportDeferralChanges() }

// Fallible is implemented by policies that can fail while deciding (an
// external process that exits, hangs or answers what cannot be done). The
// loop asks Err after every decision, before applying any of its actions:
// a non-nil error ends the run with it. A failed policy returns no action.
type Fallible interface{ Err() error }

// Validator is implemented by policies that need something of the backend
// (e.g. pressure telemetry); the loop calls Validate once before the run.
type Validator interface{ Validate(v *View) error }

// Action is a policy's decision: one value type for every kind, so that
// returning and recording actions allocates nothing. Kind says which fields
// mean something; the others are zero.
type Action struct {
	Kind ActionKind
	Job  JobID // Place, Stop, Defer
	// GPUs (Place) are the GPUs to launch the attempt on.
	GPUs []int
	// GPU (Defer) is the GPU the job could not be placed on, -1 when no
	// single GPU is meant; (Undefer) the GPU the job is no longer deferred
	// on, or AllGPUs: every GPU the previous decision deferred it on.
	GPU int
	// Reason (Stop, Defer) says why, in words.
	Reason string
	// At (Wake) is when to decide.
	At time.Duration
}

// AllGPUs is an Undefer's GPU that ends every deferral of the job made by
// the previous decision.
const AllGPUs = -2

// ActionKind says what an Action is.
type ActionKind int

// Action kinds.
const (
	// Place launches a new attempt of a pending job on the given GPUs.
	Place ActionKind = iota + 1
	// Stop gives up on a pending job: it will not run again.
	Stop
	// Wake asks for a decision at time At even if nothing else happens. A
	// Wake at or before the backend's now (a decision that took long on a
	// wall clock) fires at once: a Wakeup at now is the next event.
	Wake
	// Defer records that a job could not be placed on a GPU now and why
	// (e.g. "memory", "pressure", "hold": colloc's Reason constants). It changes nothing; it is
	// counted.
	Defer
	// Undefer (only from a policy that reports its deferrals as changes,
	// DeferralChanges) records that the job the previous decision deferred
	// on GPU is not deferred there now. It changes nothing.
	Undefer
)

func (k ActionKind) String() string {
	switch k {
	case Place:
		return "Place"
	case Stop:
		return "Stop"
	case Wake:
		return "Wake"
	case Defer:
		return "Defer"
	case Undefer:
		return "Undefer"
	}
	return fmt.Sprintf("ActionKind(%d)", int(k))
}

// Event is something that happened in the backend: one value type for
// every kind, so that events are passed and stored without boxing (no
// allocation per event). Kind says which fields are meaningful; the others
// are zero.
type Event struct {
	Kind EventKind
	T    time.Duration
	Job  JobID // every kind but Wakeup
	// Attempt numbers the attempt (JobStarted, JobActive, JobFinished,
	// JobFailed).
	Attempt int
	// GPUs: the attempt's GPUs (JobStarted), the placement's (PlaceFailed).
	GPUs []int
	// Shared (JobStarted) reports whether another job was running on any
	// of its GPUs.
	Shared bool
	// Failure (JobFailed) is why the attempt ended, GPU where it failed.
	Failure Failure
	GPU     int
	// Reason (JobStopped, PlaceFailed) says why, in words.
	Reason string
}

// At is when the event happened.
func (e Event) At() time.Duration { return e.T }

// EventKind says what an Event is.
type EventKind int

// Event kinds.
const (
	// JobArrived: a job was submitted.
	JobArrived EventKind = iota + 1
	// JobStarted: an attempt was launched on GPUs.
	JobStarted
	// JobActive: an attempt showed its first GPU activity.
	JobActive
	// JobFinished: an attempt completed the job.
	JobFinished
	// JobFailed: an attempt ended without finishing.
	JobFailed
	// JobStopped: the policy gave up on a job.
	JobStopped
	// Wakeup: a requested decision time was reached.
	Wakeup
	// PlaceFailed: a placement could not be carried out (the process did
	// not start, a GPU vanished). The job stays pending; the run goes on.
	PlaceFailed
)

func (k EventKind) String() string {
	switch k {
	case JobArrived:
		return "JobArrived"
	case JobStarted:
		return "JobStarted"
	case JobActive:
		return "JobActive"
	case JobFinished:
		return "JobFinished"
	case JobFailed:
		return "JobFailed"
	case JobStopped:
		return "JobStopped"
	case Wakeup:
		return "Wakeup"
	case PlaceFailed:
		return "PlaceFailed"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}
