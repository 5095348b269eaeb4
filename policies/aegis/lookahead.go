// The lookahead: a window stepped through the samples to come, for Refine
// (skip.go).

package aegis

import (
	"math"
	"slices"

	"github.com/aegis-sched/aegis/policies"
)

// lookahead is a GPU's window stepped through the samples to come. It
// keeps, besides the samples and each used signal's sorted values, running
// sums and (for a full window) running EWMAs: approximations of the exact
// terms, within far less than margin of them, that decide a verdict unless
// a score is within margin of its threshold (then the score is computed
// exactly, as a decision computes it).
type lookahead struct {
	future  []policies.Sample // the next samples to step through
	pos     int               // of future
	steps   int               // samples stepped through
	samples []policies.Sample // the window is samples[start:]
	start   int
	sorted  [4][]float64
	use     [4]bool
	n       int        // the window's length when full
	sum     [4]float64 // running sums of the window's values
	ewma    [4]float64 // running EWMAs, valid while the window is full
	alpha   float64    // 2/(n+1)
	pw      float64    // (1−α)^(n−1): the weight of a full window's oldest value
}

// aheadMax is how many seconds a window is stepped through at most before
// its horizon falls back to bounds; aheadChunk how many samples a step of
// Refine takes; aheadSoft how far past the decision Refine steps at most in
// one decision (a window still refining then asks for a decision at the
// second after its last stepped sample and resumes there: stepping far
// ahead is wasted when an event changes the GPU or what the queue asks of
// it first; measured: 64 costs a cluster of 4 servers nothing and saves
// single servers up to a third).
const (
	aheadMax   = 256
	aheadChunk = 16
	aheadSoft  = 64
)

// margin is how close to its threshold an approximate score must come for
// the verdict to be computed exactly: a relative 1e-9, many orders of
// magnitude above the rounding of running sums over a few hundred steps.
const margin = 1e-9

// reset starts the lookahead from window win with its sorted values.
func (a *lookahead) reset(win []policies.Sample, sorted *[4][]float64, use [4]bool, n int) {
	a.samples, a.start, a.use, a.n = append(a.samples[:0], win...), 0, use, n
	a.future, a.pos, a.steps = a.future[:0], 0, 0
	a.alpha = 2 / float64(n+1)
	a.pw = math.Pow(1-a.alpha, float64(n-1))
	for sig := range a.sorted {
		if !use[sig] {
			continue
		}
		a.sorted[sig] = append(a.sorted[sig][:0], sorted[sig]...)
		a.sum[sig] = 0
		for _, y := range a.sorted[sig] {
			a.sum[sig] += y
		}
		if len(win) == n {
			a.ewma[sig] = a.fold(sig)
		}
	}
}

// fold is the EWMA of one signal over the window, as Score computes it.
func (a *lookahead) fold(sig int) float64 { return ewma(a.samples[a.start:], sig) }

// push appends sample x to the window, dropping its oldest value once full.
func (a *lookahead) push(x policies.Sample) {
	full := len(a.samples)-a.start == a.n
	if a.start >= 4*a.n+64 { // keep the buffer short
		a.samples = append(a.samples[:0], a.samples[a.start:]...)
		a.start = 0
	}
	a.samples = append(a.samples, x)
	if !full {
		for sig := range a.sorted {
			if a.use[sig] {
				y := signal(x, sig)
				a.sorted[sig] = slices.Insert(a.sorted[sig], lowerBound(a.sorted[sig], y), y)
				a.sum[sig] += y
				if len(a.samples)-a.start == a.n {
					a.ewma[sig] = a.fold(sig)
				}
			}
		}
		return
	}
	old, next := a.samples[a.start], a.samples[a.start+1]
	a.start++
	for sig := range a.sorted {
		if a.use[sig] {
			yo, y := signal(old, sig), signal(x, sig)
			replace(a.sorted[sig], yo, y)
			a.sum[sig] += y - yo
			a.ewma[sig] = (1-a.alpha)*(a.ewma[sig]-a.pw*yo+a.pw*signal(next, sig)) + a.alpha*y
		}
	}
}

// atLeast reports whether the window's score of signal sig is at least t:
// from the running terms unless they come within margin of t, else
// exactly.
func (a *lookahead) atLeast(sig int, t float64) bool {
	win := a.samples[a.start:]
	srt := a.sorted[sig]
	ewma := a.ewma[sig]
	if len(win) < a.n {
		ewma = a.fold(sig)
	}
	sc := 0.25 * (a.sum[sig]/float64(len(win)) + policies.SortedQuantile(srt, 0.5) + policies.SortedQuantile(srt, 0.95) + ewma)
	m := margin * max(1, math.Abs(t))
	switch {
	case sc >= t+m:
		return true
	case sc < t-m:
		return false
	}
	return sortedScore(win, srt, sig) >= t
}

// replace replaces one occurrence of old in ascending s by x, keeping s
// ascending.
func replace(s []float64, old, x float64) {
	i := lowerBound(s, old)
	for ; i+1 < len(s) && s[i+1] < x; i++ {
		s[i] = s[i+1]
	}
	for ; i > 0 && s[i-1] > x; i-- {
		s[i] = s[i-1]
	}
	s[i] = x
}
