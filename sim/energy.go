package sim

import (
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
// starting now, in which jobs are active.
func (s *Sim) meter(g int, jobs []segJob) {
	pm := s.typ(g).Power
	if pm == nil {
		return
	}
	m := &s.gpus[g]
	m.energyJ += m.meterW * (s.now - m.meterAt).Seconds()
	m.meterAt = s.now
	m.meterW = s.segmentPower(g, pm, jobs)
}

// segmentPower is GPU g's power while jobs are active on it.
func (s *Sim) segmentPower(g int, pm *models.PowerModel, jobs []segJob) float64 {
	if len(jobs) == 0 {
		return pm.IdleW
	}
	a := models.Activity{Busy: true}
	comb := s.comb[:0]
	for _, j := range jobs {
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
func (s *Sim) GPUEnergy(g int) (float64, bool) {
	if s.typ(g).Power == nil {
		return 0, false
	}
	m := &s.gpus[g]
	return m.energyJ + m.meterW*(s.now-m.meterAt).Seconds(), true
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
