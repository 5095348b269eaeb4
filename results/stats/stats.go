// Package stats holds the statistics that compare results: the mean of
// paired differences with its Student-t confidence interval and p-value,
// the Wilcoxon signed-rank test (exact or normal approximation), and the
// geometric mean of ratios (normalized.csv's geomean rows, the fidelity
// report's headline).
package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Paired summarizes paired differences d_i = b_i − a_i with a paired
// Student-t test: their mean, the half-width of its 95 % confidence
// interval and the two-sided p-value of "mean 0". With fewer than two
// differences CI95 and P are NaN; when all differences are equal (zero
// spread) CI95 is 0 and P is 1 for a zero mean, 0 otherwise.
type Paired struct {
	N          int
	Mean, CI95 float64
	P          float64
}

// PairedT tests the mean of the paired differences d against 0.
func PairedT(d []float64) Paired {
	n := len(d)
	r := Paired{N: n, Mean: math.NaN(), CI95: math.NaN(), P: math.NaN()}
	if n == 0 {
		return r
	}
	var sum float64
	for _, x := range d {
		sum += x
	}
	r.Mean = sum / float64(n)
	if n < 2 {
		return r
	}
	var ss float64
	for _, x := range d {
		ss += (x - r.Mean) * (x - r.Mean)
	}
	se := math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	r.CI95 = t.Quantile(0.975) * se
	switch {
	case se == 0 && r.Mean == 0:
		r.P = 1
	case se == 0:
		r.P = 0
	default:
		r.P = 2 * t.CDF(-math.Abs(r.Mean)/se)
	}
	return r
}

// Signed is the result of a Wilcoxon signed-rank test.
type Signed struct {
	// N is the number of non-zero differences (zeros are dropped,
	// Wilcoxon's method).
	N int
	// WPlus is the sum of the ranks of the positive differences (ties get
	// their average rank), WMinus that of the negative ones.
	WPlus, WMinus float64
	// P is the two-sided p-value of "the differences are symmetric about
	// 0"; 1 when N is 0.
	P float64
	// Exact says P is from the exact distribution of W+ (N ≤ ExactMax
	// and no ties), not the normal approximation.
	Exact bool
}

// ExactMax is the largest N for which Wilcoxon computes the exact p-value.
const ExactMax = 50

// Wilcoxon runs the two-sided Wilcoxon signed-rank test on paired
// differences d. Zeros are dropped. Without ties and with at most ExactMax
// differences the p-value is exact: 2·P(W ≤ min(W+, W−)) under the null,
// where each of the 2^N sign patterns is equally likely, capped at 1.
// Otherwise it is the normal approximation with the tie-corrected variance
// N(N+1)(2N+1)/24 − Σ(t³−t)/48 and a continuity correction of ½.
func Wilcoxon(d []float64) Signed {
	var abs []float64
	var pos []bool
	for _, x := range d {
		if x != 0 && !math.IsNaN(x) {
			abs, pos = append(abs, math.Abs(x)), append(pos, x > 0)
		}
	}
	n := len(abs)
	r := Signed{N: n, P: 1}
	if n == 0 {
		return r
	}
	ranks, ties := rank(abs)
	for i, rk := range ranks {
		if pos[i] {
			r.WPlus += rk
		} else {
			r.WMinus += rk
		}
	}
	w := min(r.WPlus, r.WMinus)
	if n <= ExactMax && len(ties) == 0 {
		r.Exact = true
		r.P = min(1, 2*exactCDF(n, int(w)))
		return r
	}
	fn := float64(n)
	mean := fn * (fn + 1) / 4
	v := fn * (fn + 1) * (2*fn + 1) / 24
	for _, t := range ties {
		v -= (t*t*t - t) / 48
	}
	if v <= 0 {
		return r // every difference tied at one rank: no evidence either way
	}
	// Two-sided: 2·(1 − Φ(z)) = erfc(z/√2), exact in the far tail too.
	z := (mean - w - 0.5) / math.Sqrt(v)
	r.P = min(1, math.Erfc(max(z, 0)/math.Sqrt2))
	return r
}

// rank returns the ranks of xs (1-based, ties averaged) and the sizes of
// the groups of ties.
func rank(xs []float64) (ranks, ties []float64) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	ranks = make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = avg
		}
		if j > i {
			ties = append(ties, float64(j-i+1))
		}
		i = j + 1
	}
	return ranks, ties
}

// exactCDF is P(W+ ≤ w) for n differences without ties under the null:
// the number of subsets of {1, …, n} with sum at most w, over 2^n.
func exactCDF(n, w int) float64 {
	top := n * (n + 1) / 2
	if w >= top {
		return 1
	}
	if w < 0 {
		return 0
	}
	// count[s]: subsets of {1..k} summing to s, built up k by k.
	count := make([]float64, top+1)
	count[0] = 1
	for k := 1; k <= n; k++ {
		for s := top; s >= k; s-- {
			count[s] += count[s-k]
		}
	}
	var c float64
	for s := 0; s <= w; s++ {
		c += count[s]
	}
	return c / math.Pow(2, float64(n))
}

// GeoMean is the geometric mean of xs, the exponential of their logs'
// mean summed in order; NaN when xs is empty or an x is not positive and
// finite.
func GeoMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return math.NaN()
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}
