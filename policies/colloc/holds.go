package colloc

import (
	"slices"
	"time"

	"github.com/aegis-sched/aegis/internal/jobslots"
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
	// ends[g] is holdEnds of GPU g, or unknownEnd (holdEnds is never
	// negative): one array read by answer, not a second of flags.
	ends []time.Duration
	// gen is each GPU's generation: raised whenever the GPU is read again
	// (from 1 at the first read), so that an answer kept for a generation
	// (Scheduler.verdicts) is one given since nothing happened on the GPU.
	gen []uint32
	// readAt is, by GPU, the refresh (counted in refreshes) that last read
	// it again; sinceAll: the last refresh read every GPU.
	readAt    []uint64
	refreshes uint64
	sinceAll  bool
	recheck   []int // GPUs to read again at the next decision
	on        jobGPUs
	reads     int // times the whole view was read (tests)
}

// Observe implements policies.Observer.
func (s *Scheduler) Observe(e policies.Event) { s.ObserveAt(&e) }

// ObserveAt implements policies.InPlaceObserver: Observe, e read in place.
func (s *Scheduler) ObserveAt(e *policies.Event) {
	h := &s.holds
	if !h.observed {
		h.observed, h.stale = true, true
	}
	if h.stale {
		return // the next decision reads everything from the view
	}
	switch e.Kind {
	case policies.JobStarted:
		h.recheck = appendGPUs(h.recheck, e.GPUs)
		if !h.link(e.Job, e.GPUs) {
			h.stale = true
		}
	case policies.JobActive:
		i := h.on.get(e.Job)
		if i < 0 {
			h.stale = true
			return
		}
		h.recheck = appendGPUs(h.recheck, h.on.lists[i].gpus)
	case policies.JobFinished, policies.JobFailed, policies.JobStopped:
		if i := h.on.get(e.Job); i >= 0 {
			h.recheck = appendGPUs(h.recheck, h.on.lists[i].gpus)
			h.on.drop(e.Job, i)
		}
	case policies.PlaceFailed:
		h.recheck = append(h.recheck, e.GPUs...)
	case policies.JobArrived, policies.Wakeup:
	default:
		h.stale = true
	}
}

// appendGPUs is append(dst, gpus...), a lone GPU (most attempts') without
// the copy call.
func appendGPUs(dst, gpus []int) []int {
	if len(gpus) == 1 {
		return append(dst, gpus[0])
	}
	return append(dst, gpus...)
}

// ObservesOptionally implements policies.OptionalObserver: without events
// the scheduler decides the same, reading every GPU's jobs.
func (*Scheduler) ObservesOptionally() {}

// link records that job's attempt runs on gpus (copied); false when the
// job already has one or gpus is empty.
func (h *holds) link(job policies.JobID, gpus []int) bool {
	if h.on.get(job) >= 0 || len(gpus) == 0 {
		return false
	}
	h.on.add(job, gpus)
	return true
}

// refresh forgets the hold ends that may have changed since the last
// decision and reports whether the others can be used in this one.
func (h *holds) refresh(v *policies.View) bool {
	h.refreshes++
	if !h.stale && len(h.ends) == len(v.GPUs) {
		for _, g := range h.recheck {
			if g >= 0 && g < len(h.ends) {
				h.ends[g] = unknownEnd
				h.gen[g]++
				h.readAt[g] = h.refreshes
			}
		}
		h.sinceAll = false
		h.recheck = h.recheck[:0]
		return true
	}
	// Read everything from the view.
	h.reads++
	h.sinceAll = true
	h.recheck = h.recheck[:0]
	h.ends = slices.Grow(h.ends[:0], len(v.GPUs))[:len(v.GPUs)]
	for g := range h.ends {
		h.ends[g] = unknownEnd
	}
	if len(h.gen) != len(v.GPUs) {
		h.gen, h.readAt = make([]uint32, len(v.GPUs)), make([]uint64, len(v.GPUs))
	}
	for g := range h.gen {
		h.gen[g]++
	}
	h.on.reset()
	h.stale = false
	for g := range v.GPUs {
		for _, id := range v.GPUs[g].Jobs {
			if int(id) < 0 || int(id) >= len(v.Jobs) {
				h.stale = true
				return false
			}
			i := h.on.get(id)
			if i < 0 && h.link(id, v.Jobs[id].On) {
				i = h.on.get(id)
			}
			if i < 0 || !slices.Contains(h.on.lists[i].gpus, g) {
				h.stale = true
				return false
			}
		}
	}
	return true
}

// unknownEnd marks a hold end not known (holds.ends).
const unknownEnd = time.Duration(-1)

// holdEnd is holdEnds(v, g, hold), from what the last decisions read when
// cached is set.
func (s *Scheduler) holdEnd(v *policies.View, g int, cached bool) time.Duration {
	if !cached {
		return holdEnds(v, g, s.cfg.Hold)
	}
	h := &s.holds
	if h.ends[g] == unknownEnd {
		h.ends[g] = holdEnds(v, g, s.cfg.Hold)
	}
	return h.ends[g]
}

// jobGPUs holds the GPU lists of the attempts running, by job (a job's
// index in lists in a jobslots.Table: a Go map by job had been 2 % of a
// loaded Horus run's instructions, a look-up at each first activity and
// end, an insertion at each start).
type jobGPUs struct {
	index jobslots.Table
	lists []jobList
	free  []int32 // indices in lists not in use
}

// jobList is one attempt's GPUs.
type jobList struct {
	job  policies.JobID
	live bool
	gpus []int
}

// get returns job's index in lists, -1 for none.
func (x *jobGPUs) get(job policies.JobID) int32 { return x.index.Get(int(job)) }

// add gives job, which has none, a copy of gpus.
func (x *jobGPUs) add(job policies.JobID, gpus []int) {
	var i int32
	if n := len(x.free); n > 0 {
		i, x.free = x.free[n-1], x.free[:n-1]
	} else {
		i = int32(len(x.lists))
		x.lists = append(x.lists, jobList{})
	}
	l := &x.lists[i]
	l.job, l.live, l.gpus = job, true, appendGPUs(l.gpus[:0], gpus)
	x.index.Set(int(job), i)
}

// drop forgets job, whose index in lists is i.
func (x *jobGPUs) drop(job policies.JobID, i int32) {
	x.lists[i].live = false
	x.free = append(x.free, i)
	x.index.Set(int(job), -1)
}

// reset forgets every job.
func (x *jobGPUs) reset() {
	for i := range x.lists {
		if l := &x.lists[i]; l.live {
			x.drop(l.job, int32(i))
		}
	}
}
