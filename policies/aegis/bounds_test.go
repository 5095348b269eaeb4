package aegis

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// slide returns the window after appending xs, keeping at most n samples.
func slide(win []float64, n int, xs ...float64) []float64 {
	w := append(append([]float64(nil), win...), xs...)
	if len(w) > n {
		w = w[len(w)-n:]
	}
	return w
}

func samples(xs []float64) []policies.Sample {
	out := make([]policies.Sample, len(xs))
	for i, x := range xs {
		out[i] = policies.Sample{SMACT: x, SMOCC: x, DRAMA: x, UtilPct: 100 * x}
	}
	return out
}

// The bounds contain the score of every window the future can bring: random
// windows, random continuations (extremes included), growing and full.
func TestBoundsContainEveryFutureScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		win := make([]float64, 1+rng.IntN(n))
		for i := range win {
			win[i] = rng.Float64()
		}
		var b bounds
		b.reset(samples(win), smact, n)
		var future []float64
		for k := 1; k <= len(win)+n+2; k++ {
			x := rng.Float64()
			switch rng.IntN(3) {
			case 0:
				x = 0
			case 1:
				x = 1
			}
			future = append(future, x)
			lo, hi := b.after(k, n, 0, 1)
			got := policies.Score(slide(win, n, future...), nil)
			require.GreaterOrEqual(t, got, lo-1e-12, "trial %d k %d", trial, k)
			require.LessOrEqual(t, got, hi+1e-12, "trial %d k %d", trial, k)
		}
	}
}

// flipAfter is exact where the worst case is obvious: a full window of
// saturated samples, rejected until enough zero samples arrive.
func TestFlipAfterExactOnSaturatedWindow(t *testing.T) {
	const n = 30
	full := make([]float64, n)
	for i := range full {
		full[i] = 1
	}
	// The first k at which k zero samples bring SMACT's score under τ1.
	want := 0
	for k := 1; k <= n; k++ {
		zeros := make([]float64, k)
		if policies.Score(slide(full, n, zeros...), nil) < 0.65 {
			want = k
			break
		}
	}
	require.Positive(t, want)
	p := NewWith(DefaultConfig())
	p.win = [][]policies.Sample{samples(full)}
	require.Equal(t, want, p.flipAfter(nil, 0, true))
	// An admitted empty-looking GPU (all zeros) can be rejected only once
	// enough saturated samples arrive.
	p.win[0] = samples(make([]float64, n))
	k := p.flipAfter(nil, 0, false)
	require.Positive(t, k)
	ones := make([]float64, k-1)
	for i := range ones {
		ones[i] = 1
	}
	require.Less(t, policies.Score(slide(make([]float64, n), n, ones...), nil), 0.65)
}
