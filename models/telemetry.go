package models

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// TelemetryParams say how the DCGM signals of jobs sharing a GPU combine
// into the GPU-wide SMACT, SMOCC and DRAMA a policy sees (see
// CombineTelemetry). The zero value is the original assumption: each job
// adds its solo draw, summed and saturated at 1.
type TelemetryParams struct {
	// RateWeight α scales each job's solo draw by r^α, r its current
	// progress rate: 1 = a job slowed to half speed issues half the work
	// per second and shows half its solo activity; 0 = its solo draw
	// whatever its speed.
	RateWeight float64 `yaml:"rate_weight" json:"rate_weight"`
	// Saturation u0 is the summed kernel duty at which the GPU is fully
	// time-shared: with U = Σ d_i·r_i^α (d = the job's solo nvidia-smi
	// utilization as a fraction, the share of time it has a kernel
	// running), the summed signals are divided by max(1, U/u0), so past
	// saturation the GPU shows its jobs' activity averaged over their time
	// shares rather than added. 0 disables it.
	Saturation float64 `yaml:"saturation" json:"saturation"`
	// SteadySaturation u1 replaces u0 for the jobs past their first window
	// (TelemetryJob.Steady: active for WindowLength or longer): each job
	// adds d_i·w_i/u to the GPU's time-shared load U', u = u0 for a job in
	// its first window and u1 after it, and the signals are divided by
	// max(1, U'). The threshold grid (nway/) measured jobs in their first
	// 200 s only, the testbed's trace runs' DCGM (testbed_runs/) mostly
	// jobs long past it; 0 keeps u0 for every job (docs/crowding.md).
	SteadySaturation float64 `yaml:"steady_saturation,omitempty" json:"steady_saturation,omitempty"`
	// DepthOverlap δ raises the saturation of a GPU holding more than
	// DepthMeasured jobs: with k jobs the divisor (U/u0, or U' with u1)
	// is divided by 1 + δ·(k − DepthMeasured) before max(1, ·), as if
	// the jobs' kernels overlapped more the more of them there are. No
	// measurement constrains a GPU that deep directly (the threshold
	// grid and the stacks hold 1-5 jobs); 0, the default, leaves it out
	// (docs/crowding.md, "A depth term").
	DepthOverlap float64 `yaml:"depth_overlap,omitempty" json:"depth_overlap,omitempty"`
	// Scale corrects the telemetry of single workloads, by catalog
	// workload ID: such a workload shows its solo SMACT, SMOCC and DRAMA
	// (mean and p95) multiplied by the factors, for example where a
	// measured window score says the catalog profile does not match the
	// run. Only what the job shows changes; its speed (the interference
	// model) still reads the catalog profile. A workload not listed, or
	// not in the catalog, shows its catalog profile.
	Scale map[string]SignalScale `yaml:"scale,omitempty" json:"scale,omitempty"`
}

// SignalScale multiplies a workload's SMACT, SMOCC and DRAMA.
type SignalScale struct {
	SMACT float64 `yaml:"smact" json:"smact"`
	SMOCC float64 `yaml:"smocc" json:"smocc"`
	DRAMA float64 `yaml:"drama" json:"drama"`
}

// Shown is the profile a job of workload id shows in telemetry: prof
// with the workload's Scale factors applied (prof itself when it has none).
func (p TelemetryParams) Shown(id string, prof Profile) Profile {
	f, ok := p.Scale[id]
	if !ok {
		return prof
	}
	scale := func(st Stat, x float64) Stat { return Stat{Mean: st.Mean * x, P95: st.P95 * x, Idle: st.Idle} }
	prof.SMACT, prof.SMOCC, prof.DRAMA = scale(prof.SMACT, f.SMACT), scale(prof.SMOCC, f.SMOCC), scale(prof.DRAMA, f.DRAMA)
	return prof
}

// TelemetryJob is one active job's share of a GPU sample: its solo draws of
// the three signals (fractions), its solo nvidia-smi utilization (a
// fraction) and its current progress rate (1 = solo speed).
type TelemetryJob struct {
	SMACT, SMOCC, DRAMA, Util, Rate float64
	// Steady marks a job active for WindowLength or longer (past the
	// window its solo telemetry was measured over).
	Steady bool
}

// SteadySaturationA100 is the A100's u1 (TelemetryParams.SteadySaturation):
// the value on the grid 1, 1.1, 1.2, 1.25, 1.3, 1.4, 1.5, 2 whose
// simulated SMACT, SMOCC and DRAMA distributions (mean, p50, p95 over all
// GPU-seconds, seeds 1-5) come closest to the DCGM distributions of the
// testbed's four AEGIS runs of Philly (testbed_runs/dcgm_run_distributions.csv):
// mean |error| 0.047 (u1 = u0 = 1: 0.072). On Saturn's four runs, not
// fitted, the error is 0.027 (u1 = 1: 0.064); fitted on Saturn instead,
// u1 = 1.25 and Philly's error 0.048 (scripts/fit-steady-saturation.sh,
// docs/crowding.md). The threshold
// grid cannot see it: its decisions all fall in the jobs' first window.
const SteadySaturationA100 = 1.2

// DepthOverlapA100 is the A100's depth term δ (TelemetryParams.DepthOverlap):
// on the grid 0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5 the value with
// the least joint loss on the testbed's four AEGIS runs of Philly (each
// figure averaged over seeds 1-10): the mean over the runs of
// |max jobs at once − the testbed's|/2 and |failed attempts − the
// testbed's|/2, plus the rise of the mean DCGM error (as for
// SteadySaturationA100) divided by 0.01. Loss Philly 1.025 → 0.725 (DCGM
// error 0.048 → 0.045); Saturn, held out, 1.406 → 0.850 (0.028 → 0.026).
// Fitted on Saturn instead, δ = 0.5, where Philly's DCGM error rises to
// 0.060 (scripts/fit-depth-overlap.sh, docs/crowding.md).
const DepthOverlapA100 = 0.2

// DepthMeasured is the deepest stack the telemetry combination was
// measured on (the threshold grid's and the stacks' 4-5 jobs): the
// DepthOverlap term counts the jobs beyond it.
const DepthMeasured = 5

// WindowLength is how long after its first activity a job is in its first
// window: the 200 s over which the solo windows (Window) were measured, and
// within which every admission decision of the threshold grid fell.
const WindowLength = 200 * time.Second

// CombineTelemetry is the GPU-wide SMACT, SMOCC and DRAMA of co-located
// jobs:
//
//	w_i = r_i^α                      (α = RateWeight; 1 when α = 0)
//	U   = Σ_i d_i·w_i                (summed kernel duty)
//	X   = min(1, Σ_i x_i·w_i / max(1, U/u0))   for x = SMACT, SMOCC, DRAMA
//
// (u0 = Saturation; 0 leaves out the division), and never below 0. With
// the zero parameters this is the plain sum saturated at 1. When
// SteadySaturation u1 is set and a job is Steady, the divisor is
// max(1, Σ_i d_i·w_i/u_i) with u_i = u1 for the steady jobs and u0 for
// the others (a job with u_i = 0 adds nothing to it).
//
// X grows with every job's x and falls as the divisor grows: a job that
// becomes steady moves X toward u1's side (up when u1 > u0).
func (p TelemetryParams) CombineTelemetry(jobs []TelemetryJob) (smact, smocc, drama float64) {
	var l Load
	for _, j := range jobs {
		w := p.Add(&l, j.Util, j.Rate, j.Steady)
		smact += j.SMACT * w
		smocc += j.SMOCC * w
		drama += j.DRAMA * w
	}
	return p.Combined(l, smact), p.Combined(l, smocc), p.Combined(l, drama)
}

// Load is what CombineTelemetry's divisor reads of a set of jobs (their
// duties, weights and ages, not their draws), so that a caller can combine
// the jobs' draws as it makes them: with l the Load of the jobs (Add, in
// their order) and sum = Σ_i x_i·w_i in the same order, Combined(l, sum)
// is CombineTelemetry's value of signal x, bit for bit.
type Load struct {
	u, split float64
	steady   bool
	n        int // jobs counted
}

// Add counts a job of solo utilization util (a fraction), progress rate
// rate and age (steady) into l, and returns its weight w = rate^α (1 when
// α = 0 or the job is stopped).
func (p TelemetryParams) Add(l *Load, util, rate float64, steady bool) (w float64) {
	w = 1.0
	if p.RateWeight != 0 && rate > 0 {
		w = math.Pow(rate, p.RateWeight)
	}
	l.u += util * w
	if s := p.saturationOf(steady); s > 0 {
		l.split += util * w / s
	}
	l.steady = l.steady || steady
	l.n++
	return w
}

// Term is a job's part of a Load, prepared once for a job whose duty and
// rate stay as they are (a telemetry segment's): AddTerm(l, t, steady) is
// Add(l, util, rate, steady) with t = p.Term(util, rate), bit for bit
// (TestTermIsAdd), and W is Add's weight.
type Term struct {
	W     float64
	uw    float64    // util·W
	split [2]float64 // util·W over the saturation of a job not steady, steady
	has   [2]bool    // whether that saturation is set
}

// Term prepares a job's Add: its weight and its parts of the load.
func (p TelemetryParams) Term(util, rate float64) Term {
	t := Term{W: 1.0}
	if p.RateWeight != 0 && rate > 0 {
		t.W = math.Pow(rate, p.RateWeight)
	}
	t.uw = util * t.W
	for i, steady := range []bool{false, true} {
		if s := p.saturationOf(steady); s > 0 {
			t.split[i], t.has[i] = util*t.W/s, true
		}
	}
	return t
}

// AddTerm counts a job of prepared term t and age (steady) into l, as Add.
func (l *Load) AddTerm(t *Term, steady bool) {
	l.u += t.uw
	i := 0
	if steady {
		i = 1
	}
	if t.has[i] {
		l.split += t.split[i]
	}
	l.steady = l.steady || steady
	l.n++
}

// Combined is one signal of jobs of load l whose weighted draws sum to
// sum: divided as the load says and kept within [0, 1].
func (p TelemetryParams) Combined(l Load, sum float64) float64 {
	if p.DepthOverlap > 0 && l.n > DepthMeasured {
		return p.combinedDeep(l, sum)
	}
	if l.steady && p.SteadySaturation > 0 {
		if l.split > 1 {
			sum /= l.split
		}
	} else if p.Saturation > 0 && l.u > p.Saturation {
		sum *= p.Saturation / l.u
	}
	return Within(sum, 1)
}

// combinedDeep is Combined for a GPU deeper than DepthMeasured with the
// depth term set: the divisor shrunk by 1 + δ·(k − DepthMeasured).
func (p TelemetryParams) combinedDeep(l Load, sum float64) float64 {
	f := 1 + p.DepthOverlap*float64(l.n-DepthMeasured)
	if l.steady && p.SteadySaturation > 0 {
		if d := l.split / f; d > 1 {
			sum /= d
		}
	} else if p.Saturation > 0 {
		if d := l.u / (p.Saturation * f); d > 1 {
			sum /= d
		}
	}
	return Within(sum, 1)
}

// Within is min(max(x, 0), hi) for hi > 0, bit for bit for every x but a
// NaN (which stays a NaN; -0 becomes +0), in fewer instructions than the
// built-ins' (TestWithinIsBuiltins).
func Within(x, hi float64) float64 {
	if x <= 0 {
		x = 0
	}
	if x > hi {
		x = hi
	}
	return x
}

// saturationOf is the saturation a job's duty counts against: u1 for a
// steady job when u1 is set, else u0.
func (p TelemetryParams) saturationOf(steady bool) float64 {
	if steady && p.SteadySaturation > 0 {
		return p.SteadySaturation
	}
	return p.Saturation
}

// Check reports a parameter out of its range.
func (p TelemetryParams) Check() error {
	if !(p.RateWeight >= 0 && p.RateWeight <= 4) {
		return fmt.Errorf("rate_weight %v: want a number in [0, 4]", p.RateWeight)
	}
	if !(p.Saturation >= 0 && p.Saturation <= 100) {
		return fmt.Errorf("saturation %v: want a number in [0, 100] (0: off)", p.Saturation)
	}
	if !(p.SteadySaturation >= 0 && p.SteadySaturation <= 100) {
		return fmt.Errorf("steady_saturation %v: want a number in [0, 100] (0: the saturation for every job)", p.SteadySaturation)
	}
	if !(p.DepthOverlap >= 0 && p.DepthOverlap <= 10) {
		return fmt.Errorf("depth_overlap %v: want a number in [0, 10] (0: off)", p.DepthOverlap)
	}
	ids := make([]string, 0, len(p.Scale))
	for id := range p.Scale {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			return fmt.Errorf("scale: an empty workload ID")
		}
		f := p.Scale[id]
		for _, x := range []struct {
			name string
			v    float64
		}{{"smact", f.SMACT}, {"smocc", f.SMOCC}, {"drama", f.DRAMA}} {
			if !(x.v > 0 && x.v <= 10) {
				return fmt.Errorf("scale.%s.%s %v: want a factor in (0, 10]", id, x.name, x.v)
			}
		}
	}
	return nil
}
