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
// GPUs of a JobStarted and a PlaceFailed are read again at the next
// decision (the decision's own placements come back as one or the other;
// one that did not would leave its GPUs idle, as the set says).
//
// Without events (a caller that never calls Observe, such as the cluster
// dispatcher, or a test calling Schedule on views of its own), and on a
// view of at most Policy.searchUpTo GPUs (the set is then never read, and
// stays stale: Observe returns at once), Exclusive searches every GPU; so it does when the view does not hold
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
func (p *Policy) Observe(e policies.Event) { p.ObserveAt(&e) }

// ObserveAt implements policies.InPlaceObserver: Observe, e read in place.
func (p *Policy) ObserveAt(e *policies.Event) {
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

// firstGPUs maps the jobs of running attempts to their first GPU: an
// open-addressing table (linear probing, a multiplicative hash of the id,
// deletion by shifting back) that holds about twice the running attempts,
// at most one a GPU under Exclusive. A Go map costs four hashed look-ups
// and writes an attempt (Observe at every start and end); an array by job
// id would grow with the jobs of the run.
type firstGPUs struct {
	slots []firstSlot // a power of two of them, or none
	n     int         // slots in use
	shift uint        // 64 less log2(len(slots)): home's, kept as slots grow
}

type firstSlot struct {
	id   policies.JobID
	g    int
	used bool
}

// home is id's first slot to probe.
func (f *firstGPUs) home(id policies.JobID) int {
	return int((uint64(id) * 0x9e3779b97f4a7c15) >> f.shift)
}

// find returns id's slot, or the empty slot where it would go.
func (f *firstGPUs) find(id policies.JobID) int {
	mask := len(f.slots) - 1
	i := f.home(id)
	for f.slots[i].used && f.slots[i].id != id {
		i = (i + 1) & mask
	}
	return i
}

func (f *firstGPUs) has(id policies.JobID) bool {
	return len(f.slots) > 0 && f.slots[f.find(id)].used
}

// set records g as job id's first GPU.
func (f *firstGPUs) set(id policies.JobID, g int) {
	if 2*(f.n+1) > len(f.slots) { // grow: at most half full
		old := f.slots
		f.slots, f.n = make([]firstSlot, max(16, 2*len(old))), 0
		f.shift = uint(64 - bits.Len(uint(len(f.slots)-1)))
		for _, e := range old {
			if e.used {
				f.set(e.id, e.g)
			}
		}
	}
	i := f.find(id)
	if !f.slots[i].used {
		f.n++
	}
	f.slots[i] = firstSlot{id: id, g: g, used: true}
}

// take removes job id's entry and returns it.
func (f *firstGPUs) take(id policies.JobID) (int, bool) {
	if len(f.slots) == 0 {
		return 0, false
	}
	i := f.find(id)
	if !f.slots[i].used {
		return 0, false
	}
	g := f.slots[i].g
	// Shift back the entries after it that probed past it.
	mask := len(f.slots) - 1
	for j := (i + 1) & mask; f.slots[j].used; j = (j + 1) & mask {
		if h := f.home(f.slots[j].id); (j-h)&mask >= (j-i)&mask {
			f.slots[i] = f.slots[j]
			i = j
		}
	}
	f.slots[i] = firstSlot{}
	f.n--
	return g, true
}

func (f *firstGPUs) clear() {
	clear(f.slots)
	f.n = 0
}
