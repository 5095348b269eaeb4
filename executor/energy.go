package executor

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/results"
)

// meter reads the run's GPUs' energy counters at the start and the end of
// a session (gpu.EnergyMeter): the energy to solution as measured.
type meter struct {
	m     gpu.EnergyMeter
	pos   []int // the run's GPUs' positions in the source's Devices order
	start []uint64
	// note says why there is no measurement; empty means columns,
	// "-" no columns at all (a source without a counter).
	note string
}

// wrapFloor is how close to the top of its 64 bits a counter must have been
// for a smaller end reading to count as a wrap rather than a reset (a
// driver reload restarts it from 0).
const wrapFloor = math.MaxUint64 - 1<<50

// startEnergy reads the counters at the start of a session; a source that
// reads none, an unsupported counter or a failed read is said once.
func (x *Executor) startEnergy(ctx context.Context) *meter {
	m, ok := x.cfg.Source.(gpu.EnergyMeter)
	if !ok {
		return &meter{note: "-"}
	}
	e := &meter{m: m}
	devs, err := x.cfg.Source.Devices()
	if err != nil {
		return e.fail(x, fmt.Errorf("devices: %w", err))
	}
	at := map[int]int{}
	for k, d := range devs {
		at[d.Index] = k
	}
	for _, d := range x.devs {
		e.pos = append(e.pos, at[d.Index])
	}
	if x.resumed {
		return e.fail(x, errors.New("a resumed run: the counter would cover this session only"))
	}
	v, err := m.Energy(ctx)
	if err != nil {
		return e.fail(x, err)
	}
	e.start = v
	return e
}

// fail records why the run has no measured energy and says so.
func (e *meter) fail(x *Executor, err error) *meter {
	e.note = err.Error()
	fmt.Fprintf(x.cfg.Log, "energy: not measured (%v); summary.csv's energy columns are left empty\n", err)
	return e
}

// finish reads the counters at the end of the session and sets s's energy:
// the counters' differences summed over the run's GPUs (a counter that
// wrapped past 2^64 mJ counts modulo 2^64), or empty with the reason.
func (e *meter) finish(ctx context.Context, x *Executor, s *results.Summary) {
	switch {
	case e.note == "-":
		s.EnergyNote = "the telemetry source " + x.cfg.Source.Name() + " reads no energy counter"
		return
	case e.note != "":
		s.Energy, s.EnergyNote = &results.Energy{J: math.NaN(), GPUs: len(x.devs)}, e.note
		return
	}
	end, err := e.m.Energy(ctx)
	if err == nil {
		var mj uint64
		for i, k := range e.pos {
			if k >= len(end) || k >= len(e.start) {
				err = fmt.Errorf("the counter read %d GPUs at the start and %d at the end", len(e.start), len(end))
				break
			}
			a, b := e.start[k], end[k]
			if b < a && a < wrapFloor {
				err = fmt.Errorf("GPU %d's counter went back from %d to %d mJ (a driver reload?)", x.devs[i].Index, a, b)
				break
			}
			mj += b - a // modulo 2^64: a wrap counts right
		}
		if err == nil {
			s.Energy = &results.Energy{J: float64(mj) / 1000, GPUs: len(x.devs)}
			return
		}
	}
	e.fail(x, fmt.Errorf("at the end: %w", err))
	s.Energy, s.EnergyNote = &results.Energy{J: math.NaN(), GPUs: len(x.devs)}, e.note
}
