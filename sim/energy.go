package sim

import (
	"math"
	"time"

	"github.com/aegis-sched/aegis/models"
)

// Energy. A GPU's power is piecewise constant, like its telemetry's
// distribution: between two changes of its active jobs it draws the power
// model's watts at the segment's mean activity (the jobs' mean signals
// combined as the telemetry model combines them, and their peak memory).
// Each change settles the meter, so energy costs one multiply-add per
// telemetry segment, not one per second.

// meter settles GPU g's energy up to now and sets the power of the segment
// starting now, in which jobs are active; it returns that power (0 without
// a power model).
func (s *Sim) meter(g int, jobs []segJob) float64 {
	pm := s.typ(g).Power
	if pm == nil {
		return 0
	}
	m := &s.gpus[g]
	m.energyJ += m.meterW * (s.now - m.meterAt).Seconds()
	m.meterAt = s.now
	m.meterW = s.segmentPower(g, pm, jobs)
	return m.meterW
}

// secondPower is GPU g's mean power over whole second k as its meter
// charges it: the joules of the telemetry segments in force during
// [k, k+1) s, each at its power for the part of the second it lasts (idle
// before the first), divided by the second; NaN without a power model.
// The second must have ended, or no change of the GPU come after it (the
// run's last second), and lie within the retained history.
func (s *Sim) secondPower(g int, k int64) float64 {
	pm := s.typ(g).Power
	if pm == nil {
		return math.NaN()
	}
	segs := s.gpus[g].tel.segs
	a, b := time.Duration(k)*time.Second, time.Duration(k+1)*time.Second
	i := len(segs) - 1
	for i >= 0 && segs[i].start > a {
		i--
	}
	var e float64
	from, w := a, pm.IdleW // before the first segment the GPU idles
	if i >= 0 {
		w = segs[i].powerW
	}
	for i++; i < len(segs) && segs[i].start < b; i++ {
		e += w * (segs[i].start - from).Seconds()
		from, w = segs[i].start, segs[i].powerW
	}
	return e + w*(b-from).Seconds()
}

// segmentPower is GPU g's power while jobs are active on it.
func (s *Sim) segmentPower(g int, pm *models.PowerModel, jobs []segJob) float64 {
	if len(jobs) == 0 {
		return pm.IdleW
	}
	a := models.Activity{Busy: true}
	if len(jobs) == 1 { // the lone job's numbers read in place, not listed
		j := &jobs[0]
		p := j.prof
		a.MemGiB += j.peakMiB / 1024
		if tt := s.typ(g); tt.Type.Pressure {
			a.SMACT, a.SMOCC, a.DRAMA = s.lone(g).combineOne(&tt.Telemetry,
				models.TelemetryJob{SMACT: p.SMACT.Mean, SMOCC: p.SMOCC.Mean, DRAMA: p.DRAMA.Mean, Util: p.UtilPct / 100, Rate: j.rate})
		}
		return pm.Power(a)
	}
	comb := s.comb[:0]
	for i := range jobs {
		j := &jobs[i]
		p := j.prof
		comb = append(comb, models.TelemetryJob{SMACT: p.SMACT.Mean, SMOCC: p.SMOCC.Mean, DRAMA: p.DRAMA.Mean,
			Util: p.UtilPct / 100, Rate: j.rate})
		a.MemGiB += j.peakMiB / 1024
	}
	s.comb = comb
	tt := s.typ(g)
	if tt.Type.Pressure {
		a.SMACT, a.SMOCC, a.DRAMA = tt.Telemetry.CombineTelemetry(comb)
	}
	return pm.Power(a)
}

// loneMemo remembers, for one GPU type, the combined mean signals of a
// segment with one active job (TelemetryParams.CombineTelemetry of that
// job): a lone job's means, utilization and rate repeat, every segment of
// a workload at its solo rate, and combining them (a power of the rate for
// its weight, the saturation, three clamps) gives the same three numbers
// each time. A direct-mapped table keyed by the job's five numbers, bit
// for bit: a remembered value is the one computed (TestLoneMemoIsCombine).
type loneMemo [loneSlots]loneEntry

const loneSlots = 256 // (a catalog has some 50 workloads)

type loneEntry struct {
	in                  [5]uint64 // the job's SMACT, SMOCC, DRAMA, Util, Rate bits
	smact, smocc, drama float64
	ok                  bool
}

// combine is p.CombineTelemetry(one), through the memo, for one job
// (len(one) == 1); p must be the memo's type's parameters.
func (m *loneMemo) combine(p *models.TelemetryParams, one []models.TelemetryJob) (smact, smocc, drama float64) {
	return m.combineOne(p, one[0])
}

// combineOne is combine of the one job j, passed by value (segmentPower's
// lone job, read in place from its segment, not listed).
func (m *loneMemo) combineOne(p *models.TelemetryParams, j models.TelemetryJob) (smact, smocc, drama float64) {
	in := [5]uint64{math.Float64bits(j.SMACT), math.Float64bits(j.SMOCC), math.Float64bits(j.DRAMA),
		math.Float64bits(j.Util), math.Float64bits(j.Rate)}
	e := &m[((in[0]^in[1]>>7)*0x9e3779b97f4a7c15^in[4])*0x94d049bb133111eb>>(64-8)]
	if e.ok && e.in[0] == in[0] && e.in[1] == in[1] && e.in[2] == in[2] && e.in[3] == in[3] && e.in[4] == in[4] && !j.Steady {
		return e.smact, e.smocc, e.drama
	}
	smact, smocc, drama = p.CombineTelemetry([]models.TelemetryJob{j})
	if !j.Steady { // (the meter's jobs are not: Steady is not in the key)
		*e = loneEntry{in: in, smact: smact, smocc: smocc, drama: drama, ok: true}
	}
	return smact, smocc, drama
}

// lone is the lone-job memo of GPU g's type.
func (s *Sim) lone(g int) *loneMemo {
	k := 0
	if s.typeOf != nil {
		k = int(s.typeOf[g])
	}
	if s.lones == nil {
		s.lones = make([]*loneMemo, len(s.types))
	}
	if s.lones[k] == nil {
		s.lones[k] = new(loneMemo)
	}
	return s.lones[k]
}

// Energy returns the joules the server's GPUs drew from from to to under
// their power models (Config.Power, TypeTruth.Power), and false when a GPU
// has none. from must be at or before the first job's arrival (the GPUs
// idle until then) and to at or after the last change of a GPU's jobs
// (the run's last finish).
func (s *Sim) Energy(from, to time.Duration) (float64, bool) {
	var e float64
	for g := range s.gpus {
		pm := s.typ(g).Power
		if pm == nil {
			return 0, false
		}
		m := &s.gpus[g]
		e += m.energyJ + m.meterW*(to-m.meterAt).Seconds() - pm.IdleW*from.Seconds()
	}
	return e, true
}

// GPUEnergy returns the joules GPU g drew from time 0 to now under its
// power model, and false when it has none (an emulated GPU's energy
// counter).
func (s *Sim) GPUEnergy(g int) (float64, bool) { return s.GPUEnergyTo(g, s.now) }

// GPUEnergyTo returns the joules GPU g drew from time 0 to to under its
// power model, and false when it has none. to must be at or after the
// GPU's last change (now, or the end of the run's last second).
func (s *Sim) GPUEnergyTo(g int, to time.Duration) (float64, bool) {
	if s.typ(g).Power == nil {
		return 0, false
	}
	m := &s.gpus[g]
	return m.energyJ + m.meterW*(to-m.meterAt).Seconds(), true
}

// PowerAt returns GPU g's power at time t under its power model, and false
// when it has none: the power of the telemetry segment in force at t, the
// rate its energy is metered at (an emulated GPU's power reading). t must
// lie within the retained telemetry history (the last minutes); before the
// first segment the GPU idles.
func (s *Sim) PowerAt(g int, t time.Duration) (float64, bool) {
	pm := s.typ(g).Power
	if pm == nil {
		return 0, false
	}
	seg := s.gpus[g].tel.at(t)
	if seg == nil {
		return pm.IdleW, true
	}
	return s.segmentPower(g, pm, seg.jobs), true
}
