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
		// tail[d] = tail[d+1] + α·pw[L−2−d]·xs[d+1], summed from the end,
		// the running sum kept in a register.
		tail, xs, pw := b.tail[:L], b.xs[:L], b.pw[:L-1]
		acc := 0.0
		tail[L-1] = acc
		for j, p := range pw { // d = L−2−j
			acc = acc + alpha*p*xs[L-1-j]
			tail[L-2-j] = acc
		}
	}
}

// after returns bounds of the score 0.25·(mean + median + p95 + EWMA) of
// the window after k more samples, each anywhere in [lo, hi], with the
// window holding at most n samples. k must not decrease between calls.
func (b *bounds) after(k, n int, lo, hi float64) (float64, float64) {
	return b.lower(k, n, lo), b.upper(k, n, hi)
}

// lower is after's lower bound alone (the same operations).
func (b *bounds) lower(k, n int, lo float64) float64 {
	size, r, added := b.advance(k, n)
	if r == 0 {
		return lo
	}
	// Order statistic i of the new window is at least the old remaining
	// one at rank i−added (past the end: the lowest of the old values and
	// the new samples' range).
	stat := func(i int) float64 {
		if i-added >= 0 {
			return b.sorted[i-added]
		}
		return min(lo, b.sorted[0])
	}
	quant := func(q float64) float64 {
		pos := q * float64(size-1)
		i := int(math.Floor(pos))
		l0 := stat(i)
		if i >= size-1 {
			return l0
		}
		f := pos - float64(i)
		l1 := stat(i + 1)
		return l0 + f*(l1-l0)
	}
	mean := (b.sum + float64(added)*lo) / float64(size)
	med := quant(0.5)
	p95 := quant(0.95)
	e, w := b.ewma(size, r, added, n)
	return 0.25 * (mean + med + p95 + (w*e + (1-w)*lo))
}

// upper is after's upper bound alone (the same operations).
func (b *bounds) upper(k, n int, hi float64) float64 {
	size, r, added := b.advance(k, n)
	if r == 0 {
		return hi
	}
	// Order statistic i of the new window is at most the old remaining one
	// at rank i (past the end: the highest of the old values and the new
	// samples' range).
	stat := func(i int) float64 {
		if i < r {
			return b.sorted[i]
		}
		return max(hi, b.sorted[r-1])
	}
	quant := func(q float64) float64 {
		pos := q * float64(size-1)
		i := int(math.Floor(pos))
		u0 := stat(i)
		if i >= size-1 {
			return u0
		}
		f := pos - float64(i)
		u1 := stat(i + 1)
		return u0 + f*(u1-u0)
	}
	mean := (b.sum + float64(added)*hi) / float64(size)
	med := quant(0.5)
	p95 := quant(0.95)
	e, w := b.ewma(size, r, added, n)
	return 0.25 * (mean + med + p95 + (w*e + (1-w)*hi))
}

// advance drops the old values that k more samples push out of a window
// of at most n, and returns the window's size then, how many old values
// remain in it and how many new ones it holds.
func (b *bounds) advance(k, n int) (size, r, added int) {
	L := len(b.xs)
	size = min(n, L+k)
	for d := L + k - size; b.drop < d && b.drop < L; b.drop++ {
		x := b.xs[b.drop]
		i := lowerBound(b.sorted, x)
		b.sorted = slices.Delete(b.sorted, i, i+1)
		b.sum -= x
	}
	r = len(b.sorted)
	return size, r, size - r
}

// ewma returns the EWMA e of the old values remaining in a window of size
// (r of them) and the weight w they keep after added new values: the
// window's EWMA is w·e plus (1−w) times a weighted mean of the new values.
func (b *bounds) ewma(size, r, added, n int) (e, w float64) {
	L := len(b.xs)
	d := L - r
	if size == n {
		return b.pw[L-1-d]*b.xs[d] + b.tail[d], b.pw[added]
	}
	// The window is still growing: α depends on its size.
	alpha := 2 / float64(size+1)
	e = b.xs[d]
	for _, x := range b.xs[d+1:] {
		e = alpha*x + (1-alpha)*e
	}
	return e, math.Pow(1-alpha, float64(added))
}
