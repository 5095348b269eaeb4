// Package executor runs a trace on this machine's GPUs: a loop.Backend in
// wall time. Each job is a real process (its workload's command, in its own
// process group, with CUDA_VISIBLE_DEVICES set to its GPUs' UUIDs) started
// through a small shim that records how it ended; telemetry comes from an
// executor/gpu Source; failures are classified from exit codes and stderr;
// every event and action is journaled before it takes effect, so a killed
// executor can be resumed. Emulated GPUs (executor/emulate, a Mirror) model
// the GPUs with the simulator's truth while the processes, journal and
// classification stay real.
package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/traces"
)

// Config describes one executor run.
type Config struct {
	// Dir is the run directory: journal.jsonl, logs/, attempts/ and the
	// results files.
	Dir string
	// Jobs are the jobs known at the start, in submission order; Submit is
	// the offset from the run's start.
	Jobs []traces.Job
	// Live, when not nil, delivers jobs submitted during the run (a live
	// queue); it is closed when no more will come. A job arrives at its
	// Submit offset or when it is received, whichever is later.
	Live <-chan traces.Job
	// Catalog gives the profiles policies see (and checks the jobs).
	Catalog *models.Catalog
	// Workloads maps workload ids to commands. Nil means every job runs
	// `Self fake-train --workload ID` (emulation).
	Workloads map[string]*Workload
	// Source reads the GPUs' telemetry; with emulated GPUs, the emulator.
	Source gpu.Source
	// GPUs selects the Source's devices (by Device.Index) the run uses, in
	// the order policies number them; nil uses all.
	GPUs []int
	// Speedup divides every run-time interval on the wall clock (1 for real
	// runs; large values for demos and tests with emulated GPUs).
	Speedup float64
	// Self is the command that runs this program (e.g. [/usr/bin/aegis]);
	// the executor appends "attempt ..." and "fake-train ...".
	Self []string
	// MPSPipeDir, when set, points every attempt at the MPS daemon the
	// operator started (CUDA_MPS_PIPE_DIRECTORY).
	MPSPipeDir string
	// Grace is how long attempts get to exit after SIGTERM at shutdown
	// before their process groups are killed (wall time; default 10 s).
	Grace time.Duration
	// Mirror, when set, is told about submissions and placements (emulated
	// GPUs: an emulate.Emulator, which is also the Source).
	Mirror Mirror
	// Log receives operator messages (nil: discarded).
	Log io.Writer
	// IdleHorizon ends a run in which nothing runs or is to arrive and only
	// wake-ups remain for this long (run time; default 1 h).
	IdleHorizon time.Duration
	// Submitted, when set, is called with every job that becomes known
	// during the run (live queue), before it arrives.
	Submitted func(policies.Job)
	// Done, when set, is called by Execute with the run's result and its
	// error (nil: every job ended) after the results files are written and
	// before the journal is closed, so while the run directory is still
	// this executor's (aegis exec writes the run's page).
	Done func(*Result, error) error
	// Progress, when set, is called after every finished job with the
	// jobs finished and the jobs known (a progress bar).
	Progress func(done, total int)
}

// Mirror models the run's GPUs from what the executor does (emulated
// GPUs: executor/emulate). The executor calls it from the loop's
// goroutine.
type Mirror interface {
	// Attach gives the mirror the run's clock, before any other call.
	Attach(Clock)
	// Submit mirrors a job the executor knows (same id, in order).
	Submit(traces.Job)
	// Placed mirrors an attempt, whose shim is process pid, launched on
	// gpus at run time t.
	Placed(id policies.JobID, gpus []int, pid int, t time.Duration)
	// Ended mirrors the end of the job's current attempt at run time t,
	// however it ended: a mirror whose model did not end the attempt
	// itself (an attempt interrupted by the executor's shutdown, a
	// process killed from outside) takes it off its GPUs, so that the
	// job's next placement finds it pending.
	Ended(id policies.JobID, t time.Duration)
}

// Clock converts between the run's time and the wall clock (an Executor).
type Clock interface {
	RunTime(time.Time) time.Duration
	WallTime(time.Duration) time.Time
}

// attempt is one running attempt of a job.
type attempt struct {
	job            policies.JobID
	n              int
	gpus           []int
	pid            int
	start          uint64
	status, errLog string
	own            bool      // a child of this executor: its end arrives on exits
	exclusive      bool      // no other job ran on its GPUs when it started
	terminating    bool      // the executor journaled that it terminates the attempt (shutdown)
	shared         bool      // another job ran on one of its GPUs while it ran
	base           []float64 // its GPUs' used memory at launch
}

// Executor is the real-world backend. Its state is touched only by the
// goroutine running the loop; process waiters report on a channel.
type Executor struct {
	cfg         Config
	j           *Journal
	start       time.Time
	devs        []gpu.Device
	resumed     bool        // built by Resume
	devIndex    map[int]int // Device.Index -> policy GPU index
	view        policies.View
	books       *policies.Books // view.Queue, view.Failed, each GPU's Jobs
	specs       []traces.Job
	att         []*attempt
	waiting     []policies.JobID // not yet arrived, by submit time
	wakes       []time.Duration
	tel         []ring
	exits       chan *attempt
	out         []policies.Event
	last        time.Duration
	lastChange  time.Duration
	live        <-chan traces.Job
	nextPoll    time.Duration
	polled      time.Duration // the latest whole second of a reading this session took (-1: none yet)
	pollErrs    int
	noPowerSaid bool // a reading without power was said (power)
	rec         *telRecord
	foreign     int  // readings in a row listing a process not visible here
	memOnly     bool // first activity read from memory rise for every job
	timer       *time.Timer
	why         map[policies.JobID]deferral // the policy's last deferral of each job
	stallSaid   time.Duration               // the lastChange of the idle stretch watch reported (-1: none)
	replaying   bool                        // rebuilding the state from the journal: nothing is appended
	fault       error                       // the run directory failed (see dirFault): nothing more is journaled or launched
}

// New starts a run in cfg.Dir, which must not hold a journal yet; it holds
// the directory's lock until Close. Every job is checked before anything
// is written. settings are recorded in the journal for a resume (see
// Run.Settings).
func New(cfg Config, settings map[string]string) (*Executor, error) {
	x, err := prepare(cfg, time.Now())
	if err != nil {
		return nil, err
	}
	for _, sp := range cfg.Jobs {
		if err := x.check(sp); err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	n := len(cfg.Jobs)
	head := []Record{{Type: "run", Run: &Run{Start: x.start, Settings: settings, Jobs: &n}}}
	for _, sp := range cfg.Jobs {
		head = append(head, Record{Type: "job", Job: len(x.specs), Spec: specOf(sp)})
		x.add(sp)
	}
	if x.j, err = CreateJournal(filepath.Join(cfg.Dir, "journal.jsonl"), head...); err != nil {
		if errors.Is(err, ErrLocked) {
			return nil, fmt.Errorf("executor: %w", err)
		}
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("executor: %w (resume it with --resume, or choose another directory)", err)
		}
		return nil, fmt.Errorf("executor: %w", err)
	}
	// A failure here leaves a journal with nothing launched: a resume
	// makes these again.
	if err := x.mkdirs(); err != nil {
		x.j.Close()
		return nil, err
	}
	return x, nil
}

// mkdirs makes the run directory's logs/ and attempts/ and opens its
// telemetry record.
func (x *Executor) mkdirs() error {
	for _, dir := range []string{"logs", "attempts"} {
		if err := os.MkdirAll(filepath.Join(x.cfg.Dir, dir), 0o755); err != nil {
			return fmt.Errorf("executor: %w", err)
		}
	}
	var err error
	x.rec, err = openTelRecord(x.cfg.Dir, x.cfg.Log)
	return err
}

func prepare(cfg Config, start time.Time) (*Executor, error) {
	if cfg.Catalog == nil || cfg.Source == nil {
		return nil, errors.New("executor: no catalog or telemetry source")
	}
	if cfg.Speedup == 0 {
		cfg.Speedup = 1
	}
	if !(cfg.Speedup >= 1) || math.IsInf(cfg.Speedup, 0) {
		return nil, fmt.Errorf("executor: speedup %v: want a finite number >= 1", cfg.Speedup)
	}
	if cfg.Grace == 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.IdleHorizon == 0 {
		cfg.IdleHorizon = time.Hour
	}
	if len(cfg.Self) == 0 {
		return nil, errors.New("executor: no command to run the attempt shim (Self)")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	all, err := cfg.Source.Devices()
	if err != nil {
		return nil, fmt.Errorf("executor: telemetry %s: %w", cfg.Source.Name(), err)
	}
	x := &Executor{cfg: cfg, start: start, devIndex: map[int]int{}, exits: make(chan *attempt, 64), live: cfg.Live, polled: -1,
		why: map[policies.JobID]deferral{}, stallSaid: -1}
	x.books = policies.NewBooks(&x.view)
	if cfg.GPUs == nil {
		x.devs = all
	} else {
		for _, i := range cfg.GPUs {
			k := slices.IndexFunc(all, func(d gpu.Device) bool { return d.Index == i })
			if k < 0 {
				return nil, fmt.Errorf("executor: GPU %d: not found (%s lists %d GPUs)", i, cfg.Source.Name(), len(all))
			}
			if slices.ContainsFunc(x.devs, func(d gpu.Device) bool { return d.Index == i }) {
				return nil, fmt.Errorf("executor: GPU %d given twice", i)
			}
			x.devs = append(x.devs, all[k])
		}
	}
	if len(x.devs) == 0 {
		return nil, fmt.Errorf("executor: telemetry %s: no GPUs", cfg.Source.Name())
	}
	for g, d := range x.devs {
		x.devIndex[d.Index] = g
		x.view.GPUs = append(x.view.GPUs, policies.GPU{Index: g, CapacityMiB: d.TotalMiB})
	}
	x.tel = make([]ring, len(x.devs))
	x.view.Telemetry = telemetry{x}
	if cfg.Mirror != nil {
		cfg.Mirror.Attach(x)
	}
	// The pressure signals are there if every GPU reports them.
	samples, err := cfg.Source.Sample(context.Background())
	if err != nil {
		return nil, fmt.Errorf("executor: telemetry %s: first sample: %w", cfg.Source.Name(), err)
	}
	x.view.Pressure = true
	for _, s := range samples {
		if _, ok := x.devIndex[s.GPU]; ok {
			x.view.Pressure = x.view.Pressure && s.FromPressureSource()
		}
	}
	if !x.view.Pressure {
		fmt.Fprintf(cfg.Log, "telemetry %s: no SM activity/occupancy/DRAM pressure signals; policies see utilization and memory only\n", cfg.Source.Name())
	}
	return x, nil
}

func specOf(sp traces.Job) *Spec {
	return &Spec{Name: sp.ID, Workload: sp.Workload, GPUs: sp.GPUs, SubmitNs: int64(sp.Submit), SoloS: sp.SoloS}
}

// check reports why a job cannot run here.
func (x *Executor) check(sp traces.Job) error {
	w, ok := x.cfg.Catalog.Get(sp.Workload)
	switch {
	case !ok:
		return fmt.Errorf("job %s: workload %q is not in the catalog (see aegis workloads)", sp.ID, sp.Workload)
	case w.GPUs != sp.GPUs:
		return fmt.Errorf("job %s: %d GPUs, but workload %s needs %d", sp.ID, sp.GPUs, sp.Workload, w.GPUs)
	case sp.GPUs > len(x.devs):
		return fmt.Errorf("job %s needs %d GPUs; the run has %d", sp.ID, sp.GPUs, len(x.devs))
	case sp.Submit < 0:
		return fmt.Errorf("job %s: negative submit offset %v", sp.ID, sp.Submit)
	case x.cfg.Workloads != nil && x.cfg.Workloads[sp.Workload] == nil:
		return fmt.Errorf("job %s: workload %s has no command in the workloads file", sp.ID, sp.Workload)
	}
	return nil
}

// add makes a job known (waiting for its arrival).
func (x *Executor) add(sp traces.Job) policies.JobID {
	id := policies.JobID(len(x.specs))
	x.specs = append(x.specs, sp)
	x.att = append(x.att, nil)
	x.view.Jobs = append(x.view.Jobs, policies.Job{ID: id, State: policies.Waiting})
	i, _ := slices.BinarySearchFunc(x.waiting, sp.Submit, func(a policies.JobID, t time.Duration) int {
		return cmp.Compare(x.specs[a].Submit, t+1) // after equal submits: file order
	})
	x.waiting = slices.Insert(x.waiting, i, id)
	if x.cfg.Mirror != nil {
		x.cfg.Mirror.Submit(sp)
	}
	return id
}

// job is job id as submitted, with its profile.
func (x *Executor) job(id policies.JobID) policies.Job {
	sp := x.specs[id]
	w, _ := x.cfg.Catalog.Get(sp.Workload)
	prof := w.PolicyProfile()
	if sp.SoloS > 0 {
		prof.SoloS = sp.SoloS
	}
	return policies.Job{ID: id, Name: sp.ID, GPUs: sp.GPUs, Submit: sp.Submit, Profile: prof, State: policies.Waiting}
}

// Jobs returns every job known so far as submitted (for recorders).
func (x *Executor) Jobs() []policies.Job {
	out := make([]policies.Job, len(x.specs))
	for i := range x.specs {
		out[i] = x.job(policies.JobID(i))
	}
	return out
}

// Devices returns the GPUs the run uses, in policy order.
func (x *Executor) Devices() []gpu.Device { return slices.Clone(x.devs) }

// RunTime converts a wall-clock instant to run time.
func (x *Executor) RunTime(t time.Time) time.Duration {
	d := float64(t.Sub(x.start)) * x.cfg.Speedup
	return time.Duration(math.Round(d/1e3)) * time.Microsecond
}

// Stamp formats a run time for the log to the millisecond
// ("4h28m55.786s"): the journal keeps microseconds, a person reads no
// more than a wall clock's milliseconds.
func Stamp(d time.Duration) string { return d.Round(time.Millisecond).String() }

// WallTime converts run time to a wall-clock instant.
func (x *Executor) WallTime(d time.Duration) time.Time {
	return x.start.Add(time.Duration(float64(d) / x.cfg.Speedup))
}

// clock is the run time now, never before the last event.
func (x *Executor) clock() time.Duration { return max(x.RunTime(time.Now()), x.last) }

// Now is the run time now.
func (x *Executor) Now() time.Duration { return x.clock() }

func (x *Executor) emit(e policies.Event) {
	x.last = max(x.last, e.At())
	x.out = append(x.out, e)
}

func (x *Executor) journal(r Record) error {
	if x.replaying {
		return nil
	}
	if x.fault != nil {
		return x.fault
	}
	if err := x.j.Append(r); err != nil {
		return x.dirFault(err)
	}
	return nil
}

// dirFault records that the run directory failed (an I/O error on the
// journal, a log or a status file) and returns the error to end the
// scheduling loop with. From then on nothing is journaled and nothing is
// launched: what the journal says is all a resume must trust, and the
// attempts still running are left to end and record their exit status
// (Execute waits for them: drain).
func (x *Executor) dirFault(err error) error {
	if x.fault == nil {
		x.fault = fmt.Errorf("executor: %w: %s: %w", ErrRunDir, x.cfg.Dir, err)
	}
	return x.fault
}

// View implements loop.Backend: the executor's own state; the loop hands
// policies a snapshot of it.
func (x *Executor) View() *policies.View {
	x.view.Now = max(x.view.Now, x.last)
	return &x.view
}

// Next implements loop.Backend.
func (x *Executor) Next() ([]policies.Event, error) { return x.NextContext(context.Background()) }

// NextContext implements loop.ContextBackend: it waits on the wall clock
// until something happens (an arrival, a wake-up, a process's end, a
// telemetry sample showing a job's first activity) and returns what did.
func (x *Executor) NextContext(ctx context.Context) ([]policies.Event, error) {
	if x.timer == nil {
		x.timer = time.NewTimer(time.Hour)
	}
	for {
		if len(x.out) > 0 {
			evs := x.out
			x.out = nil
			x.view.Now = x.last
			return evs, nil
		}
		now := x.clock()
		x.view.Now = now
		if err := x.due(ctx, now); err != nil {
			return nil, err
		}
		if len(x.out) > 0 {
			continue
		}
		if x.over(now) {
			if n := x.view.Queue.Len(); n > 0 {
				fmt.Fprintf(x.cfg.Log, "t=%v: the run ends with %d job(s) waiting and no wake-up asked for: %s\n", Stamp(now), n, x.waitingWhy())
			}
			return nil, nil
		}
		x.watch(now)
		wait := time.Duration(float64(x.nextDue()-now) / x.cfg.Speedup)
		if !x.timer.Stop() {
			select {
			case <-x.timer.C:
			default:
			}
		}
		x.timer.Reset(max(wait, 0))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case a := <-x.exits:
			if err := x.exited(a); err != nil {
				return nil, err
			}
		case sp, ok := <-x.live:
			if !ok {
				x.live = nil
				continue
			}
			if err := x.submit(sp); err != nil {
				return nil, err
			}
		case <-x.timer.C:
		}
	}
}

// submit adds a job received during the run.
func (x *Executor) submit(sp traces.Job) error {
	sp.Submit = max(sp.Submit, x.clock())
	if err := x.check(sp); err != nil {
		fmt.Fprintf(x.cfg.Log, "live queue: %v: job rejected\n", err)
		return nil
	}
	if err := x.journal(Record{Type: "job", T: int64(x.clock()), Job: len(x.specs), Spec: specOf(sp)}); err != nil {
		return err
	}
	id := x.add(sp)
	if x.cfg.Submitted != nil {
		x.cfg.Submitted(x.job(id))
	}
	return nil
}

// due handles what is due at now: telemetry, arrivals, wake-ups. The
// telemetry first: a backlog source's readings are of seconds before now,
// and a first activity among them must not come after (and so be stamped
// at) the arrivals of a loop that woke late.
func (x *Executor) due(ctx context.Context, now time.Duration) error {
	if now >= x.nextPoll {
		x.nextPoll = now.Truncate(time.Second) + time.Second
		if err := x.poll(ctx, now); err != nil {
			return err
		}
	}
	// The poll took run time, and what it emitted (the end of an adopted
	// attempt, a first activity) is stamped when it happened: arrivals and
	// wake-ups due are taken after it, never before an event already
	// emitted (a resumed run's adopted attempts end in its polls; stamped
	// at the wake-up's time, the arrivals went back in time).
	now = max(now, x.last)
	for len(x.waiting) > 0 && x.specs[x.waiting[0]].Submit <= now {
		id := x.waiting[0]
		if err := x.journal(Record{Type: "arrived", T: int64(now), Job: int(id)}); err != nil {
			return err
		}
		x.waiting = x.waiting[1:]
		x.arrive(id, now)
	}
	if len(x.wakes) > 0 && x.wakes[0] <= now {
		for len(x.wakes) > 0 && x.wakes[0] <= now {
			x.wakes = x.wakes[1:]
		}
		x.emit(policies.Event{Kind: policies.Wakeup, T: now})
	}
	return nil
}

func (x *Executor) arrive(id policies.JobID, t time.Duration) {
	pj := &x.view.Jobs[id]
	*pj = x.job(id)
	pj.State = policies.Pending
	x.books.Enqueue(id)
	x.lastChange = t
	x.emit(policies.Event{Kind: policies.JobArrived, T: t, Job: id})
}

func (x *Executor) running() int {
	n := 0
	for _, a := range x.att {
		if a != nil {
			n++
		}
	}
	return n
}

// over reports whether the run has ended: nothing runs or is to arrive, and
// every job is finished or stopped, or no wake-up is asked for, or only
// wake-ups have happened for IdleHorizon.
func (x *Executor) over(now time.Duration) bool {
	if len(x.waiting) > 0 || x.live != nil || x.running() > 0 {
		return false
	}
	final := true
	for i := range x.view.Jobs {
		s := x.view.Jobs[i].State
		final = final && (s == policies.Done || s == policies.Stopped)
	}
	return final || len(x.wakes) == 0 || now-x.lastChange > x.cfg.IdleHorizon
}

// deferral is a policy's Defer of a job: when, on which GPU (-1: none
// meant) and why.
type deferral struct {
	t      time.Duration
	gpu    int
	reason string
}

// stallAfter is how long (run time) no attempt may run while jobs wait
// before the executor says which jobs wait and why.
const stallAfter = 10 * time.Minute

// watch says, once per stretch, that no attempt has run for stallAfter
// while jobs wait, naming the waiting jobs and why each waits: a policy
// that cannot (or does not) place a job is seen while the run goes on,
// not only when it ends with the job unfinished.
func (x *Executor) watch(now time.Duration) {
	if x.view.Queue.Len() == 0 || now-x.lastChange < stallAfter || x.stallSaid == x.lastChange || x.running() > 0 {
		return
	}
	x.stallSaid = x.lastChange
	fmt.Fprintf(x.cfg.Log, "t=%v: no attempt has run since t=%v while %d job(s) wait: %s\n", Stamp(now), Stamp(x.lastChange), x.view.Queue.Len(), x.waitingWhy())
}

// waitingWhy names the first jobs waiting and why each waits: the
// policy's last deferral of it, or that the policy neither placed nor
// deferred it.
func (x *Executor) waitingWhy() string {
	var out []string
	for i, id := range x.view.Queue.All() {
		if i == 5 {
			out = append(out, fmt.Sprintf("and %d more", x.view.Queue.Len()-5))
			break
		}
		pj := &x.view.Jobs[id]
		s := fmt.Sprintf("job %s (%s, %d GPUs", x.specs[id].ID, x.specs[id].Workload, x.specs[id].GPUs)
		if pj.OOMs > 0 {
			s += fmt.Sprintf(", %d OOM(s), recovering", pj.OOMs)
		}
		if d, ok := x.why[id]; ok && d.t >= pj.Started {
			where := ""
			if d.gpu >= 0 {
				where = fmt.Sprintf(" on GPU %d", d.gpu)
			}
			s += fmt.Sprintf("): deferred by the policy%s at t=%v: %s", where, Stamp(d.t), d.reason)
		} else {
			s += "): the policy neither placed nor deferred it"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// nextDue is the next run time at which something is due.
func (x *Executor) nextDue() time.Duration {
	t := x.nextPoll
	if len(x.waiting) > 0 {
		t = min(t, x.specs[x.waiting[0]].Submit)
	}
	if len(x.wakes) > 0 {
		t = min(t, x.wakes[0])
	}
	return t
}

// poll reads one telemetry sample per GPU, records it, and looks for first
// activity and for the end of adopted attempts. A failed read is a missed
// sample: reported, not fatal.
func (x *Executor) poll(ctx context.Context, now time.Duration) error {
	for id, a := range x.att {
		if a != nil && !a.own && !alive(a.pid, a.start) {
			if err := x.exited(a); err != nil {
				return err
			}
			_ = id
		}
	}
	samples, err := x.cfg.Source.Sample(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if x.pollErrs++; x.pollErrs <= 5 || x.pollErrs%100 == 0 {
			fmt.Fprintf(x.cfg.Log, "telemetry %s: sample missed at t=%v (%d so far): %v\n", x.cfg.Source.Name(), Stamp(now), x.pollErrs, err)
		}
		return nil
	}
	x.checkPIDs(samples)
	defer x.rec.flush()
	for _, s := range append(x.backlog(ctx, samples), samples...) {
		g, ok := x.devIndex[s.GPU]
		if !ok {
			continue
		}
		at := x.take(g, s)
		x.polled = max(x.polled, at.Truncate(time.Second))
		for _, id := range x.view.GPUs[g].Jobs {
			pj := &x.view.Jobs[id]
			if pj.Active {
				continue
			}
			if a := x.att[id]; a != nil && x.showsActivity(a, g, s) {
				if err := x.activate(id, max(at, x.last)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// take puts reading s of GPU g into the GPU's measured memory, the
// policies' window and the telemetry record, and returns the run time it
// was taken at: the reading's own, never later than the clock. Not the
// poll's run time: a source whose clock runs ahead of it (an emulator
// read after the poll began, 1 s of run time per 10 ms at 100x) would
// have its readings, first activity included, stamped seconds early.
func (x *Executor) take(g int, s gpu.Sample) time.Duration {
	at := min(x.RunTime(s.At), x.clock())
	gp := &x.view.GPUs[g]
	gp.UsedMiB = min(max(s.UsedMiB, 0), gp.CapacityMiB)
	if ps, ok := windowSample(x.view.Pressure, s, at); ok {
		x.tel[g].add(ps)
		x.rec.add(g, ps, x.power(s))
	}
	return at
}

// power is reading s's power draw in watts for the telemetry record, or
// NaN without one: the first reading without says why, once a run (an
// unsupported reading, one that failed, a source that reads none).
func (x *Executor) power(s gpu.Sample) float64 {
	if s.HasPower {
		return s.PowerW
	}
	if !x.noPowerSaid {
		x.noPowerSaid = true
		why := s.NoPower
		if why == "" {
			why = "the telemetry source " + x.cfg.Source.Name() + " reads no power"
		}
		fmt.Fprintf(x.cfg.Log, "telemetry: GPU %d: no power reading (%s); %s's %s is left empty where a reading has none\n",
			s.GPU, why, TelemetryName, results.PowerColumn)
	}
	return math.NaN()
}

// backlogSource is a Source that keeps the readings of past seconds (the
// emulator: its model has every second). Backlog returns, oldest first,
// the readings of the whole seconds of run time after after's and before
// the current one.
type backlogSource interface {
	Backlog(ctx context.Context, after time.Duration) ([]gpu.Sample, error)
}

// backlog is what a backlogSource read in the whole seconds after the
// latest one taken and before those of the current readings cur: with
// emulated GPUs a run second is 1/Speedup of a wall second (10 ms at
// 100x), and a loaded machine wakes the loop later than that, while the
// model read every second. They are taken as the current reading is, first
// activity included. A real GPU keeps no past readings: its missed seconds
// stay missed.
func (x *Executor) backlog(ctx context.Context, cur []gpu.Sample) []gpu.Sample {
	b, ok := x.cfg.Source.(backlogSource)
	if !ok || x.polled < 0 || len(cur) == 0 {
		return nil
	}
	var now time.Duration
	for _, s := range cur {
		now = max(now, x.RunTime(s.At).Truncate(time.Second))
	}
	if now-x.polled <= time.Second {
		return nil
	}
	past, err := b.Backlog(ctx, x.polled)
	if err != nil {
		fmt.Fprintf(x.cfg.Log, "telemetry %s: the readings after t=%v missed: %v\n", x.cfg.Source.Name(), Stamp(x.polled), err)
		return nil
	}
	// The source's clock went on since cur: the seconds from cur's on are
	// the next poll's, so that every reading is taken in order.
	return slices.DeleteFunc(past, func(s gpu.Sample) bool { return x.RunTime(s.At).Truncate(time.Second) >= now })
}

// windowSample is the policies' telemetry sample for reading s taken at run
// time at. In a run with pressure signals, a reading without them (a stale or
// N/A DCGM value, a failed GPM sample) is a missed sample (ok false): its
// zeros would make a busy GPU look idle to the pressure filter. The reading
// still updates the GPU's measured memory and shows first activity.
func windowSample(pressure bool, s gpu.Sample, at time.Duration) (ps policies.Sample, ok bool) {
	if pressure && !s.Pressure {
		return policies.Sample{}, false
	}
	ps = policies.Sample{At: at, UtilPct: s.UtilPct, UsedMiB: s.UsedMiB}
	if pressure {
		ps.SMACT, ps.SMOCC, ps.DRAMA = s.SMACT, s.SMOCC, s.DRAMA
	}
	return ps, true
}

// foreignAfter is how many readings in a row must list a process this
// executor cannot see before it stops trusting the source's PIDs (one such
// reading can be a process that exited since).
const foreignAfter = 3

// checkPIDs notices when the telemetry's process IDs cannot identify jobs:
// a driver whose process list is not read (ProcsUnknown), or PIDs from
// another PID namespace (inside a container NVML may report the host's).
// From then on first activity is read from each GPU's memory rise, for
// every job, shared or not; it says so once.
func (x *Executor) checkPIDs(samples []gpu.Sample) {
	if x.memOnly {
		return
	}
	why := ""
	foreign := false
	for _, s := range samples {
		if s.ProcsUnknown {
			why = "the driver's process list is not read"
			break
		}
		for _, p := range s.Procs {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", p.PID)); errors.Is(err, fs.ErrNotExist) {
				foreign = true
			}
		}
	}
	if foreign {
		x.foreign++
	} else {
		x.foreign = 0
	}
	if why == "" && x.foreign >= foreignAfter {
		why = fmt.Sprintf("%d readings in a row list GPU processes that do not exist here (another PID namespace, e.g. a container)", x.foreign)
	}
	if why != "" {
		x.memOnly = true
		fmt.Fprintf(x.cfg.Log, "telemetry %s: %s: first activity is now read from each GPU's memory rise (over %d MiB since launch) for every job\n", x.cfg.Source.Name(), why, activityMiB)
	}
}

// showsActivity reports whether sample s of GPU g shows attempt a's first
// activity: one of its processes (the shim or a process in its group) uses
// the GPU, or, for an attempt that started alone on its GPUs (for every
// attempt when the PIDs cannot be trusted: checkPIDs), the GPU's memory
// rose by more than a CUDA context's worth since the launch.
func (x *Executor) showsActivity(a *attempt, g int, s gpu.Sample) bool {
	for _, p := range s.Procs {
		if p.PID == a.pid {
			return true
		}
		if st, err := readStat(p.PID); err == nil && st.pgrp == a.pid {
			return true
		}
	}
	k := slices.Index(a.gpus, g)
	return (a.exclusive || x.memOnly) && k >= 0 && s.UsedMiB > a.base[k]+activityMiB
}

// activityMiB is the memory rise that shows a job's first activity when
// processes cannot be matched (e.g. in a container with its own PIDs).
const activityMiB = 256

func (x *Executor) activate(id policies.JobID, t time.Duration) error {
	pj := &x.view.Jobs[id]
	if err := x.journal(Record{Type: "active", T: int64(t), Job: int(id), Attempt: pj.Attempts}); err != nil {
		return err
	}
	pj.Active, pj.ActiveAt = true, t
	x.lastChange = t
	x.emit(policies.Event{Kind: policies.JobActive, T: t, Job: id, Attempt: pj.Attempts})
	return nil
}

// exited ends attempt a: finished on exit code 0, else failed as Classify
// says (its status file gone means the shim itself was killed).
func (x *Executor) exited(a *attempt) error {
	return x.ended(a, "the attempt's process ended without recording an exit status (killed?)")
}

// ended is exited, with the reason of the failure when a's shim recorded no
// exit status. What is left of the attempt's process group (the job's
// command and its children, when the shim itself was killed) is killed
// first, so that nothing of it keeps the GPUs. The status the attempt
// recorded wins: exit 0 finishes the job even when the executor was
// terminating the attempt; an attempt it terminated that did not finish
// and did not run out of memory was interrupted, and its job is placed
// again.
func (x *Executor) ended(a *attempt, noStatus string) error {
	if x.att[a.job] != a {
		return nil // already ended (shutdown)
	}
	left, err := reapGroup(a.pid, a.start)
	if err != nil {
		fmt.Fprintf(x.cfg.Log, "job %s attempt %d: %v\n", x.specs[a.job].ID, a.n, err)
	}
	st, ok, err := readStatus(a.status)
	if err != nil {
		return x.dirFault(err)
	}
	if ok && st.Code == 0 {
		return x.finish(a)
	}
	f, reason := policies.OtherFailure, noStatus
	if !ok && left {
		reason += fmt.Sprintf("; what was left of its process group %d was killed", a.pid)
	}
	if ok {
		f, reason = x.classify(a, st)
	}
	if a.terminating && f != policies.OOM {
		return x.interrupt(a, fmt.Sprintf("attempt %d interrupted by the executor's shutdown (%s)", a.n, reason))
	}
	return x.fail(a, f, reason)
}

// classify says how an attempt that recorded exit status st failed.
func (x *Executor) classify(a *attempt, st Status) (policies.Failure, string) {
	oomCode := 0
	if w := x.cfg.Workloads[x.specs[a.job].Workload]; w != nil && w.OOMExitCode != nil {
		oomCode = *w.OOMExitCode
	}
	f := Classify(st.Code, tail(a.errLog, TailBytes), oomCode)
	reason := "exit code " + strconv.Itoa(st.Code)
	if st.Signal != "" {
		reason = "killed by " + st.Signal
	}
	if st.Error != "" {
		reason = st.Error
	}
	return f, reason
}

// interrupt journals that attempt a, which the executor terminated, ended
// without finishing, and puts its job back (interrupted).
func (x *Executor) interrupt(a *attempt, reason string) error {
	t := x.clock()
	if err := x.journal(Record{Type: "interrupted", T: int64(t), Job: int(a.job), Attempt: a.n, Reason: reason}); err != nil {
		return err
	}
	x.interrupted(a, t, reason)
	return nil
}

// interrupted applies an interrupted attempt: its job is pending again,
// back in the recovery queue (view.Failed) when its last failure had put
// it there, with its ladder state (OOM count, last failure) unchanged, and
// the policy hears of it as a placement that did not take effect
// (PlaceFailed), so that it places the job again.
func (x *Executor) interrupted(a *attempt, t time.Duration, reason string) {
	x.release(a)
	pj := &x.view.Jobs[a.job]
	pj.State = policies.Pending
	if pj.LastFailure != policies.NoFailure {
		x.books.Fail(a.job)
	} else {
		x.books.Enqueue(a.job)
	}
	if reason == "" {
		reason = fmt.Sprintf("attempt %d interrupted", a.n)
	}
	x.emit(policies.Event{Kind: policies.PlaceFailed, T: t, Job: a.job, GPUs: slices.Clone(a.gpus), Reason: reason})
}

// tail returns the last n bytes of a file (nil when unreadable).
func tail(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(fi.Size()-n, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	return b
}

func (x *Executor) finish(a *attempt) error {
	t := x.clock()
	if err := x.journal(Record{Type: "finished", T: int64(t), Job: int(a.job), Attempt: a.n}); err != nil {
		return err
	}
	x.finished(a, t)
	return nil
}

// finished applies a finished attempt to the state and emits it.
func (x *Executor) finished(a *attempt, t time.Duration) {
	x.release(a)
	x.view.Jobs[a.job].State = policies.Done
	x.emit(policies.Event{Kind: policies.JobFinished, T: t, Job: a.job, Attempt: a.n})
}

func (x *Executor) fail(a *attempt, f policies.Failure, reason string) error {
	t := x.clock()
	// Shared while it ran, not only now: the emulator ends an OOM victim
	// and a job beside it that finished in the same step together, and
	// the executor may see the finish first.
	shared := a.shared
	for _, g := range a.gpus {
		shared = shared || len(x.view.GPUs[g].Jobs) > 1
	}
	if err := x.journal(Record{Type: "failed", T: int64(t), Job: int(a.job), Attempt: a.n, Failure: f.String(),
		GPU: a.gpus[0], Shared: shared, Reason: reason}); err != nil {
		return err
	}
	fmt.Fprintf(x.cfg.Log, "t=%v job %s attempt %d failed (%s): %s; log %s\n", Stamp(t), x.specs[a.job].ID, a.n, f, reason, a.errLog)
	x.failed(a, f, shared, t)
	return nil
}

// failed applies a failure to the state and emits it.
func (x *Executor) failed(a *attempt, f policies.Failure, shared bool, t time.Duration) {
	x.release(a)
	pj := &x.view.Jobs[a.job]
	pj.State = policies.Pending
	if f == policies.OOM {
		pj.OOMs++
	}
	pj.LastFailure, pj.FailedAt, pj.FailedShared = f, t, shared
	x.books.Fail(a.job)
	x.emit(policies.Event{Kind: policies.JobFailed, T: t, Job: a.job, Attempt: a.n, Failure: f, GPU: a.gpus[0]})
}

// release takes an attempt off its GPUs.
func (x *Executor) release(a *attempt) {
	pj := &x.view.Jobs[a.job]
	x.books.Release(a.job, a.gpus)
	pj.On, pj.Active = nil, false
	x.att[a.job] = nil
	x.lastChange = x.last
	if x.cfg.Mirror != nil && !x.replaying {
		x.cfg.Mirror.Ended(a.job, x.last)
	}
}

// Apply implements loop.Backend.
func (x *Executor) Apply(a policies.Action) error {
	switch a.Kind {
	case policies.Place:
		return x.place(a)
	case policies.Stop:
		id := int(a.Job)
		if id < 0 || id >= len(x.specs) || x.view.Jobs[id].State != policies.Pending {
			return fmt.Errorf("executor: stop job %d: not a pending job", a.Job)
		}
		t := x.clock()
		if err := x.journal(Record{Type: "stopped", T: int64(t), Job: id, Reason: a.Reason}); err != nil {
			return err
		}
		x.stopped(a.Job, t, a.Reason)
		return nil
	case policies.Wake:
		t := x.clock()
		if a.At <= t {
			if n := len(x.out); n == 0 || x.out[n-1].Kind != policies.Wakeup || x.out[n-1].T != t {
				x.emit(policies.Event{Kind: policies.Wakeup, T: t})
			}
			return nil
		}
		if i, ok := slices.BinarySearch(x.wakes, a.At); !ok {
			x.wakes = slices.Insert(x.wakes, i, a.At)
		}
		return nil
	case policies.Defer:
		if int(a.Job) >= 0 && int(a.Job) < len(x.specs) {
			x.why[a.Job] = deferral{t: x.clock(), gpu: a.GPU, reason: a.Reason}
		}
		return nil
	}
	return fmt.Errorf("executor: unknown action %v", a.Kind)
}

func (x *Executor) place(p policies.Action) error {
	if err := x.view.CheckPlace(p); err != nil {
		return fmt.Errorf("executor: %w", err)
	}
	id := int(p.Job)
	pj := &x.view.Jobs[id]
	t := x.clock()
	a := &attempt{job: p.Job, n: pj.Attempts + 1, gpus: slices.Clone(p.GPUs), own: true, exclusive: true}
	a.status, a.errLog = x.paths(a)
	for _, g := range a.gpus {
		a.exclusive = a.exclusive && len(x.view.GPUs[g].Jobs) == 0
		a.base = append(a.base, x.view.GPUs[g].UsedMiB)
	}
	if err := x.journal(Record{Type: "launch", T: int64(t), Job: id, Attempt: a.n, GPUs: a.gpus}); err != nil {
		return err
	}
	stdout, stderr, err := x.logs(a)
	if err != nil {
		return x.dirFault(err)
	}
	if err := x.launch(a, stdout, stderr); err != nil {
		// The loop records the failure before the events emitted since
		// the last Next (a stop earlier in this decision): at their time.
		for _, e := range x.out {
			t = min(t, e.At())
		}
		if jerr := x.journal(Record{Type: "place-failed", T: int64(t), Job: id, Attempt: a.n, GPUs: a.gpus, Reason: err.Error()}); jerr != nil {
			return jerr
		}
		return &loop.PlaceError{T: t, Job: p.Job, GPUs: a.gpus, Err: err}
	}
	err = x.journal(Record{Type: "started", T: int64(t), Job: id, Attempt: a.n, GPUs: a.gpus, PID: a.pid,
		Start: a.start, Shared: !a.exclusive})
	x.started(a, t) // it runs, journaled or not: Execute waits for it
	return err
}

// stopped applies a stopped job to the state and emits it.
func (x *Executor) stopped(id policies.JobID, t time.Duration, reason string) {
	x.books.Dequeue(id)
	x.view.Jobs[id].State = policies.Stopped
	x.lastChange = t
	x.emit(policies.Event{Kind: policies.JobStopped, T: t, Job: id, Reason: reason})
}

// started applies a started attempt to the state and emits it.
func (x *Executor) started(a *attempt, t time.Duration) {
	pj := &x.view.Jobs[a.job]
	x.books.Dequeue(a.job)
	pj.State = policies.Running
	pj.Attempts = a.n
	pj.On = slices.Clone(a.gpus)
	pj.Started, pj.Active, pj.ActiveAt = t, false, 0
	for _, g := range a.gpus {
		for _, o := range x.view.GPUs[g].Jobs {
			if b := x.att[o]; b != nil {
				a.shared, b.shared = true, true
			}
		}
	}
	x.books.Place(a.job, a.gpus)
	x.att[a.job] = a
	x.lastChange = t
	x.emit(policies.Event{Kind: policies.JobStarted, T: t, Job: a.job, Attempt: a.n, GPUs: slices.Clone(a.gpus), Shared: !a.exclusive})
	if x.cfg.Mirror != nil && !x.replaying && a.pid > 0 {
		x.cfg.Mirror.Placed(a.job, a.gpus, a.pid, t)
	}
}

// paths are an attempt's status file and stderr log.
func (x *Executor) paths(a *attempt) (status, errLog string) {
	base := fmt.Sprintf("job%d.%d", a.job, a.n)
	return filepath.Join(x.cfg.Dir, "attempts", base+".exit"), filepath.Join(x.cfg.Dir, "logs", base+".err")
}

// logs creates an attempt's stdout and stderr logs.
func (x *Executor) logs(a *attempt) (stdout, stderr *os.File, err error) {
	stdout, err = os.Create(strings.TrimSuffix(a.errLog, ".err") + ".out")
	if err != nil {
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	if stderr, err = os.Create(a.errLog); err != nil {
		stdout.Close()
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	return stdout, stderr, nil
}

// launch starts an attempt's shim in a new process group, with its logs
// (which it closes).
func (x *Executor) launch(a *attempt, stdout, stderr *os.File) error {
	defer stdout.Close()
	defer stderr.Close()
	sp := x.specs[a.job]
	var argv []string
	env := os.Environ()
	dir := ""
	if w := x.cfg.Workloads[sp.Workload]; w != nil {
		argv = w.Command
		dir = w.Dir
		for k, v := range w.Env {
			env = append(env, k+"="+v)
		}
	} else {
		argv = append(slices.Clone(x.cfg.Self), "fake-train", "--workload", sp.Workload)
	}
	var uuids []string
	for _, g := range a.gpus {
		uuids = append(uuids, x.devs[g].UUID)
	}
	env = append(env, "CUDA_VISIBLE_DEVICES="+strings.Join(uuids, ","))
	if x.cfg.MPSPipeDir != "" {
		env = append(env, "CUDA_MPS_PIPE_DIRECTORY="+x.cfg.MPSPipeDir)
	}
	args := append(slices.Clone(x.cfg.Self[1:]), "attempt", "--status", a.status, "--")
	cmd := exec.Command(x.cfg.Self[0], append(args, argv...)...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", x.cfg.Self[0], err)
	}
	a.pid = cmd.Process.Pid
	st, err := readStat(a.pid)
	if err != nil {
		return fmt.Errorf("started process %d: %w", a.pid, err)
	}
	a.start = st.start
	go func() {
		cmd.Wait()
		x.exits <- a
	}()
	return nil
}

// Shutdown ends every running attempt. An attempt that already ended on
// its own (its status recorded) ends as its status says. Of the others,
// the executor journals that it terminates them ("terminate", before any
// signal: a resume after a kill in the middle can tell), sends SIGTERM to
// their process groups and SIGKILL to groups still there after the grace
// period, and returns once no process of any group remains (or after a
// further grace period, reporting the groups left). Each then ends as its
// status says (ended): finished when it exited 0 meanwhile, failed when it
// ran out of memory, else interrupted, so that a resumed run places it
// again; never interrupted when it finished.
func (x *Executor) Shutdown() error {
	var groups []*attempt
	for _, a := range x.att {
		if a == nil {
			continue
		}
		if _, ok, _ := readStatus(a.status); ok {
			if err := x.exited(a); err != nil {
				return fmt.Errorf("%w; the attempts are left running for aegis exec --resume %s to adopt", err, x.cfg.Dir)
			}
			continue
		}
		if err := x.journal(Record{Type: "terminate", T: int64(x.clock()), Job: int(a.job), Attempt: a.n}); err != nil {
			return fmt.Errorf("%w; the attempts are left running for aegis exec --resume %s to adopt", err, x.cfg.Dir)
		}
		a.terminating = true
		groups = append(groups, a)
	}
	var errs []error
	for _, a := range groups {
		errs = append(errs, signalGroup(a.pid, syscall.SIGTERM))
	}
	wait := func(d time.Duration) []*attempt {
		deadline := time.Now().Add(d)
		for {
			var left []*attempt
			for _, a := range groups {
				if groupAlive(a.pid) {
					left = append(left, a)
				}
			}
			if len(left) == 0 || time.Now().After(deadline) {
				return left
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if left := wait(x.cfg.Grace); len(left) > 0 {
		for _, a := range left {
			fmt.Fprintf(x.cfg.Log, "job %s attempt %d: still running %v after SIGTERM; killing process group %d\n",
				x.specs[a.job].ID, a.n, x.cfg.Grace, a.pid)
			errs = append(errs, signalGroup(a.pid, syscall.SIGKILL))
		}
		if left := wait(x.cfg.Grace); len(left) > 0 {
			errs = append(errs, fmt.Errorf("executor: %d process group(s) survived SIGKILL", len(left)))
		}
	}
	for _, a := range groups {
		if err := x.ended(a, "the attempt's process ended without recording an exit status"); err != nil {
			errs = append(errs, err)
			x.release(a)
		}
	}
	return errors.Join(errs...)
}

// Close closes the journal.
func (x *Executor) Close() error {
	if x.timer != nil {
		x.timer.Stop()
	}
	return errors.Join(x.rec.close(), x.j.Close())
}

// ring holds a GPU's recent samples, at most one per whole second, by time.
type ring struct{ s []policies.Sample }

const keepSamples = 4096

func (r *ring) add(x policies.Sample) {
	if n := len(r.s); n > 0 {
		last := r.s[n-1].At
		if x.At < last {
			return // out of order: older than what is recorded
		}
		if x.At.Truncate(time.Second) == last.Truncate(time.Second) {
			r.s[n-1] = x
			return
		}
	}
	if len(r.s) >= keepSamples {
		r.s = append(r.s[:0], r.s[keepSamples/4:]...)
	}
	r.s = append(r.s, x)
}

type telemetry struct{ x *Executor }

// Samples implements policies.Telemetry: the samples taken in the last n
// whole seconds, by their timestamps (missed seconds are simply absent).
func (t telemetry) Samples(dst []policies.Sample, g, n int) []policies.Sample {
	s := t.x.tel[g].s
	now := t.x.view.Now.Truncate(time.Second)
	lo := now - time.Duration(n)*time.Second
	i, _ := slices.BinarySearchFunc(s, lo+time.Second, func(x policies.Sample, t time.Duration) int {
		return cmp.Compare(x.At.Truncate(time.Second), t)
	})
	for ; i < len(s) && s[i].At.Truncate(time.Second) <= now; i++ {
		dst = append(dst, s[i])
	}
	return dst
}
