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
	return m.RateMemo(nil, self, co)
}

// RateMemo is Rate, bit for bit, with memo remembering the model's power
// terms (c_ij^(1/ρ) by the bits of c_ij's exponent, and (Σ_j …)^ρ by the
// bits of the sum): a simulation asks for the rates of the same few
// workload pairs again and again, and each term is a pure function of one
// number, so a remembered term is the one computed. A nil memo remembers
// nothing. A memo is not safe for concurrent use; one memo may serve
// several models (it is cleared when ρ changes).
func (m *PressureModel) RateMemo(memo *PressureMemo, self Profile, co []Profile) float64 {
	if len(co) == 0 {
		return 1
	}
	if memo != nil {
		memo.use(m.P.NWayExponent)
	}
	s0 := m.stretch(memo, 0, &self, co)
	if m.P.Capacity <= 0 {
		return 1 / s0
	}
	load := self.SMACT.Mean / s0
	for i := range co {
		load += co[i].SMACT.Mean / m.stretch(memo, i+1, &self, co)
	}
	r := 1 / s0
	if load > m.P.Capacity {
		r *= m.P.Capacity / load
	}
	return r
}

// PressureMemo is RateMemo's memory of power terms: two direct-mapped
// tables of memoSize entries each, keyed by their argument's bits. The zero
// value is empty.
type PressureMemo struct {
	rho         float64 // the ρ the entries were computed with
	ok          bool
	terms, sums [memoSize]memoEntry
}

// memoSize is the number of entries of each of PressureMemo's tables.
const (
	memoBits = 9
	memoSize = 1 << memoBits
)

type memoEntry struct {
	key uint64 // the argument's bits
	ok  bool
	val float64
}

// use readies memo for a model of exponent rho, clearing it when it held
// another's terms.
func (memo *PressureMemo) use(rho float64) {
	if !memo.ok || math.Float64bits(memo.rho) != math.Float64bits(rho) {
		*memo = PressureMemo{rho: rho, ok: true}
	}
}

// memoSlot is the table entry of argument x, and x's bits.
func memoSlot(t *[memoSize]memoEntry, x float64) (*memoEntry, uint64) {
	b := math.Float64bits(x)
	return &t[(b*0x9e3779b97f4a7c15)>>(64-memoBits)], b
}

// member is job k of the GPU's jobs: self first, then co.
func member(k int, self *Profile, co []Profile) *Profile {
	if k == 0 {
		return self
	}
	return &co[k-1]
}

// stretch is job i's stretch among the jobs self and co, its power terms
// through memo when it is not nil (RateMemo).
func (m *PressureModel) stretch(memo *PressureMemo, i int, self *Profile, co []Profile) float64 {
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
		a := own + p.CoSMACT*c.SMACT.Mean + p.CoDRAMA*c.DRAMA.Mean + p.CoMem*c.PeakMiB/memUnitMiB
		switch {
		case rho == 1:
			sum += math.Exp(a)
		case memo == nil:
			sum += math.Pow(math.Exp(a), 1/rho)
		default:
			e, b := memoSlot(&memo.terms, a)
			if !e.ok || e.key != b {
				*e = memoEntry{key: b, ok: true, val: math.Pow(math.Exp(a), 1/rho)}
			}
			sum += e.val
		}
	}
	if rho != 1 {
		if memo == nil {
			sum = math.Pow(sum, rho)
		} else {
			e, b := memoSlot(&memo.sums, sum)
			if !e.ok || e.key != b {
				*e = memoEntry{key: b, ok: true, val: math.Pow(sum, rho)}
			}
			sum = e.val
		}
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
