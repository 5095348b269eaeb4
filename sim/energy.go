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
