package executor

import (
	"fmt"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/sim"
)

// Resume continues the run whose journal OpenJournal returned: it rebuilds
// the state by replaying the records (the first Next returns every
// replayed event, so that recorders and the policy see the whole run),
// then settles the attempts the journal left running: one whose process
// (matched by PID and process start time, so a reused PID is not taken for
// it) still runs is adopted; one that ended meanwhile ends as its exit
// status says; one that vanished without a status fails with a reason
// saying so; a launch that never started a process is a failed placement
// (the job stays pending). cfg is built as for New, except that Jobs is
// ignored: the jobs are the journal's.
func Resume(cfg Config, j *Journal, recs []Record) (*Executor, error) {
	if len(recs) == 0 || recs[0].Run == nil {
		return nil, fmt.Errorf("executor: resume: not an executor journal")
	}
	x, err := prepare(cfg, recs[0].Run.Start)
	if err != nil {
		return nil, err
	}
	x.j = j
	x.replaying = true
	launches := map[policies.JobID]*attempt{}
	for i, r := range recs[1:] {
		line := i + 2
		t := time.Duration(r.T)
		id := policies.JobID(r.Job)
		if r.Type != "job" && (r.Job < 0 || r.Job >= len(x.specs)) {
			return nil, fmt.Errorf("journal line %d: %s record for unknown job %d", line, r.Type, r.Job)
		}
		var a *attempt
		if r.Type != "job" {
			a = x.att[id]
		}
		needRunning := func() error {
			if a == nil || a.n != r.Attempt {
				return fmt.Errorf("journal line %d: %s record for job %d attempt %d, which is not running", line, r.Type, r.Job, r.Attempt)
			}
			return nil
		}
		x.last = max(x.last, t)
		switch r.Type {
		case "job":
			if r.Spec == nil || r.Job != len(x.specs) {
				return nil, fmt.Errorf("journal line %d: job record %d out of order", line, r.Job)
			}
			sp := sim.JobSpec{Name: r.Spec.Name, Workload: r.Spec.Workload, GPUs: r.Spec.GPUs,
				Submit: time.Duration(r.Spec.SubmitNs), SoloS: r.Spec.SoloS}
			if err := x.check(sp); err != nil {
				return nil, fmt.Errorf("journal line %d: %w", line, err)
			}
			x.add(sp)
		case "arrived":
			k := slices.Index(x.waiting, id)
			if k < 0 {
				return nil, fmt.Errorf("journal line %d: job %d arrives twice", line, r.Job)
			}
			x.waiting = slices.Delete(x.waiting, k, k+1)
			x.arrive(id, t)
		case "launch":
			launches[id] = &attempt{job: id, n: r.Attempt, gpus: r.GPUs}
		case "started":
			delete(launches, id)
			if x.view.Jobs[id].State != policies.Pending || len(r.GPUs) != x.specs[id].GPUs {
				return nil, fmt.Errorf("journal line %d: job %d started but it is %s", line, r.Job, x.view.Jobs[id].State)
			}
			a := &attempt{job: id, n: r.Attempt, gpus: r.GPUs, pid: r.PID, start: r.Start, exclusive: !r.Shared}
			a.status, a.errLog = x.paths(a)
			a.base = make([]float64, len(a.gpus))
			x.started(a, t)
		case "active":
			if err := needRunning(); err != nil {
				return nil, err
			}
			x.activate(id, t)
		case "finished":
			if err := needRunning(); err != nil {
				return nil, err
			}
			x.release(a)
			x.view.Jobs[id].State = policies.Done
			x.emit(policies.Event{Kind: policies.JobFinished, T: t, Job: id, Attempt: a.n})
		case "failed":
			if err := needRunning(); err != nil {
				return nil, err
			}
			f := policies.OtherFailure
			if r.Failure == policies.OOM.String() {
				f = policies.OOM
			}
			x.failed(a, f, r.Shared, t)
		case "stopped":
			if x.view.Jobs[id].State != policies.Pending {
				return nil, fmt.Errorf("journal line %d: job %d stopped but it is %s", line, r.Job, x.view.Jobs[id].State)
			}
			x.dequeue(id)
			x.view.Jobs[id].State = policies.Stopped
			x.emit(policies.Event{Kind: policies.JobStopped, T: t, Job: id, Reason: r.Reason})
		case "place-failed":
			delete(launches, id)
			x.emit(policies.Event{Kind: policies.PlaceFailed, T: t, Job: id, GPUs: r.GPUs, Reason: r.Reason})
		case "interrupted":
			if err := needRunning(); err != nil {
				return nil, err
			}
			x.release(a)
			x.view.Jobs[id].State = policies.Pending
			x.enqueue(id)
		default:
			return nil, fmt.Errorf("journal line %d: unknown record type %q", line, r.Type)
		}
	}
	x.replaying = false
	now := x.clock()
	replayed := slices.Clone(x.att)
	// Launches that did not record their process: adopt the shim if it
	// started after all, else the placement did not take effect.
	for _, id := range sortedKeys(launches) {
		a := launches[id]
		a.own, a.exclusive = false, true
		a.status, a.errLog = x.paths(a)
		for _, g := range a.gpus {
			a.exclusive = a.exclusive && len(x.view.GPUs[g].Jobs) == 0
			a.base = append(a.base, x.view.GPUs[g].UsedMiB)
		}
		if pids := findByArg(a.status); len(pids) == 1 {
			if st, err := readStat(pids[0]); err == nil {
				a.pid, a.start = pids[0], st.start
				if err := x.journal(Record{Type: "started", T: int64(now), Job: int(id), Attempt: a.n, GPUs: a.gpus,
					PID: a.pid, Start: a.start, Shared: !a.exclusive}); err != nil {
					return nil, err
				}
				fmt.Fprintf(x.cfg.Log, "resume: job %s attempt %d: adopted process %d (launched before the executor stopped)\n", x.specs[id].Name, a.n, a.pid)
				x.started(a, now)
				continue
			}
		}
		reason := "the executor stopped before the attempt's process started"
		if err := x.journal(Record{Type: "place-failed", T: int64(now), Job: int(id), Attempt: a.n, GPUs: a.gpus, Reason: reason}); err != nil {
			return nil, err
		}
		x.emit(policies.Event{Kind: policies.PlaceFailed, T: now, Job: id, GPUs: a.gpus, Reason: reason})
	}
	for _, a := range replayed {
		if a == nil {
			continue
		}
		switch {
		case alive(a.pid, a.start):
			fmt.Fprintf(x.cfg.Log, "resume: job %s attempt %d: adopted process %d\n", x.specs[a.job].Name, a.n, a.pid)
			if x.cfg.Emulator != nil {
				x.cfg.Emulator.placed(a.job, a.gpus, a.pid, now)
			}
		default:
			_, ok, err := readStatus(a.status)
			if err != nil {
				return nil, err
			}
			if ok {
				err = x.exited(a)
			} else {
				err = x.fail(a, policies.OtherFailure, fmt.Sprintf("the attempt's process %d vanished while the executor was down and recorded no exit status", a.pid))
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return x, nil
}

func sortedKeys[V any](m map[policies.JobID]V) []policies.JobID {
	var ks []policies.JobID
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
