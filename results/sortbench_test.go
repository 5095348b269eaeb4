package results

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkSortFloats1M sorts a million job times (exponential, seconds
// to days) as a large run's summary does, with its scratch made once.
func BenchmarkSortFloats1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, 1<<20)
	for i := range src {
		src[i] = rng.ExpFloat64() * 3600
	}
	xs := make([]float64, len(src))
	scratch := make([]uint64, 2*len(src))
	for b.Loop() {
		copy(xs, src)
		sortFloatsIn(xs, scratch)
	}
	if !slices.IsSorted(xs) {
		b.Fatal("not sorted")
	}
}
