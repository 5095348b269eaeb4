package executor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// Resume continues the run whose journal OpenJournal returned (holding the
// run directory's lock): it rebuilds the state by replaying the records
// (the first Next returns every replayed event, so that recorders and the
// policy see the whole run), then settles the attempts the journal left
// running: one whose process (matched by PID and process start time, so a
// reused PID is not taken for it) still runs is adopted; one that ended
// meanwhile ends as its exit status says; one that vanished without a
// status fails with a reason saying so, and what is left of its process
// group is killed; a launch that never started a process is a failed
// placement (the job stays pending). cfg is built as for New, except that
// Jobs is ignored: the jobs are the journal's.
func Resume(cfg Config, j *Journal, recs []Record) (*Executor, error) {
	name := filepath.Join(cfg.Dir, "journal.jsonl")
	if err := CheckJournal(recs, name); err != nil {
		return nil, fmt.Errorf("executor: resume: %w", err)
	}
	x, err := prepare(cfg, recs[0].Run.Start)
	if err != nil {
		return nil, err
	}
	if err := x.mkdirs(); err != nil {
		return nil, err
	}
	x.j = j
	x.resumed = true
	launches, err := x.replay(recs, name)
	if err != nil {
		return nil, err
	}
	now := x.clock()
	replayed := slices.Clone(x.att)
	if err := x.settleLaunches(launches, now); err != nil {
		return nil, err
	}
	if err := x.settleRunning(replayed, now); err != nil {
		return nil, err
	}
	return x, nil
}

// futureSlack is how far past now (in wall time) a journaled run time may
// be: the wall clock may step back a little between two sessions.
const futureSlack = time.Minute

// replay rebuilds the state from the records after the run record of the
// journal name; it returns the launches that recorded no process.
func (x *Executor) replay(recs []Record, name string) (map[policies.JobID]*attempt, error) {
	x.replaying = true
	defer func() { x.replaying = false }()
	limit := x.RunTime(time.Now().Add(futureSlack))
	launches := map[policies.JobID]*attempt{}
	for i, r := range recs[1:] {
		line := i + 2
		if t := time.Duration(r.T); t > limit {
			return nil, fmt.Errorf("%s:%d: run time %v is after now (%v): the journal is damaged, or the clock was set back",
				name, line, t, x.RunTime(time.Now()))
		}
		if err := x.replayRecord(r, launches); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	return launches, nil
}

// replayRecord applies one record to the state.
func (x *Executor) replayRecord(r Record, launches map[policies.JobID]*attempt) error {
	if r.Type != "job" && (r.Job < 0 || r.Job >= len(x.specs)) {
		return fmt.Errorf("%s record for unknown job %d", r.Type, r.Job)
	}
	// A record is replayed no earlier than the one before it: a journal
	// an older executor wrote may hold an arrival stamped before the
	// activity its poll had journaled, and the replayed events go to the
	// policy in order.
	r.T = max(r.T, int64(x.last))
	t := time.Duration(r.T)
	id := policies.JobID(r.Job)
	x.last = t
	switch r.Type {
	case "job":
		return x.replayJob(r)
	case "arrived":
		k := slices.Index(x.waiting, id)
		if k < 0 {
			return fmt.Errorf("job %d arrives twice", r.Job)
		}
		x.waiting = slices.Delete(x.waiting, k, k+1)
		x.arrive(id, t)
	case "launch":
		if err := x.checkGPUs(r); err != nil {
			return err
		}
		launches[id] = &attempt{job: id, n: r.Attempt, gpus: r.GPUs}
	case "started":
		delete(launches, id)
		return x.replayStarted(r)
	case "active", "finished", "failed", "terminate", "interrupted":
		return x.replayEnd(r)
	case "stopped":
		if s := x.view.Jobs[id].State; s != policies.Pending {
			return fmt.Errorf("job %d stopped but it is %s", r.Job, s)
		}
		x.stopped(id, t, r.Reason)
	case "place-failed":
		delete(launches, id)
		x.emit(policies.Event{Kind: policies.PlaceFailed, T: t, Job: id, GPUs: r.GPUs, Reason: r.Reason})
	default:
		return fmt.Errorf("unknown record type %q", r.Type)
	}
	return nil
}

func (x *Executor) replayJob(r Record) error {
	if r.Spec == nil || r.Job != len(x.specs) {
		return fmt.Errorf("job record %d out of order", r.Job)
	}
	sp := traces.Job{ID: r.Spec.Name, Workload: r.Spec.Workload, GPUs: r.Spec.GPUs,
		Submit: time.Duration(r.Spec.SubmitNs), SoloS: r.Spec.SoloS}
	if err := x.check(sp); err != nil {
		return err
	}
	x.add(sp)
	return nil
}

func (x *Executor) replayStarted(r Record) error {
	id := policies.JobID(r.Job)
	if s := x.view.Jobs[id].State; s != policies.Pending {
		return fmt.Errorf("job %d started but it is %s", r.Job, s)
	}
	if err := x.checkGPUs(r); err != nil {
		return err
	}
	a := &attempt{job: id, n: r.Attempt, gpus: r.GPUs, pid: r.PID, start: r.Start, exclusive: !r.Shared}
	a.status, a.errLog = x.paths(a)
	a.base = make([]float64, len(a.gpus))
	x.started(a, time.Duration(r.T))
	return nil
}

// checkGPUs checks a launch or started record's GPUs: as many as the job
// needs, distinct, and GPUs of this run.
func (x *Executor) checkGPUs(r Record) error {
	if len(r.GPUs) != x.specs[r.Job].GPUs {
		return fmt.Errorf("%s record: job %d on %d GPUs; it needs %d", r.Type, r.Job, len(r.GPUs), x.specs[r.Job].GPUs)
	}
	for i, g := range r.GPUs {
		if g < 0 || g >= len(x.devs) || slices.Contains(r.GPUs[:i], g) {
			return fmt.Errorf("%s record: job %d on GPUs %v; the run has %d", r.Type, r.Job, r.GPUs, len(x.devs))
		}
	}
	return nil
}

// replayEnd applies a record about the job's running attempt.
func (x *Executor) replayEnd(r Record) error {
	id, t := policies.JobID(r.Job), time.Duration(r.T)
	a := x.att[id]
	if a == nil || a.n != r.Attempt {
		return fmt.Errorf("%s record for job %d attempt %d, which is not running", r.Type, r.Job, r.Attempt)
	}
	switch r.Type {
	case "active":
		return x.activate(id, t)
	case "finished":
		x.finished(a, t)
	case "failed":
		f := policies.OtherFailure
		if r.Failure == policies.OOM.String() {
			f = policies.OOM
		}
		x.failed(a, f, r.Shared, t)
	case "terminate":
		a.terminating = true
	case "interrupted":
		x.interrupted(a, t, r.Reason)
	}
	return nil
}

// settleLaunches settles the launches that did not record their process:
// the shim is adopted if it started after all; if it already ended, the
// attempt ends as its status file says; else the placement did not take
// effect.
func (x *Executor) settleLaunches(launches map[policies.JobID]*attempt, now time.Duration) error {
	for _, id := range sortedKeys(launches) {
		a := launches[id]
		a.own, a.exclusive = false, true
		a.status, a.errLog = x.paths(a)
		for _, g := range a.gpus {
			a.exclusive = a.exclusive && len(x.view.GPUs[g].Jobs) == 0
			a.base = append(a.base, x.view.GPUs[g].UsedMiB)
		}
		_, ended, err := readStatus(a.status)
		if err != nil {
			return err
		}
		how := "its process ended while the executor was down"
		if pids := findByArg(a.status); !ended && len(pids) == 1 {
			if st, err := readStat(pids[0]); err == nil {
				a.pid, a.start = pids[0], st.start
				how = "adopted process " + strconv.Itoa(a.pid)
			}
		}
		if !ended && a.pid == 0 {
			reason := "the executor stopped before the attempt's process started"
			if err := x.journal(Record{Type: "place-failed", T: int64(now), Job: int(id), Attempt: a.n, GPUs: a.gpus, Reason: reason}); err != nil {
				return err
			}
			x.emit(policies.Event{Kind: policies.PlaceFailed, T: now, Job: id, GPUs: a.gpus, Reason: reason})
			continue
		}
		if err := x.journal(Record{Type: "started", T: int64(now), Job: int(id), Attempt: a.n, GPUs: a.gpus,
			PID: a.pid, Start: a.start, Shared: !a.exclusive}); err != nil {
			return err
		}
		fmt.Fprintf(x.cfg.Log, "resume: job %s attempt %d: %s (launched before the executor stopped)\n", x.specs[id].ID, a.n, how)
		x.started(a, now)
		if ended {
			if err := x.exited(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// settleRunning settles the attempts the journal left running (replayed):
// a live process is adopted, an ended one ends as its status file says,
// and one that vanished without a status fails, its process group killed.
func (x *Executor) settleRunning(replayed []*attempt, now time.Duration) error {
	for _, a := range replayed {
		if a == nil {
			continue
		}
		if alive(a.pid, a.start) {
			fmt.Fprintf(x.cfg.Log, "resume: job %s attempt %d: adopted process %d\n", x.specs[a.job].ID, a.n, a.pid)
			if x.cfg.Mirror != nil {
				x.cfg.Mirror.Placed(a.job, a.gpus, a.pid, now)
			}
			continue
		}
		if err := x.ended(a, fmt.Sprintf("the attempt's process %d vanished while the executor was down and recorded no exit status", a.pid)); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[policies.JobID]V) []policies.JobID {
	var ks []policies.JobID
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
