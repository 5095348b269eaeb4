// Package exclusive is the Exclusive baseline: strict FIFO with head-of-line
// blocking, each job on idle GPUs only.
package exclusive

import "github.com/aegis-sched/aegis/policies"

// Policy is the Exclusive baseline. The head of the queue takes the
// lowest-indexed idle GPUs when enough are idle (a multi-GPU job all at
// once); otherwise everything waits. A job that fails even alone is stopped.
type Policy struct {
	taken []bool // scratch of Schedule: GPUs given in this decision (all false between decisions)
	// blocked is the queue's head that the last decision could not place
	// (head-of-line blocking), or -1 when it placed the whole queue.
	blocked policies.JobID
	decided bool // Schedule ran at least once
	// gpuSlab is an arena of the placements' GPU lists, never reused: an
	// action kept (copied, as policies.Policy asks) stays as it was.
	gpuSlab []int
	// acts is the returned actions' buffer, reused by the next decision
	// (policies.Policy allows it: the loop carries them out first), so a
	// run's placements take no new memory each.
	acts []policies.Action
	// tracker keeps which GPUs are idle from events (Observe), so that a
	// decision does not read every GPU to find the idle ones.
	tracker
	// searchUpTo: a view of at most this many GPUs is searched in full at
	// each decision instead of kept from events (New: searchFullUpTo).
	searchUpTo int
}

// searchFullUpTo is the most GPUs of a view Exclusive searches in full at
// each decision: on a few GPUs keeping the idle set from events (a start's
// and an end's GPUs linked and read again, the attempts' table) costs more
// than reading their job lists (counted: on 8 and 16 GPUs the search costs
// some 0.35 M instructions a GPU in a run of 24,000 jobs, the set 10 M).
const searchFullUpTo = 16

// New returns the Exclusive policy. It takes no parameters.
func New(params map[string]string) (*Policy, error) {
	return &Policy{searchUpTo: searchFullUpTo}, ReadConfig(policies.NewParams(params))
}

// ReadConfig checks p: Exclusive reads no parameter, so any key is an error.
func ReadConfig(p *policies.Params) error { return p.Done("policy exclusive") }

// Name implements policies.Policy.
func (*Policy) Name() string { return "exclusive" }

// Wants implements policies.Selective. Exclusive's decision reads only
// the queue and which GPUs are idle, so after a decision that placed what
// it could, only these can change it: a finish while a job waits (GPUs
// freed for it), a failure, stop or failed placement (a job to stop or to
// place again), and an arrival while nothing blocks the queue or ahead of
// the blocked head (job ids follow submission order, so a later arrival
// queues behind it). A finish while nothing waits, its own placements
// coming back as starts, and jobs' first activity change nothing.
func (p *Policy) Wants(e policies.Event) bool { return p.WantsAt(&e) }

// WantsAt implements policies.InPlaceSelective: Wants, e read in place.
func (p *Policy) WantsAt(e *policies.Event) bool {
	if !p.decided {
		return true
	}
	switch e.Kind {
	case policies.JobStarted, policies.JobActive:
		return false
	case policies.JobFinished:
		return p.blocked >= 0
	case policies.JobArrived:
		return p.blocked < 0 || e.Job < p.blocked
	}
	return true
}

// Schedule implements policies.Policy.
func (p *Policy) Schedule(v *policies.View) []policies.Action {
	acts := p.acts[:0]
	if len(p.taken) != len(v.GPUs) {
		p.taken = make([]bool, len(v.GPUs))
	}
	taken := p.taken
	p.decided, p.blocked = true, -1
	tracking := p.observed && len(v.GPUs) > p.searchUpTo && p.refresh(v)
	from := 0 // every idle GPU below from is taken: the search starts there
	for _, id := range v.Queue.All() {
		j := v.Job(id)
		if j.Attempts > 0 && j.LastFailure != policies.NoFailure {
			// It already failed while alone on its GPUs: retrying cannot help.
			acts = append(acts, policies.Action{Kind: policies.Stop, Job: id, Reason: "failed exclusively: " + j.LastFailure.String()})
			continue
		}
		var gpus []int
		if tracking {
			gpus = p.idleTracked(v, taken, from, j.GPUs)
		} else {
			gpus = p.idle(v, taken, from, j.GPUs)
		}
		if gpus == nil {
			p.blocked = id
			break // head-of-line blocking
		}
		for _, g := range gpus {
			taken[g] = true
		}
		// The job took the lowest idle GPUs, so none below its last is
		// left: the next search need not read them again.
		from = gpus[len(gpus)-1] + 1
		acts = append(acts, policies.Action{Kind: policies.Place, Job: id, GPUs: gpus})
	}
	for _, a := range acts { // leave taken all false for the next decision
		if a.Kind == policies.Place {
			for _, g := range a.GPUs {
				taken[g] = false
			}
		}
	}
	p.acts = acts
	if len(acts) == 0 {
		return nil
	}
	return acts[:len(acts):len(acts)] // an append by the caller does not write into the buffer
}

// idle is View.IdleGPUs (the n lowest-indexed GPUs running no job and not
// taken, or nil) for a view whose GPUs below from are all busy or taken,
// its result from p's arena.
func (p *Policy) idle(v *policies.View, taken []bool, from, n int) []int {
	if len(p.gpuSlab) < n {
		p.gpuSlab = make([]int, max(1024, n))
	}
	gpus := p.gpuSlab[:0:n]
	gs := v.GPUs
	taken = taken[:len(gs)]
	for g := from; g < len(gs); g++ {
		if len(gs[g].Jobs) == 0 && !taken[g] {
			if gpus = append(gpus, g); len(gpus) == n {
				p.gpuSlab = p.gpuSlab[n:]
				return gpus
			}
		}
	}
	return nil
}

// ReadsJobsOnly implements policies.JobsReader: Exclusive writes into no
// job of its view (TestJobsReadersWriteNoJob).
func (p *Policy) ReadsJobsOnly() {}
