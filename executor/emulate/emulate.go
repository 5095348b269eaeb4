// Package emulate models a server's GPUs for the real executor with the
// simulator's truth: an Emulator is both the run's gpu.Source (telemetry)
// and its executor.Mirror (told of every submission and placement), so the
// processes, journal and failure classification stay real while the GPUs
// are the simulator's.
package emulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"syscall"
	"time"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// Emulator models a server's GPUs for the executor with the simulator's
// truth (sim.Sim driven by the executor's clock): job progress under
// interference, the memory ramp, OOM and 1 Hz telemetry. The processes are
// real (`aegis fake-train`): the emulator ends one with SIGUSR1 when the
// model says its work is done and with SIGUSR2 (an OOM message on stderr)
// when its GPU's memory overflows. It is the run's gpu.Source.
//
// A resumed run gets a fresh model: adopted attempts start over in it.
type Emulator struct {
	mu     sync.Mutex
	srv    models.Server
	s      *sim.Sim
	clock  executor.Clock
	pids   map[policies.JobID]pending // the current attempt's shim
	shims  map[attempt]int            // every attempt's shim, for past readings
	signal []pending                  // signals to send until the shim is gone
	log    io.Writer
	// noPower says why the GPU type has no power model (nil: it has one).
	noPower error
}

// attempt names a job's attempt (its number as the model counts them).
type attempt struct {
	job policies.JobID
	n   int
}

type pending struct {
	pid   int
	start uint64
	sig   syscall.Signal
}

// New builds an emulated server: srv's GPU type and count, its
// catalog and interference model, truth settings and seed as the
// simulator takes them, and the type's telemetry combination and GPU speed
// classes (models.TelemetryFor, models.SpeedsFor), as aegis simulate uses
// them.
func New(srv models.Server, cat *models.Catalog, inter models.Interference, truth sim.Truth, seed uint64, log io.Writer) (*Emulator, error) {
	combine, err := models.TelemetryFor(srv.Type)
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	speeds, err := models.SpeedsFor(srv.Type)
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	// The power model meters the GPUs' energy counters (Energy); a type
	// without one has none.
	power, noPower := models.PowerFor(srv.Type)
	if noPower != nil && !errors.Is(noPower, models.ErrNoPower) {
		return nil, fmt.Errorf("emulator: %w", noPower)
	}
	s, err := sim.New(sim.Config{Server: srv, Catalog: cat, Interference: inter, Telemetry: combine, Truth: truth, Seed: seed, Speeds: speeds, Power: power}, nil)
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	if log == nil {
		log = io.Discard
	}
	return &Emulator{srv: srv, s: s, pids: map[policies.JobID]pending{}, shims: map[attempt]int{}, log: log, noPower: noPower}, nil
}

// Attach implements executor.Mirror: the run's clock.
func (e *Emulator) Attach(c executor.Clock) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.clock = c
}

// Submit implements executor.Mirror: it mirrors a job the executor knows
// (same id).
func (e *Emulator) Submit(sp traces.Job) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.s.Add(sp); err != nil {
		fmt.Fprintf(e.log, "emulator: %v\n", err)
	}
}

// Placed implements executor.Mirror: it mirrors an attempt launched at run
// time t.
func (e *Emulator) Placed(id policies.JobID, gpus []int, pid int, t time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceTo(max(t, e.s.Now()))
	// The executor places again a job whose last attempt the model
	// finished but whose process ended otherwise (a terminating attempt
	// the model finished as it was interrupted), or, had Ended been
	// missed, one the model still runs: the model follows the executor.
	if st := e.s.View().Jobs[id].State; st == policies.Running || st == policies.Done {
		e.withdraw(id)
	}
	if err := e.s.Apply(policies.Action{Kind: policies.Place, Job: id, GPUs: gpus}); err != nil {
		fmt.Fprintf(e.log, "emulator: %v\n", err)
		return
	}
	start, err := executor.ProcessStart(pid)
	if err != nil {
		fmt.Fprintf(e.log, "emulator: job %d: process %d: %v\n", id, pid, err)
		return
	}
	e.pids[id] = pending{pid: pid, start: start}
	e.shims[attempt{id, e.s.View().Jobs[id].Attempts}] = pid
}

// Ended implements executor.Mirror: an attempt the model still runs whose
// process ended otherwise (interrupted by the executor's shutdown, killed
// from outside) is withdrawn from the model, so that its memory and
// activity leave the GPUs now and the job's next attempt finds it
// pending. Attempts the model ended itself are left as they are.
func (e *Emulator) Ended(id policies.JobID, t time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advanceTo(max(t, e.s.Now()))
	if e.s.View().Jobs[id].State == policies.Running {
		e.withdraw(id)
	}
	delete(e.pids, id)
}

// withdraw puts job id back in the model's queue (sim.Withdraw).
func (e *Emulator) withdraw(id policies.JobID) {
	if err := e.s.Withdraw(id); err != nil {
		fmt.Fprintf(e.log, "emulator: %v\n", err)
	}
}

// now is the run time.
func (e *Emulator) now() time.Duration {
	if e.clock == nil {
		return e.s.Now()
	}
	return max(e.clock.RunTime(time.Now()), e.s.Now())
}

// advance drives the model to now and ends the processes it says end.
func (e *Emulator) advance() { e.advanceTo(e.now()) }

// advanceTo drives the model to t and ends the processes it says end.
func (e *Emulator) advanceTo(t time.Duration) {
	evs, err := e.s.AdvanceTo(t)
	if err != nil {
		fmt.Fprintf(e.log, "emulator: %v\n", err)
	}
	for _, ev := range evs {
		p, ok := e.pids[jobOf(ev)]
		if !ok {
			continue
		}
		switch ev.Kind {
		case policies.JobFinished:
			p.sig = syscall.SIGUSR1
		case policies.JobFailed:
			p.sig = syscall.SIGUSR2
		default:
			continue
		}
		e.signal = append(e.signal, p)
	}
	// A Go program drops SIGUSR1/2 that arrive before it asks for them, so
	// a signal is sent again at every step until its process is gone (the
	// shim passes it on to the job once the job catches it).
	left := e.signal[:0]
	for _, p := range e.signal {
		if !executor.SignalIfCaught(p.pid, p.start, p.sig) {
			left = append(left, p)
		}
	}
	e.signal = left
}

// Name implements gpu.Source.
func (e *Emulator) Name() string { return "emulated" }

// Devices implements gpu.Source.
func (e *Emulator) Devices() ([]gpu.Device, error) {
	var ds []gpu.Device
	for i := range e.srv.GPUs {
		ds = append(ds, gpu.Device{Index: i, UUID: fmt.Sprintf("EMU-%s-%d", e.srv.Type.Name, i),
			Name: "emulated " + e.srv.Type.Name, TotalMiB: e.srv.Type.MemoryMiB})
	}
	return ds, nil
}

// Sample implements gpu.Source: the model's telemetry of the current whole
// second, with the processes of the jobs that hold GPU memory.
func (e *Emulator) Sample(ctx context.Context) ([]gpu.Sample, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, err := e.step(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]gpu.Sample, len(v.GPUs))
	var buf []policies.Sample
	for g := range v.GPUs {
		buf = v.Telemetry.Samples(buf[:0], g, 1)
		s := gpu.Sample{GPU: g, At: time.Now(), TotalMiB: e.srv.Type.MemoryMiB, Pressure: e.srv.Type.Pressure}
		if len(buf) > 0 {
			s = e.reading(g, buf[len(buf)-1])
		} else {
			e.power(&s, g, e.s.Now())
		}
		s.Procs = e.procs(g, e.s.Now())
		out[g] = s
	}
	return out, nil
}

// Energy implements gpu.EnergyMeter: each GPU's energy counter as the
// power model meters the modelled activity (millijoules since the run's
// start), or an error wrapping gpu.ErrNoEnergy for a GPU type without a
// power model.
func (e *Emulator) Energy(ctx context.Context) ([]uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, err := e.step(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(v.GPUs))
	for g := range v.GPUs {
		j, ok := e.s.GPUEnergy(g)
		if !ok {
			return nil, fmt.Errorf("emulated %w: %v", gpu.ErrNoEnergy, e.noPower)
		}
		out[g] = uint64(math.Round(j * 1000))
	}
	return out, nil
}

// Backlog implements the executor's optional backlog of a Source: the
// model's readings of the whole seconds of run time after after's and
// before the current one, GPU by GPU, oldest first, so that an executor
// whose loop wakes late (a run second is 1/speedup of a wall second)
// misses none. Their process lists are of the attempts on the GPU at
// their second, those that have ended since included (a collocated job
// can show activity and hit its OOM between two polls).
func (e *Emulator) Backlog(ctx context.Context, after time.Duration) ([]gpu.Sample, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, err := e.step(ctx)
	if err != nil {
		return nil, err
	}
	from, to := after.Truncate(time.Second), e.s.Now().Truncate(time.Second)
	n := int((to - from) / time.Second)
	var out []gpu.Sample
	var buf []policies.Sample
	for g := range v.GPUs {
		buf = v.Telemetry.Samples(buf[:0], g, n)
		for _, x := range buf {
			if k := x.At.Truncate(time.Second); k > from && k < to {
				s := e.reading(g, x)
				s.Procs = e.procs(g, x.At)
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// step drives the model to now, with e.mu held, and returns its view.
func (e *Emulator) step(ctx context.Context) (*policies.View, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if e.clock == nil {
		return nil, errors.New("emulator: not attached to an executor")
	}
	e.advance()
	return e.s.View(), nil
}

// procs are the processes of the attempts that held memory on GPU g at
// run time t (at now: the current attempts'; one that ended is no longer
// on the GPU, and not listed).
func (e *Emulator) procs(g int, t time.Duration) []gpu.Proc {
	var ps []gpu.Proc
	for _, j := range e.s.JobsAt(nil, g, t) {
		if pid := e.shims[attempt{j.Job, j.Attempt}]; pid > 0 {
			ps = append(ps, gpu.Proc{PID: pid, UsedMiB: j.MiB})
		}
	}
	return ps
}

// reading is the telemetry reading of GPU g the model's sample x makes.
func (e *Emulator) reading(g int, x policies.Sample) gpu.Sample {
	s := gpu.Sample{GPU: g, At: e.clock.WallTime(x.At), TotalMiB: e.srv.Type.MemoryMiB, Pressure: e.srv.Type.Pressure,
		UsedMiB: x.UsedMiB, UtilPct: x.UtilPct, SMACT: x.SMACT, SMOCC: x.SMOCC, DRAMA: x.DRAMA}
	e.power(&s, g, x.At)
	return s
}

// power sets reading s of GPU g at run time t's power: the power model's
// at the activity then, as the energy counter (Energy) meters it, or why
// there is none.
func (e *Emulator) power(s *gpu.Sample, g int, t time.Duration) {
	if w, ok := e.s.PowerAt(g, t); ok {
		s.HasPower, s.PowerW = true, w
		return
	}
	s.NoPower = fmt.Sprintf("emulated: %v", e.noPower)
}

// Close implements gpu.Source.
func (e *Emulator) Close() error { return nil }

// jobOf is the job an event of the model concerns (-1 for none).
func jobOf(ev policies.Event) policies.JobID {
	switch ev.Kind {
	case policies.JobFinished:
		return ev.Job
	case policies.JobFailed:
		return ev.Job
	}
	return -1
}
