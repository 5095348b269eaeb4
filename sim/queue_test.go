package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The event heap pops in (time, sequence) order whatever the pushes.
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var q queue
	var want []item
	seq := uint64(0)
	for range 2000 {
		if len(q) > 0 && rng.IntN(3) == 0 {
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
	require.Equal(t, len(want), len(q))
}
