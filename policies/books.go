package policies

import "slices"

// Books keeps the parts of a View that change as jobs move, for a backend:
// Queue (the pending jobs in submission order), Failed (the pending jobs
// whose last attempt failed, in the order of their failures) and each GPU's
// Jobs. The simulator and the executor both keep their View with one, so
// what a policy sees is kept the same way whichever backend runs it.
type Books struct {
	v     *View
	queue []JobID // the pending jobs in submission order: v.Queue
	qbuf  []JobID // the array queue is in, from its start
}

// NewBooks returns the books of v, whose queue, failed list and GPUs' jobs
// it then owns.
func NewBooks(v *View) *Books { return &Books{v: v} }

// Enqueue inserts a pending job into the queue in submission order.
func (b *Books) Enqueue(id JobID) {
	q := b.queue
	if len(q) == cap(q) && 2*len(q) <= cap(b.qbuf) {
		// The head left by reslicing and the end is reached: move the
		// queue back to the start of its array instead of growing it.
		q = b.qbuf[:copy(b.qbuf, q)]
	}
	grow := len(q) == cap(q)
	if n := len(q); n == 0 || q[n-1] < id {
		q = append(q, id) // after every queued job: an arrival in order
	} else {
		i, _ := slices.BinarySearch(q, id)
		q = slices.Insert(q, i, id)
	}
	if grow { // a new array
		b.qbuf = q[:cap(q)]
	}
	b.queue = q
	b.v.Queue = ListOf(b.queue...)
}

// Fail enqueues a job whose attempt failed and lists it as failed.
func (b *Books) Fail(id JobID) {
	b.Enqueue(id)
	b.v.Failed = append(b.v.Failed, id)
}

// Dequeue removes a job from the queue (and the failed list) and reports
// whether it was queued.
func (b *Books) Dequeue(id JobID) bool {
	q := b.queue
	var i int
	var ok bool
	if len(q) > 0 && q[0] == id { // the head (FIFO): no search, no move
		i, ok = 0, true
	} else {
		i, ok = slices.BinarySearch(q, id)
	}
	switch {
	case ok && i == 0:
		b.queue = q[1:]
	case ok:
		b.queue = slices.Delete(q, i, i+1)
	}
	b.v.Queue = ListOf(b.queue...)
	if k := slices.Index(b.v.Failed, id); k >= 0 {
		b.v.Failed = slices.Delete(b.v.Failed, k, k+1)
	}
	return ok
}

// Place lists a job as running on gpus.
func (b *Books) Place(id JobID, gpus []int) {
	for _, g := range gpus {
		b.v.GPUs[g].Jobs = append(b.v.GPUs[g].Jobs, id)
	}
}

// Release takes a job off the lists of gpus.
func (b *Books) Release(id JobID, gpus []int) {
	for _, g := range gpus {
		gp := &b.v.GPUs[g]
		gj := gp.Jobs
		switch k := slices.Index(gj, id); {
		case k < 0:
		case k == len(gj)-1: // the last (a lone job): nothing to move
			gj[k] = 0 // zeroed, as slices.Delete leaves it
			gp.Jobs = gj[:k]
		default:
			gp.Jobs = slices.Delete(gj, k, k+1)
		}
	}
}
