// Package aegis is the AEGIS policy: runtime-guided GPU collocation with
// memory feasibility, a post-placement observation hold, an
// activity-anchored telemetry window, a runtime-pressure filter, MFM/MU/RR
// placement and OOM-aware recovery. Every mechanism is a parameter, so the
// paper's ablations are settings, not forks.
package aegis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
)

// Memory inputs, the values of Config.Memory (see policies.MemoryInput).
const (
	EstFree    = string(policies.MemEstFree)
	PeakMem    = string(policies.MemPeak)
	Analytical = string(policies.MemAnalytical)
	GPUMemNet  = string(policies.MemGPUMemNet)
	FakeTensor = string(policies.MemFakeTensor)
)

// Placement rules.
const (
	MFM = "mfm" // most free memory
	MU  = "mu"  // least utilized (lowest SMACT score)
	RR  = "rr"  // round robin over GPU ids, no memory or pressure check
)

// Config is the AEGIS policy's configuration.
type Config struct {
	colloc.Config
	Memory string
	// EstFreeMiB is the usable free memory Est-free demands.
	EstFreeMiB float64
	// GuardMiB is added to a per-job estimate.
	GuardMiB float64
	// Filter is "pressure" (τ1/τ2/τ3 on SMACT, SMOCC, DRAMA), "nf" (off,
	// hold kept), "mem-only" (no pressure signal at all: memory decides and
	// MU ranks by utilization) or "util" (limited telemetry: keep a GPU only
	// if its nvidia-smi utilization score is below UtilPct).
	Filter     string
	Thresholds [3]float64
	UtilPct    float64
	Placement  string
	// Window is the telemetry window length in 1 Hz samples; Anchored
	// starts it no earlier than the newest job's first activity.
	Window   int
	Anchored bool
}

// DefaultConfig is the paper's AEGIS (Est-free) configuration.
func DefaultConfig() Config {
	return Config{Config: colloc.DefaultConfig(), Memory: EstFree, EstFreeMiB: 5120, GuardMiB: 512,
		Filter: "pressure", Thresholds: [3]float64{0.65, 0.35, 0.50}, UtilPct: 70, Placement: MFM,
		Window: 30, Anchored: true}
}

// Policy is the AEGIS policy.
type Policy struct {
	*colloc.Scheduler
	cfg  Config
	next int // round-robin cursor
	// Window samples and scores per GPU, valid within one decision.
	win      [][]policies.Sample
	winDone  []bool
	memo     [][4]float64
	memoDone [][4]bool
	xs, tmp  []float64
	bnd      [3]bounds
	verdicts []verdict     // the filter's last answer per GPU
	sl       []slider      // each GPU's window, kept across decisions
	until    time.Duration // horizon of the last Admit
	// Of this decision: the GPUs whose filter horizon Refine can raise, and
	// the earliest horizon of every other answer.
	asked []int
	fixed time.Duration
}

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
func (a *lookahead) fold(sig int) float64 {
	win := a.samples[a.start:]
	alpha := 2 / float64(len(win)+1)
	e := signal(win[0], sig)
	for _, x := range win[1:] {
		e = alpha*signal(x, sig) + (1-alpha)*e
	}
	return e
}

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
				a.sorted[sig] = slices.Insert(a.sorted[sig], search(a.sorted[sig], y), y)
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
	i := search(s, old)
	for ; i+1 < len(s) && s[i+1] < x; i++ {
		s[i] = s[i+1]
	}
	for ; i > 0 && s[i-1] > x; i-- {
		s[i] = s[i-1]
	}
	s[i] = x
}

// New builds the AEGIS policy from key=value parameters (see ReadConfig).
func New(params map[string]string) (*Policy, error) {
	c, err := ReadConfig(policies.NewParams(params))
	if err != nil {
		return nil, err
	}
	return NewWith(c), nil
}

// ReadConfig reads a configuration from p: memory, estfree_mib, guard_mib,
// filter, thresholds, placement, window, anchor and the machinery's hold,
// tick, lookahead and recovery; unknown keys and bad values are errors.
func ReadConfig(p *policies.Params) (Config, error) {
	def := DefaultConfig()
	c := def
	c.Config = colloc.ReadParams(p, def.Config)
	c.Memory = p.String("memory", def.Memory, "memory input", EstFree, PeakMem, Analytical, GPUMemNet, FakeTensor)
	c.EstFreeMiB = p.Float("estfree_mib", def.EstFreeMiB, 0, 1e6, "usable free MiB Est-free demands")
	c.GuardMiB = p.Float("guard_mib", def.GuardMiB, 0, 1e6, "MiB added to a per-job estimate")
	filter := p.Pattern("filter", "pressure", "pressure|nf|mem-only|util:<pct>", "runtime-pressure filter (util:<pct>: utilization score below pct, for GPUs without DCGM)")
	th := p.Floats("thresholds", def.Thresholds[:], 0, 1, "τ1,τ2,τ3 on SMACT, SMOCC, DRAMA scores")
	copy(c.Thresholds[:], th)
	c.Placement = p.String("placement", def.Placement, "placement rule", MFM, MU, RR)
	c.Window = p.Int("window", def.Window, 1, 3600, "telemetry window, samples")
	c.Anchored = p.String("anchor", "on", "activity-anchored window", "on", "off") == "on"
	if err := p.Done("aegis"); err != nil {
		return Config{}, err
	}
	switch {
	case filter == "pressure" || filter == "nf" || filter == "mem-only":
		c.Filter = filter
	case strings.HasPrefix(filter, "util:"):
		pct, err := strconv.ParseFloat(strings.TrimPrefix(filter, "util:"), 64)
		if err != nil || !(pct > 0 && pct <= 100) { // NaN fails too
			return Config{}, fmt.Errorf("aegis: parameter filter=%q: want util:<pct> with pct in (0, 100]", filter)
		}
		c.Filter, c.UtilPct = "util", pct
	default:
		return Config{}, fmt.Errorf("aegis: parameter filter=%q: want pressure, nf, mem-only or util:<pct>", filter)
	}
	return c, nil
}

// NewWith builds the AEGIS policy from a configuration.
func NewWith(c Config) *Policy {
	p := &Policy{cfg: c}
	p.Scheduler = colloc.New("aegis", c.Config, p)
	return p
}

// Config returns the policy's configuration.
func (p *Policy) Config() Config { return p.cfg }

// Validate implements policies.Validator: the pressure filter and MU need
// DCGM pressure telemetry.
func (p *Policy) Validate(v *policies.View) error {
	if v.Pressure {
		return nil
	}
	if p.cfg.Filter == "pressure" {
		return errors.New("filter=pressure needs SMACT/SMOCC/DRAMA telemetry, which this server lacks; use filter=mem-only or filter=util:70")
	}
	if p.cfg.Placement == MU && p.cfg.Filter == "nf" {
		return errors.New("placement=mu ranks by SMACT, which this server lacks; use filter=mem-only (MU then ranks by utilization)")
	}
	return nil
}

// need returns the usable free MiB job j needs on a GPU under the memory
// input, or false when the input has no estimate for it (exclusive only).
func (p *Policy) need(j *policies.Job) (float64, bool) {
	e := policies.MemoryInput(p.cfg.Memory).Estimate(&j.Profile)
	switch e.Status {
	case policies.EstimateNone: // Est-free: a floor of usable free memory
		return p.cfg.EstFreeMiB, true
	case policies.EstimateKnown:
		return e.MiB + p.cfg.GuardMiB, true
	}
	return 0, false
}

// Signals of the telemetry window, as indexes of score.
const (
	smact = iota
	smocc
	drama
	util
)

// Schedule implements policies.Policy: one decision of the shared machinery
// with this policy's rule; window scores are computed at most once per GPU
// and signal within it.
func (p *Policy) Schedule(v *policies.View) []policies.Action {
	if len(p.memo) != len(v.GPUs) {
		p.memo = make([][4]float64, len(v.GPUs))
		p.memoDone = make([][4]bool, len(v.GPUs))
		p.win = make([][]policies.Sample, len(v.GPUs))
		p.sl = make([]slider, len(v.GPUs))
		for g := range p.sl {
			p.sl[g].use = p.signals()
		}
		p.winDone = make([]bool, len(v.GPUs))
		p.verdicts = make([]verdict, len(v.GPUs))
	}
	clear(p.memoDone)
	clear(p.winDone)
	p.asked, p.fixed = p.asked[:0], colloc.Never
	return p.Scheduler.Schedule(v)
}

// signals returns the window signals the filter and placement read.
func (p *Policy) signals() (use [4]bool) {
	switch p.cfg.Filter {
	case "pressure":
		use[smact], use[smocc], use[drama] = true, true, true
	case "util":
		use[util] = true
	}
	if p.cfg.Placement == MU {
		use[smact], use[util] = true, true
	}
	return use
}

// window brings GPU g's window up to date, once per decision.
func (p *Policy) window(v *policies.View, g int) {
	if !p.winDone[g] {
		p.sl[g].update(v, g, p.cfg.Window, p.cfg.Anchored)
		p.win[g] = p.sl[g].samples
		p.winDone[g] = true
	}
}

// score returns GPU g's window score of one signal: policies.Score of the
// window, computed from the window's sorted values.
func (p *Policy) score(v *policies.View, g, sig int) float64 {
	if p.memoDone[g][sig] {
		return p.memo[g][sig]
	}
	p.window(v, g)
	sl := &p.sl[g]
	sc := 0.0
	if !sl.use[sig] {
		xs := p.xs[:0]
		for _, x := range sl.samples {
			xs = append(xs, signal(x, sig))
		}
		p.xs = xs
		p.tmp = slices.Grow(p.tmp[:0], len(xs))
		sc = policies.Score(xs, p.tmp)
	} else {
		sc = sortedScore(sl.samples, sl.sorted[sig], sig)
	}
	p.memo[g][sig], p.memoDone[g][sig] = sc, true
	return sc
}

// sortedScore is policies.Score of one signal of a window (oldest first)
// whose values srt holds in ascending order, computed as Score does.
func sortedScore(win []policies.Sample, srt []float64, sig int) float64 {
	n := len(win)
	if n == 0 {
		return 0
	}
	alpha := 2 / float64(n+1)
	ewma := signal(win[0], sig)
	for _, x := range win[1:] {
		ewma = alpha*signal(x, sig) + (1-alpha)*ewma
	}
	return 0.25 * (policies.Mean(srt) + policies.SortedQuantile(srt, 0.5) + policies.SortedQuantile(srt, 0.95) + ewma)
}

// signal returns one signal of a sample.
func signal(x policies.Sample, sig int) float64 {
	switch sig {
	case smact:
		return x.SMACT
	case smocc:
		return x.SMOCC
	case drama:
		return x.DRAMA
	}
	return x.UtilPct
}

// slider is one GPU's telemetry window kept across decisions: on telemetry
// that samples every second (policies.SteadyTelemetry) each decision reads
// only the samples taken since the last one and updates the window's sorted
// values in place; otherwise, or when the anchor moves, it is rebuilt.
type slider struct {
	ok      bool
	last    time.Duration // the newest whole second the window covers
	anchor  time.Duration
	samples []policies.Sample // the window, oldest first
	sorted  [4][]float64      // each signal's values in the window, ascending
	buf     []policies.Sample // scratch
	use     [4]bool           // the signals whose sorted values are kept
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
		for sig := range s.sorted {
			if !s.use[sig] {
				continue
			}
			srt := s.sorted[sig][:0]
			for _, x := range s.samples {
				srt = append(srt, signal(x, sig))
			}
			insertionSort(srt)
			s.sorted[sig] = srt
		}
		s.ok, s.last, s.anchor = steady, k, anchor
		return
	}
	if m == 0 {
		return
	}
	s.buf = v.Telemetry.Samples(s.buf[:0], g, m)
	for _, x := range s.buf {
		s.samples = append(s.samples, x)
		for sig := range s.sorted {
			if !s.use[sig] {
				continue
			}
			y := signal(x, sig)
			i := search(s.sorted[sig], y)
			s.sorted[sig] = slices.Insert(s.sorted[sig], i, y)
		}
	}
	drop := max(0, len(s.samples)-n)
	for _, x := range s.samples[:drop] {
		for sig := range s.sorted {
			if !s.use[sig] {
				continue
			}
			i := search(s.sorted[sig], signal(x, sig))
			s.sorted[sig] = slices.Delete(s.sorted[sig], i, i+1)
		}
	}
	if drop > 0 {
		s.samples = append(s.samples[:0], s.samples[drop:]...)
	}
	s.last = k
}

// Admit implements colloc.Rule: memory feasibility, then the pressure filter.
func (p *Policy) Admit(v *policies.View, j *policies.Job, g int) string {
	p.until = colloc.Never
	if p.cfg.Placement == RR {
		return ""
	}
	need, ok := p.need(j)
	if !ok {
		return "memory-unavailable"
	}
	p.until = colloc.MemoryUntil(v, g)
	p.fixed = min(p.fixed, p.until)
	if colloc.UsableFree(&v.GPUs[g]) < need {
		return "memory"
	}
	if p.cfg.Filter != "pressure" && p.cfg.Filter != "util" {
		return ""
	}
	reason, until := p.filter(v, g)
	p.until = min(p.until, until)
	if c := &p.verdicts[g]; c.refining {
		if !slices.Contains(p.asked, g) {
			p.asked = append(p.asked, g)
		}
	} else {
		p.fixed = min(p.fixed, until)
	}
	return reason
}

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
			if u := p.verdicts[g].until; u < m {
				best, m = g, u
			}
		}
		if best < 0 || m >= lim || !ok || !p.verdicts[best].refining {
			return min(p.fixed, m)
		}
		p.refine(v, fs, best)
	}
}

// Until implements colloc.Horizon: when Admit(v, j, g), just asked, could
// answer differently if nothing happens. Memory answers change only when
// the measured memory does (colloc.MemoryUntil); the filter's as filter
// says.
func (p *Policy) Until(v *policies.View, j *policies.Job, g int) time.Duration {
	return p.until
}

// verdict is the filter's last answer on a GPU and how long it holds.
type verdict struct {
	ok     bool
	jobs   []policies.JobID // the GPU's jobs when it was given
	anchor time.Duration    // their latest first activity
	until  time.Duration
	reason string
	regime uint64 // the telemetry's regime (policies.Foresight), else 0
	// While refining, until is a lower bound: the window at second base,
	// stepped through la.steps more samples without a change of verdict
	// (none possible before kmin of them), may be stepped further.
	refining bool
	base     time.Duration
	kmin     int
	la       lookahead
}

// filter returns the window filter's answer on GPU g ("window", "pressure"
// or "") and the earliest time it could change if nothing happens. The
// window depends only on the GPU's jobs (all active: a GPU in hold is not
// asked), their latest first activity and the time, so an answer is reused
// until it could change or the jobs do. An empty window gains its first
// sample at the first whole second at or after the anchor; otherwise the
// answer can change only at a whole second, once enough new samples (each
// anywhere in its signal's range) could move a score across its threshold
// (flipAfter).
func (p *Policy) filter(v *policies.View, g int) (string, time.Duration) {
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
	if !p.cfg.EveryTick && c.ok && v.Now < c.until && c.anchor == anchor && c.regime == regime && slices.Equal(c.jobs, v.GPUs[g].Jobs) {
		return c.reason, c.until
	}
	c.ok, c.anchor, c.regime, c.jobs = true, anchor, regime, append(c.jobs[:0], v.GPUs[g].Jobs...)
	c.refining = false
	sec := v.Now.Truncate(time.Second)
	if foresee && !p.cfg.EveryTick {
		if reject, ok := p.settled(v, fs, g, anchor, sec); ok {
			// Every window of the regime gives this verdict: it holds
			// until the regime, the jobs or the anchor change, and the
			// window need not be read.
			c.reason, c.until = "", colloc.Never
			if reject {
				c.reason = "pressure"
			}
			return c.reason, c.until
		}
	}
	if p.window(v, g); len(p.win[g]) == 0 {
		if _, steady := v.Telemetry.(policies.SteadyTelemetry); !steady {
			c.reason, c.until = "window", v.Now
			return c.reason, c.until
		}
		first := anchor.Truncate(time.Second)
		if first < anchor {
			first += time.Second
		}
		c.reason, c.until = "window", max(first, sec+time.Second) // nothing observed of the current mix yet
		return c.reason, c.until
	}
	c.reason = ""
	if p.rejects(v, g) {
		c.reason = "pressure"
	}
	if _, steady := v.Telemetry.(policies.SteadyTelemetry); !steady || p.cfg.EveryTick {
		// Samples may be missed or late: the window's future is unknown
		// (or, with skip=off, not asked for).
		c.until = v.Now
		return c.reason, c.until
	}
	c.until = colloc.Never
	reject := c.reason != ""
	k := p.flipAfter(v, g, p.win[g], &p.sl[g].sorted, reject)
	if k > 0 {
		c.until = sec + time.Duration(k)*time.Second
	}
	if foresee && k > 0 && k <= aheadMax {
		// A lower bound that Refine may raise.
		c.refining, c.base, c.kmin = true, sec, k
		sl := &p.sl[g]
		c.la.reset(sl.samples, &sl.sorted, sl.use, p.cfg.Window)
	}
	return c.reason, c.until
}

// settled reports whether the filter's verdict on GPU g is known without
// reading its window, and the verdict: the window is not empty, all of it
// lies in the telemetry's current regime (policies.Foresight.RegimeSince),
// and every score a window of samples within the regime's range
// (SampleRange) can have is on the same side of the thresholds, with
// flipAfter's margin. Every score is then within the range (a mean, an
// order statistic, an EWMA of values within it), so the verdict is the one
// reading the window gives, and no sample to come can change it.
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
	lo, hi := sampleBounds(fs, g)
	const eps = 1e-9
	if p.cfg.Filter == "util" {
		switch {
		case hi.UtilPct < p.cfg.UtilPct-eps:
			return false, true
		case lo.UtilPct >= p.cfg.UtilPct+eps:
			return true, true
		}
		return false, false
	}
	t := p.cfg.Thresholds
	switch {
	case hi.SMACT < t[0]-eps || (hi.SMOCC < t[1]-eps && hi.DRAMA < t[2]-eps):
		return false, true
	case lo.SMACT >= t[0]+eps && (lo.SMOCC >= t[1]+eps || lo.DRAMA >= t[2]+eps):
		return true, true
	}
	return false, false
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
	c := &p.verdicts[g]
	a := &c.la
	reject := c.reason != ""
	at := func(steps int) time.Duration { return c.base + time.Duration(steps)*time.Second }
	for range aheadChunk {
		if a.steps >= aheadMax {
			c.refining, c.until = false, colloc.Never
			if k := p.flipAfter(v, g, a.samples[a.start:], &a.sorted, reject); k > 0 {
				c.until = at(a.steps + k)
			}
			return
		}
		if a.pos >= len(a.future) {
			a.future, a.pos = fs.Ahead(a.future[:0], g, at(a.steps), aheadChunk), 0
			if len(a.future) == 0 {
				c.refining, c.until = false, at(a.steps+1) // a change is due: an event asks again
				return
			}
		}
		a.push(a.future[a.pos])
		a.pos++
		if a.steps++; a.steps >= c.kmin && p.verdict(a) != reject {
			c.refining, c.until = false, at(a.steps)
			return
		}
	}
	c.until = at(max(a.steps+1, c.kmin))
}

// verdict is the pressure (or utilization) filter's verdict on the
// lookahead's window: rejects's, computed the same way where it is close.
func (p *Policy) verdict(a *lookahead) bool {
	if p.cfg.Filter == "util" {
		return a.atLeast(util, p.cfg.UtilPct)
	}
	t := p.cfg.Thresholds
	return a.atLeast(smact, t[0]) && (a.atLeast(smocc, t[1]) || a.atLeast(drama, t[2]))
}

// Score implements colloc.Rule: MFM prefers the most usable free memory, MU
// the lowest SMACT score (utilization without pressure telemetry), RR the
// next GPU id after the last placement.
func (p *Policy) Score(v *policies.View, j *policies.Job, g int) float64 {
	switch p.cfg.Placement {
	case MU:
		if !v.Pressure || p.cfg.Filter == "mem-only" {
			return p.score(v, g, util)
		}
		return p.score(v, g, smact)
	case RR:
		n := len(v.GPUs)
		return float64(((g-p.next)%n + n) % n)
	}
	return -colloc.UsableFree(&v.GPUs[g])
}

// Placed implements colloc.Placer: it advances the round-robin cursor.
func (p *Policy) Placed(j *policies.Job, gpus []int) {
	p.next = gpus[len(gpus)-1] + 1
}

// flipAfter returns the fewest whole seconds after which the verdict
// (reject) on window win of GPU g (sorted: its used signals' values,
// ascending) could change, or 0 if it cannot change while nothing happens:
// it bounds every score the window can have after k more samples.
func (p *Policy) flipAfter(v *policies.View, g int, win []policies.Sample, sorted *[4][]float64, reject bool) int {
	n := p.cfg.Window
	b := &p.bnd
	const eps = 1e-9
	// The range of every future sample: the contract's, or tighter when
	// the backend knows it.
	lo, hi := policies.Sample{}, policies.Sample{SMACT: 1, SMOCC: 1, DRAMA: 1, UtilPct: 100}
	if st, ok := telemetryOf(v).(policies.SteadyTelemetry); ok {
		lo, hi = sampleBounds(st, g)
	}
	if p.cfg.Filter == "util" {
		b[0].reset(win, sorted[util], util, n)
		for k := 1; k <= len(win)+n; k++ {
			lb, ub := b[0].after(k, n, lo.UtilPct, hi.UtilPct)
			if (reject && lb < p.cfg.UtilPct+eps) || (!reject && ub >= p.cfg.UtilPct-eps) {
				return k
			}
		}
		return 0
	}
	for i, sig := range [3]int{smact, smocc, drama} {
		b[i].reset(win, sorted[sig], sig, n)
	}
	t := p.cfg.Thresholds
	for k := 1; k <= len(win)+n; k++ {
		la, ua := b[0].after(k, n, lo.SMACT, hi.SMACT)
		if reject {
			if la < t[0]+eps {
				return k
			}
			if lo2, _ := b[1].after(k, n, lo.SMOCC, hi.SMOCC); lo2 >= t[1]+eps {
				continue
			}
			if ld, _ := b[2].after(k, n, lo.DRAMA, hi.DRAMA); ld < t[2]+eps {
				return k
			}
			continue
		}
		if ua < t[0]-eps {
			continue
		}
		_, uo := b[1].after(k, n, lo.SMOCC, hi.SMOCC)
		_, ud := b[2].after(k, n, lo.DRAMA, hi.DRAMA)
		if uo >= t[1]-eps || ud >= t[2]-eps {
			return k
		}
	}
	return 0
}

// rejects is the window verdict of this decision on GPU g.
func (p *Policy) rejects(v *policies.View, g int) bool {
	if p.cfg.Filter == "util" {
		return p.score(v, g, util) >= p.cfg.UtilPct
	}
	t := p.cfg.Thresholds
	return p.score(v, g, smact) >= t[0] && (p.score(v, g, smocc) >= t[1] || p.score(v, g, drama) >= t[2])
}

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
	b.xs, b.sum, b.drop = b.xs[:0], 0, 0
	for _, x := range win {
		v := signal(x, sig)
		b.xs = append(b.xs, v)
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
		i := search(b.sorted, x)
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

// insertionSort sorts a short slice ascending (windows hold tens of values).
func insertionSort(s []float64) {
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i
		for ; j > 0 && s[j-1] > x; j-- {
			s[j] = s[j-1]
		}
		s[j] = x
	}
}

// search returns the first index of s (ascending, no NaNs) whose value is
// at least x.
func search(s []float64, x float64) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// telemetryOf is v's telemetry reader, nil without a view.
func telemetryOf(v *policies.View) policies.Telemetry {
	if v == nil {
		return nil
	}
	return v.Telemetry
}
