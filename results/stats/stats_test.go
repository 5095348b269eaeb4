package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Known values: scipy.stats 1.10 (ttest_1samp, wilcoxon) on the same data.
func TestPairedT(t *testing.T) {
	for _, tc := range []struct {
		name       string
		d          []float64
		mean, ci95 float64
		p          float64
	}{
		// ttest_1samp([1,2,3,4,5], 0): t = 4.2426, p = 0.0132356.
		{"1..5", []float64{1, 2, 3, 4, 5}, 3, 2.776445 * math.Sqrt(2.5) / math.Sqrt(5), 0.013235599563682695},
		// ttest_1samp([0.3,-0.1,0.5,0.2,0.4,0.1], 0): p = 0.0456591.
		{"six", []float64{0.3, -0.1, 0.5, 0.2, 0.4, 0.1}, 0.2333333, math.NaN(), 0.045659123781411626},
		// ttest_1samp([1.7,1.71,1.69,1.72,1.68], 0): far in the tail, p = 1.7957483810451143e-09.
		{"far tail", []float64{1.7, 1.71, 1.69, 1.72, 1.68}, 1.7, math.NaN(), 1.7957483810451143e-09},
		{"all zero", []float64{0, 0, 0}, 0, 0, 1},
		{"constant", []float64{2, 2}, 2, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := PairedT(tc.d)
			require.Equal(t, len(tc.d), r.N)
			require.InDelta(t, tc.mean, r.Mean, 1e-6)
			if !math.IsNaN(tc.ci95) {
				require.InDelta(t, tc.ci95, r.CI95, 1e-5)
			}
			require.InEpsilon(t, tc.p+1e-300, r.P+1e-300, 1e-6)
		})
	}
	one := PairedT([]float64{3})
	require.Equal(t, 3.0, one.Mean)
	require.True(t, math.IsNaN(one.P) && math.IsNaN(one.CI95), "one pair: no test")
}

func TestWilcoxonKnownValues(t *testing.T) {
	for _, tc := range []struct {
		name          string
		d             []float64
		wplus, wminus float64
		p             float64
		exact         bool
	}{
		// Darwin's Zea mays differences (Fisher), scipy's example:
		// wilcoxon(d) = (24.0, 0.041259765625), exact.
		{"Darwin", []float64{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75}, 96, 24, 0.041259765625, true},
		// Ties: wilcoxon(e, correction=True, method="approx") = (20.5, 0.004791523137686379).
		{"ties", []float64{1, 1, 2, 2, 2, -1, 3, 3, -3, 4, 5, 5, 6, -2, 7, 8, 1, 2}, 150.5, 20.5, 0.004791523137686379, false},
		// Zeros are dropped: the Darwin data with zeros added is the same test.
		{"zeros dropped", []float64{0, 6, 8, 14, 16, 23, 0, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75, 0}, 96, 24, 0.041259765625, true},
		{"all zero", []float64{0, 0}, 0, 0, 1, false},
		{"one of each sign", []float64{1, -2}, 1, 2, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Wilcoxon(tc.d)
			require.Equal(t, tc.wplus, r.WPlus)
			require.Equal(t, tc.wminus, r.WMinus)
			require.InDelta(t, tc.p, r.P, 1e-12)
			require.Equal(t, tc.exact, r.Exact)
		})
	}
}

// Over 50 differences without ties the normal approximation is used:
// scipy's wilcoxon(x, correction=True, method="approx") = (490.0, 0.0017765126640699282).
func TestWilcoxonNormalApproximation(t *testing.T) {
	x := []float64{0.5, -1.2, 0.8, 2.1, -0.3, 1.7, 0.9, -0.6, 1.1, 0.05, -2.2, 1.3, 0.4, 0.7, -0.9, 1.5, 2.6, -0.15, 0.35, 1.05,
		0.45, -1.35, 0.25, 0.95, -0.55, 1.85, 0.65, -0.25, 1.25, 0.15, -1.75, 1.45, 0.55, 0.75, -1.05, 1.65, 2.45, -0.35, 0.85, 1.15,
		0.6, -1.1, 0.2, 1.9, -0.4, 1.6, 0.3, -0.7, 1.2, 0.1, -2.1, 1.4, 0.7, 0.8, -0.8, 1.8, 2.3, -0.2, 0.9, 1.0}
	r := Wilcoxon(x)
	require.False(t, r.Exact)
	require.Equal(t, 490.0, r.WMinus)
	require.InDelta(t, 0.0017765126640699282, r.P, 1e-12)
}

// The exact distribution equals counting the 2^n sign patterns.
func TestExactCDFByEnumeration(t *testing.T) {
	for n := 1; n <= 12; n++ {
		top := n * (n + 1) / 2
		count := make([]int, top+1)
		for mask := range 1 << n {
			s := 0
			for k := range n {
				if mask&(1<<k) != 0 {
					s += k + 1
				}
			}
			count[s]++
		}
		cum := 0
		for w := 0; w <= top; w++ {
			cum += count[w]
			require.InDelta(t, float64(cum)/float64(int(1)<<n), exactCDF(n, w), 1e-15, "n=%d w=%d", n, w)
		}
		require.Equal(t, 0.0, exactCDF(n, -1))
	}
}

func TestRank(t *testing.T) {
	ranks, ties := rank([]float64{3, 1, 4, 1, 5, 9, 2, 6, 5})
	require.Equal(t, []float64{4, 1.5, 5, 1.5, 6.5, 9, 3, 8, 6.5}, ranks)
	require.Equal(t, []float64{2, 2}, ties)
}

// Far in the tail the p-value is tiny, not 0: 300 positive differences
// (ranks tied in 37 groups) give z ≈ 15.0.
func TestWilcoxonFarTail(t *testing.T) {
	d := make([]float64, 300)
	for i := range d {
		d[i] = float64(i%37 + 1)
	}
	r := Wilcoxon(d)
	require.Equal(t, 45150.0, r.WPlus)
	// scipy: wilcoxon(d, correction=True, method="approx").pvalue
	require.InEpsilon(t, 5.990975975862282e-51, r.P, 1e-9)
}

func TestGeoMean(t *testing.T) {
	require.InDelta(t, 2, GeoMean([]float64{1, 4}), 1e-15)
	require.InDelta(t, 0.5, GeoMean([]float64{0.25, 1}), 1e-15)
	require.InDelta(t, 3, GeoMean([]float64{3}), 1e-15)
	for _, xs := range [][]float64{nil, {1, 0}, {1, -2}, {1, math.Inf(1)}, {math.NaN(), 1}} {
		require.True(t, math.IsNaN(GeoMean(xs)), "%v", xs)
	}
}
