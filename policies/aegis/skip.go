// Decision skipping: how long the filter's answer on a GPU holds if
// nothing happens (filter, flipAfter, settled), and how Refine raises a
// lower bound by stepping the window through the samples to come
// (policies.Foresight, lookahead.go). None of it changes a decision: a
// verdict is the rule's (rule.rejects, aegis.go) on the window read now, or
// (settled) the one every window of the GPU's current telemetry regime
// gives; horizons are the rule's verdicts on bounds of the scores to come.

package aegis

import (
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
)

// Refine implements colloc.Refiner: it raises the filter horizons of this
// decision's answers that are lower bounds (refining verdicts), earliest
// first, by stepping their windows through the samples to come, until the
// earliest answer's horizon is exact or reaches limit (or the earliest
// other answer's, or aheadSoft seconds from now), and returns the earliest
// horizon of all the decision's answers.
func (p *Policy) Refine(v *policies.View, limit time.Duration) time.Duration {
	fs, ok := v.Telemetry.(policies.Foresight)
	lim := min(limit, p.fixed, v.Now+aheadSoft*time.Second)
	for {
		best, m := -1, colloc.Never
		for _, g := range p.asked {
			if u := p.verdicts[g].changesAt; u < m {
				best, m = g, u
			}
		}
		if best < 0 || m >= lim || !ok || !p.verdicts[best].refining {
			return min(p.fixed, m)
		}
		p.refine(v, fs, best)
	}
}

// ChangesAt implements colloc.Horizon: when Admit(v, j, g), asked in this
// decision, could answer differently if nothing happens. Memory answers
// change only when the measured memory does (colloc.MemoryChangesAt); the
// filter's as horizon says. It also notes, for Refine, the GPUs whose
// horizon is a lower bound and the earliest of the other answers'.
func (p *Policy) ChangesAt(v *policies.View, j *policies.Job, g int) time.Duration {
	if p.cfg.Placement == RR {
		return colloc.Never
	}
	if _, ok := p.need(j); !ok {
		return colloc.Never
	}
	mem := colloc.MemoryChangesAt(v, g)
	p.fixed = min(p.fixed, mem)
	if _, filtered := p.admit(v, j, g); !filtered {
		return mem
	}
	c := &p.verdicts[g]
	p.horizon(v, g)
	if c.refining {
		if !slices.Contains(p.asked, g) {
			p.asked = append(p.asked, g)
		}
	} else {
		p.fixed = min(p.fixed, c.changesAt)
	}
	return min(mem, c.changesAt)
}

// verdict is the filter's last answer on a GPU and how long it holds.
type verdict struct {
	ok        bool
	jobs      []policies.JobID // the GPU's jobs when it was given
	anchor    time.Duration    // their latest first activity
	changesAt time.Duration    // the earliest time the verdict could change
	reason    colloc.Reason
	regime    uint64 // the telemetry's regime (policies.Foresight), else 0
	// While pending, changesAt is not computed yet (horizon computes it): the
	// verdict was given at at, from the window the GPU's slider still
	// holds, and holds at least until the next whole second.
	pending bool
	at      time.Duration
	// While refining, changesAt is a lower bound: the window at second base,
	// stepped through la.steps more samples without a change of verdict
	// (none possible before kmin of them), may be stepped further. Until
	// it is first stepped (fresh), la is not started: the window is the
	// one the GPU's slider holds (startLookahead).
	refining bool
	fresh    bool
	base     time.Duration
	kmin     int
	la       lookahead
}

// startLookahead starts GPU g's lookahead from the window its slider holds,
// that of its refining verdict, unless it is started already: at the first
// step (refine), or before the slider moves (window). Most refining
// verdicts are never stepped.
func (p *Policy) startLookahead(g int) {
	if c := &p.verdicts[g]; c.refining && c.fresh {
		sl := &p.sl[g]
		c.la.reset(sl.samples, sl.sortAll(), sl.use, p.cfg.Window)
		c.fresh = false
	}
}

// filter returns the window filter's answer on GPU g (DeferWindow,
// DeferPressure or colloc.Admitted) and keeps it with the earliest time it
// could change if nothing happens (verdict.changesAt, or pending for horizon).
// The window depends only on the GPU's jobs (all active: a GPU in hold is
// not asked), their latest first activity and the time, so an answer is
// reused until it could change or the jobs do. An empty window gains its
// first sample at the first whole second at or after the anchor; otherwise
// the answer can change only at a whole second, once enough new samples
// (each anywhere in its signal's range) could move a score across its
// threshold (flipAfter).
func (p *Policy) filter(v *policies.View, g int) colloc.Reason {
	var anchor time.Duration
	for _, id := range v.GPUs[g].Jobs {
		if jb := v.Job(id); jb.Active {
			anchor = max(anchor, jb.ActiveAt)
		}
	}
	var regime uint64
	fs, foresee := v.Telemetry.(policies.Foresight)
	if foresee {
		regime = fs.Regime(g)
	}
	c := &p.verdicts[g]
	// With skip=off every verdict is computed afresh (a reference that
	// trusts no horizon).
	if !p.cfg.EveryTick && c.ok && c.anchor == anchor && c.regime == regime && slices.Equal(c.jobs, v.GPUs[g].Jobs) {
		if c.pending && v.Now != c.at {
			p.horizon(v, g)
		}
		if c.pending || v.Now < c.changesAt {
			return c.reason
		}
	}
	c.ok, c.anchor, c.regime, c.jobs = true, anchor, regime, append(c.jobs[:0], v.GPUs[g].Jobs...)
	c.refining, c.pending = false, false
	sec := v.Now.Truncate(time.Second)
	if foresee && !p.cfg.EveryTick {
		if reject, ok := p.settled(v, fs, g, anchor, sec); ok {
			// Every window of the regime gives this verdict: it holds
			// until the regime, the jobs or the anchor change, and the
			// window need not be read.
			c.reason, c.changesAt = colloc.Admitted, colloc.Never
			if reject {
				c.reason = DeferPressure
			}
			return c.reason
		}
	}
	if p.window(v, g); len(p.win[g]) == 0 {
		if _, steady := v.Telemetry.(policies.SteadyTelemetry); !steady {
			c.reason, c.changesAt = DeferWindow, v.Now
			return c.reason
		}
		first := anchor.Truncate(time.Second)
		if first < anchor {
			first += time.Second
		}
		c.reason, c.changesAt = DeferWindow, max(first, sec+time.Second) // nothing observed of the current mix yet
		return c.reason
	}
	c.reason = colloc.Admitted
	if p.rule.rejects(func(sig int, t float64) bool { return p.score(v, g, sig) >= t }) {
		c.reason = DeferPressure
	}
	if _, steady := v.Telemetry.(policies.SteadyTelemetry); !steady || p.cfg.EveryTick {
		// Samples may be missed or late: the window's future is unknown
		// (or, with skip=off, not asked for).
		c.changesAt = v.Now
		return c.reason
	}
	// How long the verdict holds is worked out only when it is asked
	// (horizon): most decisions place the job and never ask. Without
	// foresight there is no regime to tell that the samples' range is
	// still the one the verdict was given under: it is worked out now.
	c.pending, c.at = true, v.Now
	if !foresee {
		p.horizon(v, g)
	}
	return c.reason
}

// horizon works out how long GPU g's pending verdict holds (flipAfter on
// the window it was given on, which the GPU's slider still holds), as the
// decision that gave it would have. Asked at a later time, a verdict past
// its bounds' horizon is only marked as expired: flipAfter's k never
// exceeds the window's length when the samples' range does not settle the
// verdict (at k = Window every old sample has left the window, and the
// bounds are the range).
func (p *Policy) horizon(v *policies.View, g int) {
	c := &p.verdicts[g]
	if !c.pending {
		return
	}
	c.pending = false
	sec := c.at.Truncate(time.Second)
	reject := c.reason == DeferPressure
	if v.Now != c.at && v.Now >= sec+time.Duration(p.cfg.Window)*time.Second {
		if st, ok := v.Telemetry.(policies.SteadyTelemetry); ok {
			if _, settles := p.rangeVerdict(st, g); !settles {
				c.changesAt = v.Now
				return
			}
		}
	}
	sl := &p.sl[g]
	c.changesAt = colloc.Never
	k := p.flipAfter(v, g, sl.samples, &sl.sorted, sl, reject)
	if k > 0 {
		c.changesAt = sec + time.Duration(k)*time.Second
	}
	if _, foresee := v.Telemetry.(policies.Foresight); foresee && k > 0 && k <= aheadMax {
		// A lower bound that Refine may raise.
		c.refining, c.fresh, c.base, c.kmin = true, true, sec, k
	}
}

// settled reports whether the filter's verdict on GPU g is known without
// reading its window, and the verdict: the window is not empty, all of it
// lies in the telemetry's current regime (policies.Foresight.RegimeSince),
// and the rule gives the same verdict on the lowest and on the highest
// samples of the regime's range (SampleRange), with flipAfter's margin.
// Every score is then within the range (a mean, an order statistic, an
// EWMA of values within it), so the verdict is the one reading the window
// gives, and no sample to come can change it.
func (p *Policy) settled(v *policies.View, fs policies.Foresight, g int, anchor, sec time.Duration) (reject, ok bool) {
	first := max(sec-time.Duration(p.cfg.Window-1)*time.Second, 0)
	if p.cfg.Anchored {
		if anchor > sec {
			return false, false // an empty window
		}
		a := anchor.Truncate(time.Second)
		if a < anchor {
			a += time.Second
		}
		first = max(first, a)
	}
	if first < fs.RegimeSince(g) {
		return false, false
	}
	return p.rangeVerdict(fs, g)
}

// rangeVerdict reports whether the rule gives the same verdict on the
// lowest and on the highest samples GPU g can report until the next event
// (SampleRange), with flipAfter's margin, and that verdict.
func (p *Policy) rangeVerdict(st policies.SteadyTelemetry, g int) (reject, ok bool) {
	lo, hi := p.sampleBounds(st, g)
	switch {
	case !p.rule.moved(-eps).rejects(func(sig int, t float64) bool { return signal(hi, sig) >= t }):
		return false, true
	case p.rule.moved(eps).rejects(func(sig int, t float64) bool { return signal(lo, sig) >= t }):
		return true, true
	}
	return false, false
}

// eps is the margin of settled and flipAfter: a verdict on bounds of the
// scores stands only when the bounds clear the thresholds by eps, so that
// rounding in the bounds never settles a verdict the window would not give.
const eps = 1e-9

// sampleBounds is sampleBounds(st, g), kept per GPU while its telemetry's
// regime lasts when st is a policies.Foresight: a regime's samples all lie
// in its range (Foresight.RegimeSince), so the range is the regime's.
func (p *Policy) sampleBounds(st policies.SteadyTelemetry, g int) (lo, hi policies.Sample) {
	fs, ok := st.(policies.Foresight)
	if !ok || g >= len(p.ranges) {
		return sampleBounds(st, g)
	}
	r := &p.ranges[g]
	if regime := fs.Regime(g); !r.ok || r.regime != regime {
		r.lo, r.hi = sampleBounds(st, g)
		r.ok, r.regime = true, regime
	}
	return r.lo, r.hi
}

// regimeRange is a GPU's sample range (sampleBounds) in a regime.
type regimeRange struct {
	ok     bool
	regime uint64
	lo, hi policies.Sample
}

// sampleBounds is the range of GPU g's samples until the next event: the
// contract's, tightened to the backend's SampleRange.
func sampleBounds(st policies.SteadyTelemetry, g int) (lo, hi policies.Sample) {
	l, h := st.SampleRange(g)
	lo = policies.Sample{SMACT: max(l.SMACT, 0), SMOCC: max(l.SMOCC, 0), DRAMA: max(l.DRAMA, 0), UtilPct: max(l.UtilPct, 0)}
	hi = policies.Sample{SMACT: min(h.SMACT, 1), SMOCC: min(h.SMOCC, 1), DRAMA: min(h.DRAMA, 1), UtilPct: min(h.UtilPct, 100)}
	return lo, hi
}

// refine steps GPU g's refining window through up to aheadChunk more
// samples (policies.Foresight), scoring each window from kmin samples on as
// a decision then would: a change of verdict is the exact horizon; with no
// samples left to foresee (a change is due) the next second is; after
// aheadMax samples flipAfter bounds the rest from the window reached;
// otherwise the second after the last stepped one (or base + kmin) is a
// lower bound still.
func (p *Policy) refine(v *policies.View, fs policies.Foresight, g int) {
	p.startLookahead(g)
	c := &p.verdicts[g]
	a := &c.la
	reject := c.reason == DeferPressure
	at := func(steps int) time.Duration { return c.base + time.Duration(steps)*time.Second }
	for range aheadChunk {
		if a.steps >= aheadMax {
			c.refining, c.changesAt = false, colloc.Never
			if k := p.flipAfter(v, g, a.samples[a.start:], &a.sorted, nil, reject); k > 0 {
				c.changesAt = at(a.steps + k)
			}
			return
		}
		if a.pos >= len(a.future) {
			a.future, a.pos = fs.Ahead(a.future[:0], g, at(a.steps), aheadChunk), 0
			if len(a.future) == 0 {
				c.refining, c.changesAt = false, at(a.steps+1) // a change is due: an event asks again
				return
			}
		}
		a.push(a.future[a.pos])
		a.pos++
		if a.steps++; a.steps >= c.kmin && p.rule.rejects(a.atLeast) != reject {
			c.refining, c.changesAt = false, at(a.steps)
			return
		}
	}
	c.changesAt = at(max(a.steps+1, c.kmin))
}

// flipAfter returns the fewest whole seconds after which the verdict
// (reject) on window win of GPU g (sorted: its used signals' values,
// ascending; sorted when first read by sl, the slider that holds them,
// unless nil) could change, or 0 if it cannot change while nothing happens:
// it bounds every score the window can have after k more samples, and a
// rejection can end once the rule no longer rejects the lower bounds, an
// admission once it rejects the upper ones (with settled's margin).
func (p *Policy) flipAfter(v *policies.View, g int, win []policies.Sample, sorted *[4][]float64, sl *slider, reject bool) int {
	n := p.cfg.Window
	b := &p.bnd
	// The range of every future sample: the contract's, or tighter when
	// the backend knows it.
	lo, hi := policies.Sample{}, policies.Sample{SMACT: 1, SMOCC: 1, DRAMA: 1, UtilPct: 100}
	if st, ok := telemetryOf(v).(policies.SteadyTelemetry); ok {
		lo, hi = p.sampleBounds(st, g)
	}
	// A signal's bounds are made when the rule first asks for its score
	// (rejects asks SMOCC and DRAMA only past SMACT's threshold): after
	// reads a bounds' window from any k on.
	var made [4]bool
	at := func(sig, k int) *bounds {
		if !made[sig] {
			if sl != nil {
				sl.sortedOf(sig)
			}
			b[sig].reset(win, sorted[sig], sig, n)
			made[sig] = true
		}
		return &b[sig]
	}
	strict, lax := p.rule.moved(eps), p.rule.moved(-eps)
	for k := 1; k <= len(win)+n; k++ {
		if reject && !strict.rejects(func(sig int, t float64) bool {
			return at(sig, k).lower(k, n, signal(lo, sig)) >= t
		}) {
			return k
		}
		if !reject && lax.rejects(func(sig int, t float64) bool {
			return at(sig, k).upper(k, n, signal(hi, sig)) >= t
		}) {
			return k
		}
	}
	return 0
}

// telemetryOf is v's telemetry reader, nil without a view.
func telemetryOf(v *policies.View) policies.Telemetry {
	if v == nil {
		return nil
	}
	return v.Telemetry
}
