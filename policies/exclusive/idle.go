package exclusive

import (
	"math/bits"

	"github.com/aegis-sched/aegis/policies"
)

// noAttempt marks a GPU on which no observed attempt runs (tracker.next).
const noAttempt = -2

// tracker keeps the set of idle GPUs from events, so that a decision under
// a long queue reads the GPUs that changed and a bit set of the others
// instead of every GPU's job list. It is a hint checked against the view:
// a GPU it calls idle is read before it is given (one it wrongly calls idle
// is skipped), and every GPU that runs no job is in it, since a GPU's job
// list empties only when the attempts on it end: each attempt's GPUs are
// linked from its JobStarted (or, at a rebuild, from the view's
// Job.On) and read again at its JobFinished, JobFailed or JobStopped. The
// GPUs of a JobStarted, a PlaceFailed and the decision's own placements are
// read again at the next decision.
//
// Without events (a caller that never calls Observe, such as the cluster
// dispatcher, or a test calling Schedule on views of its own) Exclusive
// searches every GPU as before; so it does when the view does not hold
// together (a GPU listing a job whose Job.On lacks it, a GPU in two
// attempts): then the set is read again from the view at each decision
// until it does.
type tracker struct {
	observed bool // Observe has been called: the set is kept from events
	stale    bool // read the whole view at the next decision
	idleSet  []uint64
	// recheck lists the GPUs to read again at the next decision.
	recheck []int
	// first is a running attempt's first GPU, by job; next the attempt's
	// GPU after g (-1 after its last; noAttempt where none runs).
	first firstGPUs
	next  []int
	reads int // times the whole view was read (tests)
}

// Observe implements policies.Observer.
func (p *Policy) Observe(e policies.Event) {
	t := &p.tracker
	if !t.observed {
		t.observed, t.stale = true, true
	}
	if t.stale {
		return // the next decision reads everything from the view
	}
	switch e.Kind {
	case policies.JobStarted:
		t.recheck = append(t.recheck, e.GPUs...)
		t.link(e.Job, e.GPUs)
	case policies.JobFinished, policies.JobFailed, policies.JobStopped:
		if g, ok := t.first.take(e.Job); ok {
			for g >= 0 {
				t.recheck = append(t.recheck, g)
				g, t.next[g] = t.next[g], noAttempt
			}
		}
	case policies.PlaceFailed:
		t.recheck = append(t.recheck, e.GPUs...)
	case policies.JobArrived, policies.JobActive, policies.Wakeup:
	default:
		t.stale = true
	}
}

// ObservesOptionally implements policies.OptionalObserver: without events
// Exclusive decides the same, reading every GPU.
func (*Policy) ObservesOptionally() {}

// link records that job's attempt runs on gpus. A GPU out of range, or one
// already in an attempt (collocation, which Exclusive never asks for, or a
// list naming a GPU twice) makes the set stale: it is read from the view.
func (t *tracker) link(job policies.JobID, gpus []int) bool {
	if t.first.has(job) || len(gpus) == 0 {
		t.stale = true
		return false
	}
	for _, g := range gpus {
		if g < 0 || g >= len(t.next) || t.next[g] != noAttempt {
			t.stale = true
			return false
		}
		t.next[g] = -1
	}
	for i, g := range gpus[:len(gpus)-1] {
		t.next[g] = gpus[i+1]
	}
	t.first.set(job, gpus[0])
	return true
}

// refresh brings the set up to date with v and reports whether it can be
// used for this decision.
func (t *tracker) refresh(v *policies.View) bool {
	if !t.stale && len(t.next) == len(v.GPUs) {
		for _, g := range t.recheck {
			if g >= 0 && g < len(v.GPUs) {
				t.mark(g, len(v.GPUs[g].Jobs) == 0)
			}
		}
		t.recheck = t.recheck[:0]
		return true
	}
	// Read everything from the view.
	t.reads++
	t.recheck = t.recheck[:0]
	n := len(v.GPUs)
	t.idleSet = make([]uint64, (n+63)/64)
	t.next = make([]int, n)
	for g := range t.next {
		t.next[g] = noAttempt
	}
	t.first.clear()
	t.stale = false
	for g := range v.GPUs {
		for _, id := range v.GPUs[g].Jobs {
			if t.first.has(id) {
				continue
			}
			if int(id) < 0 || int(id) >= len(v.Jobs) || !t.link(id, v.Jobs[id].On) {
				t.stale = true
				return false
			}
		}
		if len(v.GPUs[g].Jobs) == 0 {
			t.mark(g, true)
		} else if t.next[g] == noAttempt { // its job's On lacks it
			t.stale = true
			return false
		}
	}
	return true
}

func (t *tracker) mark(g int, idle bool) {
	if idle {
		t.idleSet[g/64] |= 1 << (g % 64)
	} else {
		t.idleSet[g/64] &^= 1 << (g % 64)
	}
}

// idleTracked is idle, read from the set: the n lowest-indexed GPUs from
// from on that run no job and are not taken, or nil.
func (p *Policy) idleTracked(v *policies.View, taken []bool, from, n int) []int {
	if len(p.gpuSlab) < n {
		p.gpuSlab = make([]int, max(1024, n))
	}
	gpus := p.gpuSlab[:0:n]
	set := p.idleSet
	for w := from / 64; w < len(set); w++ {
		word := set[w]
		if w == from/64 {
			word &^= 1<<(from%64) - 1
		}
		for word != 0 {
			g := w*64 + bits.TrailingZeros64(word)
			word &= word - 1
			if len(v.GPUs[g].Jobs) == 0 && !taken[g] {
				if gpus = append(gpus, g); len(gpus) == n {
					p.gpuSlab = p.gpuSlab[n:]
					return gpus
				}
			}
		}
	}
	return nil
}

// firstGPUs maps the jobs of running attempts to their first GPU: in an
// array by job id for the ids a backend gives (0, 1, 2, ...), in a map for
// any other (negative or very large) id. A map alone costs four hashed
// look-ups and writes an attempt (Observe at every start and end).
type firstGPUs struct {
	byID  []int32 // GPU + 1 by job id; 0: none
	n     int     // entries set in byID
	other map[policies.JobID]int
}

// maxFirstByID bounds the ids kept in the array (4 bytes each).
const maxFirstByID = 1 << 24

func (f *firstGPUs) has(id policies.JobID) bool {
	_, ok := f.get(id)
	return ok
}

func (f *firstGPUs) get(id policies.JobID) (int, bool) {
	if id >= 0 && id < maxFirstByID {
		if int(id) < len(f.byID) && f.byID[id] != 0 {
			return int(f.byID[id]) - 1, true
		}
		return 0, false
	}
	g, ok := f.other[id]
	return g, ok
}

// set records g (a GPU index, below 2³¹ − 1) as job id's first GPU.
func (f *firstGPUs) set(id policies.JobID, g int) {
	if id >= 0 && id < maxFirstByID && g >= 0 && g < 1<<31-1 {
		if int(id) >= len(f.byID) { // grown by doubling, zero (none) past the old end
			f.byID = append(f.byID, make([]int32, max(int(id)+1, 2*len(f.byID), 64)-len(f.byID))...)
		}
		f.byID[id] = int32(g) + 1
		f.n++
		return
	}
	if f.other == nil {
		f.other = make(map[policies.JobID]int)
	}
	f.other[id] = g
}

// take removes job id's entry and returns it.
func (f *firstGPUs) take(id policies.JobID) (int, bool) {
	if id >= 0 && id < maxFirstByID {
		if int(id) < len(f.byID) && f.byID[id] != 0 {
			g := int(f.byID[id]) - 1
			f.byID[id] = 0
			f.n--
			return g, true
		}
		return 0, false
	}
	g, ok := f.other[id]
	delete(f.other, id)
	return g, ok
}

func (f *firstGPUs) clear() {
	if f.n > 0 {
		clear(f.byID)
		f.n = 0
	}
	clear(f.other)
}
