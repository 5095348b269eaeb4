package jobslots

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Table is a map from id to slot for any id: in the array, at its edge,
// past it and negative, set, overwritten and forgotten in random order.
func TestTableIsAMap(t *testing.T) {
	ids := []int{0, 1, 2, 7, 1000, 5000, MaxDense - 1, MaxDense, MaxDense + 3, -1, -42, 1 << 40}
	var x Table
	want := map[int]int32{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		id := ids[r.IntN(len(ids))]
		if s := int32(r.IntN(40)) - 10; s < 0 {
			x.Set(id, s)
			delete(want, id)
		} else {
			x.Set(id, s)
			want[id] = s
		}
		for _, id := range ids {
			s, ok := want[id]
			if !ok {
				s = -1
			}
			require.Equal(t, s, x.Get(id), "id %d", id)
		}
	}
}
