package colloc

import (
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// holds keeps each GPU's hold end (holdEnds) from events, so that a
// decision reads a GPU's jobs only when one of them started, showed its
// first activity or ended since the GPU was last read, instead of reading
// every GPU's jobs at every decision. A GPU's hold end depends on its job
// list and on its jobs' Active and ActiveAt, which change only with those
// events: each attempt's GPUs are kept from its JobStarted (or, when the
// whole view is read, from Job.On) and read again at its JobActive,
// JobFinished, JobFailed or JobStopped; a start's, a failed placement's
// and the decision's own placements' GPUs are read again at the next
// decision.
//
// Without events (the cluster dispatcher, a probe that does not pass them
// on, a Schedule on views of one's own) every GPU is read at every decision
// as before; so it is when the view does not hold together (a GPU listing
// a job whose Job.On lacks it, an event of an attempt not started, an
// unknown event kind) until a decision finds that it does.
type holds struct {
	observed bool // Observe has been called: the hold ends are kept from events
	stale    bool // read the whole view at the next decision
	ends     []time.Duration
	known    []bool // ends[g] is holdEnds of GPU g
	recheck  []int  // GPUs to read again at the next decision
	on       map[policies.JobID][]int
	free     [][]int // GPU lists of attempts that ended, for reuse
	reads    int     // times the whole view was read (tests)
}

// Observe implements policies.Observer.
func (s *Scheduler) Observe(e policies.Event) {
	h := &s.holds
	if !h.observed {
		h.observed, h.stale = true, true
	}
	if h.stale {
		return // the next decision reads everything from the view
	}
	switch e.Kind {
	case policies.JobStarted:
		h.recheck = append(h.recheck, e.GPUs...)
		if !h.link(e.Job, e.GPUs) {
			h.stale = true
		}
	case policies.JobActive:
		gpus, ok := h.on[e.Job]
		if !ok {
			h.stale = true
			return
		}
		h.recheck = append(h.recheck, gpus...)
	case policies.JobFinished, policies.JobFailed, policies.JobStopped:
		if gpus, ok := h.on[e.Job]; ok {
			h.recheck = append(h.recheck, gpus...)
			delete(h.on, e.Job)
			h.free = append(h.free, gpus[:0])
		}
	case policies.PlaceFailed:
		h.recheck = append(h.recheck, e.GPUs...)
	case policies.JobArrived, policies.Wakeup:
	default:
		h.stale = true
	}
}

// ObservesOptionally implements policies.OptionalObserver: without events
// the scheduler decides the same, reading every GPU's jobs.
func (*Scheduler) ObservesOptionally() {}

// link records that job's attempt runs on gpus (copied); false when the
// job already has one or gpus is empty.
func (h *holds) link(job policies.JobID, gpus []int) bool {
	if _, ok := h.on[job]; ok || len(gpus) == 0 {
		return false
	}
	var l []int
	if n := len(h.free); n > 0 {
		l, h.free = h.free[n-1], h.free[:n-1]
	}
	h.on[job] = append(l, gpus...)
	return true
}

// refresh forgets the hold ends that may have changed since the last
// decision and reports whether the others can be used in this one.
func (h *holds) refresh(v *policies.View) bool {
	if !h.stale && len(h.known) == len(v.GPUs) {
		for _, g := range h.recheck {
			if g >= 0 && g < len(h.known) {
				h.known[g] = false
			}
		}
		h.recheck = h.recheck[:0]
		return true
	}
	// Read everything from the view.
	h.reads++
	h.recheck = h.recheck[:0]
	h.ends = slices.Grow(h.ends[:0], len(v.GPUs))[:len(v.GPUs)]
	h.known = slices.Grow(h.known[:0], len(v.GPUs))[:len(v.GPUs)]
	clear(h.known)
	if h.on == nil {
		h.on = make(map[policies.JobID][]int)
	}
	for id, gpus := range h.on {
		h.free = append(h.free, gpus[:0])
		delete(h.on, id)
	}
	h.stale = false
	for g := range v.GPUs {
		for _, id := range v.GPUs[g].Jobs {
			if int(id) < 0 || int(id) >= len(v.Jobs) {
				h.stale = true
				return false
			}
			if _, ok := h.on[id]; !ok {
				h.link(id, v.Jobs[id].On)
			}
			if !slices.Contains(h.on[id], g) {
				h.stale = true
				return false
			}
		}
	}
	return true
}

// holdEnd is holdEnds(v, g, hold), from what the last decisions read when
// cached is set.
func (s *Scheduler) holdEnd(v *policies.View, g int, cached bool) time.Duration {
	if !cached {
		return holdEnds(v, g, s.cfg.Hold)
	}
	h := &s.holds
	if !h.known[g] {
		h.ends[g], h.known[g] = holdEnds(v, g, s.cfg.Hold), true
	}
	return h.ends[g]
}
