// Package sim is the discrete-event simulator of a multi-GPU server: it owns
// virtual time and the truth (job progress under interference, memory ramps
// and OOMs, startup, telemetry) and implements the scheduling loop's Backend.
package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// Truth holds the simulator's truth-model settings that are not per workload.
type Truth struct {
	// ContextMiB is the CUDA context a process allocates at first activity.
	// About 500 MiB on A100 with PyTorch: an assumption (docs/simulator.md),
	// not a fitted value.
	ContextMiB float64
	// Ramp is the time from first activity until a job's memory reaches its
	// profiled peak; memory grows linearly from the context in between.
	// Assumption: the first training iterations allocate weights, optimizer
	// state and activations within seconds; the AEGIS artifact's failed OOM
	// attempts lasted tens of seconds (startup plus ramp). 15 s by default.
	Ramp time.Duration
	// StartupJitter is the relative half-width of the uniform jitter applied
	// to a workload's nominal startup time, per attempt (0.15 = ±15 %).
	StartupJitter float64
	// Noise scales telemetry noise; 1 draws each job's samples from a normal
	// distribution with its profiled mean and a σ fitted to its p95, 0
	// gives noiseless samples.
	Noise float64
	// PeakJitter is the relative half-width of a uniform, seeded per-attempt
	// variation of a job's true peak memory around its profiled peak (0.1 =
	// ±10 %). 0 (the default) makes the truth equal the profile, so an
	// admission on profiled peaks cannot OOM; a positive value models
	// run-to-run variation (allocator caching, data-dependent shapes). The
	// varied peak is at most the GPU's capacity, so a job that fits alone
	// by its profile never OOMs alone.
	PeakJitter float64
	// SpeedJitter is the relative half-width of a uniform, seeded
	// per-attempt variation of a job's speed: each attempt's work after
	// startup is its nominal work times 1 + SpeedJitter·(2u−1), u uniform
	// in (0, 1) from (seed, job, attempt) (0.03 = ±3 %). Identical runs on
	// the testbed differ by 1–8 % (pairs) and a job in a serial sequence
	// by up to 6 % from its solo time; 0 (the default) leaves every
	// output as it was.
	SpeedJitter float64
	// IdleHorizon bounds how long wake-ups alone may keep a run going while
	// no job runs and none is still to arrive: past it the run ends and the
	// loop reports the jobs left pending.
	IdleHorizon time.Duration
}

// Check reports settings that cannot hold on the server: a CUDA context
// larger than its GPUs.
func (t Truth) Check(srv models.Server) error {
	if c, m := t.ContextMiB, srv.Type.MemoryMiB; c > m {
		def := ""
		if c == DefaultTruth().ContextMiB {
			def = fmt.Sprintf(" (%g is the default)", c)
		}
		return &policies.ParamError{Scope: TruthScope, Key: "context_mib", Value: strconv.FormatFloat(c, 'g', -1, 64),
			Want: fmt.Sprintf("at most the %s GPU's %g MiB%s: set a smaller CUDA context with --truth context_mib=N (in a spec: truth: {context_mib: N})", srv.Type.Name, m, def)}
	}
	return nil
}

// MaxTime is the longest simulated time a run may reach, 250 years: the
// simulator counts time in int64 nanoseconds (292 years), and a job that
// would finish later is an error, not an overflow.
const MaxTime = 250 * 365 * 24 * time.Hour

// DefaultTruth returns the documented default truth settings.
func DefaultTruth() Truth {
	return Truth{ContextMiB: 500, Ramp: 15 * time.Second, StartupJitter: 0.15, Noise: 1, IdleHorizon: time.Hour}
}

// Config describes one simulated run.
type Config struct {
	Server       models.Server
	Catalog      *models.Catalog // solo profiles on Server's GPU type
	Interference models.Interference
	// Telemetry says how co-located jobs' signals combine on a GPU (the
	// zero value sums them, saturated at 1; see models.TelemetryParams).
	Telemetry models.TelemetryParams
	Truth     Truth
	Seed      uint64
	// Samples, when not nil, receives every GPU's 1 Hz telemetry sample
	// once it is final, in time order (second, then GPU), from second 0
	// to the last whole second of the run, with powerW, the GPU's mean
	// power over that second as its energy meter charges it (the joules
	// metered from the second's start to the next's, per second; NaN
	// when the GPU's type has no power model). A GPU's powerW over its
	// seconds sums to its metered energy up to the end of the last one
	// (GPUEnergyTo). Asking for samples changes nothing else the run
	// produces.
	Samples func(gpu int, second int64, x policies.Sample, powerW float64)
	// GPUsPerProfile, when true, admits a job of a multiple of its
	// workload's GPU count (cluster runs: a 64-GPU job on a 1-GPU
	// workload): GPU k of the job runs the workload's profile of its GPU
	// k mod the workload's GPU count, for the job's length (its solo_s, else
	// the workload's solo time). When false, a job's GPU count must equal
	// its workload's.
	GPUsPerProfile bool
	// Types and TypeOf, when Types is not empty, give the server GPUs of
	// several types (a cluster of several GPU types): GPU g is of type
	// Types[TypeOf[g]], with that type's memory, workload catalog,
	// interference and telemetry models. Server then gives the GPU count
	// only; Catalog, Interference and Telemetry are not used. See
	// Sim.TypeMask for where a job may run and what it runs there.
	Types  []TypeTruth
	TypeOf []int
	// Speeds, when not nil, gives the server's GPUs speed classes: a job
	// on GPU g progresses at 1/Speeds.Factor(its workload, g's slot) of
	// the rate the interference model gives. nil runs every GPU at its
	// profiled speed. With Types, each type's TypeTruth.Speeds is used.
	Speeds *models.Speeds
	// Slots, when not nil, holds each GPU's index within its server (a
	// cluster simulated as one server); nil: GPU g is slot g.
	Slots []int
	// Power, when not nil, is the server's GPU power model: the
	// simulator meters each GPU's energy (Energy). With Types, each
	// type's TypeTruth.Power is used.
	Power *models.PowerModel
}

// TypeTruth is the truth of one GPU type of a server with several.
type TypeTruth struct {
	Type         models.GPUType
	Catalog      *models.Catalog // solo profiles on Type
	Interference models.Interference
	Telemetry    models.TelemetryParams
	Speeds       *models.Speeds     // speed classes of this type's GPUs (nil: none)
	Power        *models.PowerModel // nil: no energy metered on this type
}

// maxTypes bounds Config.Types (TypeMask's bits).
const maxTypes = 8

type kind uint8

const (
	evArrive kind = iota
	evActive
	evFinish
	evOOM
	evWake
)

func (k kind) String() string {
	return [...]string{"arrival", "activity", "finish", "oom", "wake"}[k]
}

type item struct {
	t     time.Duration
	seq   uint64
	job   int32 // -1 for none
	gpu   int32 // -1 for none
	epoch uint32
	kind  kind
}

// arrival is an entry of the arrival list: the evArrive item of job, due
// at the job's submit time (jobs[job].submit, which add gives the item):
// 16 bytes a job where the item would take 32.
type arrival struct {
	seq uint64
	job int32
}

// arrivalItem is a's item.
func (s *Sim) arrivalItem(a arrival) item {
	return item{t: s.jobs[a.job].submit, seq: a.seq, job: a.job, kind: evArrive}
}

// queue holds the pending items in (time, sequence) order, typed so that
// pushing and popping box nothing. A run's queue is mostly small (an entry
// or two a running job): up to sortedMax items it is an array sorted from
// the last due to the first (the first at its end: a pop shortens it, a
// push moves the items due before the new one up a place); a push past
// sortedMax makes it a binary min-heap (the array reversed, the first at
// index 0), which it stays until a pop leaves at most sortedMax/2. A
// sequence is never used twice, so (time, sequence) orders the items
// totally and either form gives them out in the same order.
type queue struct {
	a    []item
	heap bool
}

// sortedMax is the most items a queue keeps sorted.
const sortedMax = 32

// first returns the first item; q must not be empty.
func (q *queue) first() *item {
	if q.heap {
		return &q.a[0]
	}
	return &q.a[len(q.a)-1]
}

// push adds it.
func (q *queue) push(it item) {
	n := len(q.a)
	if !q.heap {
		if n < sortedMax {
			if n < cap(q.a) {
				q.a = q.a[:n+1] // its place is written below
			} else {
				q.a = append(q.a, it)
			}
			a := q.a
			i := n
			for i > 0 && (a[i-1].t < it.t || a[i-1].t == it.t && a[i-1].seq < it.seq) {
				a[i] = a[i-1] // due before it
				i--
			}
			a[i] = it
			return
		}
		slices.Reverse(q.a) // sorted from the first: a heap
		q.heap = true
	}
	q.heapPush(it)
}

// pop removes and returns the first item.
func (q *queue) pop() item {
	if !q.heap {
		n := len(q.a) - 1
		it := q.a[n]
		q.a = q.a[:n]
		return it
	}
	it := q.heapPop()
	if len(q.a) <= sortedMax/2 {
		slices.SortFunc(q.a, func(x, y item) int { // the last due first
			if y.before(x) {
				return -1
			}
			return 1 // (no two items are equal)
		})
		q.heap = false
	}
	return it
}

// heapPush adds it to the heap. Its place is found with a hole moved up,
// each parent moved down into it once, not swapped: the array comes out
// as a swap would leave it, in fewer moves.
func (q *queue) heapPush(it item) {
	if n := len(q.a); n < cap(q.a) {
		q.a = q.a[:n+1] // its last place is written below
	} else {
		q.a = append(q.a, it)
	}
	h := q.a
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if pp := &h[p]; it.t > pp.t || it.t == pp.t && it.seq >= pp.seq {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
}

// heapPop removes and returns the heap's first item. The last item's
// place is found with a hole moved down from the top, each smaller child
// moved up into it once, not swapped: the array comes out as a swap would
// leave it.
func (q *queue) heapPop() item {
	h := q.a
	top := h[0]
	n := len(h) - 1
	last := h[n]
	lt, ls := last.t, last.seq
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && (h[r].t < h[l].t || h[r].t == h[l].t && h[r].seq < h[l].seq) {
			m = r
		}
		if hm := &h[m]; hm.t > lt || hm.t == lt && hm.seq >= ls {
			break
		}
		h[i] = h[m]
		i = m
	}
	if n > 0 {
		h[i] = last
	}
	q.a = h
	return top
}

// job is the simulator's private state of a job, 72 bytes (TestSimJobSize:
// a million-job run keeps one a job). What the view's job already holds
// once the job runs is not kept twice: the current attempt's solo time is
// its view profile's (the spec's, or onType's on a server of several
// types), its launch-to-activity time the instant of its activity less
// its view's Started. What only a running attempt needs is in its slot of
// Sim.atts (run), reused once the attempt ends.
type job struct {
	// The job as submitted (spec rebuilds its policies.Job): its trace
	// name, GPUs and submit time, and the workload (with its derived
	// figures) and solo time it was added with (the trace's solo_s when
	// own).
	name   string
	gpus   int
	submit time.Duration
	info0  *workloadInfo
	solo0  float64
	// rate is the current progress rate. It stays after the attempt
	// ends: the GPUs' last segments compare the rates they recorded with
	// their jobs' (rateChanged), a finished job's included.
	rate  float64
	epoch uint32 // bumps when the pending finish/active event goes stale
	run   int32  // the running attempt's slot of Sim.atts, while it runs
	own   bool   // solo0 is the trace's solo_s, on every GPU type
	types uint8  // mixed servers: the GPU types it may run on (TypeMask)
}

// runState is the state of a running attempt (Sim.atts, one a running
// job, not one a job: 56 bytes).
type runState struct {
	w     *models.Workload // the workload as profiled on the attempt's GPU type
	peak  float64          // true peak as a multiple of the profiled one
	speed float64          // work as a multiple of the nominal one
	work  float64          // remaining solo-speed seconds of work once active
	since time.Duration    // when work was last settled
	done  time.Duration    // when it finishes at its rate (its pending finish event)
	// scaled: the telemetry model of the attempt's GPU type scales its
	// workload (TelemetryParams.Scale; looked up once, at placement).
	scaled bool
	// queued: the heap holds a finish event of the attempt at (qt, qseq),
	// no later than its pending finish, due at (done, fseq). A re-timing
	// that only delays the finish pushes nothing: the entry in the heap
	// comes out first and is pushed again then as the pending finish
	// (requeue), so that events come out in the same (time, sequence)
	// order as if it had been pushed at once, with one entry a job in the
	// heap instead of one a re-timing.
	queued     bool
	qt         time.Duration
	qseq, fseq uint64
}

// att is running job id's attempt state; the pointer is valid until the
// next placement.
func (s *Sim) att(id int) *runState { return &s.atts[s.jobs[id].run] }

type gpu struct {
	epoch uint32 // bumps when the pending OOM event goes stale
	// fits: scheduleOOM found the active jobs to fit at their peaks
	// (peaksFit) at fitAt, for this epoch (the end-of-instant check
	// reads it instead of computing it again in the same instant).
	fits  bool
	fitAt time.Duration
	tel   history
	// The energy meter: joules up to meterAt, and the power in force
	// since (the current telemetry segment's).
	energyJ, meterW float64
	meterAt         time.Duration
	// The last measured memory the view showed: its second, the history
	// version it was read from, and whether it stays put until the
	// history changes (no job ramping).
	memK      int64
	memVer    uint64
	memSteady bool
}

// Sim is a simulated server running one trace. It implements the scheduling
// loop's Backend. It is not safe for concurrent use.
type Sim struct {
	cfg Config
	now time.Duration
	seq uint64
	q   queue
	// arrivals holds the arrivals not yet due, in (time, sequence) order,
	// from index arrived on (pushArrival).
	arrivals []arrival
	arrived  int
	// nextA is arrivals[arrived] and nextT its time (its job's submit),
	// kept while one is pending so that popIn compares them with the
	// heap's first without reading the list and the job.
	nextA arrival
	nextT time.Duration
	lastT time.Duration // the time of the list's last arrival (pushArrival)
	jobs  []job
	// atts holds the running attempts' state (job.run); free lists its
	// free slots, reused last freed first (deterministic).
	atts  []runState
	free  []int32
	gpus  []gpu
	view  policies.View
	books *policies.Books // view.Queue, view.Failed, each GPU's Jobs
	out   []policies.Event
	ret   int // events of out already returned by Next
	// wakes holds the times of the wake-up events in the heap, from index
	// woke on, ascending and each once (a Wake at a time already pending
	// pushes nothing). They come out of the heap in time order, so the one
	// that comes out is always wakes[woke].
	wakes []time.Duration
	woke  int
	// fault is the first defect of a model the run met (a rate that is not
	// a positive number); Next reports it.
	fault error
	// wokeAt is the instant of the last immediate wake-up (a Wake not
	// after now), when wokeNow.
	wokeAt  time.Duration
	wokeNow bool
	// live counts jobs not yet Done or Stopped; arriving counts jobs whose
	// arrival is still in the queue.
	live, arriving int
	lastChange     time.Duration
	co             []models.Profile                   // scratch
	comb           []models.TelemetryJob              // scratch
	seedMix        uint64                             // the seed's part of unitPrefix
	combLo, combHi []models.TelemetryJob              // scratch of SampleRange
	ts             []time.Duration                    // scratch of scheduleOOM
	workloads      map[*models.Workload]*workloadInfo // derived once per workload
	named          *nameMemo                          // Add's workloads by name (single GPU type)
	slab           []int                              // cloneGPUs's arena, used up to slabAt
	slabAt         int
	advancing      bool // in AdvanceTo, to until: Next takes events due by then
	until          time.Duration
	emitted        int64         // whole seconds already given to cfg.Samples
	lastEvent      time.Duration // the last instant that had events
	// GPUs changed since the last invariant check, and how many checks ran.
	touched   []int
	isTouched []bool
	every     []int // 0, 1, ... for every GPU (a full check's list)
	checks    int
	// types holds the GPU types' truth (one entry unless Config.Types
	// has more), typeOf each GPU's index into it (nil for one type) and
	// typeGPUs each type's GPU count.
	types  []TypeTruth
	typeOf []uint8
	// memos remember each type's interference terms (rateOn), made when
	// first asked.
	memos []*models.PressureMemo
	// rates remember each type's rates of a job beside one or two
	// co-runners (rateOn), made with memos.
	rates []*rateMemo
	coOf  []*models.Profile // scratch of rateOn
	// lones remember each type's combined signals of a lone job (the
	// energy meter's: loneMemo), made when first needed.
	lones    []*loneMemo
	typeGPUs []int
	// unsteady lists the GPUs whose measured memory in the view may differ
	// from the last reading (View): a telemetry segment recorded since, or
	// a job still ramping; onUnsteady marks them.
	unsteady []int
	// viewFresh: View read the measured memory at viewAt, and no segment
	// was recorded since (unsteadied): a View at the same time (the
	// loop's after each placement) has nothing to read again.
	viewFresh  bool
	viewAt     time.Duration
	onUnsteady []bool
	// viewChanged lists the GPUs whose entry in the view (measured memory,
	// job list) changed since the last ChangedGPUs; onViewChanged marks
	// them.
	viewChanged   []int
	onViewChanged []bool
}

// typ is GPU g's type.
func (s *Sim) typ(g int) *TypeTruth {
	if s.typeOf == nil {
		return &s.types[0]
	}
	return &s.types[s.typeOf[g]]
}

// slot is GPU g's index within its server.
func (s *Sim) slot(g int) int {
	if s.cfg.Slots == nil {
		return g
	}
	return s.cfg.Slots[g]
}

// capacity is GPU g's memory, MiB.
func (s *Sim) capacity(g int) float64 { return s.typ(g).Type.MemoryMiB }

// mixed reports whether the server has GPUs of several types.
func (s *Sim) mixed() bool { return s.typeOf != nil }

// New builds a simulator for the given jobs. Every job's workload must be in
// the catalog with a matching GPU count that the server can hold.
func New(cfg Config, specs []traces.Job) (*Sim, error) {
	s := &Sim{cfg: cfg, seedMix: seedMix(cfg.Seed)}
	s.books = policies.NewBooks(&s.view)
	if err := s.setTypes(); err != nil {
		return nil, err
	}
	s.gpus = make([]gpu, cfg.Server.GPUs)
	// A running job a GPU before the slots grow (collocation runs more).
	s.atts, s.free = make([]runState, 0, cfg.Server.GPUs), make([]int32, 0, cfg.Server.GPUs)
	s.isTouched = make([]bool, cfg.Server.GPUs)
	s.onUnsteady = make([]bool, cfg.Server.GPUs)
	s.onViewChanged = make([]bool, cfg.Server.GPUs)
	s.view.GPUs = make([]policies.GPU, cfg.Server.GPUs)
	s.view.Pressure = true
	for i := range s.view.GPUs {
		if pm := s.typ(i).Power; pm != nil {
			s.gpus[i].meterW = pm.IdleW
		}
		s.view.GPUs[i] = policies.GPU{Index: i, CapacityMiB: s.capacity(i)}
		s.view.Pressure = s.view.Pressure && s.typ(i).Type.Pressure
	}
	s.view.Telemetry = telemetry{s}
	s.jobs = make([]job, 0, len(specs))
	s.view.Jobs = make([]policies.Job, 0, len(specs))
	s.q.a = make([]item, 0, 2*cfg.Server.GPUs+16)
	s.arrivals = make([]arrival, 0, len(specs))
	for i := range specs {
		if _, err := s.addSpec(&specs[i]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// setTypes checks the server's GPU types and sets s.types, s.typeOf and
// s.typeGPUs.
func (s *Sim) setTypes() error {
	cfg := &s.cfg
	if cfg.Server.GPUs < 1 {
		return fmt.Errorf("sim: bad server %v", cfg.Server)
	}
	if cfg.Slots != nil && len(cfg.Slots) != cfg.Server.GPUs {
		return fmt.Errorf("sim: %d GPUs but the slots of %d", cfg.Server.GPUs, len(cfg.Slots))
	}
	if len(cfg.Types) == 0 {
		if cfg.Catalog == nil {
			return errors.New("sim: no workload catalog")
		}
		if cfg.Interference == nil {
			cfg.Interference = models.NoInterference{}
		}
		if cfg.Server.Type.MemoryMiB <= 0 {
			return fmt.Errorf("sim: bad server %v", cfg.Server)
		}
		if err := cfg.Truth.Check(cfg.Server); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		s.types = []TypeTruth{{Type: cfg.Server.Type, Catalog: cfg.Catalog, Interference: cfg.Interference, Telemetry: cfg.Telemetry, Speeds: cfg.Speeds, Power: cfg.Power}}
		s.typeGPUs = []int{cfg.Server.GPUs}
		return nil
	}
	if len(cfg.Types) > maxTypes {
		return fmt.Errorf("sim: %d GPU types: at most %d", len(cfg.Types), maxTypes)
	}
	if len(cfg.TypeOf) != cfg.Server.GPUs {
		return fmt.Errorf("sim: %d GPUs but the types of %d", cfg.Server.GPUs, len(cfg.TypeOf))
	}
	s.types = slices.Clone(cfg.Types)
	for k := range s.types {
		t := &s.types[k]
		if t.Catalog == nil {
			return fmt.Errorf("sim: GPU type %s: no workload catalog", t.Type.Name)
		}
		if t.Interference == nil {
			t.Interference = models.NoInterference{}
		}
		if t.Type.MemoryMiB <= 0 {
			return fmt.Errorf("sim: GPU type %s: bad memory %g MiB", t.Type.Name, t.Type.MemoryMiB)
		}
		if err := cfg.Truth.Check(models.Server{Type: t.Type, GPUs: 1}); err != nil {
			return fmt.Errorf("sim: %w", err)
		}
	}
	s.typeOf = make([]uint8, len(cfg.TypeOf))
	s.typeGPUs = make([]int, len(s.types))
	for g, k := range cfg.TypeOf {
		if k < 0 || k >= len(s.types) {
			return fmt.Errorf("sim: GPU %d: type %d of %d", g, k, len(s.types))
		}
		s.typeOf[g] = uint8(k)
		s.typeGPUs[k]++
	}
	return nil
}

// fits reports whether a job of gpus GPUs may run workload w: its GPU
// count, or with perProfile a multiple of it.
func fits(w *models.Workload, gpus int, perProfile bool) bool {
	return w.GPUs == gpus || (perProfile && gpus > w.GPUs && gpus%w.GPUs == 0)
}

// TypeMask returns the GPU types (bit k: Config.Types[k]) job id may run
// on, on a server of several types: those whose catalog has its workload
// for its GPU count and that have as many GPUs, and of these the ones
// whose memory holds its profiled peak there, unless it fits none of them
// (then all of them: it fails there as it would on a server of one type).
// On a server of one type it is 1.
func (s *Sim) TypeMask(id policies.JobID) uint8 {
	if !s.mixed() {
		return 1
	}
	return s.jobs[id].types
}

// ProfileOnType returns job id's profile on GPU type k (Config.Types[k]):
// its workload's profile in that type's catalog, and as solo time the
// trace's solo_s when given, else the catalog's. ok is false when the
// type's catalog cannot run it.
func (s *Sim) ProfileOnType(id policies.JobID, k int) (p policies.Profile, ok bool) {
	j := &s.jobs[id]
	w, ok := s.types[k].Catalog.Get(j.info0.w.ID)
	if !ok || !fits(w, j.gpus, s.cfg.GPUsPerProfile) {
		return policies.Profile{}, false
	}
	p = w.PolicyProfile()
	if j.own {
		p.SoloS = j.solo0
	}
	return p, true
}

// typesOf computes TypeMask's set for a job of workload name and gpus
// GPUs, and the lowest type in it (-1 when empty).
func (s *Sim) typesOf(name string, gpus int) (mask uint8, home int) {
	var all uint8
	for k := range s.types {
		w, ok := s.types[k].Catalog.Get(name)
		if !ok || !fits(w, gpus, s.cfg.GPUsPerProfile) || gpus > s.typeGPUs[k] {
			continue
		}
		all |= 1 << k
		if w.PeakMiB() <= s.types[k].Type.MemoryMiB {
			mask |= 1 << k
		}
	}
	if mask == 0 {
		mask = all
	}
	home = -1
	for k := range s.types {
		if mask&(1<<k) != 0 {
			return mask, k
		}
	}
	return mask, home
}

// Add submits one more job, at its submit time or now, whichever is later:
// the live queue of a run whose jobs are not all known at its start. It
// returns the job's id (the next index).
func (s *Sim) Add(sp traces.Job) (policies.JobID, error) { return s.addSpec(&sp) }

// addSpec is Add of *sp (New's jobs read in place, not copied).
func (s *Sim) addSpec(sp *traces.Job) (policies.JobID, error) {
	cfg := &s.cfg
	if s.mixed() {
		return s.addMixed(sp)
	}
	info := s.named.get(sp.Workload)
	if info == nil {
		w, ok := cfg.Catalog.Get(sp.Workload)
		if !ok {
			return 0, fmt.Errorf("sim: job %s: workload %q is not in the %s catalog", sp.ID, sp.Workload, cfg.Server.Type.Name)
		}
		info = s.workload(w)
		s.named = s.named.put(sp.Workload, info)
	}
	w := info.w
	switch {
	case w.GPUs != sp.GPUs && !(cfg.GPUsPerProfile && sp.GPUs > w.GPUs && sp.GPUs%w.GPUs == 0):
		return 0, fmt.Errorf("sim: job %s: workload %s needs %d GPUs, the trace says %d", sp.ID, sp.Workload, w.GPUs, sp.GPUs)
	case sp.GPUs > cfg.Server.GPUs:
		return 0, fmt.Errorf("sim: job %s needs %d GPUs; the server has %d", sp.ID, sp.GPUs, cfg.Server.GPUs)
	case sp.Submit < 0:
		return 0, fmt.Errorf("sim: job %s: negative submit time %v", sp.ID, sp.Submit)
	case sp.SoloS < 0 || math.IsNaN(sp.SoloS) || math.IsInf(sp.SoloS, 0):
		return 0, fmt.Errorf("sim: job %s: solo_s %v is not a positive, finite length", sp.ID, sp.SoloS)
	}
	solo := w.SoloS
	if sp.SoloS > 0 {
		solo = sp.SoloS
	}
	return s.add(sp, info, solo, 0), nil
}

// addMixed is Add on a server of several GPU types: the job's profile is
// its first possible type's (TypeMask) until it runs somewhere, with the
// shortest solo time of its possible types (the trace's solo_s when given):
// the one the job's results are normalized by.
func (s *Sim) addMixed(sp *traces.Job) (policies.JobID, error) {
	mask, home := s.typesOf(sp.Workload, sp.GPUs)
	switch {
	case home < 0:
		var names []string
		for _, t := range s.types {
			names = append(names, t.Type.Name)
		}
		return 0, fmt.Errorf("sim: job %s: no GPU type of the server (%v) runs workload %q on %d GPUs", sp.ID, names, sp.Workload, sp.GPUs)
	case sp.Submit < 0:
		return 0, fmt.Errorf("sim: job %s: negative submit time %v", sp.ID, sp.Submit)
	case sp.SoloS < 0 || math.IsNaN(sp.SoloS) || math.IsInf(sp.SoloS, 0):
		return 0, fmt.Errorf("sim: job %s: solo_s %v is not a positive, finite length", sp.ID, sp.SoloS)
	}
	w, _ := s.types[home].Catalog.Get(sp.Workload)
	solo := sp.SoloS
	if solo == 0 {
		solo = math.Inf(1)
		for k := range s.types {
			if mask&(1<<k) != 0 {
				o, _ := s.types[k].Catalog.Get(sp.Workload)
				solo = min(solo, o.SoloS)
			}
		}
	}
	return s.add(sp, s.workload(w), solo, mask), nil
}

// add appends a checked job.
func (s *Sim) add(sp *traces.Job, info *workloadInfo, solo float64, mask uint8) policies.JobID {
	i := len(s.jobs)
	s.jobs = append(s.jobs, job{name: sp.ID, gpus: sp.GPUs, submit: max(sp.Submit, s.now), info0: info, solo0: solo,
		own: sp.SoloS > 0, types: mask})
	// Until it arrives, a policy sees only that the job exists. The view's
	// jobs are only ever appended to, so their array past its length is
	// still zero, a Waiting job: the ID is all there is to write.
	if n := len(s.view.Jobs); n < cap(s.view.Jobs) {
		s.view.Jobs = s.view.Jobs[:n+1]
		s.view.Jobs[n].ID = policies.JobID(i)
	} else {
		s.view.Jobs = append(s.view.Jobs, policies.Job{ID: policies.JobID(i), State: policies.Waiting})
	}
	s.pushArrival(item{t: max(sp.Submit, s.now), kind: evArrive, job: int32(i)})
	s.live++
	s.arriving++
	return policies.JobID(i)
}

func (s *Sim) push(it item) {
	it.seq = s.seq
	s.seq++
	s.q.push(it)
}

// pushArrival schedules an arrival: in the arrival list while arrivals come
// in time order (a trace sorted by submission), so that the heap holds only
// the events of running jobs; in the heap otherwise. Events come out in
// (time, sequence) order either way. it is job it.job's arrival, at its
// submit time (jobs[it.job].submit).
func (s *Sim) pushArrival(it item) {
	n := len(s.arrivals)
	if n > s.arrived && s.lastT > it.t {
		s.push(it)
		return
	}
	a := arrival{seq: s.seq, job: it.job}
	if n == s.arrived { // the first pending
		s.nextA, s.nextT = a, it.t
	}
	s.arrivals = append(s.arrivals, a)
	s.lastT = it.t
	s.seq++
}

// due returns the earliest pending event (time, then sequence) and whether
// there is one.
func (s *Sim) due() (item, bool) {
	if s.arrived < len(s.arrivals) {
		if a := s.arrivalItem(s.arrivals[s.arrived]); len(s.q.a) == 0 || a.before(*s.q.first()) {
			return a, true
		}
	}
	if len(s.q.a) > 0 {
		return *s.q.first(), true
	}
	return item{}, false
}

// popFirst removes and returns the event due returns if it is at or
// before limit: the first of an instant (one comparison of the arrival list
// with the heap, not one to find it and another to take it).
func (s *Sim) popFirst(limit time.Duration) (item, bool) { return s.popIn(math.MinInt64, limit) }

// popAt removes and returns the event due returns if it is at time t (one
// comparison of the arrival list with the heap, not two).
func (s *Sim) popAt(t time.Duration) (item, bool) { return s.popIn(t, t) }

// dueAt reports whether the arrival list's first or the queue's first is
// at time t: when neither is, popAt(t) takes nothing.
func (s *Sim) dueAt(t time.Duration) bool {
	if s.arrived < len(s.arrivals) && s.nextT == t {
		return true
	}
	n := len(s.q.a)
	if n == 0 {
		return false
	}
	if s.q.heap {
		return s.q.a[0].t == t
	}
	return s.q.a[n-1].t == t
}

// idleWake counts wake-up it out of the pending ones and reports whether
// it is to be dropped: no job is left, or none runs or is to arrive and
// the run has been idle past the horizon.
func (s *Sim) idleWake(it item) bool {
	s.woke++
	if s.woke == len(s.wakes) { // none pending: reuse the array
		s.wakes, s.woke = s.wakes[:0], 0
	}
	return s.live == 0 || (s.arriving == 0 && s.running() == 0 && it.t-s.lastChange > s.cfg.Truth.IdleHorizon)
}

// popIn removes and returns the event due returns if its time is in [lo,
// hi].
func (s *Sim) popIn(lo, hi time.Duration) (item, bool) {
	q := &s.q
	n := len(q.a)
	var f *item // the queue's first (q.first)
	if n > 0 {
		if q.heap {
			f = &q.a[0]
		} else {
			f = &q.a[n-1]
		}
	}
	if s.arrived < len(s.arrivals) {
		// The arrival's time and sequence against the queue's first, its
		// item built only when it is the one taken.
		if t, a := s.nextT, s.nextA; f == nil || t < f.t || t == f.t && a.seq < f.seq {
			if t < lo || t > hi {
				return item{}, false
			}
			s.arrived++
			if s.arrived == len(s.arrivals) { // all out: reuse the array
				s.arrivals, s.arrived = s.arrivals[:0], 0
			} else {
				s.nextA = s.arrivals[s.arrived]
				s.nextT = s.jobs[s.nextA.job].submit
			}
			return item{t: t, seq: a.seq, job: a.job, kind: evArrive}, true
		}
	}
	if f == nil || f.t < lo || f.t > hi {
		return item{}, false
	}
	if q.heap {
		return q.pop(), true
	}
	it := *f // q.pop of the sorted array, inline
	q.a = q.a[:n-1]
	return it, true
}

// before orders events by time, then sequence.
func (a item) before(b item) bool { return a.t < b.t || a.t == b.t && a.seq < b.seq }

// Now is the current virtual time.
func (s *Sim) Now() time.Duration { return s.now }

// Job returns job i of the run as submitted: Jobs()[i], without a copy of
// every job.
func (s *Sim) Job(i int) policies.Job { return s.spec(i) }

// Submitted returns job i's trace name, workload, GPUs, solo time and
// submit time as Job(i) lists them, without building the whole job (a
// collector's row takes no more).
func (s *Sim) Submitted(i int) (name, workload string, gpus int, soloS float64, submit time.Duration) {
	j := &s.jobs[i]
	return j.name, j.info0.profile.Workload, j.gpus, j.solo0, j.submit
}

// workloadInfo is what the simulator derives from a workload, once.
type workloadInfo struct {
	w       *models.Workload
	startup time.Duration    // models.Startup (it parses the id)
	profile policies.Profile // PolicyProfile
}

// workload returns w's derived figures.
func (s *Sim) workload(w *models.Workload) *workloadInfo {
	if x, ok := s.workloads[w]; ok {
		return x
	}
	if s.workloads == nil {
		s.workloads = map[*models.Workload]*workloadInfo{}
	}
	x := &workloadInfo{w: w, startup: models.Startup(w.ID), profile: w.PolicyProfile()}
	s.workloads[w] = x
	return x
}

// nameMemo is a direct-mapped memo of workload names to their derived
// figures, in front of the catalog's map and Sim.workloads: a trace names
// a few dozen workloads for thousands of jobs, and a slot found by a hash
// of a name's length and 24 of its bytes, then one comparison
// of the name, costs a third of the two maps' look-ups. A name whose slot
// holds another is looked up in the maps (and takes the slot).
type nameMemo [nameSlots]struct {
	name string
	x    *workloadInfo
}

const nameSlots = 256

// get returns name's figures, or nil when the memo (nil: empty) does not
// hold them.
func (m *nameMemo) get(name string) *workloadInfo {
	if m == nil {
		return nil
	}
	if e := &m[nameSlot(name)]; e.x != nil && e.name == name {
		return e.x
	}
	return nil
}

// put records name's figures in m, made when m is nil, and returns m.
func (m *nameMemo) put(name string, x *workloadInfo) *nameMemo {
	if m == nil {
		m = new(nameMemo)
	}
	e := &m[nameSlot(name)]
	e.name, e.x = name, x
	return m
}

// nameSlot is name's slot: a multiplicative hash of its length and its
// first eight and last sixteen bytes (of the bytes it has, when fewer),
// where a catalog's workload ids differ (the model, the batch size, the
// epochs and GPUs).
func nameSlot(name string) int {
	h, n := uint64(len(name)), len(name)
	switch {
	case n >= 16:
		h ^= le64(name[n-16:]) * 0x9e3779b97f4a7c15
		fallthrough
	case n >= 8:
		h ^= (le64(name) ^ le64(name[n-8:])*0xbf58476d1ce4e5b9) * 0xc2b2ae3d27d4eb4f
	default:
		for i := 0; i < n; i++ {
			h = h<<8 | uint64(name[i])
		}
		h *= 0xc2b2ae3d27d4eb4f
	}
	return int((h ^ h>>29) * 0x94d049bb133111eb >> 56)
}

// le64 is s's first eight bytes, little-endian.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// cloneGPUs returns a copy of gpus from an arena that is never reused (so
// the copy is as safe to keep as one of its own), one allocation per many.
func (s *Sim) cloneGPUs(gpus []int) []int {
	n, at := len(gpus), s.slabAt
	if len(s.slab)-at < n {
		s.slab, at = make([]int, max(1024, n)), 0
	}
	out := s.slab[at : at+n : at+n]
	if n == 1 {
		out[0] = gpus[0] // (no copy call for one)
	} else {
		copy(out, gpus)
	}
	s.slabAt = at + n
	return out
}

// spec is job i as submitted: what a policy sees of it once it arrives.
func (s *Sim) spec(i int) policies.Job {
	j := &s.jobs[i]
	prof := j.info0.profile
	prof.SoloS = j.solo0
	return policies.Job{ID: policies.JobID(i), Name: j.name, GPUs: j.gpus, Submit: j.submit, Profile: prof,
		State: policies.Waiting}
}

// Jobs returns every job of the run as submitted (for recorders; policies
// see a job only once it has arrived).
func (s *Sim) Jobs() []policies.Job {
	out := make([]policies.Job, len(s.jobs))
	for i := range s.jobs {
		out[i] = s.spec(i)
	}
	return out
}

// View returns the world as a policy may see it now. The view is owned by
// the simulator and valid until the next call of Next or Apply.
func (s *Sim) View() *policies.View {
	s.view.Now = s.now
	if s.viewFresh && s.viewAt == s.now {
		return &s.view // read at this time already, and no segment recorded since
	}
	s.viewAt, s.viewFresh = s.now, true
	// Memory is measured at 1 Hz: the last whole second's sample.
	// Only GPUs with a segment recorded since their last reading, or
	// still ramping, can read otherwise (a GPU with no segment reads 0).
	k := int64(s.now / time.Second)
	n := 0
	for _, g := range s.unsteady {
		gp := &s.gpus[g]
		if !(gp.memVer == gp.tel.version && (gp.memK == k || gp.memSteady)) {
			u, steady := s.measuredAt(g, k)
			if math.Float64bits(u) != math.Float64bits(s.view.GPUs[g].UsedMiB) {
				s.changedInView(g)
			}
			s.view.GPUs[g].UsedMiB = u
			gp.memK, gp.memVer = k, gp.tel.version
			gp.memSteady = steady
		}
		if gp.memSteady {
			s.onUnsteady[g] = false
			continue
		}
		s.unsteady[n] = g
		n++
	}
	s.unsteady = s.unsteady[:n]
	return &s.view
}

// mark marks gpus for the next check (touch) and their entries in the
// view as changed (changedInView), in one walk: a placement's and a
// release's GPUs.
func (s *Sim) mark(gpus []int) {
	for _, g := range gpus {
		if !s.isTouched[g] {
			s.isTouched[g] = true
			s.touched = append(s.touched, g)
		}
		if !s.onViewChanged[g] {
			s.onViewChanged[g] = true
			s.viewChanged = append(s.viewChanged, g)
		}
	}
}

// changedInView marks GPU g's entry in the view as changed (ChangedGPUs).
func (s *Sim) changedInView(g int) {
	if !s.onViewChanged[g] {
		s.onViewChanged[g] = true
		s.viewChanged = append(s.viewChanged, g)
	}
}

// ChangedGPUs implements loop.ChangeReporter: it appends to dst the GPUs
// whose entry in the view changed since its last call (their measured
// memory, as View last read it, or their job list), each once.
func (s *Sim) ChangedGPUs(dst []int) []int {
	for _, g := range s.viewChanged {
		s.onViewChanged[g] = false
	}
	dst = append(dst, s.viewChanged...)
	s.viewChanged = s.viewChanged[:0]
	return dst
}

// unsteadied marks GPU g's measured memory as possibly changed (View).
func (s *Sim) unsteadied(g int) {
	s.viewFresh = false
	if !s.onUnsteady[g] {
		s.onUnsteady[g] = true
		s.unsteady = append(s.unsteady, g)
	}
}

// AdvanceTo processes everything due at or before t, returns the resulting
// events in order, and moves now to t: a caller that keeps its own clock
// (the executor's emulated GPUs) drives the simulated truth with it.
func (s *Sim) AdvanceTo(t time.Duration) ([]policies.Event, error) {
	var all []policies.Event
	s.advancing, s.until = true, t
	for {
		evs, err := s.Next()
		if err != nil {
			s.advancing = false
			return all, err
		}
		if len(evs) == 0 {
			break
		}
		all = append(all, evs...)
	}
	s.advancing = false
	s.now = max(s.now, t)
	return all, nil
}

// JobMem is an attempt's memory on a GPU at a time (Sim.JobsAt).
type JobMem struct {
	Job     policies.JobID
	Attempt int // its attempt number, as the view counts them
	MiB     float64
}

// JobsAt appends to dst the attempts that held memory on GPU g at time t
// (not after now, within the retained telemetry history), as its telemetry
// readings count them: the attempts that have ended since included, unlike
// MemMiBAt.
func (s *Sim) JobsAt(dst []JobMem, g int, t time.Duration) []JobMem {
	if g < 0 || g >= len(s.gpus) {
		return dst
	}
	seg := s.gpus[g].tel.at(t)
	if seg == nil {
		return dst
	}
	for i := range seg.jobs {
		j := &seg.jobs[i]
		if m := s.ramped(j.peakMiB, t-j.activeAt); m > 0 {
			dst = append(dst, JobMem{Job: policies.JobID(j.id), Attempt: j.attempt, MiB: m})
		}
	}
	return dst
}

// MemMiB is job id's true memory on GPU g now (0 when it does not run
// there or has shown no activity).
func (s *Sim) MemMiB(id policies.JobID, g int) float64 { return s.MemMiBAt(id, g, s.now) }

// MemMiBAt is job id's true memory on GPU g at time t of its current
// attempt (0 when it does not run there now, or had shown no activity by
// t).
func (s *Sim) MemMiBAt(id policies.JobID, g int, t time.Duration) float64 {
	if int(id) < 0 || int(id) >= len(s.jobs) || !slices.Contains(s.view.Jobs[id].On, g) {
		return 0
	}
	return s.memAt(int(id), g, t)
}

// Next advances virtual time to the next instant at which something happens,
// processes everything due then and returns the resulting events in order.
// It returns no events when the run is over.
//
// Called by AdvanceTo (advancing), it takes only the events due by until.
func (s *Sim) Next() ([]policies.Event, error) {
	limit := time.Duration(math.MaxInt64)
	if s.advancing {
		limit = s.until
	}
	if len(s.out) > s.ret { // events of actions applied since the last call
		evs := s.out[s.ret:]
		s.ret = len(s.out)
		if err := s.checkActions(evs); err != nil {
			return nil, fmt.Errorf("sim: invariant violated after the policy's actions at t=%v: %w", s.now, err)
		}
		return evs, nil
	}
	s.out, s.ret = s.out[:0], 0
	for it, ok := s.popFirst(limit); ok; it, ok = s.popFirst(limit) {
		t := it.t
		var last item
		for ok {
			if it.kind != evWake || !s.idleWake(it) {
				if it.t < s.now {
					return nil, fmt.Errorf("sim: %s event for job %d at %v is before now %v", it.kind, it.job, it.t, s.now)
				}
				s.now = it.t
				n := len(s.out)
				s.handle(it)
				if len(s.out) > n {
					last = it
				}
			}
			if !s.dueAt(t) { // (most instants end here, without popAt's call)
				break
			}
			it, ok = s.popAt(t)
		}
		// Invariants hold at the end of each instant (an allocation at
		// first activity may cross capacity and fail in the same instant).
		if s.fault != nil {
			return nil, fmt.Errorf("sim: at t=%v: %w", s.now, s.fault)
		}
		if len(s.out) > 0 {
			err := s.check(int(last.job))
			if len(s.out) > 1 || s.out[0].Job != policies.JobID(last.job) { // (most instants: one event, of the job just checked)
				for i := 0; i < len(s.out) && err == nil; i++ { // every job the instant's events name
					if e := &s.out[i]; e.Kind != policies.Wakeup && e.Job != policies.JobID(last.job) {
						err = s.checkJob(int(e.Job))
					}
				}
			}
			if err != nil {
				return nil, fmt.Errorf("sim: invariant violated after %s at t=%v (job %d, GPU %d): %w",
					last.kind, last.t, last.job, last.gpu, err)
			}
			s.ret = len(s.out)
			s.lastEvent = s.now
			return s.out, nil
		}
	}
	s.emitSamples(s.lastEvent.Truncate(time.Second)+time.Second, true)
	return nil, nil
}

// emitSamples gives cfg.Samples every whole second not given yet that is
// final at t. It is called before a GPU's telemetry segment changes at t
// and at the end of the run (end): a second's sample is final once t is
// past its start, its power once t is at its end, or at the end of the
// run, after which no GPU changes; its history is still kept then.
func (s *Sim) emitSamples(t time.Duration, end bool) {
	if s.cfg.Samples == nil {
		return
	}
	if !end {
		t = t.Truncate(time.Second) // the seconds that end by t
	}
	for ; time.Duration(s.emitted)*time.Second < t; s.emitted++ {
		for g := range s.gpus {
			s.cfg.Samples(g, s.emitted, s.cachedSample(g, s.emitted), s.secondPower(g, s.emitted))
		}
	}
}

func (s *Sim) running() int {
	n := 0
	for g := range s.view.GPUs {
		n += len(s.view.GPUs[g].Jobs)
	}
	return n
}

func (s *Sim) handle(it item) {
	switch it.kind {
	case evArrive:
		s.arriving--
		// Until now the view's job was a Waiting one with only its ID
		// (add): the submitted fields are written in place (spec's, without
		// a copy of the 232-byte job).
		pj, j := &s.view.Jobs[it.job], &s.jobs[it.job]
		pj.Name, pj.GPUs, pj.Submit, pj.Profile = j.name, j.gpus, j.submit, j.info0.profile
		pj.SoloS = j.solo0
		pj.State = policies.Pending
		s.books.Enqueue(policies.JobID(it.job))
		s.emit(policies.JobArrived, pj.ID, 0)
	case evWake:
		s.emit(policies.Wakeup, 0, 0)
	case evActive:
		j := &s.jobs[it.job]
		if it.epoch != j.epoch {
			return
		}
		pj := &s.view.Jobs[it.job]
		pj.Active, pj.ActiveAt = true, s.now
		// Alone, the job finishes its solo time after launch: startup
		// jitter shifts when it becomes active, not when it ends.
		// The attempt's solo time is its view profile's; its startup,
		// now less its launch (the activity event is due at launch plus
		// startup).
		at := s.att(int(it.job))
		at.work = max(pj.SoloS-(s.now-pj.Started).Seconds(), 1) * at.speed
		at.since = s.now
		j.rate = 0
		s.touch(pj.On) // (release touches the GPUs of changed's other callers)
		s.changed(pj.On)
		s.emit(policies.JobActive, pj.ID, pj.Attempts)
	case evFinish:
		j := &s.jobs[it.job]
		if it.epoch != j.epoch {
			s.requeue(it)
			return
		}
		pj := &s.view.Jobs[it.job]
		on := s.release(int(it.job))
		pj.State = policies.Done
		s.live--
		s.changed(on)
		s.emit(policies.JobFinished, pj.ID, pj.Attempts)
	case evOOM:
		if it.epoch != s.gpus[it.gpu].epoch {
			return
		}
		v := s.oomVictim(int(it.gpu))
		if v < 0 {
			s.scheduleOOM(int(it.gpu)) // rounding: not over yet
			return
		}
		pj := &s.view.Jobs[v]
		shared := false
		for _, g := range pj.On {
			shared = shared || len(s.view.GPUs[g].Jobs) > 1
		}
		pj.FailedShared = shared
		on := s.release(v)
		pj.State = policies.Pending
		pj.OOMs++
		pj.LastFailure, pj.FailedAt = policies.OOM, s.now
		s.books.Fail(pj.ID)
		s.changed(on)
		e := s.emit(policies.JobFailed, pj.ID, pj.Attempts)
		e.Failure, e.GPU = policies.OOM, int(it.gpu)
	}
}

// emit appends an event of kind k about job id (attempt a) at now and
// returns it for the kind's other fields: written in place in s.out, not
// built and then copied (an event is 112 bytes).
func (s *Sim) emit(k policies.EventKind, id policies.JobID, a int) *policies.Event {
	n := len(s.out)
	if n == cap(s.out) {
		s.out = append(s.out, policies.Event{})
	} else {
		s.out = s.out[:n+1]
	}
	e := &s.out[n]
	*e = policies.Event{Kind: k, T: s.now, Job: id, Attempt: a}
	return e
}

// release takes a running job off its GPUs and returns them.
func (s *Sim) release(id int) []int {
	pj := &s.view.Jobs[id]
	j := &s.jobs[id]
	s.settle(id)
	j.epoch++
	s.free = append(s.free, j.run)
	on := pj.On
	s.books.Release(pj.ID, on)
	s.mark(on)
	pj.On, pj.Active = nil, false
	return on
}

// Withdraw puts job id back in the queue whatever the model made of its
// last attempt: a running attempt is taken off its GPUs (its work lost,
// no failure counted), and a job the model finished is pending again. It
// is for a model that mirrors real processes (the executor's emulator),
// whose attempts can end for reasons the model did not make (an executor
// that stopped them, a process killed from outside): the next placement of
// the job must find it pending, as the executor has it. A job already
// pending, or stopped, is left as it is.
func (s *Sim) Withdraw(id policies.JobID) error {
	if id < 0 || int(id) >= len(s.jobs) {
		return fmt.Errorf("sim: withdraw job %d: no such job", id)
	}
	pj := &s.view.Jobs[id]
	switch pj.State {
	case policies.Running:
		on := s.release(int(id))
		pj.State = policies.Pending
		s.books.Enqueue(id)
		s.changed(on)
	case policies.Done:
		pj.State = policies.Pending
		s.live++
		s.books.Enqueue(id)
		s.lastChange = s.now
	}
	return nil
}

// IgnoresDeferrals implements loop.DeferralIgnorer: Apply does nothing
// with a Defer.
func (s *Sim) IgnoresDeferrals() {}

// Apply carries out one policy action.
func (s *Sim) Apply(a policies.Action) error {
	switch a.Kind {
	case policies.Place:
		return s.place(a)
	case policies.Stop:
		id := int(a.Job)
		if id < 0 || id >= len(s.jobs) || s.view.Jobs[id].State != policies.Pending {
			return fmt.Errorf("sim: stop job %d: not a pending job", a.Job)
		}
		s.books.Dequeue(a.Job)
		s.view.Jobs[id].State = policies.Stopped
		s.live--
		s.lastChange = s.now
		s.emit(policies.JobStopped, a.Job, 0).Reason = a.Reason
		return nil
	case policies.Wake:
		if a.At <= s.now { // due already: fires at once, once per instant
			if !s.wokeNow || s.wokeAt != s.now {
				s.wokeNow, s.wokeAt = true, s.now
				s.emit(policies.Wakeup, 0, 0)
			}
			return nil
		}
		if n := len(s.wakes); n == s.woke || a.At > s.wakes[n-1] { // after all pending: most often
			s.wakes = append(s.wakes, a.At)
		} else if i, found := slices.BinarySearch(s.wakes[s.woke:], a.At); !found {
			s.wakes = slices.Insert(s.wakes, s.woke+i, a.At)
		} else {
			return nil
		}
		s.push(item{t: a.At, kind: evWake, job: -1, gpu: -1})
		return nil
	case policies.Defer, policies.Undefer:
		return nil
	}
	return fmt.Errorf("sim: unknown action %v", a.Kind)
}

func (s *Sim) place(a policies.Action) error {
	if err := s.view.CheckPlace(a); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	id := int(a.Job)
	pj := &s.view.Jobs[id]
	j := &s.jobs[id]
	w := j.info0.w
	if s.mixed() {
		var err error
		if w, err = s.onType(id, a.GPUs); err != nil {
			return err
		}
	}
	if n := len(s.free); n > 0 {
		j.run, s.free = s.free[n-1], s.free[:n-1]
	} else {
		j.run = int32(len(s.atts))
		s.atts = append(s.atts, runState{})
	}
	at := &s.atts[j.run]
	_, scaled := s.typ(a.GPUs[0]).Telemetry.Scale[w.ID] // one type for all of a.GPUs (onType)
	*at = runState{w: w, scaled: scaled}
	s.books.Dequeue(a.Job)
	pj.State = policies.Running
	pj.Attempts++
	pj.On = s.cloneGPUs(a.GPUs)
	pj.Started, pj.Active, pj.ActiveAt = s.now, false, 0
	shared := false
	for _, g := range a.GPUs {
		shared = shared || len(s.view.GPUs[g].Jobs) > 0
	}
	s.books.Place(pj.ID, a.GPUs)
	s.mark(a.GPUs)
	j.epoch++
	attempt := prefixFrom(s.seedMix, uint64(id), uint64(pj.Attempts)) // unitPrefix(seed, id, attempts): unit(seed, id, attempts, ·)
	u := unitFrom(attempt, 0x57a27)
	startup := time.Duration(float64(j.info0.startup) * (1 + s.cfg.Truth.StartupJitter*(2*u-1))) // nominal startup, jittered
	at.peak = 1 + s.cfg.Truth.PeakJitter*(2*unitFrom(attempt, 0x9ea4)-1)
	// The variation never lifts a peak above the GPU: a job profiled alone
	// fits alone (a profiled peak above the capacity stays as it is).
	at.peak = min(at.peak, max(1, s.capacity(a.GPUs[0])/at.w.PeakMiB()))
	at.speed = 1
	if s.cfg.Truth.SpeedJitter > 0 {
		at.speed += s.cfg.Truth.SpeedJitter * (2*unitFrom(attempt, 0x5bd) - 1)
	}
	s.push(item{t: s.now + startup, kind: evActive, job: int32(id), epoch: j.epoch})
	s.lastChange = s.now
	e := s.emit(policies.JobStarted, pj.ID, pj.Attempts)
	e.GPUs, e.Shared = pj.On, shared
	return nil
}

// onType makes job id run its workload as profiled on the GPU type of
// gpus (all of one type): the catalog's profile and, unless the trace gave
// it, solo time there. The policies' view of the job shows that profile;
// it returns the workload as that type's catalog has it.
func (s *Sim) onType(id int, gpus []int) (*models.Workload, error) {
	k := s.typeOf[gpus[0]]
	for _, g := range gpus {
		if s.typeOf[g] != k {
			return nil, fmt.Errorf("sim: place job %d: GPUs %v are of types %s and %s: a job runs on GPUs of one type",
				id, gpus, s.types[k].Type.Name, s.types[s.typeOf[g]].Type.Name)
		}
	}
	j := &s.jobs[id]
	p, ok := s.ProfileOnType(policies.JobID(id), int(k))
	if !ok {
		return nil, fmt.Errorf("sim: place job %d: the %s catalog does not run workload %s on %d GPUs",
			id, s.types[k].Type.Name, j.info0.w.ID, j.gpus)
	}
	w, _ := s.types[k].Catalog.Get(j.info0.w.ID)
	s.view.Jobs[id].Profile = p // the attempt's solo time too (no copy in j)
	return w, nil
}

// profileOn is job id's profile on GPU g (the k-th of its GPUs; see
// Config.GPUsPerProfile).
func (s *Sim) profileOn(id, g int) *models.Profile {
	k := slices.Index(s.view.Jobs[id].On, g)
	pg := s.att(id).w.PerGPU
	return &pg[k%len(pg)]
}

// shownOn is the profile job id shows in GPU g's telemetry: profileOn's,
// corrected by the scale of g's telemetry model for its workload (a copy,
// made only for a scaled workload, when a segment is recorded).
func (s *Sim) shownOn(id, g int) *models.Profile {
	p := s.profileOn(id, g)
	w := s.att(id).w
	if sh := w.Shown; sh != nil {
		p = &sh[slices.Index(s.view.Jobs[id].On, g)%len(sh)]
	}
	if !s.att(id).scaled {
		return p
	}
	sh := s.typ(g).Telemetry.Shown(w.ID, *p)
	return &sh
}

// settle accounts the progress a running, active job made since it was last
// settled.
func (s *Sim) settle(id int) {
	j := &s.jobs[id]
	at := &s.atts[j.run] // s.att(id) without reading the job again: settle inlines
	if s.view.Jobs[id].Active && j.rate > 0 {
		at.work -= j.rate * (s.now - at.since).Seconds()
		at.work = max(at.work, 0)
	}
	at.since = s.now
}

// changed re-times the jobs on GPUs whose set of active jobs changed, and
// re-plans their OOM events and telemetry. The GPUs are marked for the
// next check already (touch: release marks the GPUs it frees, and an
// activity its job's).
func (s *Sim) changed(gpus []int) {
	if s.cfg.Samples != nil {
		s.emitSamples(s.now, false)
	}
	s.lastChange = s.now
	for _, g := range gpus {
		s.scheduleOOM(g)
		for _, id := range s.view.GPUs[g].Jobs {
			s.retime(int(id))
		}
	}
	// Telemetry segments carry the jobs' rates, so they are recorded once
	// every job is re-timed (a multi-GPU job's rate may change the
	// telemetry of its other GPUs too).
	for _, g := range gpus {
		s.gpus[g].tel.record(s, g)
		for _, id := range s.view.GPUs[g].Jobs {
			on := s.view.Jobs[id].On
			if len(on) == 1 {
				continue // on g alone, one of gpus
			}
			for _, h := range on {
				if !slices.Contains(gpus, h) && s.gpus[h].tel.rateChanged(s) {
					s.gpus[h].tel.record(s, h)
				}
			}
		}
	}
}

func (s *Sim) retime(id int) {
	pj := &s.view.Jobs[id]
	if !pj.Active {
		return
	}
	j, at := &s.jobs[id], s.att(id)
	rate := math.Inf(1)
	for k, g := range pj.On {
		tt := s.typ(g)
		var r float64
		if jobs := s.view.GPUs[g].Jobs; len(jobs) == 1 && int(jobs[0]) == id && tt.pressure() {
			r = 1 // rateOn's for a job alone under a PressureModel, without the call
		} else {
			r = s.rateOn(g, tt, id, &at.w.PerGPU[k%len(at.w.PerGPU)])
		}
		if tt.Speeds != nil {
			r /= tt.Speeds.Factor(at.w, s.slot(g))
		}
		rate = min(rate, r)
	}
	if rate <= 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		if s.fault == nil {
			s.fault = fmt.Errorf("the interference model gave job %d (%s) a rate of %v on GPUs %v", id, at.w.ID, rate, pj.On)
		}
		rate = 1e-6 // keeps time moving until Next reports the fault
	}
	if rate == j.rate && j.rate > 0 {
		return
	}
	s.settle(id)
	j.rate = rate
	j.epoch++
	d := math.Ceil(at.work / rate * 1e9)
	if d > float64(MaxTime-s.now) {
		if s.fault == nil {
			s.fault = fmt.Errorf("job %d (%s), %.6g s of work left at rate %.3g on GPUs %v, would finish after %.0f years of simulated time, the simulator's limit (it counts int64 nanoseconds): make the trace shorter or the interference milder",
				id, at.w.ID, at.work, rate, pj.On, MaxTime.Hours()/24/365)
		}
		d = float64(time.Hour) // keeps time moving until Next reports the fault
	}
	done := s.now + time.Duration(d)
	at.done = done
	at.fseq = s.seq
	if at.queued && at.qt <= done { // later than the heap's entry: pushed when it comes out (requeue)
		s.seq++
		return
	}
	at.queued, at.qt, at.qseq = true, done, at.fseq
	s.push(item{t: done, kind: evFinish, job: int32(id), epoch: j.epoch})
}

// requeue pushes the pending finish of a running job whose finish event
// it, gone stale, was the one the heap held for the attempt
// (runState.queued): the finish was re-timed later, and its entry comes
// now, with the sequence it was given then.
func (s *Sim) requeue(it item) {
	if s.view.Jobs[it.job].On == nil {
		return
	}
	at := s.att(int(it.job))
	if !at.queued || at.qseq != it.seq {
		return
	}
	at.qt, at.qseq = at.done, at.fseq
	s.q.push(item{t: at.done, seq: at.fseq, kind: evFinish, job: it.job, epoch: s.jobs[it.job].epoch})
}

// memAt is job id's true memory on GPU g at time t.
func (s *Sim) memAt(id, g int, t time.Duration) float64 {
	pj := &s.view.Jobs[id]
	if !pj.Active || t < pj.ActiveAt {
		return 0
	}
	return s.ramped(s.profileOn(id, g).PeakMiB*s.att(id).peak, t-pj.ActiveAt)
}

func (s *Sim) usedAt(g int, t time.Duration) float64 {
	var u float64
	for _, id := range s.view.GPUs[g].Jobs {
		u += s.memAt(int(id), g, t)
	}
	return u
}

// peaksFit reports whether the active jobs on GPU g fit it at their peaks,
// with room for rounding. Each job's memory ramps up to its peak and stays
// there, so then their memory is within the capacity at every time from
// now on (until the jobs on g change).
func (s *Sim) peaksFit(g int) bool {
	jobs := s.view.GPUs[g].Jobs
	switch len(jobs) {
	case 0:
		return true // nothing against a capacity above 0 (setTypes)
	case 1: // the sum below of one job's peak, without the walk
		id := int(jobs[0])
		if !s.view.Jobs[id].Active {
			return true
		}
		return s.profileOn(id, g).PeakMiB*s.att(id).peak*(1+1e-9) <= s.capacity(g)
	}
	peaks := 0.0
	for _, id := range jobs {
		if s.view.Jobs[id].Active {
			peaks += s.profileOn(int(id), g).PeakMiB * s.att(int(id)).peak
		}
	}
	return peaks*(1+1e-9) <= s.capacity(g)
}

// scheduleOOM finds the first time GPU g's true memory exceeds its capacity
// and schedules an OOM event then, replacing any earlier plan.
func (s *Sim) scheduleOOM(g int) {
	gp := &s.gpus[g]
	gp.epoch++
	gp.fits, gp.fitAt = s.peaksFit(g), s.now
	if !gp.fits { // else no time exceeds the capacity: nothing to search
		s.searchOOM(g)
	}
}

// searchOOM is scheduleOOM's search for GPU g, whose active jobs do not
// fit it at their peaks: a function of its own, so that scheduleOOM (at
// every change of a GPU's jobs) sets up no defer.
func (s *Sim) searchOOM(g int) {
	capa := s.capacity(g)
	// Breakpoints where the piecewise-linear total changes slope.
	ts := append(s.ts[:0], s.now)
	defer func() { s.ts = ts[:0] }()
	for _, id := range s.view.GPUs[g].Jobs {
		pj := &s.view.Jobs[id]
		if pj.Active && pj.ActiveAt+s.cfg.Truth.Ramp > s.now {
			ts = append(ts, pj.ActiveAt+s.cfg.Truth.Ramp)
		}
	}
	slices.Sort(ts)
	prev := s.now
	for _, t := range ts {
		if s.usedAt(g, t) <= capa {
			prev = t
			continue
		}
		// Crossing in (prev, t]: total is linear there.
		a, b := s.usedAt(g, prev), s.usedAt(g, t)
		at := t
		if b > a && t > prev {
			at = prev + time.Duration(math.Ceil(float64(t-prev)*(capa-a)/(b-a)))
			if at <= prev {
				at = prev
			}
			for s.usedAt(g, at) <= capa && at < t {
				at++
			}
		}
		s.push(item{t: at, kind: evOOM, job: -1, gpu: int32(g), epoch: s.gpus[g].epoch})
		return
	}
}

// oomVictim returns the job whose allocation pushes GPU g over capacity now:
// the most recently activated job still growing its memory (ties: the
// higher id), or -1 if the GPU is not over capacity.
func (s *Sim) oomVictim(g int) int {
	if s.usedAt(g, s.now) <= s.capacity(g) {
		return -1
	}
	victim := -1
	for _, id := range s.view.GPUs[g].Jobs {
		pj := &s.view.Jobs[id]
		if !pj.Active || pj.ActiveAt+s.cfg.Truth.Ramp < s.now {
			continue
		}
		if victim < 0 || pj.ActiveAt > s.view.Jobs[victim].ActiveAt ||
			(pj.ActiveAt == s.view.Jobs[victim].ActiveAt && int(id) > victim) {
			victim = int(id)
		}
	}
	if victim < 0 { // nothing ramping: the latest active job fails
		for _, id := range s.view.GPUs[g].Jobs {
			if s.view.Jobs[id].Active && (victim < 0 || s.view.Jobs[id].ActiveAt >= s.view.Jobs[victim].ActiveAt) {
				victim = int(id)
			}
		}
	}
	return victim
}

// checkActions checks the invariants of the jobs that the events of a
// policy's actions (started, stopped) name; the GPUs they touched are
// checked at the end of the next instant.
func (s *Sim) checkActions(evs []policies.Event) error {
	for i := range evs {
		e := &evs[i]
		var err error
		switch e.Kind {
		case policies.JobStarted:
			err = s.checkJob(int(e.Job))
		case policies.JobStopped:
			err = s.checkJob(int(e.Job))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// touch marks GPUs changed for the next check.
func (s *Sim) touch(gpus []int) {
	for _, g := range gpus {
		if !s.isTouched[g] {
			s.isTouched[g] = true
			s.touched = append(s.touched, g)
		}
	}
}

func (s *Sim) untouch() {
	for _, g := range s.touched {
		s.isTouched[g] = false
	}
	s.touched = s.touched[:0]
}

// check verifies the simulator's invariants on the GPUs and on the job an
// event concerned (-1 for none).
//
// GPUs are checked where something changed since the last check (a
// placement, a release, a change of active jobs), and all of them every
// 64th check, so that a memory total that crossed capacity without an
// event is still found.
func (s *Sim) check(job int) error {
	// The GPUs (one function with the rest: a call less an instant).
	s.checks++
	gpus := s.touched
	if s.checks&63 == 1 { // s.checks%64 (checks counts up from 0): every GPU
		if len(s.every) != len(s.view.GPUs) {
			s.every = make([]int, len(s.view.GPUs))
			for g := range s.every {
				s.every[g] = g
			}
		}
		gpus = s.every
	}
	var err error
GPUs:
	for _, g := range gpus {
		for _, id := range s.view.GPUs[g].Jobs {
			pj := &s.view.Jobs[id]
			if pj.State != policies.Running {
				err = fmt.Errorf("GPU %d lists job %d, which is %s", g, id, pj.State)
				break GPUs
			}
			if !slices.Contains(pj.On, g) {
				err = fmt.Errorf("GPU %d lists job %d, which runs on %v", g, id, pj.On)
				break GPUs
			}
			for _, h := range pj.On {
				if !slices.Contains(s.view.GPUs[h].Jobs, id) {
					err = fmt.Errorf("job %d runs on GPU %d, which does not list it", id, h)
					break GPUs
				}
			}
		}
		if g < len(s.gpus) && s.gpus[g].fits && s.gpus[g].fitAt == s.now || s.peaksFit(g) {
			continue // within the capacity at its peaks, so now too
		}
		if u, c := s.usedAt(g, s.now), s.capacity(g); u > c+1e-6 {
			err = fmt.Errorf("GPU %d holds %.0f MiB, over its %.0f MiB capacity", g, u, c)
			break
		}
	}
	s.untouch()
	if err == nil && job >= 0 {
		err = s.checkJob(job)
	}
	return err
}

// ChecksBookkeeping implements loop.SelfChecker: at the end of every
// instant the simulator checks the GPUs whose jobs changed and every job
// the instant's events name (check), and after the policy's actions the
// jobs they started or stopped (checkActions).
func (s *Sim) ChecksBookkeeping() {}

// checkJob verifies job i's bookkeeping: a running job is on as many GPUs
// as it needs and each of them lists it; any other holds no GPU.
func (s *Sim) checkJob(i int) error {
	pj := &s.view.Jobs[i]
	if pj.State == policies.Running {
		if len(pj.On) != pj.GPUs {
			return fmt.Errorf("job %d runs on %v, needs %d GPUs", i, pj.On, pj.GPUs)
		}
		for _, g := range pj.On {
			if !slices.Contains(s.view.GPUs[g].Jobs, pj.ID) {
				return fmt.Errorf("job %d runs on GPU %d, which does not list it", i, g)
			}
		}
	} else if len(pj.On) > 0 {
		return fmt.Errorf("job %d is %s but holds GPUs %v", i, pj.State, pj.On)
	}
	return nil
}

// ParseTruth reads truth settings from key=value pairs (as given by
// `aegis simulate --truth`), starting from DefaultTruth; an unknown key or
// bad value is an error listing the valid ones.
func ParseTruth(m map[string]string) (Truth, error) { return ReadTruth(policies.NewParams(m)) }

// TruthScope is the Scope of a *policies.ParamError about a truth setting.
const TruthScope = "truth"

// ReadTruth reads truth settings from p (see ParseTruth); p.Defs then lists
// every setting with its default and valid values.
func ReadTruth(p *policies.Params) (Truth, error) {
	d := DefaultTruth()
	t := Truth{
		ContextMiB:    p.Float("context_mib", d.ContextMiB, 0, 1e5, "CUDA context MiB at first activity"),
		Ramp:          p.Duration("ramp", d.Ramp, 0, time.Hour, "time from first activity to peak memory"),
		StartupJitter: p.Float("startup_jitter", d.StartupJitter, 0, 0.99, "relative half-width of startup jitter"),
		Noise:         p.Float("noise", d.Noise, 0, 10, "telemetry noise scale (0: none)"),
		PeakJitter:    p.Float("peak_jitter", d.PeakJitter, 0, 0.99, "relative half-width of per-attempt true-peak variation"),
		SpeedJitter:   p.Float("speed_jitter", d.SpeedJitter, 0, 0.5, "relative half-width of per-attempt speed variation"),
		IdleHorizon:   p.Duration("idle_horizon", d.IdleHorizon, time.Second, 1000*time.Hour, "how long wake-ups alone may run on an idle server"),
	}
	if err := p.Done(TruthScope); err != nil {
		return Truth{}, err
	}
	return t, nil
}
