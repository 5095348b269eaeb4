package sim

import (
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// The event heap pops in (time, sequence) order whatever the pushes.
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var q queue
	var want []item
	seq := uint64(0)
	for range 2000 {
		if len(q.a) > 0 && rng.IntN(3) == 0 {
			slices.SortFunc(want, func(a, b item) int {
				if a.t != b.t {
					return int(a.t - b.t)
				}
				return int(a.seq) - int(b.seq)
			})
			require.Equal(t, want[0], q.pop())
			want = want[1:]
			continue
		}
		it := item{t: time.Duration(rng.IntN(50)), seq: seq}
		seq++
		q.push(it)
		want = append(want, it)
	}
	require.Equal(t, len(want), len(q.a))
}

// TestQueueForms: up to sortedMax items the queue is an array sorted from
// the last due to the first (the first at its end); a push past sortedMax
// makes it a heap, which it stays until a pop leaves at most sortedMax/2;
// in either form every pop is the first pending item by (time, sequence),
// ties in time included, through growing and draining again.
func TestQueueForms(t *testing.T) {
	tests := []struct {
		name string
		peak int // the most items held
	}{
		{name: "small", peak: 5},
		{name: "at the limit", peak: sortedMax},
		{name: "one past", peak: sortedMax + 1},
		{name: "large", peak: 5 * sortedMax},
	}
	later := func(x, y item) int { // the sorted form's order
		if y.before(x) {
			return -1
		}
		return 1
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.peak), 7))
			var q queue
			var pending []item
			seq := uint64(0)
			form := func() {
				if !q.heap {
					require.LessOrEqual(t, len(q.a), sortedMax)
					require.True(t, slices.IsSortedFunc(q.a, later), "sorted from the last due")
					return
				}
				require.Greater(t, len(q.a), sortedMax/2)
				for i := 1; i < len(q.a); i++ {
					require.False(t, q.a[i].before(q.a[(i-1)/2]), "a heap")
				}
			}
			for range 3 {
				for len(q.a) < tc.peak {
					it := item{t: time.Duration(rng.IntN(20)), seq: seq}
					seq++
					q.push(it)
					pending = append(pending, it)
					form()
				}
				require.Equal(t, tc.peak > sortedMax, q.heap)
				for len(q.a) > 0 {
					k := 0
					for i := range pending {
						if pending[i].before(pending[k]) {
							k = i
						}
					}
					require.Equal(t, pending[k], *q.first())
					require.Equal(t, pending[k], q.pop())
					pending = slices.Delete(pending, k, k+1)
					form()
				}
				require.False(t, q.heap, "sorted again once drained")
			}
		})
	}
}

// Invariants are checked on changed GPUs at once and on every GPU
// periodically: a GPU listing a job that is not running is found either way.
func TestCheckFindsUntouchedCorruption(t *testing.T) {
	s := &Sim{cfg: Config{}, isTouched: make([]bool, 2), types: []TypeTruth{{Type: models.GPUType{MemoryMiB: 100}}}}
	s.view.GPUs = make([]policies.GPU, 2)
	s.view.Jobs = []policies.Job{{ID: 0, State: policies.Pending}}
	require.NoError(t, s.check(-1)) // the first check covers every GPU
	s.view.GPUs[1].Jobs = []policies.JobID{0}
	s.touch([]int{1})
	require.ErrorContains(t, s.check(-1), "GPU 1 lists job 0")
	var err error
	for range 64 {
		if err = s.check(-1); err != nil {
			break
		}
	}
	require.ErrorContains(t, err, "GPU 1 lists job 0", "the periodic full check")
}

// Arrivals in time order wait in their own list, the rest in the heap;
// every pop is the earliest pending event by (time, sequence), whatever the
// mix, an arrival out of time order (which goes to the heap) included; the
// list's first pending arrival and its time, which popIn keeps (nextA,
// nextT), follow pops that empty the list and pushes that refill it; and
// dueAt finds the first's time due.
func TestArrivalListAndHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		s := &Sim{}
		var pending []item // the reference: every event pushed and not popped
		pop := func() {
			it, ok := s.due()
			require.Equal(t, len(pending) > 0, ok)
			if !ok {
				return
			}
			k := 0
			for i := range pending {
				if pending[i].before(pending[k]) {
					k = i
				}
			}
			require.Equal(t, pending[k], it)
			require.True(t, s.dueAt(it.t), "the first's time is due (Next asks dueAt before popAt)")
			_, ok = s.popAt(it.t + 1)
			require.False(t, ok, "not due then")
			got, ok := s.popAt(it.t)
			require.True(t, ok)
			require.Equal(t, it, got)
			pending = slices.Delete(pending, k, k+1)
		}
		at := time.Duration(0)
		for range 400 {
			seq := s.seq
			switch r := rng.IntN(10); {
			case r < 4:
				if rng.IntN(8) > 0 {
					at += time.Duration(rng.IntN(3))
				} else {
					at = max(at-time.Duration(rng.IntN(3)), 0) // out of order: to the heap
				}
				s.jobs = append(s.jobs, job{submit: at}) // an arrival is due at its job's submit time
				id := int32(len(s.jobs) - 1)
				s.pushArrival(item{t: at, kind: evArrive, job: id})
				pending = append(pending, item{t: at, seq: seq, kind: evArrive, job: id})
			case r < 8:
				w := time.Duration(rng.IntN(60))
				s.push(item{t: w, kind: evWake})
				pending = append(pending, item{t: w, seq: seq, kind: evWake})
			default:
				pop()
			}
		}
		for len(pending) > 0 {
			pop()
		}
		_, ok := s.due()
		require.False(t, ok)
		require.False(t, s.dueAt(0), "nothing pending")
	}
}

// TestArrivalSize: an arrival waiting in the list (one a job, all of a
// trace's at the start) keeps no time of its own, 16 bytes.
func TestArrivalSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(arrival{}), uintptr(16))
}

// TestSimJobSize: the simulator's state of a job (one a job, a million in
// a million-job run) keeps nothing the view's job holds once it runs (its
// solo time, its startup), and what only a running attempt needs is kept
// a running attempt (runState), 72 bytes.
func TestSimJobSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(job{}), uintptr(72))
}
