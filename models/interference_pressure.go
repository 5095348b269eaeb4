package models

import "math"

// memUnitMiB is the unit of the memory features of the pressure model:
// peak memory enters in units of 10 GiB.
const memUnitMiB = 10240

// PressureParams are the parameters of PressureModel. The first seven are
// fitted to measured co-runs by FitPressure; Capacity is read off the same
// data; NWayExponent is an assumption the two-job data cannot constrain.
type PressureParams struct {
	// Intercept is the log of the per-co-runner overhead: the stretch a
	// co-runner with zero pressure adds to a victim with zero pressure.
	Intercept float64 `yaml:"intercept" json:"intercept"`
	// CoSMACT, CoDRAMA and CoMem weigh the co-runner's (aggressor's) mean
	// SM activity, mean DRAM bandwidth activity and peak memory (per 10 GiB,
	// a proxy for kernel and batch size).
	CoSMACT float64 `yaml:"co_smact" json:"co_smact"`
	CoDRAMA float64 `yaml:"co_drama" json:"co_drama"`
	CoMem   float64 `yaml:"co_mem_per_10gib" json:"co_mem_per_10gib"`
	// SelfSMACT, SelfDRAMA and SelfMem weigh the same figures of the job
	// being slowed (the victim's sensitivity).
	SelfSMACT float64 `yaml:"self_smact" json:"self_smact"`
	SelfDRAMA float64 `yaml:"self_drama" json:"self_drama"`
	SelfMem   float64 `yaml:"self_mem_per_10gib" json:"self_mem_per_10gib"`
	// Capacity is the GPU's SM-activity capacity κ: the co-located jobs'
	// rates are scaled down together so that Σ SMACT_i·rate_i ≤ κ. It is set
	// to the largest combined SM activity the measured co-runs reached;
	// 0 disables the cap.
	Capacity float64 `yaml:"capacity" json:"capacity"`
	// NWayExponent ρ combines several co-runners' terms as a power mean:
	// stretch = 1 + (Σ_j c_j^(1/ρ))^ρ. ρ = 1 (the default) adds the
	// pairwise terms; ρ < 1 makes extra co-runners hurt less than the first,
	// ρ > 1 more. With one co-runner ρ has no effect.
	NWayExponent float64 `yaml:"nway_exponent" json:"nway_exponent"`
}

// PressureModel is the calibrated interference truth model. For a GPU whose
// active jobs are J, job i's co-run stretch (the factor on its solo time
// while the set J runs) is
//
//	c_ij = exp(β0 + βa·a_j + βd·d_j + βm·m_j + γa·a_i + γd·d_i + γm·m_i)
//	s_i  = 1 + (Σ_{j∈J, j≠i} c_ij^(1/ρ))^ρ
//
// where a is the workload's solo mean SMACT, d its mean DRAMA and m its
// peak memory in units of 10 GiB (memUnitMiB). The rates r_i = 1/s_i are
// then capped by the GPU's SM-activity capacity κ: when L = Σ_i a_i·r_i
// exceeds κ every rate is multiplied by κ/L (processor sharing once the SMs
// are saturated). Rate returns r_self. A job alone runs at rate 1.
type PressureModel struct {
	P PressureParams // the model's parameters
}

// Rate implements Interference.
func (m *PressureModel) Rate(self Profile, co []Profile) float64 {
	if len(co) == 0 {
		return 1
	}
	s0 := m.stretch(0, &self, co)
	if m.P.Capacity <= 0 {
		return 1 / s0
	}
	load := self.SMACT.Mean / s0
	for i := range co {
		load += co[i].SMACT.Mean / m.stretch(i+1, &self, co)
	}
	r := 1 / s0
	if load > m.P.Capacity {
		r *= m.P.Capacity / load
	}
	return r
}

// member is job k of the GPU's jobs: self first, then co.
func member(k int, self *Profile, co []Profile) *Profile {
	if k == 0 {
		return self
	}
	return &co[k-1]
}

// stretch is job i's stretch among the jobs self and co.
func (m *PressureModel) stretch(i int, self *Profile, co []Profile) float64 {
	p := &m.P
	v := member(i, self, co)
	own := p.Intercept + p.SelfSMACT*v.SMACT.Mean + p.SelfDRAMA*v.DRAMA.Mean + p.SelfMem*v.PeakMiB/memUnitMiB
	rho := p.NWayExponent
	if rho <= 0 {
		rho = 1
	}
	var sum float64
	for j := 0; j <= len(co); j++ {
		if j == i {
			continue
		}
		c := member(j, self, co)
		x := math.Exp(own + p.CoSMACT*c.SMACT.Mean + p.CoDRAMA*c.DRAMA.Mean + p.CoMem*c.PeakMiB/memUnitMiB)
		if rho == 1 {
			sum += x
		} else {
			sum += math.Pow(x, 1/rho)
		}
	}
	if rho != 1 {
		sum = math.Pow(sum, rho)
	}
	return 1 + sum
}

// flatInterference is the naive baseline "a shared GPU costs a fixed
// factor": a job with any co-runner progresses at 1/Slowdown.
type flatInterference struct {
	Slowdown float64
}

// Rate implements Interference.
func (f flatInterference) Rate(_ Profile, co []Profile) float64 {
	if len(co) == 0 || f.Slowdown <= 0 {
		return 1
	}
	return 1 / f.Slowdown
}

// StackedRate is the rate of each of n identical jobs with profile p
// sharing one GPU under m (1 for n ≤ 1); n·StackedRate is the GPU's
// throughput relative to one job alone.
func StackedRate(m Interference, p Profile, n int) float64 {
	if n <= 1 {
		return 1
	}
	co := make([]Profile, n-1)
	for i := range co {
		co[i] = p
	}
	return m.Rate(p, co)
}
