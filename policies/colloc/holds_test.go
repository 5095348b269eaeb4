package colloc

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// jobGPUs keeps the same GPU lists as a map by job would, for any job id
// (negative ones and those past the array in its map), with its lists
// reused after a job's end and everything forgotten at a reset.
func TestJobGPUsAnyID(t *testing.T) {
	ids := []policies.JobID{0, 1, 2, 7, 1000, 5000, maxDenseJob - 1, maxDenseJob, maxDenseJob + 3, -1, -42, 1 << 40}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 9))
		var x jobGPUs
		want := map[policies.JobID][]int{}
		for step := range 500 {
			id := ids[rng.IntN(len(ids))]
			switch r := rng.IntN(10); {
			case r == 0:
				x.reset()
				clear(want)
			case r < 5:
				if _, ok := want[id]; !ok {
					gpus := rng.Perm(8)[:1+rng.IntN(4)]
					x.add(id, gpus)
					want[id] = slices.Clone(gpus)
					gpus[0] = -7 // add copies
				}
			default:
				if i := x.get(id); i >= 0 {
					x.drop(id, i)
				}
				delete(want, id)
			}
			for _, id := range ids {
				i := x.get(id)
				gpus, ok := want[id]
				require.Equal(t, ok, i >= 0, "seed %d step %d job %d", seed, step, id)
				if ok {
					require.Equal(t, gpus, x.lists[i].gpus, "seed %d step %d job %d", seed, step, id)
				}
			}
		}
		require.LessOrEqual(t, len(x.lists), len(ids), "seed %d: lists not reused", seed)
	}
}
