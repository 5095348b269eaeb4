// Package loop is the one scheduling loop: it feeds a backend's events to a
// policy, applies the policy's actions through the backend, checks the
// backend's view for consistency and records everything.
package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Backend owns time and the world: the simulator, or the real executor.
//
// A backend changes a job's entry in its view only together with an event
// about that job, or when it applies an action naming the job: the loop
// refreshes the policy's snapshot of a job only then.
type Backend interface {
	// Next advances to the next instant at which something happens and
	// returns what happened then; no events means the run is over.
	Next() ([]policies.Event, error)
	// View is the world as a policy may see it now.
	View() *policies.View
	// Apply carries out one action. A placement that cannot be carried out
	// is reported as a *PlaceError: the run goes on.
	Apply(policies.Action) error
}

// ChangeReporter is a Backend that tells which GPUs' entries of its view
// changed: the loop then compares and copies only those into the policy's
// snapshot at a decision (and a few others in turn, see Snapshot.check),
// instead of every GPU.
type ChangeReporter interface {
	Backend
	// ChangedGPUs appends to dst every GPU whose entry in the view
	// (GPU.UsedMiB, GPU.Jobs) changed since the last call, each once, and
	// returns dst. A view's GPU that changes without being reported here
	// reaches the policy late (a backend error).
	ChangedGPUs(dst []int) []int
}

// SelfChecker is a Backend that checks its own bookkeeping at every
// instant and after every action (the simulator: sim.Sim): a GPU whose job
// list changed lists only running jobs that run on it, and a job that an
// event or action concerned holds exactly the GPUs it needs, each listing
// it. Between its full checks the loop then leaves these cross-checks to
// the backend: of the GPUs that changed, it checks only their own entries
// (index, measured memory within the capacity).
type SelfChecker interface {
	Backend
	// ChecksBookkeeping promises the checks above.
	ChecksBookkeeping()
}

// ContextBackend is a Backend whose Next may wait (on a wall clock) and
// can be cancelled; the loop calls NextContext instead of Next.
type ContextBackend interface {
	Backend
	NextContext(ctx context.Context) ([]policies.Event, error)
}

// PlaceError reports a placement a backend could not carry out (the process
// did not start, a GPU vanished). The loop records it as a
// policies.PlaceFailed event and goes on; the job stays pending.
type PlaceError struct {
	T    time.Duration
	Job  policies.JobID
	GPUs []int
	Err  error
}

func (e *PlaceError) Error() string {
	return fmt.Sprintf("place job %d on GPUs %v: %v", e.Job, e.GPUs, e.Err)
}

func (e *PlaceError) Unwrap() error { return e.Err }

// PolicyError is a run ended because its policy failed (policies.Fallible):
// no action of the failed decision was applied.
type PolicyError struct {
	Policy string
	T      time.Duration
	Err    error
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("loop: policy %s failed at t=%v: %v", e.Policy, e.T, e.Err)
}

func (e *PolicyError) Unwrap() error { return e.Err }

// Recorder receives every event and action of a run, in order.
type Recorder interface {
	Event(policies.Event)
	Action(policies.Action)
}

// InPlaceRecorder is a Recorder that also reads an event in place:
// EventAt(e) is Event(*e), without the copy of the event (104 bytes) a
// call by value makes; the loop calls EventAt instead of Event. It must
// neither keep e nor change it.
type InPlaceRecorder interface {
	Recorder
	EventAt(e *policies.Event)
}

// byValue is an InPlaceRecorder of a Recorder that takes events by value.
type byValue struct{ Recorder }

func (b byValue) EventAt(e *policies.Event) { b.Event(*e) }

// InPlaceActionRecorder is a Recorder that also reads an action in place:
// ActionAt(a) is Action(*a), without the copy of the action (72 bytes) a
// call by value makes; the loop calls ActionAt instead of Action. It must
// neither keep a nor change it.
type InPlaceActionRecorder interface {
	Recorder
	ActionAt(a *policies.Action)
}

// actionsByValue is an InPlaceActionRecorder of a Recorder that takes
// actions by value.
type actionsByValue struct{ Recorder }

func (b actionsByValue) ActionAt(a *policies.Action) { b.Action(*a) }

// actionsInPlace is rec as an InPlaceActionRecorder.
func actionsInPlace(rec Recorder) InPlaceActionRecorder {
	if in, ok := rec.(InPlaceActionRecorder); ok {
		return in
	}
	return actionsByValue{rec}
}

// inPlace is rec as an InPlaceRecorder.
func inPlace(rec Recorder) InPlaceRecorder {
	if in, ok := rec.(InPlaceRecorder); ok {
		return in
	}
	return byValue{rec}
}

// takers are who an event is handed to: the recorder, and the policy's
// Observe and Wants when it has them, each reading the backend's events in
// place where it can (InPlaceRecorder, policies.InPlaceObserver,
// policies.InPlaceSelective).
type takers struct {
	rec   InPlaceRecorder
	act   InPlaceActionRecorder // rec, for the policy's actions
	obs   policies.Observer
	obsAt policies.InPlaceObserver
	sel   policies.Selective
	selAt policies.InPlaceSelective
}

func newTakers(p policies.Policy, rec Recorder) takers {
	t := takers{rec: inPlace(rec), act: actionsInPlace(rec)}
	t.obs, _ = p.(policies.Observer)
	t.obsAt, _ = p.(policies.InPlaceObserver)
	t.sel, _ = p.(policies.Selective)
	t.selAt, _ = p.(policies.InPlaceSelective)
	return t
}

// placeFailed hands on the loop's own event for a placement the backend
// could not carry out (by value: it is not the backend's), at the latest
// event's time last or later, and reports whether a decision is wanted:
// already (wanted), for every event, or for this one.
func (t *takers) placeFailed(pe *PlaceError, last *time.Duration, wanted bool) bool {
	e := policies.Event{Kind: policies.PlaceFailed, T: max(pe.T, *last), Job: pe.Job, GPUs: slices.Clone(pe.GPUs), Reason: pe.Err.Error()}
	*last = e.T
	t.rec.Event(e)
	if t.obs != nil {
		t.obs.Observe(e)
	}
	return wanted || t.sel == nil || t.sel.Wants(e)
}

// DecisionRecorder is a Recorder that also wants to know when the policy
// decides: Decision is called just before each call of the policy's
// Schedule, with the decision's time. Recorders use it to tell which
// decision an action belongs to (e.g. to count how long a deferral lasted).
type DecisionRecorder interface {
	Decision(now time.Duration)
}

// DeferralIgnorer is a Backend whose Apply does nothing with a Defer (the
// simulator): the loop then hands deferrals to the recorder only, and lets
// a policy that can (policies.DeferralChanges) list them as changes when
// the recorder takes them (DeferralChangeRecorder). A backend that keeps
// something of each deferral (the executor: each job's latest) is not one.
type DeferralIgnorer interface {
	Backend
	IgnoresDeferrals()
}

// DeferralChangeRecorder is a Recorder that can take a decision's
// deferrals as changes from the previous decision's
// (policies.DeferralChanges: Defers for the new ones and those of jobs
// started since, Undefers for the ended ones, nothing for the others) and
// record exactly what the full lists would have given it.
// TakeDeferralChanges is called once, before the first decision; it
// switches the recorder to changes and reports whether it did (false: it
// needs every deferral, and the policy is not switched).
type DeferralChangeRecorder interface {
	Recorder
	TakeDeferralChanges() bool
}

// Run drives the policy on the backend until the backend has nothing left to
// do. It fails on a backend or policy error, on an inconsistent view, and
// when jobs are left unfinished (naming them). When ctx is done it ends
// before the next step with ctx's error (wrapped), so a long run stops
// promptly. The policy decides on a snapshot of the backend's view that it
// cannot corrupt: the backend's own state is never handed out.
func Run(ctx context.Context, b Backend, p policies.Policy, rec Recorder) error {
	take := newTakers(p, rec)
	if err := validate(p, b); err != nil {
		return err
	}
	cb, _ := b.(ContextBackend)
	done := ctx.Done() // nil: ctx is never cancelled, and Err need not be asked
	dec, _ := rec.(DecisionRecorder)
	ignoresDeferrals := deferralChanges(b, p, rec)
	fallible, _ := p.(policies.Fallible)
	decide := true // the first instant always has a decision
	snap := newSnapshot(readsJobsOnly(p), checksItself(b))
	rep, _ := b.(ChangeReporter)
	last := time.Duration(-1)
	for {
		if done != nil {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("loop: %w", err)
			}
		}
		var evs []policies.Event
		var err error
		if cb != nil {
			evs, err = cb.NextContext(ctx)
		} else {
			evs, err = b.Next()
		}
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			break
		}
		for i := range evs {
			e := &evs[i] // not copied but where handed on
			if e.T < last {
				return fmt.Errorf("loop: backend went back in time: %v at %v after %v", e.Kind, e.T, last)
			}
			last = e.T
			take.rec.EventAt(e)
			switch {
			case take.obsAt != nil:
				take.obsAt.ObserveAt(e)
			case take.obs != nil:
				take.obs.Observe(*e)
			}
			snap.touch(e.Kind, e.Job)
			switch {
			case decide || take.sel == nil:
				decide = true
			case take.selAt != nil:
				decide = take.selAt.WantsAt(e)
			default:
				decide = take.sel.Wants(*e)
			}
		}
		if !decide {
			continue // no event the policy wants: it would do nothing
		}
		decide = false
		v := b.View()
		if err := snap.check(v, snap.readReports(rep, v)); err != nil {
			return fmt.Errorf("loop: at t=%v after %v: %w", v.Now, evs[len(evs)-1].Kind, err)
		}
		if dec != nil {
			dec.Decision(v.Now)
		}
		acts := p.Schedule(snap.Update(v))
		if fallible != nil {
			if err := fallible.Err(); err != nil {
				return &PolicyError{Policy: p.Name(), T: v.Now, Err: err}
			}
		}
		for i := range acts {
			a := &acts[i]
			take.act.ActionAt(a)
			if a.Kind == policies.Undefer || (a.Kind == policies.Defer && ignoresDeferrals) {
				continue // recorded only
			}
			snap.TouchAction(*a)
			if err := b.Apply(*a); err != nil {
				var pe *PlaceError
				if !errors.As(err, &pe) {
					return fmt.Errorf("loop: policy %s at t=%v: %w", p.Name(), v.Now, err)
				}
				decide = take.placeFailed(pe, &last, decide)
				continue
			}
			if a.Kind == policies.Place {
				if err := checkPlaced(b.View(), a); err != nil {
					return fmt.Errorf("loop: at t=%v: %w", v.Now, err)
				}
			}
		}
	}
	return unfinished(b.View(), p)
}

// validate has a policies.Validator check b's view.
func validate(p policies.Policy, b Backend) error {
	if val, ok := p.(policies.Validator); ok {
		if err := val.Validate(b.View()); err != nil {
			return fmt.Errorf("loop: policy %s: %w", p.Name(), err)
		}
	}
	return nil
}

// unfinished names the jobs of v that are neither done nor stopped, if any.
func unfinished(v *policies.View, p policies.Policy) error {
	var left []string
	for i := range v.Jobs {
		if s := v.Jobs[i].State; s != policies.Done && s != policies.Stopped {
			left = append(left, fmt.Sprintf("%s (%s, %d GPUs, %s)", v.Jobs[i].Name, v.Jobs[i].Workload, v.Jobs[i].GPUs, s))
		}
	}
	if len(left) > 0 {
		if len(left) > 5 {
			left = append(left[:5], fmt.Sprintf("and %d more", len(left)-5))
		}
		return fmt.Errorf("loop: policy %s left %d job(s) unfinished at t=%v: %v", p.Name(), len(left), v.Now, left)
	}
	return nil
}

// deferralChanges switches p to deferral changes where b and rec take them
// (DeferralIgnorer, DeferralChangeRecorder) and reports whether b ignores
// deferrals.
func deferralChanges(b Backend, p policies.Policy, rec Recorder) (ignores bool) {
	_, ignores = b.(DeferralIgnorer)
	if dc, ok := p.(policies.DeferralChanges); ok && ignores {
		if cr, ok := rec.(DeferralChangeRecorder); ok && cr.TakeDeferralChanges() {
			dc.ReportDeferralChanges()
		}
	}
	return ignores
}

// readsJobsOnly reports whether p only reads its view's jobs
// (policies.JobsReader): its snapshot then lists the backend's.
func readsJobsOnly(p policies.Policy) bool {
	_, ok := p.(policies.JobsReader)
	return ok
}

// newSnapshot is the loop's snapshot: of the backend's jobs where shared
// (readsJobsOnly), its bookkeeping cross-checked by the backend where
// selfChecked (checksItself).
func newSnapshot(shared, selfChecked bool) Snapshot {
	return Snapshot{shared: shared, selfChecked: selfChecked, untracked: shared && selfChecked}
}

// checksItself reports whether b checks its own bookkeeping (SelfChecker).
func checksItself(b Backend) bool {
	_, ok := b.(SelfChecker)
	return ok
}

// fullCheckEvery is how often (in decisions) the loop checks the whole
// view; in between it checks what may have changed. A large view is checked
// in full less often: at most fullCheckCost of its queue entries and GPUs
// per decision on average, so that a long backlog is not read again and
// again.
const (
	fullCheckEvery = 64
	fullCheckCost  = 8
)

// readReports reads the GPUs the backend reports changed (rep; nil: it
// reports none) into s.reported and reports whether it did: only where
// check uses them, on a view of more than fullCheckCost GPUs (on a smaller
// one every GPU is compared). A read after skipped ones returns every GPU
// changed since the last read: more to compare, none missed.
func (s *Snapshot) readReports(rep ChangeReporter, v *policies.View) bool {
	if rep == nil || len(v.GPUs) <= fullCheckCost {
		return false
	}
	s.reported = rep.ChangedGPUs(s.reported[:0])
	return true
}

// check verifies the parts of v that may have changed since the last
// decision: the GPUs that differ from the snapshot or that a touched job
// ran on, and the jobs that events and actions touched (a backend changes a
// job only together with an event about it or an action naming it); the
// whole view (Check) at the first decision and then every fullCheckEvery-th
// (or, for a large view, every (queue + GPUs) / fullCheckCost-th), so that a
// queue a backend corrupted is still found. It tells Update which GPUs to
// copy.
//
// A backend that checks its own bookkeeping (SelfChecker) has, between the
// full checks, only the entries of the GPUs that differ from the snapshot
// checked (checkGPUEntry): the GPUs' job lists and the touched jobs' GPUs
// are its to check.
//
// Which GPUs differ from the snapshot: every GPU is compared, unless the
// backend reports its changed GPUs (reporting: s.reported, ChangeReporter).
// Then only those are, and fullCheckCost more in turn, so that a GPU the
// policy wrote into is restored within len(GPUs)/fullCheckCost decisions
// (at once on a view of at most fullCheckCost GPUs), and at the next full
// check at the latest.
func (s *Snapshot) check(v *policies.View, reporting bool) error {
	s.checks++
	if s.checks >= s.nextFull || s.all || len(s.v.Jobs) != len(v.Jobs) || len(s.v.GPUs) != len(v.GPUs) {
		s.allGPUs = true
		s.nextFull = s.checks + max(fullCheckEvery, (v.Queue.Len()+len(v.Failed)+len(v.GPUs))/fullCheckCost)
		return Check(v)
	}
	s.allGPUs = false
	s.changed = s.changed[:0]
	if mine, theirs := s.v.GPUs, v.GPUs; reporting && len(theirs) > fullCheckCost {
		for _, g := range s.reported {
			if g >= 0 && g < len(theirs) && !sameGPU(&mine[g], &theirs[g]) {
				s.changed = append(s.changed, g)
			}
		}
		turn := s.turn
		for range fullCheckCost { // the guard, in turn
			g := turn
			if turn++; turn >= len(theirs) {
				turn = 0
			}
			if !sameGPU(&mine[g], &theirs[g]) && !slices.Contains(s.changed, g) {
				s.changed = append(s.changed, g)
			}
		}
		s.turn = turn
	} else {
		mine, theirs := s.v.GPUs, v.GPUs
		theirs = theirs[:len(mine)] // as long (above): no bounds checks in the loop
		for g := range mine {
			if !sameGPU(&mine[g], &theirs[g]) {
				s.changed = append(s.changed, g)
			}
		}
	}
	if s.selfChecked {
		for _, g := range s.changed {
			// checkGPUEntry's test, in line: called only for an entry
			// that fails it (or a NaN measurement, which passes there).
			if gp := &v.GPUs[g]; gp.Index == g && gp.UsedMiB >= -1e-6 && gp.UsedMiB <= gp.CapacityMiB+1e-6 {
				continue
			}
			if err := checkGPUEntry(v, g); err != nil {
				return err
			}
		}
		return nil
	}
	n := len(s.changed)
	for _, id := range s.dirty { // the GPUs a touched job was on
		if int(id) >= 0 && int(id) < len(s.v.Jobs) {
			for _, h := range s.v.Jobs[id].On {
				if h >= 0 && h < len(v.GPUs) && !slices.Contains(s.changed, h) {
					s.changed = append(s.changed, h)
				}
			}
		}
	}
	for _, g := range s.changed {
		if err := checkGPU(v, g); err != nil {
			return err
		}
	}
	s.changed = s.changed[:n] // the others are unchanged: nothing to copy
	for _, id := range s.dirty {
		if int(id) < 0 || int(id) >= len(v.Jobs) {
			continue
		}
		if v.Jobs[id].State != policies.Running {
			continue
		}
		if err := checkHolds(v, id); err != nil {
			return err
		}
	}
	return nil
}

// Check verifies that a view is consistent: every job listed on a GPU is
// running there, running jobs hold exactly the GPUs they need, queued jobs
// are pending, and measured memory is within [0, capacity].
func Check(v *policies.View) error {
	if err := checkGPUs(v); err != nil {
		return err
	}
	for _, id := range v.Queue.All() {
		if int(id) < 0 || int(id) >= len(v.Jobs) || v.Jobs[id].State != policies.Pending {
			return fmt.Errorf("queued job %d is not pending", id)
		}
	}
	for _, id := range v.Failed {
		if int(id) < 0 || int(id) >= len(v.Jobs) || v.Jobs[id].State != policies.Pending || v.Jobs[id].LastFailure == policies.NoFailure {
			return fmt.Errorf("failed-list job %d is not a pending job with a failed attempt", id)
		}
	}
	return nil
}

// checkGPUs checks the GPUs' part of Check.
func checkGPUs(v *policies.View) error {
	for g := range v.GPUs {
		if err := checkGPU(v, g); err != nil {
			return err
		}
	}
	return nil
}

// checkGPU checks GPU g's part of Check.
func checkGPU(v *policies.View, g int) error {
	if err := checkGPUEntry(v, g); err != nil {
		return err
	}
	gp := &v.GPUs[g]
	for _, id := range gp.Jobs {
		if int(id) < 0 || int(id) >= len(v.Jobs) {
			return fmt.Errorf("GPU %d lists unknown job %d", g, id)
		}
		j := &v.Jobs[id]
		if j.State != policies.Running || !slices.Contains(j.On, g) {
			return fmt.Errorf("GPU %d lists job %d, which is %s on %v", g, id, j.State, j.On)
		}
		if err := checkHolds(v, id); err != nil {
			return err
		}
	}
	return nil
}

// checkGPUEntry checks GPU g's own entry: its index and its measured
// memory.
func checkGPUEntry(v *policies.View, g int) error {
	gp := &v.GPUs[g]
	if gp.Index != g {
		return fmt.Errorf("GPU %d reports index %d", g, gp.Index)
	}
	if gp.UsedMiB < -1e-6 || gp.UsedMiB > gp.CapacityMiB+1e-6 {
		return fmt.Errorf("GPU %d: measured memory %.0f MiB outside [0, %.0f]", g, gp.UsedMiB, gp.CapacityMiB)
	}
	return nil
}

// checkHolds checks that running job id holds exactly the GPUs it needs and
// that each of them lists it.
func checkHolds(v *policies.View, id policies.JobID) error {
	j := &v.Jobs[id]
	if len(j.On) != j.GPUs {
		return fmt.Errorf("job %d runs on GPUs %v but needs %d", id, j.On, j.GPUs)
	}
	for _, h := range j.On {
		if h < 0 || h >= len(v.GPUs) || !slices.Contains(v.GPUs[h].Jobs, id) {
			return fmt.Errorf("job %d runs on GPU %d, which does not list it", id, h)
		}
	}
	return nil
}

// checkPlaced checks that placement p was carried out: its job runs on
// exactly its GPUs, each listing it (p read in place, not copied).
func checkPlaced(v *policies.View, p *policies.Action) error {
	j := &v.Jobs[p.Job]
	if j.State != policies.Running || !slices.Equal(j.On, p.GPUs) {
		return fmt.Errorf("job %d was placed on %v but is %s on %v", p.Job, p.GPUs, j.State, j.On)
	}
	for _, g := range p.GPUs {
		if !slices.Contains(v.GPUs[g].Jobs, p.Job) {
			return fmt.Errorf("job %d was placed on GPU %d, which does not list it", p.Job, g)
		}
	}
	return nil
}
