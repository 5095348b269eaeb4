// The telemetry window kept across decisions (slider), so that a decision
// reads only the samples taken since the last one.

package aegis

import (
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// slider is one GPU's telemetry window kept across decisions: on telemetry
// that samples every second (policies.SteadyTelemetry) each decision reads
// only the samples taken since the last one and updates the window's sorted
// values in place; otherwise, or when the anchor moves, it is rebuilt. A
// signal's sorted values are made only when asked for (sortedOf): a
// verdict often needs only the SMACT score.
type slider struct {
	ok      bool
	last    time.Duration // the newest whole second the window covers
	anchor  time.Duration
	samples []policies.Sample // the window, oldest first
	sorted  [4][]float64      // each signal's values in the window, ascending, where have
	have    [4]bool
	buf     []policies.Sample // scratch
	// merge's scratch: the new and the dropped values, and the next
	// sorted array.
	add, gone, spare []float64
	use              [4]bool // the signals whose sorted values are kept
}

// lowerBound is slices.BinarySearch's position of x in ascending s (the
// first index whose value is not below x), for values without NaNs: the
// halving decides by a conditional move rather than a branch, which the
// window's values (noise) would mispredict half the time.
func lowerBound(s []float64, x float64) int {
	if len(s) == 0 {
		return 0
	}
	base, n := 0, len(s)
	for n > 1 {
		half := n / 2
		if s[base+half] < x {
			base += half
		}
		n -= half
	}
	if s[base] < x {
		base++
	}
	return base
}

// resortAbove is how many new samples a kept window's sorted values take
// one by one; with more, sorting the window again when asked costs less.
const resortAbove = 8

// mergeAbove is how many new samples a kept window's sorted values take by
// a merge (merge); with more, sorting the window again when asked costs
// less.
const mergeAbove = 16

// merge brings signal sig's sorted values up to date after s.buf's samples
// were appended to the window and before its drop oldest ones are removed:
// the new values and the dropped ones are sorted on their own, and one pass
// over the kept values leaves out the dropped ones and merges in the new.
// The result is the window's values in ascending order, as sorting them
// gives (TestSliderMatchesRebuiltWindow).
func (s *slider) merge(sig, drop int) {
	add := signals(s.add[:0], s.buf, sig)
	policies.SortFloats(add)
	gone := signals(s.gone[:0], s.samples[:drop], sig)
	policies.SortFloats(gone)
	old, out := s.sorted[sig], s.spare[:0]
	j, k := 0, 0
	for _, x := range old {
		if j < len(gone) && gone[j] == x { // one of the dropped values
			j++
			continue
		}
		for k < len(add) && add[k] < x {
			out = append(out, add[k])
			k++
		}
		out = append(out, x)
	}
	out = append(out, add[k:]...)
	s.sorted[sig], s.spare, s.add, s.gone = out, old[:0], add, gone
}

// sortedOf returns signal sig's values in the window, ascending (sig must
// be one the slider keeps: use).
func (s *slider) sortedOf(sig int) []float64 {
	if !s.have[sig] {
		srt := signals(s.sorted[sig][:0], s.samples, sig)
		policies.SortFloats(srt)
		s.sorted[sig], s.have[sig] = srt, true
	}
	return s.sorted[sig]
}

// sortAll makes the sorted values of every signal the slider keeps.
func (s *slider) sortAll() *[4][]float64 {
	for sig, ok := range s.use {
		if ok {
			s.sortedOf(sig)
		}
	}
	return &s.sorted
}

func (s *slider) update(v *policies.View, g, n int, anchored bool) {
	var anchor time.Duration
	if anchored {
		for _, id := range v.GPUs[g].Jobs {
			if j := v.Job(id); j.Active {
				anchor = max(anchor, j.ActiveAt)
			}
		}
	}
	_, steady := v.Telemetry.(policies.SteadyTelemetry)
	k := v.Now.Truncate(time.Second)
	m := int((k - s.last) / time.Second)
	if !steady || !s.ok || anchor != s.anchor || m >= n || m < 0 {
		s.samples = policies.Window(v, g, n, anchored, s.samples)
		s.have = [4]bool{}
		s.ok, s.last, s.anchor = steady, k, anchor
		return
	}
	if m == 0 {
		return
	}
	s.buf = v.Telemetry.Samples(s.buf[:0], g, m)
	s.samples = append(s.samples, s.buf...)
	drop := max(0, len(s.samples)-n) // at most len(s.buf)
	for sig := range s.sorted {
		if !s.have[sig] {
			continue
		}
		if len(s.buf) > mergeAbove {
			s.have[sig] = false // sorted again when asked
			continue
		}
		if len(s.buf) > resortAbove {
			s.merge(sig, drop)
			continue
		}
		// The i-th new value takes the place of the i-th dropped one,
		// while there are; the rest are inserted.
		srt := s.sorted[sig]
		for i, x := range s.buf {
			y := signal(x, sig)
			if i < drop {
				replace(srt, signal(s.samples[i], sig), y)
				continue
			}
			srt = slices.Insert(srt, lowerBound(srt, y), y)
		}
		s.sorted[sig] = srt
	}
	if drop > 0 {
		s.samples = append(s.samples[:0], s.samples[drop:]...)
	}
	s.last = k
}
