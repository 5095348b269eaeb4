package aegis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
)

// slide returns the window after appending xs, keeping at most n samples.
func slide(win []float64, n int, xs ...float64) []float64 {
	w := append(append([]float64(nil), win...), xs...)
	if len(w) > n {
		w = w[len(w)-n:]
	}
	return w
}

func sortedCopy(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	policies.SortFloats(s)
	return s
}

// setWindow gives p's GPU 0 a window with xs in every signal (util in %).
func setWindow(p *Policy, xs []float64) {
	w := samples(xs)
	p.win = [][]policies.Sample{w}
	sl := slider{samples: w}
	for sig := range sl.sorted {
		for _, x := range w {
			sl.sorted[sig] = append(sl.sorted[sig], signal(x, sig))
		}
		policies.SortFloats(sl.sorted[sig])
	}
	p.sl = []slider{sl}
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
		b.reset(samples(win), sortedCopy(win), smact, n)
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

// lower and upper give, bit for bit, the bounds the one function computing
// both gave (afterRef, after resetRef), on windows growing and full, with ranges inside
// and outside the window's values.
func TestLowerUpperAreAfter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 500 {
		n := 1 + rng.IntN(40)
		win := make([]float64, 1+rng.IntN(n))
		for i := range win {
			win[i] = rng.Float64()
		}
		lo, hi := rng.Float64()*0.5, 0.5+rng.Float64()*0.5
		var b, l, u bounds
		resetRef(&b, samples(win), sortedCopy(win), smact, n)
		l.reset(samples(win), sortedCopy(win), smact, n)
		u.reset(samples(win), sortedCopy(win), smact, n)
		for k := 1; k <= len(win)+n+2; k += 1 + rng.IntN(3) {
			wl, wu := afterRef(&b, k, n, lo, hi)
			require.Equal(t, math.Float64bits(wl), math.Float64bits(l.lower(k, n, lo)), "trial %d k %d", trial, k)
			require.Equal(t, math.Float64bits(wu), math.Float64bits(u.upper(k, n, hi)), "trial %d k %d", trial, k)
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
	setWindow(p, full)
	require.Equal(t, want, p.flipAfter(nil, 0, p.win[0], &p.sl[0].sorted, nil, true))
	// An admitted empty-looking GPU (all zeros) can be rejected only once
	// enough saturated samples arrive.
	setWindow(p, make([]float64, n))
	k := p.flipAfter(nil, 0, p.win[0], &p.sl[0].sorted, nil, false)
	require.Positive(t, k)
	ones := make([]float64, k-1)
	for i := range ones {
		ones[i] = 1
	}
	require.Less(t, policies.Score(slide(make([]float64, n), n, ones...), nil), 0.65)
}

// steady serves a deterministic sample for every whole second up to Now.
type steady struct{ now *time.Duration }

func (s steady) Samples(dst []policies.Sample, _, n int) []policies.Sample {
	last := int64(*s.now / time.Second)
	for k := max(last-int64(n)+1, 0); k <= last; k++ {
		x := float64((k*7919)%101) / 100
		dst = append(dst, policies.Sample{At: time.Duration(k) * time.Second, SMACT: x, SMOCC: 1 - x, DRAMA: x * x, UtilPct: 100 * x})
	}
	return dst
}
func (steady) UsedMiBChangesAt(int) time.Duration { return 0 }
func (steady) SampleRange(int) (lo, hi policies.Sample) {
	return lo, policies.Sample{SMACT: 1, SMOCC: 1, DRAMA: 1, UtilPct: 100}
}

// The window kept across decisions (new samples only, sorted values updated
// in place, a signal's sorted values made only when its score is asked)
// scores exactly as one rebuilt from scratch, as decisions come at random
// gaps, the anchor moves and each decision asks for some of the signals.
func TestSliderMatchesRebuiltWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var now time.Duration
	v := &policies.View{Telemetry: steady{&now}, GPUs: []policies.GPU{{Jobs: []policies.JobID{0}}},
		Jobs: []policies.Job{{State: policies.Running, On: []int{0}, Active: true}}}
	p := NewWith(DefaultConfig())
	p.Schedule(&policies.View{GPUs: v.GPUs}) // sizes the per-GPU state
	for range 500 {
		now += time.Duration(rng.IntN(40_000)) * time.Millisecond
		if rng.IntN(20) == 0 {
			v.Jobs[0].ActiveAt = now - time.Duration(rng.IntN(20_000))*time.Millisecond
		}
		v.Now = now
		clear(p.memoDone)
		clear(p.winDone)
		win := policies.Window(v, 0, p.cfg.Window, true, nil)
		for sig := range 4 {
			if rng.IntN(3) == 0 {
				continue // not asked in this decision
			}
			var xs []float64
			for _, x := range win {
				xs = append(xs, signal(x, sig))
			}
			require.Equal(t, policies.Score(xs, nil), p.score(v, 0, sig), "t=%v signal %d", now, sig)
		}
	}
}

// A window advanced by more samples than it takes one by one but at most
// mergeAbove keeps its sorted values (merge), and they are the window's
// values sorted; past mergeAbove they are made again when asked.
func TestSliderMergeKeepsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var now time.Duration
	v := &policies.View{Telemetry: steady{&now}, GPUs: []policies.GPU{{Jobs: []policies.JobID{0}}},
		Jobs: []policies.Job{{State: policies.Running, On: []int{0}, Active: true}}}
	var sl slider
	sl.use = [4]bool{true, true, true, true}
	merged := 0
	for range 400 {
		prev := now
		now += time.Duration(1+rng.IntN(24))*time.Second + time.Duration(rng.IntN(1000))*time.Millisecond
		v.Now = now
		kept := sl.have
		sl.update(v, 0, 30, true)
		want := policies.Window(v, 0, 30, true, nil)
		require.Equal(t, want, sl.samples)
		for sig := range 4 {
			if m := int(now/time.Second) - int(prev/time.Second); kept[sig] && m > resortAbove && m <= mergeAbove && len(want) == 30 {
				require.True(t, sl.have[sig], "merged, not dropped: %d new samples", m)
				merged++
			}
			xs := signals(nil, want, sig)
			policies.SortFloats(xs)
			require.Equal(t, xs, sl.sortedOf(sig), "t=%v signal %d", now, sig)
		}
	}
	require.Positive(t, merged)
}

// foreseen is steady telemetry that also tells its future samples
// (policies.Foresight).
type foreseen struct{ steady }

func (f foreseen) Ahead(dst []policies.Sample, _ int, after time.Duration, n int) []policies.Sample {
	later := after + time.Duration(n)*time.Second
	all := steady{&later}.Samples(nil, 0, n)
	return append(dst, all...)
}
func (foreseen) Regime(int) uint64                  { return 1 }
func (foreseen) RegimeSince(int) time.Duration      { return 0 }
func (foreseen) UsedMiBChangesAt(int) time.Duration { return colloc.Never }

// bruteVerdict is the pressure filter's verdict on the window rebuilt at
// time at.
func bruteVerdict(p *Policy, v *policies.View, at time.Duration) bool {
	w := *v
	w.Now = at
	w.Telemetry = steady{&at}
	win := policies.Window(&w, 0, p.cfg.Window, true, nil)
	var sc [4]float64
	for sig := range 3 {
		var xs []float64
		for _, x := range win {
			xs = append(xs, signal(x, sig))
		}
		sc[sig] = policies.Score(xs, nil)
	}
	t := p.cfg.Thresholds
	return sc[smact] >= t[0] && (sc[smocc] >= t[1] || sc[drama] >= t[2])
}

// With telemetry that foresees its samples, the filter's horizon is the
// exact second its verdict first changes when that is within aheadSoft seconds
// (not the bounds' earlier worst case), and the verdict holds at every
// second before it.
func TestFilterHorizonExactWithForesight(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var now time.Duration
	cfg := DefaultConfig()
	cfg.Thresholds = [3]float64{0.5, 0.5, 0.3} // near the samples' scores: flips happen
	exact := 0
	for range 300 {
		now += time.Duration(1+rng.IntN(40_000)) * time.Millisecond
		v := &policies.View{Now: now, Pressure: true, Telemetry: foreseen{steady{&now}},
			GPUs: []policies.GPU{{Jobs: []policies.JobID{0}, CapacityMiB: 40960}},
			Jobs: []policies.Job{{State: policies.Running, On: []int{0}, Active: true, ActiveAt: now - time.Duration(rng.IntN(60))*time.Second},
				{ID: 1, GPUs: 1, State: policies.Pending}}}
		p := NewWith(cfg)
		p.Schedule(&policies.View{GPUs: v.GPUs}) // sizes the per-GPU state
		reason := p.Admit(v, &v.Jobs[1], 0)
		p.ChangesAt(v, &v.Jobs[1], 0) // as the scheduler asks, before Refine
		until := p.Refine(v, colloc.Never)
		if reason == DeferWindow {
			continue
		}
		reject := reason == DeferPressure
		require.Equal(t, bruteVerdict(p, v, now), reject)
		sec := now.Truncate(time.Second)
		end := min(until, sec+2*aheadMax*time.Second)
		for s := sec + time.Second; s < end; s += time.Second {
			require.Equal(t, reject, bruteVerdict(p, v, s), "now %v: verdict changes at %v, before the horizon %v", now, s, until)
		}
		if until < now+aheadSoft*time.Second {
			require.NotEqual(t, reject, bruteVerdict(p, v, until), "now %v: horizon %v is not a change", now, until)
			exact++
		}
	}
	require.Greater(t, exact, 10, "horizons found exactly")
}

// The lookahead's window, stepped sample by sample with running sums and
// EWMAs, keeps the sorted values a rebuilt window has and answers every
// threshold comparison as the exact score does, thresholds on the score
// itself and within rounding of it included.
func TestLookaheadMatchesExactScores(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		n := 1 + rng.IntN(40)
		win := samples(make([]float64, 1+rng.IntN(n)))
		for i := range win {
			win[i] = samples([]float64{rng.Float64()})[0]
		}
		var sorted [4][]float64
		for sig := range sorted {
			for _, x := range win {
				sorted[sig] = append(sorted[sig], signal(x, sig))
			}
			policies.SortFloats(sorted[sig])
		}
		var a lookahead
		a.reset(win, &sorted, [4]bool{true, true, true, true}, n)
		for step := range 200 {
			a.push(samples([]float64{rng.Float64()})[0])
			w := a.samples[a.start:]
			require.LessOrEqual(t, len(w), n)
			for sig := range 4 {
				var xs []float64
				for _, x := range w {
					xs = append(xs, signal(x, sig))
				}
				require.Equal(t, sortedCopy(xs), a.sorted[sig], "trial %d step %d", trial, step)
				exact := policies.Score(xs, nil)
				for _, th := range []float64{exact, math.Nextafter(exact, 2), math.Nextafter(exact, -1), exact + 1e-7, exact - 1e-7, rng.Float64() * 100} {
					require.Equal(t, exact >= th, a.atLeast(sig, th), "trial %d step %d signal %d threshold %v", trial, step, sig, th)
				}
			}
		}
	}
}

// regimed is foreseen telemetry whose regime the test sets.
type regimed struct {
	foreseen
	regime *uint64
}

func (r regimed) Regime(int) uint64 { return *r.regime }

// A cached verdict is not reused once the telemetry's regime changed (a job's
// rate can change its GPU's samples while the GPU's jobs stay the same).
func TestVerdictCacheFollowsRegime(t *testing.T) {
	now := 100 * time.Second
	regime := uint64(1)
	v := &policies.View{Now: now, Pressure: true, Telemetry: regimed{foreseen{steady{&now}}, &regime},
		GPUs: []policies.GPU{{Jobs: []policies.JobID{0}, CapacityMiB: 40960}},
		Jobs: []policies.Job{{State: policies.Running, On: []int{0}, Active: true},
			{ID: 1, GPUs: 1, State: policies.Pending}}}
	p := NewWith(DefaultConfig())
	p.Schedule(&policies.View{GPUs: v.GPUs}) // sizes the per-GPU state
	p.Admit(v, &v.Jobs[1], 0)
	p.ChangesAt(v, &v.Jobs[1], 0)
	p.Refine(v, colloc.Never)
	require.Equal(t, uint64(1), p.verdicts[0].regime)
	until := p.verdicts[0].changesAt
	require.Greater(t, until, now+time.Second)
	regime = 2
	clear(p.winDone)
	p.Admit(v, &v.Jobs[1], 0)
	require.Equal(t, uint64(2), p.verdicts[0].regime, "the verdict was computed again")
}

// ranged is foreseen telemetry whose every sample is x, within the range
// [lo, hi] since the regime began at since; it counts Samples calls.
type ranged struct {
	x, lo, hi policies.Sample
	since     time.Duration
	now       *time.Duration
	reads     *int
}

func (r ranged) Samples(dst []policies.Sample, _, n int) []policies.Sample {
	*r.reads++
	last := int64(*r.now / time.Second)
	for k := max(last-int64(n)+1, 0); k <= last; k++ {
		x := r.x
		x.At = time.Duration(k) * time.Second
		dst = append(dst, x)
	}
	return dst
}
func (r ranged) Ahead(dst []policies.Sample, _ int, after time.Duration, n int) []policies.Sample {
	for k := range n {
		x := r.x
		x.At = after + time.Duration(k+1)*time.Second
		dst = append(dst, x)
	}
	return dst
}
func (ranged) UsedMiBChangesAt(int) time.Duration         { return colloc.Never }
func (r ranged) SampleRange(int) (lo, hi policies.Sample) { return r.lo, r.hi }
func (ranged) Regime(int) uint64                          { return 1 }
func (r ranged) RegimeSince(int) time.Duration            { return r.since }

// A verdict every window of the regime's range gives is known without
// reading the window (and holds until something changes); the window is
// read when the range straddles a threshold or the window reaches back
// before the regime began.
func TestSettledVerdictReadsNoWindow(t *testing.T) {
	low := policies.Sample{SMACT: 0.2, SMOCC: 0.2, DRAMA: 0.2}
	high := policies.Sample{SMACT: 0.8, SMOCC: 0.6, DRAMA: 0.6}
	for _, tc := range []struct {
		name      string
		x, lo, hi policies.Sample
		since     time.Duration
		reason    colloc.Reason
		reads     bool
	}{
		{"light", low, policies.Sample{SMACT: 0.1, SMOCC: 0.1, DRAMA: 0.1}, policies.Sample{SMACT: 0.3, SMOCC: 0.3, DRAMA: 0.3}, 0, "", false},
		{"heavy", high, policies.Sample{SMACT: 0.7, SMOCC: 0.5, DRAMA: 0.5}, policies.Sample{SMACT: 0.9, SMOCC: 0.7, DRAMA: 0.7}, 0, "pressure", false},
		{"straddles", low, policies.Sample{SMACT: 0.1, SMOCC: 0.1, DRAMA: 0.1}, policies.Sample{SMACT: 0.7, SMOCC: 0.7, DRAMA: 0.7}, 0, "", true},
		{"regime newer than the window", low, policies.Sample{SMACT: 0.1, SMOCC: 0.1, DRAMA: 0.1}, policies.Sample{SMACT: 0.3, SMOCC: 0.3, DRAMA: 0.3}, 95 * time.Second, "", true},
		{"heavy, regime newer", high, policies.Sample{SMACT: 0.7, SMOCC: 0.5, DRAMA: 0.5}, policies.Sample{SMACT: 0.9, SMOCC: 0.7, DRAMA: 0.7}, 95 * time.Second, "pressure", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := 100 * time.Second
			reads := 0
			v := &policies.View{Now: now, Pressure: true,
				Telemetry: ranged{x: tc.x, lo: tc.lo, hi: tc.hi, since: tc.since, now: &now, reads: &reads},
				GPUs:      []policies.GPU{{Jobs: []policies.JobID{0}, CapacityMiB: 40960}},
				Jobs: []policies.Job{{State: policies.Running, On: []int{0}, Active: true, ActiveAt: 10 * time.Second},
					{ID: 1, GPUs: 1, State: policies.Pending}}}
			p := NewWith(DefaultConfig())
			p.Schedule(&policies.View{GPUs: v.GPUs}) // sizes the per-GPU state
			require.Equal(t, tc.reason, p.Admit(v, &v.Jobs[1], 0))
			require.Equal(t, tc.reads, reads > 0, "window read")
			if !tc.reads {
				require.Equal(t, colloc.Never, p.ChangesAt(v, &v.Jobs[1], 0))
			}
			// The same verdict as a decision reading the window.
			cfg := DefaultConfig()
			cfg.EveryTick = true
			ref := NewWith(cfg)
			ref.Schedule(&policies.View{GPUs: v.GPUs})
			require.Equal(t, tc.reason, ref.Admit(v, &v.Jobs[1], 0))
		})
	}
}

// A verdict's horizon is worked out only when the scheduler asks (ChangesAt):
// after Admit it is pending, and ChangesAt then gives what it would have given
// at once, which telemetry without foresight (no regime to keep a pending
// horizon by) still gets. Asked again at a later decision, the kept
// verdict is the one a decision reading the window gives.
func TestPendingHorizonIsTheEagerOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var now time.Duration
	cfg := DefaultConfig()
	cfg.Thresholds = [3]float64{0.5, 0.5, 0.3}
	pending, long := 0, 0
	for range 300 {
		now += time.Duration(1+rng.IntN(40_000)) * time.Millisecond
		view := func(tel policies.Telemetry) *policies.View {
			return &policies.View{Now: now, Pressure: true, Telemetry: tel,
				GPUs: []policies.GPU{{Jobs: []policies.JobID{0}, CapacityMiB: 40960}},
				Jobs: []policies.Job{{State: policies.Running, On: []int{0}, Active: true, ActiveAt: 0},
					{ID: 1, GPUs: 1, State: policies.Pending}}}
		}
		lazy, eager := NewWith(cfg), NewWith(cfg)
		vl, ve := view(foreseen{steady{&now}}), view(steady{&now})
		lazy.Schedule(&policies.View{GPUs: vl.GPUs})
		eager.Schedule(&policies.View{GPUs: ve.GPUs})
		reason := lazy.Admit(vl, &vl.Jobs[1], 0)
		require.Equal(t, reason, eager.Admit(ve, &ve.Jobs[1], 0))
		require.False(t, eager.verdicts[0].pending)
		if lazy.verdicts[0].pending {
			pending++
		}
		eager.ChangesAt(ve, &ve.Jobs[1], 0)
		lazy.ChangesAt(vl, &vl.Jobs[1], 0)
		require.False(t, lazy.verdicts[0].pending)
		require.Equal(t, eager.verdicts[0].changesAt, lazy.verdicts[0].changesAt) // the filter's (memory's differs)
		// A later decision with the verdict still pending: the same answer
		// as reading the window then.
		later := NewWith(cfg)
		later.Schedule(&policies.View{GPUs: vl.GPUs})
		later.Admit(vl, &vl.Jobs[1], 0)
		was := later.verdicts[0].pending
		gap := time.Duration(rng.IntN(90)) * time.Second
		now += gap
		later.Schedule(&policies.View{GPUs: vl.GPUs}) // a new decision
		vl.Now = now
		got := later.Admit(vl, &vl.Jobs[1], 0)
		require.Equal(t, bruteVerdict(later, vl, now), got == DeferPressure, "at %v", now)
		if was && gap > time.Duration(cfg.Window)*time.Second {
			long++ // asked past any horizon the bounds can give
		}
	}
	require.Greater(t, pending, 100)
	require.Greater(t, long, 50)
}

// horizon marks a verdict asked long after it was given as expired
// without working its horizon out, because flipAfter never answers more
// than a window's length when the samples' range does not settle the
// verdict: checked on random windows, lengths and ranges.
func TestFlipWithinWindowUnlessRangeSettles(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	checked := 0
	for range 2000 {
		cfg := DefaultConfig()
		cfg.Window = 1 + rng.IntN(40)
		p := NewWith(cfg)
		xs := make([]float64, 1+rng.IntN(cfg.Window))
		for i := range xs {
			xs[i] = rng.Float64()
		}
		setWindow(p, xs)
		a, b := rng.Float64(), rng.Float64()
		st := ranged{lo: samples([]float64{min(a, b)})[0], hi: samples([]float64{max(a, b)})[0]}
		v := &policies.View{Telemetry: st}
		if _, settles := p.rangeVerdict(st, 0); settles {
			continue
		}
		for _, reject := range []bool{false, true} {
			k := p.flipAfter(v, 0, p.win[0], &p.sl[0].sorted, nil, reject)
			require.Positive(t, k)
			require.LessOrEqual(t, k, cfg.Window)
			checked++
		}
	}
	require.Greater(t, checked, 1000)
}

// lowerBound finds what slices.BinarySearch finds, duplicates, ends and
// empty slices included.
func TestLowerBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 100_000 {
		s := make([]float64, rng.IntN(40))
		for i := range s {
			s[i] = float64(rng.IntN(10)) / 4
		}
		slices.Sort(s)
		x := float64(rng.IntN(12)-1) / 4
		want, _ := slices.BinarySearch(s, x)
		require.Equal(t, want, lowerBound(s, x), "%v in %v", x, s)
	}
}

// afterRef is bounds.after as one function computing both bounds
// together (before lower and upper were split), for
// TestLowerUpperAreAfter.
func afterRef(b *bounds, k, n int, lo, hi float64) (float64, float64) {
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

// resetRef is bounds.reset before its EWMA tails were summed in a
// register, for TestLowerUpperAreAfter.
func resetRef(b *bounds, win []policies.Sample, sorted []float64, sig, n int) {
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
