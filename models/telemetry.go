package models

import (
	"fmt"
	"math"
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
	return nil
}
