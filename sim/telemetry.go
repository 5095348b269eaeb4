package sim

import (
	"math"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
)

// Telemetry truth. A GPU's signals are piecewise constant in distribution
// between changes of its set of active jobs, so the simulator records one
// segment per change instead of one event per sample, and computes the 1 Hz
// samples a policy asks for on demand. Each sample's noise is a pure function
// of (seed, GPU, second, job, attempt, signal), so the same run gives the
// same samples whatever is asked and in whatever order.

// keep is how much telemetry history a GPU retains.
const keep = 2 * time.Hour

// keepFree is how many dropped segments' arrays a GPU keeps for reuse:
// after a quiet spell a record drops many segments at once, and with only a
// few kept the next ones allocate again (a run of short jobs then allocated
// once every few placements).
const keepFree = 64

type segJob struct {
	id, attempt int
	prof        *models.Profile
	peakMiB     float64 // this attempt's true peak
	activeAt    time.Duration
	rate        float64 // progress rate while the segment lasts
	// key is the job's part of its draws' noise key (noiseKey), and
	// smact, smocc, drama its signals' draws (draw) prepared at the
	// segment's first sample (segment.drawn): most segments of a policy
	// that reads no telemetry are never sampled.
	key                 uint64
	smact, smocc, drama dist
	term                models.Term // its part of the load (TelemetryParams.Add)
}

type segment struct {
	start time.Duration
	jobs  []segJob
	// powerW is the GPU's power while the segment lasts, the rate its
	// energy meter charges (meter; 0 without a power model).
	powerW float64
	// serial is the history's version when the segment was last recorded.
	serial uint64
	drawn  bool // the jobs' draws are prepared
}

type history struct {
	// segs is the retained history, buf[off:]: dropped segments stay
	// before it until buf is full, and the history then moves to the
	// front (once per cap(buf) − len(segs) segments, not at every drop).
	segs []segment
	buf  []segment
	off  int
	free [][]segJob // arrays of dropped segments, for reuse
	// version counts recorded segments (0: none yet).
	version uint64
	// cache holds computed samples by whole second modulo its size, which
	// grows to the longest window asked for (a power of two of at least
	// minCache), so a window's samples are computed once. A sample is final
	// once computed: samples are read only between calls of Next, after
	// every change of the current instant has been recorded, and never for
	// a second after now.
	cache []cached
}

// minCache is the smallest sample cache.
const minCache = 64

// fit grows the cache to hold n consecutive seconds.
func (h *history) fit(n int) {
	if n <= len(h.cache) {
		return
	}
	size := minCache
	for size < n {
		size *= 2
	}
	h.cache = make([]cached, size)
}

// slot is whole second k's place in the cache (k >= 0; the cache's size is
// a power of two, so k modulo it is its low bits).
func (h *history) slot(k int64) *cached {
	return &h.cache[k&int64(len(h.cache)-1)]
}

type cached struct {
	k  int64
	ok bool
	// ahead marks a sample computed for a second after the current one
	// (Ahead) from the segment recorded as serial ser: it holds while that
	// segment is still the one in force at its second.
	ahead bool
	ser   uint64
	x     policies.Sample
}

// record starts a new segment for GPU g at the current time.
func (h *history) record(s *Sim, g int) {
	h.version++
	s.unsteadied(g)
	var jobs []segJob
	if n := len(h.free); n > 0 { // a dropped segment's array
		jobs, h.free = h.free[n-1], h.free[:n-1]
	}
	for _, id := range s.view.GPUs[g].Jobs {
		pj := &s.view.Jobs[id]
		if pj.Active {
			prof := s.shownOn(int(id), g)
			// Written in place (a segJob is 264 bytes): the fields read
			// before the segment's draws are prepared; the draws' (smact,
			// smocc, drama, term) are written when they are (segment.drawn,
			// false in a segment recorded), not zeroed here.
			if n := len(jobs); n < cap(jobs) {
				jobs = jobs[:n+1]
			} else {
				jobs = append(jobs, segJob{})
			}
			j := &jobs[len(jobs)-1]
			j.id, j.attempt, j.prof = int(id), pj.Attempts, prof
			j.peakMiB, j.activeAt, j.rate = prof.PeakMiB*s.att(int(id)).peak, pj.ActiveAt, s.jobs[id].rate
			j.key = noiseKey(int(id), pj.Attempts)
		}
	}
	w := s.meter(g, jobs)
	segs := h.segs // buf[off:]
	if n := len(segs); n > 0 && segs[n-1].start == s.now {
		h.recycle(segs[n-1].jobs)
		segs[n-1].jobs, segs[n-1].serial, segs[n-1].drawn, segs[n-1].powerW = jobs, h.version, false, w
	} else if m := len(h.buf); m < cap(h.buf) { // appended in place: buf and segs share the array
		h.buf = h.buf[:m+1]
		segs = segs[:n+1]
		seg := &segs[n] // (every field written: the slot may hold a dropped segment's)
		seg.start, seg.jobs, seg.powerW, seg.serial, seg.drawn = s.now, jobs, w, h.version, false
	} else {
		if h.off > 0 { // full: move the history to the front
			h.buf = h.buf[:copy(h.buf, segs)]
			h.off = 0
		}
		h.buf = append(h.buf, segment{start: s.now, jobs: jobs, serial: h.version, powerW: w})
		segs = h.buf[h.off:]
	}
	// Drop segments that ended before the retained history.
	cut := s.now - keep
	i := 0
	for i+1 < len(segs) && segs[i+1].start <= cut {
		i++
	}
	if i > 0 {
		for k := range segs[:i] {
			h.recycle(segs[k].jobs) // (the dropped segment is not read again)
		}
		h.off += i
		segs = segs[i:]
	}
	h.segs = segs
}

// recycle keeps the array of a segment no longer in the history for the
// next record (up to keepFree): nothing refers to a dropped segment.
func (h *history) recycle(jobs []segJob) {
	if cap(jobs) > 0 && len(h.free) < keepFree {
		h.free = append(h.free, jobs[:0])
	}
}

// rateChanged reports whether a job of the current segment now runs at
// another rate than the segment recorded.
func (h *history) rateChanged(s *Sim) bool {
	if len(h.segs) == 0 {
		return false
	}
	jobs := h.segs[len(h.segs)-1].jobs
	for i := range jobs {
		j := &jobs[i]
		if s.jobs[j.id].rate != j.rate {
			return true
		}
	}
	return false
}

// at returns the segment in force at t, or nil before the first.
func (h *history) at(t time.Duration) *segment {
	for i := len(h.segs) - 1; i >= 0; i-- {
		if h.segs[i].start <= t {
			return &h.segs[i]
		}
	}
	return nil
}

type telemetry struct{ s *Sim }

// Samples implements policies.Telemetry.
func (tm telemetry) Samples(dst []policies.Sample, g, n int) []policies.Sample {
	s := tm.s
	last := int64(s.now / time.Second)
	h := &s.gpus[g].tel
	h.fit(n)
	first := max(last-int64(n)+1, 0)
	dst = slices.Grow(dst, int(last-first+1))
	for k := first; k <= last; k++ {
		dst = append(dst, *s.cachedAt(h, g, k))
	}
	return dst
}

// cachedSample is sample through GPU g's cache.
func (s *Sim) cachedSample(g int, k int64) policies.Sample {
	h := &s.gpus[g].tel
	h.fit(minCache)
	return *s.cachedAt(h, g, k)
}

// cachedAt is cachedSample's entry in h, GPU g's history, whose cache has
// room (fit).
func (s *Sim) cachedAt(h *history, g int, k int64) *policies.Sample {
	c := h.slot(k)
	if !c.ok || c.k != k || (c.ahead && !h.holds(c)) {
		c.k, c.ok, c.ser = k, true, 0
		s.sampleInto(&c.x, g, k)
	}
	c.ahead = false // a second up to now: final
	return &c.x
}

// Ahead implements policies.Foresight: the samples of the n whole seconds
// after the whole second after; those after the current second as the
// current telemetry segment draws them, none from the first finish of a job
// on the GPU on (a change already due: what follows it is not foreseen). They
// are cached with the history's version, so that reading them again once
// their second has come costs nothing unless a change was recorded since.
func (tm telemetry) Ahead(dst []policies.Sample, g int, after time.Duration, n int) []policies.Sample {
	s := tm.s
	h := &s.gpus[g].tel
	now := int64(s.now / time.Second)
	first := int64(after/time.Second) + 1
	for ; first <= now && n > 0; first, n = first+1, n-1 {
		dst = append(dst, s.cachedSample(g, first))
	}
	if n == 0 {
		return dst
	}
	h.fit(2 * int(first+int64(n)-now))
	last := first - 1
	var ser uint64
	if len(h.segs) > 0 {
		ser = h.segs[len(h.segs)-1].serial
	}
	due := never
	for _, id := range s.view.GPUs[g].Jobs {
		if s.view.Jobs[id].Active && s.jobs[id].rate > 0 {
			due = min(due, s.att(int(id)).done)
		}
	}
	for k := last + 1; k <= last+int64(n) && time.Duration(k)*time.Second < due; k++ {
		c := h.slot(k)
		if !c.ok || c.k != k || (c.ahead && !h.holds(c)) {
			*c = cached{k: k, ok: true, ahead: true, ser: ser, x: s.sample(g, k)}
		}
		dst = append(dst, c.x)
	}
	return dst
}

// holds reports whether a sample computed ahead still holds: the segment
// in force at its second is the one it was drawn from (segments recorded
// since start later, unless they replaced it).
func (h *history) holds(c *cached) bool {
	seg := h.at(time.Duration(c.k) * time.Second)
	if seg == nil {
		return c.ser == 0
	}
	return seg.serial == c.ser
}

// Regime implements policies.Foresight: the version of GPU g's telemetry
// history, which every recorded change advances.
func (tm telemetry) Regime(g int) uint64 { return tm.s.gpus[g].tel.version }

// RegimeSince implements policies.Foresight: the start of GPU g's current
// telemetry segment (0 before the first), from which on every sample is
// drawn from the segment SampleRange bounds.
func (tm telemetry) RegimeSince(g int) time.Duration {
	h := &tm.s.gpus[g].tel
	if len(h.segs) == 0 {
		return 0
	}
	return h.segs[len(h.segs)-1].start
}

// sample is GPU g's telemetry at whole second k.
func (s *Sim) sample(g int, k int64) policies.Sample {
	var x policies.Sample
	s.sampleInto(&x, g, k)
	return x
}

// sampleInto writes sample(g, k) into dst.
func (s *Sim) sampleInto(dst *policies.Sample, g int, k int64) {
	t := time.Duration(k) * time.Second
	seg := s.gpus[g].tel.at(t)
	x := policies.Sample{At: t}
	if seg == nil {
		*dst = x
		return
	}
	tt := s.typ(g)
	tp := &tt.Telemetry
	if !seg.drawn {
		noise := s.cfg.Truth.Noise
		for i := range seg.jobs {
			j := &seg.jobs[i]
			j.smact, j.smocc, j.drama = distOf(j.prof.SMACT, noise), distOf(j.prof.SMOCC, noise), distOf(j.prof.DRAMA, noise)
			j.term = tp.Term(j.prof.UtilPct/100, j.rate)
		}
		seg.drawn = true
	}
	// unit(seed, GPU and second, job, signal): the seed's and the GPU and
	// second's part of the hash (unitPrefix) once, the job's per job. The
	// jobs' draws are combined as they are made (models.Load: the same
	// arithmetic as CombineTelemetry, without a list of the draws).
	var load models.Load
	var smact, smocc, drama float64
	at := mix(s.seedMix ^ (uint64(g)<<40 | uint64(k)))
	for i := range seg.jobs {
		j := &seg.jobs[i]
		p := j.prof
		pre := mix(at ^ j.key)
		sm := j.smact.at(unitFrom(pre, 1))
		load.AddTerm(&j.term, t-j.activeAt >= models.WindowLength)
		w := j.term.W
		smact += sm * w
		smocc += j.smocc.at(unitFrom(pre, 2)) * w
		drama += j.drama.at(unitFrom(pre, 3)) * w
		// Utilization moves with SM activity: same draw, same relative spread.
		rel := 1.0
		if p.SMACT.Mean > 0 {
			rel = sm / p.SMACT.Mean
		}
		x.UtilPct += p.UtilPct * rel
		x.UsedMiB += s.ramped(j.peakMiB, t-j.activeAt)
	}
	// Fractions in [0, 1] and percent in [0, 100], as the contract says
	// (a bursty signal's low level can go negative only with noise > 1).
	x.SMACT, x.SMOCC, x.DRAMA = tp.Combined(load, smact), tp.Combined(load, smocc), tp.Combined(load, drama)
	x.UtilPct = models.Within(x.UtilPct, 100)
	if !tt.Type.Pressure {
		x.SMACT, x.SMOCC, x.DRAMA = 0, 0, 0
	}
	*dst = x
}

// usedAtSecond is GPU g's used memory at whole second k, as its telemetry
// sample reports it (memory carries no noise, so no sample is drawn).
func (s *Sim) usedAtSecond(g int, k int64) float64 {
	t := time.Duration(k) * time.Second
	seg := s.gpus[g].tel.at(t)
	if seg == nil {
		return 0
	}
	var u float64
	for i := range seg.jobs {
		j := &seg.jobs[i]
		u += s.ramped(j.peakMiB, t-j.activeAt)
	}
	return u
}

// measuredAt is View's reading of GPU g at whole second k, now's: its used
// memory then (usedAtSecond's) and whether it stays so
// (UsedMiBChangesAt(g) == never), from one look at the history. When the
// last segment started by then, it is the one in force then, and a job of
// it is still ramping at k exactly when ramped ramps it.
func (s *Sim) measuredAt(g int, k int64) (u float64, steady bool) {
	t := time.Duration(k) * time.Second
	h := &s.gpus[g].tel
	n := len(h.segs)
	if n == 0 {
		return 0, true
	}
	seg := &h.segs[n-1]
	if seg.start > t { // changed since: it may change at the next second
		return s.usedAtSecond(g, k), false
	}
	steady = true
	r := s.cfg.Truth.Ramp
	for i := range seg.jobs {
		j := &seg.jobs[i]
		since := t - j.activeAt
		if r > 0 && since < r {
			steady = false
		}
		u += s.ramped(j.peakMiB, since)
	}
	return u, steady
}

// ramped is a job's memory a time since its first activity: the CUDA
// context growing linearly to its peak over the ramp.
func (s *Sim) ramped(peak float64, since time.Duration) float64 {
	if r := s.cfg.Truth.Ramp; r > 0 && since < r {
		ctx := min(s.cfg.Truth.ContextMiB, peak)
		return ctx + (peak-ctx)*float64(since)/float64(r)
	}
	return peak
}

// burst is the fraction of time a bursty signal spends at its high level.
const burst = 0.1

// draw samples a signal with the profiled mean and p95 from a uniform u.
// Signals whose p95 lies within one mean above the mean are drawn from a
// normal distribution with that mean and the σ that puts its 95th percentile
// at p95. Bursty signals (p95 more than twice the mean, e.g. DLRM's SMACT
// 0.12 mean, 0.61 p95), for which a normal would go negative, alternate
// between two levels: the p95 for a fraction burst of the time and a low
// level that keeps the mean. noise scales the spread (0: the mean always).
//
// A measured window's low mode (st.Idle > 0, see models.Window) takes the
// lowest Idle share of u to 0 and draws the rest as above around the busy
// level st.Busy(), so the draws keep the window's mean, median and p95.
func draw(st models.Stat, u, noise float64) float64 {
	if st.Idle > 0 && noise != 0 {
		if u < st.Idle {
			return 0
		}
		u = (u - st.Idle) / (1 - st.Idle)
		st = models.Stat{Mean: st.Busy(), P95: st.P95}
	}
	if noise == 0 || st.P95 <= st.Mean {
		return st.Mean
	}
	if st.P95-st.Mean > st.Mean {
		hi := st.Mean + noise*(st.P95-st.Mean)
		lo := (st.Mean - burst*hi) / (1 - burst)
		if u < burst {
			return hi
		}
		return lo
	}
	// The built-in max and min give math.Max's and math.Min's results on
	// these finite operands, faster.
	z := max(-4, min(4, math.Sqrt2*math.Erfinv(2*u-1)))
	return max(0, st.Mean+noise*(st.P95-st.Mean)/1.6449*z)
}

// dist is draw(st, ·, noise) with what does not depend on u computed
// once: at(u) == draw(st, u, noise) bit for bit (TestDistIsDraw).
type dist struct {
	kind   uint8   // distConst, distBursty or distNormal
	idle   float64 // the low mode's share of u (0: none)
	busy   float64 // 1 − idle, the rest's
	mean   float64 // the constant, or the normal's mean
	scale  float64 // the normal's σ: noise·(p95 − mean)/1.6449
	hi, lo float64 // a bursty signal's levels
}

// Kinds of dist.
const (
	distConst = iota
	distBursty
	distNormal
)

// distOf prepares draw(st, ·, noise).
func distOf(st models.Stat, noise float64) dist {
	var d dist
	if st.Idle > 0 && noise != 0 {
		d.idle, d.busy = st.Idle, 1-st.Idle
		st = models.Stat{Mean: st.Busy(), P95: st.P95}
	}
	d.mean = st.Mean
	switch {
	case noise == 0 || st.P95 <= st.Mean:
		d.kind = distConst
	case st.P95-st.Mean > st.Mean:
		d.kind = distBursty
		d.hi = st.Mean + noise*(st.P95-st.Mean)
		d.lo = (st.Mean - burst*d.hi) / (1 - burst)
	default:
		d.kind = distNormal
		d.scale = noise * (st.P95 - st.Mean) / 1.6449
	}
	return d
}

// at is draw(st, u, noise).
func (d *dist) at(u float64) float64 {
	if d.idle > 0 {
		if u < d.idle {
			return 0
		}
		u = (u - d.idle) / d.busy
	}
	switch d.kind {
	case distConst:
		return d.mean
	case distBursty:
		if u < burst {
			return d.hi
		}
		return d.lo
	}
	return nonNeg(d.mean + d.scale*clamp4(math.Sqrt2*math.Erfinv(2*u-1)))
}

// clamp4 is max(-4, min(4, z)) and nonNeg max(0, x), written as
// comparisons that give the built-ins' results, bit for bit, for every
// operand but a NaN, which stays a NaN (x <= 0 holds for -0, whose max
// with 0 is +0), in fewer instructions (TestClampsAreBuiltins).
func clamp4(z float64) float64 {
	if z > 4 {
		z = 4
	}
	if z < -4 {
		z = -4
	}
	return z
}

func nonNeg(x float64) float64 {
	if x <= 0 {
		x = 0
	}
	return x
}

// unit(seed, a, b, c), written unitFrom(unitPrefix(seed, a, b), c), maps
// its inputs to a uniform number in (0, 1), deterministically (splitmix64
// finalizers chained over the inputs); callers drawing several numbers for
// the same first three inputs hash that prefix once.
//
// unitPrefix hashes unit's first three inputs; unitFrom finishes it.
func unitPrefix(seed, a, b uint64) uint64 { return prefixFrom(seedMix(seed), a, b) }

// prefixFrom is unitPrefix(seed, a, b) from the seed's part, sm =
// seedMix(seed) (a run keeps it: Sim.seedMix).
func prefixFrom(sm, a, b uint64) uint64 { return mix(mix(sm^a) ^ b) }

// seedMix is the seed's part of unitPrefix, the same for every draw of a run.
func seedMix(seed uint64) uint64 { return mix(seed ^ 0x9e3779b97f4a7c15) }

func unitFrom(prefix, c uint64) float64 {
	h := mix(prefix ^ c)
	return (float64(int64(h>>11)) + 0.5) / (1 << 53) // h>>11 < 2⁵³: a signed conversion is exact
}

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// UsedMiBChangesAt implements policies.SteadyTelemetry (samples come every
// whole second): GPU g's measured memory
// (the last whole second's sample) stays as it is while no job on it is
// still ramping and no change is newer than that second; otherwise it may
// change at the next whole second.
func (tm telemetry) UsedMiBChangesAt(g int) time.Duration {
	s := tm.s
	k := s.now.Truncate(time.Second)
	h := &s.gpus[g].tel
	if len(h.segs) == 0 {
		return never
	}
	seg := &h.segs[len(h.segs)-1]
	if seg.start > k {
		return k + time.Second
	}
	for i := range seg.jobs {
		j := &seg.jobs[i]
		if r := s.cfg.Truth.Ramp; r > 0 && k-j.activeAt < r {
			return k + time.Second
		}
	}
	return never
}

// never is a time no run reaches.
const never = time.Duration(math.MaxInt64)

// SampleRange implements policies.SteadyTelemetry: every sample of GPU g
// from now until the next change of its jobs lies within [lo, hi], field by
// field. Each active job's draw is bounded by its distribution (a normal
// clipped at ±4σ and at 0, or a bursty signal's two levels), and the
// combination of the jobs' draws (models.TelemetryParams) grows with each
// draw, so the bounds of the draws give the bounds of the sample.
func (tm telemetry) SampleRange(g int) (lo, hi policies.Sample) {
	s := tm.s
	h := &s.gpus[g].tel
	if len(h.segs) == 0 {
		return lo, hi
	}
	seg := &h.segs[len(h.segs)-1]
	noise := s.cfg.Truth.Noise
	cl, ch := s.combLo[:0], s.combHi[:0]
	defer func() { s.combLo, s.combHi = cl, ch }()
	var ulo, uhi float64
	for i := range seg.jobs {
		j := &seg.jobs[i]
		p := j.prof
		al, ah := drawRange(p.SMACT, noise)
		ol, oh := drawRange(p.SMOCC, noise)
		dl, dh := drawRange(p.DRAMA, noise)
		// Past its first window at the regime's start, a job is past it
		// at every sample of the regime.
		steady := seg.start-j.activeAt >= models.WindowLength
		cl = append(cl, models.TelemetryJob{SMACT: al, SMOCC: ol, DRAMA: dl, Util: p.UtilPct / 100, Rate: j.rate, Steady: steady})
		ch = append(ch, models.TelemetryJob{SMACT: ah, SMOCC: oh, DRAMA: dh, Util: p.UtilPct / 100, Rate: j.rate, Steady: steady})
		if p.SMACT.Mean > 0 {
			ulo += p.UtilPct * al / p.SMACT.Mean
			uhi += p.UtilPct * ah / p.SMACT.Mean
		} else {
			ulo += p.UtilPct
			uhi += p.UtilPct
		}
	}
	if tt := s.typ(g); tt.Type.Pressure {
		lo.SMACT, lo.SMOCC, lo.DRAMA = tt.Telemetry.CombineTelemetry(cl)
		hi.SMACT, hi.SMOCC, hi.DRAMA = tt.Telemetry.CombineTelemetry(ch)
		if tt.Telemetry.SteadySaturation > 0 {
			// The others may pass it within the regime: the combination
			// moves monotonically with each job's age, so their ages at
			// the regime's start (above) and all past it bound it.
			for i := range cl {
				cl[i].Steady, ch[i].Steady = true, true
			}
			a, o, d := tt.Telemetry.CombineTelemetry(cl)
			lo.SMACT, lo.SMOCC, lo.DRAMA = min(lo.SMACT, a), min(lo.SMOCC, o), min(lo.DRAMA, d)
			a, o, d = tt.Telemetry.CombineTelemetry(ch)
			hi.SMACT, hi.SMOCC, hi.DRAMA = max(hi.SMACT, a), max(hi.SMOCC, o), max(hi.DRAMA, d)
		}
	}
	lo.UtilPct, hi.UtilPct = min(max(ulo, 0), 100), min(max(uhi, 0), 100)
	// A margin for rounding in the samples' arithmetic.
	const eps = 1e-9
	lo.SMACT, lo.SMOCC, lo.DRAMA, lo.UtilPct = lo.SMACT-eps, lo.SMOCC-eps, lo.DRAMA-eps, lo.UtilPct-eps
	hi.SMACT, hi.SMOCC, hi.DRAMA, hi.UtilPct = hi.SMACT+eps, hi.SMOCC+eps, hi.DRAMA+eps, hi.UtilPct+eps
	return lo, hi
}

// drawRange bounds draw(st, u, noise) over every u.
func drawRange(st models.Stat, noise float64) (float64, float64) {
	if st.Idle > 0 && noise != 0 {
		_, hi := drawRange(models.Stat{Mean: st.Busy(), P95: st.P95}, noise)
		return 0, hi
	}
	if noise == 0 || st.P95 <= st.Mean {
		return st.Mean, st.Mean
	}
	if st.P95-st.Mean > st.Mean {
		a, b := draw(st, 0, noise), draw(st, 1-1e-12, noise)
		return min(a, b), max(a, b)
	}
	c := noise * (st.P95 - st.Mean) / 1.6449
	return math.Max(0, st.Mean-4*c), st.Mean + 4*c
}
