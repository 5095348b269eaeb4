package policies

import (
	"math"
	"slices"
)

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of xs by linear interpolation
// between closest ranks (the "type 7" definition: position q·(n−1) in the
// sorted data). It is the one percentile definition used throughout aegis.
// It returns NaN for no data. xs is not modified.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return SortedQuantile(s, q)
}

// SortedQuantile is Quantile for data already sorted ascending.
func SortedQuantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(s)-1)
	i := int(math.Floor(pos))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i] + f*(s[i+1]-s[i])
}

// Mean returns the arithmetic mean of xs, NaN for no data.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Score is AEGIS's robust pressure score of a window of samples:
// 0.25·(mean + median + p95 + EWMA), the EWMA with α = 2/(n+1) run oldest to
// newest and seeded with the oldest sample. It returns 0 for no data.
// buf is scratch space (may be nil) to avoid allocation.
func Score(xs, buf []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append(buf[:0], xs...)
	SortFloats(s)
	return SortedScore(s, EWMA(xs))
}

// EWMA is Score's exponentially weighted moving average of a non-empty
// window xs: α = 2/(n+1), run oldest to newest and seeded with the oldest
// value.
func EWMA(xs []float64) float64 {
	alpha := 2 / float64(len(xs)+1)
	e := xs[0]
	for _, x := range xs[1:] {
		e = alpha*x + (1-alpha)*e
	}
	return e
}

// SortedScore is Score of a non-empty window from its values sorted
// ascending and its EWMA.
func SortedScore(sorted []float64, ewma float64) float64 {
	return 0.25 * (Mean(sorted) + SortedQuantile(sorted, 0.5) + SortedQuantile(sorted, 0.95) + ewma)
}

// SortFloats sorts s ascending: insertion sort for short windows (faster
// there than the general sort), slices.Sort otherwise. No NaNs expected.
func SortFloats(s []float64) {
	if len(s) > 64 {
		slices.Sort(s)
		return
	}
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i
		for ; j > 0 && s[j-1] > x; j-- {
			s[j] = s[j-1]
		}
		s[j] = x
	}
}
