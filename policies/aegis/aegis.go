// Package aegis is the AEGIS policy: runtime-guided GPU collocation with
// memory feasibility, a post-placement observation hold, an
// activity-anchored telemetry window, a runtime-pressure filter, MFM/MU/RR
// placement and OOM-aware recovery. Every mechanism is a parameter, so the
// paper's ablations are settings, not forks.
//
// aegis.go is the rule: memory feasibility and the pressure filter (Admit,
// rule.rejects) and placement (Score). The rest only makes it cheap:
// window.go keeps each GPU's window across decisions; skip.go, lookahead.go
// and bounds.go find the next tick at which an answer could change, so that
// the decisions between are skipped. They apply rule.rejects to the scores a
// window can reach; none of them states the thresholds again.
package aegis

import (
	"errors"
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

// Deferral reasons of the AEGIS rule, besides colloc's (DeferHold,
// DeferMemory: usable free memory below what the memory input asks).
const (
	// DeferNoEstimate: the memory input has no estimate for the job; it
	// runs only on idle GPUs.
	DeferNoEstimate colloc.Reason = "memory-unavailable"
	// DeferWindow: the GPU's telemetry window holds no sample of its
	// current jobs yet.
	DeferWindow colloc.Reason = "window"
	// DeferPressure: the pressure (or utilization) filter rejects the GPU.
	DeferPressure colloc.Reason = "pressure"
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
	rule rule
	next int // round-robin cursor
	// Window samples and scores per GPU, valid within one decision.
	win      [][]policies.Sample
	winDone  []bool
	memo     [][4]float64
	memoDone [][4]bool
	xs, tmp  []float64
	bnd      [4]bounds // by signal
	verdicts []verdict // the filter's last answer per GPU
	sl       []slider  // each GPU's window, kept across decisions
	ranges   []regimeRange
	// Of this decision, as ChangesAt answers: the GPUs whose filter horizon
	// Refine can raise, and the earliest horizon of every other answer.
	asked []int
	fixed time.Duration
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
	if err := p.Done("policy aegis"); err != nil {
		return Config{}, err
	}
	switch {
	case filter == "pressure" || filter == "nf" || filter == "mem-only":
		c.Filter = filter
	case strings.HasPrefix(filter, "util:"):
		pct, err := strconv.ParseFloat(strings.TrimPrefix(filter, "util:"), 64)
		if err != nil || !(pct > 0 && pct <= 100) { // NaN fails too
			return Config{}, &policies.ParamError{Scope: "policy aegis", Key: "filter", Value: filter, Want: "util:<pct> with pct in (0, 100]"}
		}
		c.Filter, c.UtilPct = "util", pct
	default:
		return Config{}, &policies.ParamError{Scope: "policy aegis", Key: "filter", Value: filter, Want: "pressure, nf, mem-only or util:<pct>"}
	}
	return c, nil
}

// NewWith builds the AEGIS policy from a configuration.
func NewWith(c Config) *Policy {
	p := &Policy{cfg: c, rule: ruleOf(c)}
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
		p.ranges = make([]regimeRange, len(v.GPUs))
	}
	clear(p.memoDone)
	clear(p.winDone)
	p.asked, p.fixed = p.asked[:0], colloc.Never
	return p.Scheduler.Schedule(v)
}

// signals returns the window signals the filter and placement read.
func (p *Policy) signals() (use [4]bool) {
	if p.cfg.Filter == "pressure" || p.cfg.Filter == "util" {
		for sig := range use {
			use[sig] = p.rule.reads(sig)
		}
	}
	if p.cfg.Placement == MU {
		use[smact], use[util] = true, true
	}
	return use
}

// window brings GPU g's window up to date, once per decision. A verdict
// still pending on the window it moves from is dropped as expired (filter
// works out or drops a pending verdict before it reads the window).
func (p *Policy) window(v *policies.View, g int) {
	if !p.winDone[g] {
		if c := &p.verdicts[g]; c.pending && c.at != v.Now {
			c.pending, c.changesAt = false, v.Now
		}
		p.startLookahead(g) // a refining verdict's window, before it moves
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
		p.xs = signals(p.xs[:0], sl.samples, sig)
		p.tmp = slices.Grow(p.tmp[:0], len(p.xs))
		sc = policies.Score(p.xs, p.tmp)
	} else {
		sc = sortedScore(sl.samples, sl.sortedOf(sig), sig)
	}
	p.memo[g][sig], p.memoDone[g][sig] = sc, true
	return sc
}

// sortedScore is policies.Score of one signal of a window (oldest first)
// whose values srt holds in ascending order.
func sortedScore(win []policies.Sample, srt []float64, sig int) float64 {
	if len(win) == 0 {
		return 0
	}
	return policies.SortedScore(srt, ewma(win, sig))
}

// ewma is policies.EWMA of one signal of a non-empty window (oldest
// first), read in place: the same operations in the same order
// (TestSliderMatchesRebuiltWindow holds the scores to policies.Score).
func ewma(win []policies.Sample, sig int) float64 {
	alpha := 2 / float64(len(win)+1)
	e := signal(win[0], sig)
	switch sig {
	case smact:
		for _, x := range win[1:] {
			e = alpha*x.SMACT + (1-alpha)*e
		}
	case smocc:
		for _, x := range win[1:] {
			e = alpha*x.SMOCC + (1-alpha)*e
		}
	case drama:
		for _, x := range win[1:] {
			e = alpha*x.DRAMA + (1-alpha)*e
		}
	default:
		for _, x := range win[1:] {
			e = alpha*x.UtilPct + (1-alpha)*e
		}
	}
	return e
}

// signals appends one signal of each sample of win to dst (signal's
// choice made once, not per sample).
func signals(dst []float64, win []policies.Sample, sig int) []float64 {
	dst = slices.Grow(dst, len(win))
	switch sig {
	case smact:
		for _, x := range win {
			dst = append(dst, x.SMACT)
		}
	case smocc:
		for _, x := range win {
			dst = append(dst, x.SMOCC)
		}
	case drama:
		for _, x := range win {
			dst = append(dst, x.DRAMA)
		}
	default:
		for _, x := range win {
			dst = append(dst, x.UtilPct)
		}
	}
	return dst
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

// Admit implements colloc.Rule: memory feasibility, then the pressure filter.
func (p *Policy) Admit(v *policies.View, j *policies.Job, g int) colloc.Reason {
	reason, filtered := p.admit(v, j, g)
	if filtered {
		return p.filter(v, g)
	}
	return reason
}

// admit is Admit's answer before the pressure filter, and whether the
// filter gives it instead.
func (p *Policy) admit(v *policies.View, j *policies.Job, g int) (colloc.Reason, bool) {
	if p.cfg.Placement == RR {
		return colloc.Admitted, false
	}
	need, ok := p.need(j)
	if !ok {
		return DeferNoEstimate, false
	}
	if colloc.UsableFree(&v.GPUs[g]) < need {
		return colloc.DeferMemory, false
	}
	return colloc.Admitted, p.cfg.Filter == "pressure" || p.cfg.Filter == "util"
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

// rule is the runtime-pressure filter's threshold test, written here once:
// the verdict of a decision (filter), of a window to come (refine) and of
// every window a range of samples can give (settled, flipAfter) are its
// answers on different scores.
type rule struct {
	util bool       // the "util" filter: utilization alone
	th   [4]float64 // each signal's threshold, by signal index
}

// ruleOf is c's rule: τ1, τ2, τ3 on the SMACT, SMOCC and DRAMA scores, or
// UtilPct on the utilization score.
func ruleOf(c Config) rule {
	r := rule{util: c.Filter == "util"}
	r.th[smact], r.th[smocc], r.th[drama], r.th[util] = c.Thresholds[0], c.Thresholds[1], c.Thresholds[2], c.UtilPct
	return r
}

// rejects is the filter's verdict on a window whose scores atLeast tells:
// atLeast(sig, t) reports whether the score of signal sig is at least t.
// Under "util" a GPU is rejected when its utilization score reaches
// UtilPct; under "pressure" when its SMACT score reaches τ1 and its SMOCC
// score τ2 or its DRAMA score τ3. It asks only for the scores it needs, in
// that order.
//
// A higher score never turns a rejection into an admission: the verdict on
// the lowest scores a window can have and the one on the highest agree
// exactly when every window between gives that verdict (settled,
// flipAfter).
func (r rule) rejects(atLeast func(sig int, t float64) bool) bool {
	if r.util {
		return atLeast(util, r.th[util])
	}
	return atLeast(smact, r.th[smact]) && (atLeast(smocc, r.th[smocc]) || atLeast(drama, r.th[drama]))
}

// moved is the rule with every threshold raised by d (lowered when d < 0):
// a verdict with a margin.
func (r rule) moved(d float64) rule {
	for sig := range r.th {
		r.th[sig] += d
	}
	return r
}

// reads reports whether the rule reads signal sig's score.
func (r rule) reads(sig int) bool {
	if r.util {
		return sig == util
	}
	return sig != util
}

// ReadsJobsOnly implements policies.JobsReader: AEGIS (the scheduler and
// its rule) writes into no job of its view, so the loop hands it the
// backend's jobs instead of a copy of every job. TestJobsReadersWriteNoJob
// holds it to that.
func (p *Policy) ReadsJobsOnly() {}
