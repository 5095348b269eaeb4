// Bounds of a window's score after k more samples, each anywhere in the
// samples' range, for flipAfter (skip.go).

package aegis

import (
	"math"
	"slices"

	"github.com/aegis-sched/aegis/policies"
)

// bounds bounds one signal's window score after more samples arrive.
type bounds struct {
	xs     []float64 // the window's values, oldest first
	sorted []float64 // the values still in the window, ascending
	sum    float64   // their sum
	drop   int       // oldest values dropped so far
	// For a full window (n samples, α = 2/(n+1)): pw[m] = (1−α)^m and
	// tail[d] = Σ_{i>d} α(1−α)^(L−1−i)·xs[i], so that the EWMA of xs[d:]
	// is pw[L−1−d]·xs[d] + tail[d].
	pw, tail []float64
	pwN      int // the n pw was computed for
}

func (b *bounds) reset(win []policies.Sample, sorted []float64, sig, n int) {
	b.xs, b.sum, b.drop = signals(b.xs[:0], win, sig), 0, 0
	for _, v := range b.xs {
		b.sum += v
	}
	b.sorted = append(b.sorted[:0], sorted...)
	L := len(b.xs)
	alpha := 2 / float64(n+1)
	if b.pwN != n || len(b.pw) != max(n, L)+1 { // the powers depend on n alone (L <= n)
		b.pw, b.pwN = append(b.pw[:0], 1), n
		for m := 1; m <= max(n, L); m++ {
			b.pw = append(b.pw, b.pw[m-1]*(1-alpha))
		}
	}
	b.tail = slices.Grow(b.tail[:0], L)[:L]
	if L > 0 {
		b.tail[L-1] = 0
		for d := L - 2; d >= 0; d-- {
			b.tail[d] = b.tail[d+1] + alpha*b.pw[L-2-d]*b.xs[d+1]
		}
	}
}

// after returns bounds of the score 0.25·(mean + median + p95 + EWMA) of
// the window after k more samples, each anywhere in [lo, hi], with the
// window holding at most n samples. k must not decrease between calls.
func (b *bounds) after(k, n int, lo, hi float64) (float64, float64) {
	L := len(b.xs)
	size := min(n, L+k)
	for d := L + k - size; b.drop < d && b.drop < L; b.drop++ {
		x := b.xs[b.drop]
		i := lowerBound(b.sorted, x)
		b.sorted = slices.Delete(b.sorted, i, i+1)
		b.sum -= x
	}
	r := len(b.sorted)
	added := size - r
	if r == 0 {
		return lo, hi
	}
	// Order statistic i of the new window lies between the old remaining
	// ones at ranks i−added and i (past the ends: the lowest or highest of
	// the old values and the new samples' range).
	stat := func(i int) (float64, float64) {
		l, u := min(lo, b.sorted[0]), max(hi, b.sorted[r-1])
		if i-added >= 0 {
			l = b.sorted[i-added]
		}
		if i < r {
			u = b.sorted[i]
		}
		return l, u
	}
	quant := func(q float64) (float64, float64) {
		pos := q * float64(size-1)
		i := int(math.Floor(pos))
		l0, u0 := stat(i)
		if i >= size-1 {
			return l0, u0
		}
		f := pos - float64(i)
		l1, u1 := stat(i + 1)
		return l0 + f*(l1-l0), u0 + f*(u1-u0)
	}
	meanL := (b.sum + float64(added)*lo) / float64(size)
	meanU := (b.sum + float64(added)*hi) / float64(size)
	medL, medU := quant(0.5)
	p95L, p95U := quant(0.95)
	// EWMA of the remaining old values, then added new ones.
	var e, w float64
	if d := L - r; size == n {
		e = b.pw[L-1-d]*b.xs[d] + b.tail[d]
		w = b.pw[added]
	} else { // the window is still growing: α depends on its size
		alpha := 2 / float64(size+1)
		e = b.xs[d]
		for _, x := range b.xs[d+1:] {
			e = alpha*x + (1-alpha)*e
		}
		w = math.Pow(1-alpha, float64(added))
	}
	ewL, ewU := w*e+(1-w)*lo, w*e+(1-w)*hi
	return 0.25 * (meanL + medL + p95L + ewL), 0.25 * (meanU + medU + p95U + ewU)
}
