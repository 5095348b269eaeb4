package policies

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The pending queue keeps submission order whatever the mix of arrivals and
// removals; its head leaves by reslicing and, once the end of its array is
// reached, it moves back to the array's start: a steady stream of arrivals
// and placements from the head allocates nothing.
func TestPendingQueueReusesItsArray(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var v View
	b := NewBooks(&v)
	var want []JobID // the reference, sorted
	for range 2000 {
		id := JobID(rng.IntN(300))
		i, in := slices.BinarySearch(want, id)
		switch {
		case in && rng.IntN(3) == 0: // the head, or another
			id = want[0]
			fallthrough
		case in:
			require.True(t, b.Dequeue(id))
			want = slices.Delete(want, slices.Index(want, id), slices.Index(want, id)+1)
		default:
			b.Enqueue(id)
			want = slices.Insert(want, i, id)
		}
		require.Equal(t, want, v.Queue.AppendTo([]JobID{}))
	}
	next := JobID(1000)
	allocs := testing.AllocsPerRun(1, func() { // all of 1000 steps
		for range 1000 {
			b.Enqueue(next)
			next++
			b.Dequeue(v.Queue.At(0))
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, len(want), v.Queue.Len())
	require.Equal(t, next-1, v.Queue.At(v.Queue.Len()-1))
}

// A job placed on GPUs is listed on each of them and released from each;
// a failed job is queued and listed as failed until it leaves the queue.
func TestBooksKeepGPUsAndFailed(t *testing.T) {
	v := View{GPUs: make([]GPU, 3)}
	b := NewBooks(&v)
	b.Place(4, []int{0, 2})
	b.Place(5, []int{2})
	require.Equal(t, [][]JobID{{4}, nil, {4, 5}}, [][]JobID{v.GPUs[0].Jobs, v.GPUs[1].Jobs, v.GPUs[2].Jobs})
	b.Release(4, []int{0, 2})
	require.Equal(t, [][]JobID{{}, nil, {5}}, [][]JobID{v.GPUs[0].Jobs, v.GPUs[1].Jobs, v.GPUs[2].Jobs})
	require.Equal(t, []JobID{0}, v.GPUs[0].Jobs[:1], "the slot left zeroed")
	require.Equal(t, []JobID{5, 0}, v.GPUs[2].Jobs[:2], "the slot left zeroed")
	b.Place(6, []int{2})
	b.Release(6, []int{2}) // the last listed
	require.Equal(t, []JobID{5, 0}, v.GPUs[2].Jobs[:2], "the slot left zeroed")
	b.Enqueue(1)
	b.Fail(4)
	b.Fail(2)
	require.Equal(t, []JobID{1, 2, 4}, v.Queue.AppendTo(nil))
	require.Equal(t, []JobID{4, 2}, v.Failed)
	require.True(t, b.Dequeue(4))
	require.False(t, b.Dequeue(4))
	require.Equal(t, []JobID{1, 2}, v.Queue.AppendTo(nil))
	require.Equal(t, []JobID{2}, v.Failed)
}
