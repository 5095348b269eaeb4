package models

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
}

// CombineTelemetry is the GPU-wide SMACT, SMOCC and DRAMA of co-located
// jobs:
//
//	w_i = r_i^α                      (α = RateWeight; 1 when α = 0)
//	U   = Σ_i d_i·w_i                (summed kernel duty)
//	X   = min(1, Σ_i x_i·w_i / max(1, U/u0))   for x = SMACT, SMOCC, DRAMA
//
// (u0 = Saturation; 0 leaves out the division), and never below 0. With
// the zero parameters this is the plain sum saturated at 1.
func (p TelemetryParams) CombineTelemetry(jobs []TelemetryJob) (smact, smocc, drama float64) {
	var u float64
	for _, j := range jobs {
		w := 1.0
		if p.RateWeight != 0 && j.Rate > 0 {
			w = math.Pow(j.Rate, p.RateWeight)
		}
		smact += j.SMACT * w
		smocc += j.SMOCC * w
		drama += j.DRAMA * w
		u += j.Util * w
	}
	if p.Saturation > 0 && u > p.Saturation {
		f := p.Saturation / u
		smact, smocc, drama = smact*f, smocc*f, drama*f
	}
	return min(max(smact, 0), 1), min(max(smocc, 0), 1), min(max(drama, 0), 1)
}

// Check reports a parameter out of its range.
func (p TelemetryParams) Check() error {
	if !(p.RateWeight >= 0 && p.RateWeight <= 4) {
		return fmt.Errorf("rate_weight %v: want a number in [0, 4]", p.RateWeight)
	}
	if !(p.Saturation >= 0 && p.Saturation <= 100) {
		return fmt.Errorf("saturation %v: want a number in [0, 100] (0: off)", p.Saturation)
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
