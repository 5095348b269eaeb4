// Package assemble puts one run together from named parts: it builds a
// policy (or a cluster dispatcher of one) by name from the registry of
// known policies, checks a trace against a server or cluster, and wires
// the trace, the models' truth, the policy and the simulator into a run
// (Simulate). It knows nothing of experiment specs or figures: both aegis
// simulate and aegis exec use it, and experiments runs many such runs.
package assemble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/dispatch"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// Run is one simulation: a trace on a server under a policy.
type Run struct {
	Trace  *traces.Trace
	Server models.Server
	Policy string
	Params map[string]string
	Seed   uint64
	// Interference is the truth model of co-location slowdown; nil means
	// the default model.
	Interference models.Interference
	// Wrap, when not nil, wraps the policy before the run (diagnostics,
	// e.g. PlacementDecisions).
	Wrap func(policies.Policy) policies.Policy
	// Truth overrides the default truth settings when non-nil.
	Truth *sim.Truth
	// Combine, when not nil, replaces the server's GPU type's telemetry
	// combination (models.TelemetryFor), as a model refit's steady
	// saturation does (models.RefitsFile.SteadySaturation); the types of
	// a mixed cluster keep their own.
	Combine *models.TelemetryParams
	// Telemetry, when not nil, receives the run's telemetry.csv: every
	// GPU's 1 Hz sample (results.TelemetryWriter) with its power_w, the
	// second's mean power as the energy meter charges it (sim.Config.Samples;
	// empty on a GPU type without a power model). Other outputs do not
	// change.
	Telemetry io.Writer
	// PipeOutputs makes the event log's lines and, when streamed without
	// extra columns, jobs.csv's rows on goroutines of their own
	// (results.PipedEventLog, results.Collector.PipeJobs): the same bytes,
	// in less wall time where a core would otherwise idle (one `aegis
	// simulate`), for some more CPU time (copying each event and job
	// over, waking the goroutines). Runs that share the cores (a sweep's
	// cells) leave it off.
	PipeOutputs bool
	// Jobs, when not nil, receives the run's jobs.csv while the run goes
	// on (results.Collector.StreamJobs: the same bytes as Outcome.Files
	// writes, each row once its job and every earlier one are final), and
	// the Outcome then holds no jobs: memory for a million jobs.
	Jobs io.Writer
	// Progress, when not nil, is called after every finished job with
	// the jobs finished and the trace's jobs (a progress bar).
	Progress func(done, total int)
	// Cluster, when not nil, runs the trace on a cluster instead of
	// Server: its GPUs as one pool (server 0's first), one instance of the
	// policy per server behind a dispatch.Dispatcher (parameter dispatch).
	Cluster *models.Cluster
	// ReleaseTrace makes Simulate let go of the trace's jobs once the
	// simulator holds its own: it sets Trace.Jobs and Trace.Lines to nil
	// (Trace.Name stays), so that a caller that keeps no other reference
	// to them has their memory freed while the run goes on (a million
	// jobs' 64 MB in aegis simulate). Outputs do not change.
	ReleaseTrace bool
	// Released, when not nil, is called once ReleaseTrace let go of the
	// trace's jobs, before the run's first step (aegis simulate collects
	// garbage there when its heap is past its floor, so that the run's
	// later allocations reuse the trace's memory instead of new pages).
	Released func()
}

// Outcome is what a run produced.
type Outcome struct {
	// Jobs holds every job's outcome (none when Run.Jobs streamed them).
	Jobs    []results.Job
	Summary results.Summary
	Events  int // backend events processed (arrivals, starts, ticks, ...)
	// Servers holds, in a cluster run only, each job's server(s) as
	// jobs.csv's server column shows them (none when Run.Jobs streamed
	// them).
	Servers []string
	// GPUTypes holds, in a run on a cluster of several GPU types only,
	// the GPU type of each job's latest attempt (jobs.csv's gpu_type
	// column; empty if it never started).
	GPUTypes []string
}

// Simulate runs r, writing the event log to events when it is not nil.
// When ctx is done the run stops before its next step and returns ctx's
// error, wrapped with the trace and policy.
func Simulate(ctx context.Context, r Run, events io.Writer) (*Outcome, error) {
	a := &assembly{r: r}
	if err := a.policy(); err != nil {
		return nil, err
	}
	defer registry.Close(a.p)
	if err := a.simulator(); err != nil {
		return nil, err
	}
	defer a.stopPipes()
	if err := a.recorders(events); err != nil {
		return nil, err
	}
	if r.ReleaseTrace { // the simulator and recorders have what they need
		r.Trace.Jobs, r.Trace.Lines = nil, nil
		if r.Released != nil {
			r.Released()
		}
	}
	p := a.p
	if r.Wrap != nil {
		p = r.Wrap(p)
	}
	if err := loop.Run(ctx, a.s, p, a.col); err != nil {
		return nil, fmt.Errorf("trace %s, policy %s: %w", r.Trace.Name, r.Policy, err)
	}
	return a.outcome()
}

// assembly is one run being put together, Simulate's sections in order:
// the policy, the simulator with its truth, the recorders, the outcome.
type assembly struct {
	r     Run
	p     policies.Policy
	disp  *dispatch.Dispatcher // a cluster run's (p)
	mixed *mixedTruth          // a cluster of several GPU types
	s     *sim.Sim
	tel   *results.TelemetryWriter
	log   eventLog
	where *serverRecorder // a cluster run's
	col   *results.Collector
	// first is the trace's first submission (the energy meter's start),
	// known before the trace may be released.
	first time.Duration
	// pipedJobs: the collector's jobs.csv rows are piped (PipeOutputs).
	pipedJobs bool
	// energyNote says why the run meters no energy ("" when it does).
	energyNote string
}

// powerFor is GPU type t's power model, or nil and why there is none.
func powerFor(t models.GPUType) (*models.PowerModel, string, error) {
	pm, err := models.PowerFor(t)
	if errors.Is(err, models.ErrNoPower) {
		return nil, err.Error(), nil
	}
	return pm, "", err
}

// energy sets s's energy to solution: the simulator's meter from the first
// submission over the makespan, or why there is none.
func (a *assembly) energy(s *results.Summary) {
	if a.energyNote != "" {
		s.EnergyNote = a.energyNote
		return
	}
	if s.Finished == 0 {
		s.EnergyNote = "no job finished"
		return
	}
	end := a.first + time.Duration(math.Round(s.MakespanS*1e9))
	if j, ok := a.s.Energy(a.first, end); ok {
		s.Energy = &results.Energy{J: j, GPUs: a.r.Server.GPUs}
	}
}

// policy builds the run's policy: a cluster dispatcher of it on a cluster.
func (a *assembly) policy() error {
	r := &a.r
	var err error
	if r.Cluster != nil {
		r.Server = r.Cluster.Server()
		if a.disp, err = registry.NewDispatcher(r.Policy, r.Params, r.Cluster.Servers); err != nil {
			return err
		}
		a.p = a.disp
		return nil
	}
	a.p, err = registry.New(r.Policy, r.Params)
	return err
}

// simulator checks the trace and builds the simulator with the server's
// (or each GPU type's) truth.
//
// On a server of one GPU type the trace is checked (check) only when the
// simulator cannot be built: sim.New refuses every job check refuses
// (TestSimRefusesWhatCheckRefuses), and check's error, which names the
// trace's file and line, is then the one returned. A run that builds
// looks each job's workload up once, in sim.New, not twice.
func (a *assembly) simulator() error {
	r := &a.r
	cat, err := models.CatalogFor(r.Server.Type)
	if err != nil {
		return err
	}
	inter := r.Interference
	if inter == nil {
		if inter, err = models.InterferenceFor(r.Server.Type); err != nil {
			return err
		}
	}
	truth := sim.DefaultTruth()
	if r.Truth != nil {
		truth = *r.Truth
	}
	if r.Cluster != nil && r.Cluster.Mixed() {
		if a.mixed, err = newMixedTruth(*r); err == nil {
			err = checkMixed(r.Trace, *r.Cluster, a.mixed.cats)
		}
		if err != nil {
			return err
		}
	}
	if err = a.build(cat, inter, truth); err != nil && a.mixed == nil {
		if cerr := check(r.Trace, r.Server, cat, r.Cluster != nil); cerr != nil {
			return cerr
		}
	}
	return err
}

// build builds the simulator of a checked run (simulator).
func (a *assembly) build(cat *models.Catalog, inter models.Interference, truth sim.Truth) error {
	r := &a.r
	combine, err := models.TelemetryFor(r.Server.Type)
	if err != nil {
		return err
	}
	if r.Combine != nil {
		combine = *r.Combine
	}
	speeds, err := models.SpeedsFor(r.Server.Type)
	if err != nil {
		return err
	}
	power, note, err := powerFor(r.Server.Type)
	if err != nil {
		return err
	}
	a.energyNote = note
	cfg := sim.Config{Server: r.Server, Catalog: cat, Interference: inter, Telemetry: combine, Truth: truth, Seed: r.Seed,
		GPUsPerProfile: r.Cluster != nil, Speeds: speeds, Power: power}
	if r.Cluster != nil {
		cfg.Slots = r.Cluster.Slots()
	}
	if a.mixed != nil {
		cfg.Types, cfg.TypeOf = a.mixed.types, r.Cluster.GPUTypes()
		a.energyNote = a.mixed.energyNote
	}
	if r.Telemetry != nil {
		a.tel = results.NewTelemetryWriter(r.Telemetry, results.TelemetryPower)
		cfg.Samples = a.tel.SamplePower
	}
	if a.s, err = sim.New(cfg, r.Trace.Jobs); err != nil {
		return fmt.Errorf("trace %s: %w", r.Trace.Name, err)
	}
	if jobs := r.Trace.Jobs; len(jobs) > 0 {
		a.first = jobs[0].Submit
		for _, j := range jobs {
			a.first = min(a.first, j.Submit)
		}
	}
	if a.mixed != nil {
		return a.mixed.route(a.disp, a.s, *r.Cluster)
	}
	return nil
}

// recorders sets up what records the run: the event log (to events, when
// not nil), each job's server(s) on a cluster, and the collector, which
// streams jobs.csv to Run.Jobs when it is set.
func (a *assembly) recorders(events io.Writer) error {
	r := &a.r
	var fwd []results.Recorder
	if events != nil {
		if r.PipeOutputs { // Simulate flushes it on every return
			a.log = results.NewPipedEventLog(events)
		} else {
			a.log = results.NewEventLog(events)
		}
		fwd = append(fwd, a.log)
	}
	if a.disp != nil {
		a.where = newServerRecorder(a.disp, len(r.Trace.Jobs))
		if a.mixed != nil {
			a.where.names, a.where.typeOf = a.mixed.names, r.Cluster.GPUTypes()
			a.where.types = make([]string, len(r.Trace.Jobs))
		}
		fwd = append(fwd, a.where)
	}
	if r.Progress != nil {
		fwd = append(fwd, results.NewProgress(len(r.Trace.Jobs), r.Progress))
	}
	s := a.s
	a.col = results.NewCollectorOf(len(r.Trace.Jobs), func(i int) results.Spec {
		name, workload, gpus, solo, submit := s.Submitted(i)
		return results.Spec{ID: policies.JobID(i), Name: name, Workload: workload, GPUs: gpus, SoloS: solo, Submit: submit}
	}, fwd...)
	if t, ok := a.p.(policies.Ticker); ok {
		a.col.SetDecisionGrid(t.Tick())
	}
	if r.Jobs == nil {
		return nil
	}
	var names []string
	var add func([]string, policies.JobID) []string
	switch where := a.where; {
	case where != nil && where.types != nil:
		names = []string{"server", "gpu_type"}
		add = func(row []string, id policies.JobID) []string { return append(row, where.server(id), where.types[id]) }
	case where != nil:
		names = []string{"server"}
		add = func(row []string, id policies.JobID) []string { return append(row, where.server(id)) }
	}
	if err := a.col.StreamJobsWith(r.Jobs, names, add); err != nil {
		return err
	}
	if r.PipeOutputs && add == nil {
		a.pipedJobs = true
		return a.col.PipeJobs()
	}
	return nil
}

// eventLog is the run's event log, piped or not.
type eventLog interface {
	results.Recorder
	Flush() error
}

// stopPipes stops the piped outputs' goroutines when the run ended early
// (outcome flushes them otherwise; a second flush does nothing).
func (a *assembly) stopPipes() {
	if p, ok := a.log.(*results.PipedEventLog); ok {
		p.Flush()
	}
	if a.pipedJobs {
		a.col.FlushJobs()
	}
}

// outcome flushes the run's writers and returns what it produced.
func (a *assembly) outcome() (*Outcome, error) {
	if a.log != nil {
		if err := a.log.Flush(); err != nil {
			return nil, fmt.Errorf("event log: %w", err)
		}
	}
	if a.tel != nil {
		if err := a.tel.Flush(); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	o := &Outcome{Summary: a.col.Summary(), Events: a.col.Events()}
	a.energy(&o.Summary)
	if a.r.Jobs != nil {
		if err := a.col.FlushJobs(); err != nil {
			return nil, err
		}
		return o, nil
	}
	o.Jobs = a.col.Jobs()
	if a.where != nil {
		o.Servers = make([]string, len(a.where.servers))
		for id := range o.Servers {
			o.Servers[id] = a.where.server(policies.JobID(id))
		}
		o.GPUTypes = a.where.types
	}
	return o, nil
}

// Files returns a run's output files by name: jobs.csv, summary.csv,
// deferrals.csv and, given the event log's bytes, events.jsonl.
func (o *Outcome) Files(events []byte) (map[string][]byte, error) {
	files, err := results.RunFiles(o.Jobs, o.Servers, o.Summary, events)
	if err != nil || o.GPUTypes == nil {
		return files, err
	}
	var b bytes.Buffer
	err = results.WriteJobsCSVWith(&b, o.Jobs, results.ExtraColumn{Name: "server", Values: o.Servers},
		results.ExtraColumn{Name: "gpu_type", Values: o.GPUTypes})
	files[rundir.Jobs] = b.Bytes()
	return files, err
}

// mixedTruth is the truth of each GPU type of a cluster of several:
// catalog, interference model (Run.Interference, when set, for every type)
// and telemetry model.
type mixedTruth struct {
	types    []sim.TypeTruth
	cats     []*models.Catalog
	names    []string
	pressure []bool
	differ   bool // the types' catalogs are not all the same
	// energyNote says why a type has no power model ("" when all have).
	energyNote string
}

func newMixedTruth(r Run) (*mixedTruth, error) {
	c := r.Cluster
	m := &mixedTruth{}
	for _, t := range c.Types {
		cat, err := models.CatalogFor(t)
		if err != nil {
			return nil, err
		}
		inter := r.Interference
		if inter == nil {
			if inter, err = models.InterferenceFor(t); err != nil {
				return nil, err
			}
		}
		combine, err := models.TelemetryFor(t)
		if err != nil {
			return nil, err
		}
		speeds, err := models.SpeedsFor(t)
		if err != nil {
			return nil, err
		}
		power, note, err := powerFor(t)
		if err != nil {
			return nil, err
		}
		if note != "" && m.energyNote == "" {
			m.energyNote = note
		}
		m.types = append(m.types, sim.TypeTruth{Type: t, Catalog: cat, Interference: inter, Telemetry: combine, Speeds: speeds, Power: power})
		m.cats, m.names, m.pressure = append(m.cats, cat), append(m.names, t.Name), append(m.pressure, t.Pressure)
		m.differ = m.differ || cat != m.cats[0]
	}
	return m, nil
}

// route tells the dispatcher the cluster's types and where s lets each job
// run.
func (m *mixedTruth) route(d *dispatch.Dispatcher, s *sim.Sim, c models.Cluster) error {
	ts := dispatch.Types{Server: c.ServerType, Pressure: m.pressure, Runs: s.TypeMask}
	if m.differ {
		ts.Profile = s.ProfileOnType
	}
	return d.SetTypes(ts)
}

// checkMixed is check on a cluster of several GPU types (catalogs: each
// type's): every job's workload must be in some type's catalog, for its GPU
// count (or a multiple of the workload's), on a type with enough GPUs.
func checkMixed(t *traces.Trace, c models.Cluster, cats []*models.Catalog) error {
	perType := make([]int, len(c.Types))
	for i, n := range c.Servers {
		perType[c.ServerType[i]] += n
	}
	var names []string
	for _, ty := range c.Types {
		names = append(names, ty.Name)
	}
	for i, j := range t.Jobs {
		var found *models.Workload
		most, runs := 0, false
		for k, cat := range cats {
			w, ok := cat.Get(j.Workload)
			if !ok {
				continue
			}
			found = w
			if w.GPUs != j.GPUs && (j.GPUs < w.GPUs || j.GPUs%w.GPUs != 0) {
				continue
			}
			if most = max(most, perType[k]); j.GPUs <= perType[k] {
				runs = true
				break
			}
		}
		switch {
		case runs:
		case found == nil:
			return fmt.Errorf("%s: column workload_id: %q is in the catalog of none of the cluster's GPU types (%s; see %s)",
				t.Where(i), j.Workload, strings.Join(names, ", "), WorkloadsCommand(names[0]))
		case most == 0:
			return fmt.Errorf("%s: column num_gpus: %d, but workload %s needs %d (a cluster run takes a multiple of it, its profile repeated per GPU)", t.Where(i), j.GPUs, j.Workload, found.GPUs)
		default:
			return fmt.Errorf("%s: column num_gpus: %d GPUs, but the cluster has at most %d GPUs of one type whose catalog has workload %s", t.Where(i), j.GPUs, most, j.Workload)
		}
	}
	return nil
}

// serverRecorder records the server(s) of each job's latest attempt and,
// on a cluster of several GPU types, its GPU type.
type serverRecorder struct {
	d *dispatch.Dispatcher
	// servers[id] is job id's one server plus one (0: no server yet), or
	// spanned: its servers' column ("0+1") is in span. Four bytes a job,
	// not a string and its bytes (a million-job cluster run: some 24 MB
	// and a million allocations fewer); numbers holds server k's name,
	// made once.
	servers []int32
	span    map[policies.JobID]string
	numbers []string
	// Several GPU types: each type's name, each GPU's type, each job's.
	names  []string
	typeOf []int
	types  []string
}

// spanned marks a job in serverRecorder.servers whose column is in span.
const spanned = -1

func newServerRecorder(d *dispatch.Dispatcher, jobs int) *serverRecorder {
	return &serverRecorder{d: d, servers: make([]int32, jobs)}
}

func (r *serverRecorder) Event(e policies.Event) {
	st := e
	if e.Kind != policies.JobStarted || int(st.Job) >= len(r.servers) {
		return
	}
	one, runs := -1, 0
	last := -1
	for _, g := range st.GPUs {
		if s := r.d.ServerOf(g); s != last {
			one, last = s, s
			runs++
		}
	}
	if r.servers[st.Job] == spanned {
		delete(r.span, st.Job)
	}
	switch {
	case runs == 0:
		r.servers[st.Job] = 0
	case runs == 1 && one >= 0 && one < math.MaxInt32:
		r.servers[st.Job] = int32(one) + 1
	default:
		var b strings.Builder
		last := -1
		for _, g := range st.GPUs {
			if s := r.d.ServerOf(g); s != last {
				if last >= 0 {
					b.WriteByte('+')
				}
				b.WriteString(strconv.Itoa(s))
				last = s
			}
		}
		if r.span == nil {
			r.span = map[policies.JobID]string{}
		}
		r.servers[st.Job], r.span[st.Job] = spanned, b.String()
	}
	if r.types != nil && len(st.GPUs) > 0 {
		r.types[st.Job] = r.names[r.typeOf[st.GPUs[0]]]
	}
}

// server is job id's server column: the servers of its latest attempt,
// "" if it never started.
func (r *serverRecorder) server(id policies.JobID) string {
	switch v := r.servers[id]; v {
	case 0:
		return ""
	case spanned:
		return r.span[id]
	default:
		k := int(v - 1)
		for len(r.numbers) <= k {
			r.numbers = append(r.numbers, strconv.Itoa(len(r.numbers)))
		}
		return r.numbers[k]
	}
}

func (r *serverRecorder) Action(policies.Action) {}

// TakeDeferralChanges implements the loop's DeferralChangeRecorder: the
// servers read no deferral.
func (r *serverRecorder) TakeDeferralChanges() bool { return true }

// WorkloadsCommand is the command that lists GPU type gpuType's workload
// catalog, for error messages.
func WorkloadsCommand(gpuType string) string {
	if gpuType == "a100-40gb" {
		return "aegis workloads"
	}
	return "aegis workloads --gpu-type " + gpuType
}

// Check checks that r can be put together, without running it: its policy
// (on a cluster, the dispatcher of one per server) builds from r.Params and
// can run on every GPU type of the hardware, r's truth suits each of those
// types and, when r.Trace is set, every job of the trace can run there.
// aegis simulate, aegis exec and every cell of an experiment check their
// runs with it; bad parameters are *policies.ParamError.
func (r Run) Check() error {
	srv, servers := r.Server, []models.Server{r.Server}
	if c := r.Cluster; c != nil {
		srv, servers = c.Server(), nil
		for _, t := range c.Types {
			servers = append(servers, models.Server{Type: t, GPUs: c.MaxServerGPUs()})
		}
		if _, err := registry.NewDispatcher(r.Policy, r.Params, c.Servers); err != nil {
			return err
		}
		if err := checkPolicy(r.Policy, registry.ServerParams(r.Params), servers); err != nil {
			return err
		}
	} else if err := checkPolicy(r.Policy, r.Params, servers); err != nil {
		return err
	}
	if r.Combine != nil {
		if err := r.Combine.Check(); err != nil {
			return fmt.Errorf("telemetry combination: %w", err)
		}
	}
	truth := sim.DefaultTruth()
	if r.Truth != nil {
		truth = *r.Truth
	}
	for _, s := range servers {
		if err := truth.Check(s); err != nil {
			return err
		}
	}
	if r.Trace == nil {
		return nil
	}
	cat, err := models.CatalogFor(srv.Type)
	if err != nil {
		return err
	}
	return CheckOn(r.Trace, srv, r.Cluster, cat)
}

// CheckWorkloads reports the first job of a trace whose workload is not in
// GPU type gpuType's catalog cat, or whose GPU count disagrees with the
// workload's: Check for a run whose number of GPUs is not known yet (aegis
// exec, whose executor refuses a job wider than its GPUs).
func CheckWorkloads(t *traces.Trace, gpuType string, cat *models.Catalog) error {
	return check(t, models.Server{Type: models.GPUType{Name: gpuType}}, cat, false)
}

// check reports the first job of a trace that cannot run on the server: a
// workload missing from the server's catalog, a GPU count that disagrees
// with the workload's, or more GPUs than the server has (unless srv.GPUs is
// 0: not known). Errors name the trace file and line when known.
// perProfile admits a job of a multiple of its workload's GPU count
// (sim.Config.GPUsPerProfile, cluster runs).
func check(t *traces.Trace, srv models.Server, cat *models.Catalog, perProfile bool) error {
	for i, j := range t.Jobs {
		w, ok := cat.Get(j.Workload)
		switch {
		case !ok:
			return fmt.Errorf("%s: column workload_id: %q is not in the %s catalog (see %s)", t.Where(i), j.Workload, srv.Type.Name, WorkloadsCommand(srv.Type.Name))
		case perProfile && w.GPUs != j.GPUs && (j.GPUs < w.GPUs || j.GPUs%w.GPUs != 0):
			return fmt.Errorf("%s: column num_gpus: %d, but workload %s needs %d (a cluster run takes a multiple of it, its profile repeated per GPU)", t.Where(i), j.GPUs, j.Workload, w.GPUs)
		case !perProfile && w.GPUs != j.GPUs:
			return fmt.Errorf("%s: column num_gpus: %d, but workload %s needs %d", t.Where(i), j.GPUs, j.Workload, w.GPUs)
		case srv.GPUs > 0 && j.GPUs > srv.GPUs:
			if perProfile {
				return fmt.Errorf("%s: column num_gpus: %d GPUs, but the cluster has %d", t.Where(i), j.GPUs, srv.GPUs)
			}
			return fmt.Errorf("%s: column num_gpus: %d GPUs, but the server %s has %d", t.Where(i), j.GPUs, srv, srv.GPUs)
		}
	}
	return nil
}

// CheckOn reports the first job of a trace that cannot run on srv or, when
// c is not nil, on cluster c (srv is then c.Server() and cat its first
// type's catalog), as check does: a cluster run admits a
// multiple of a workload's GPU count, and a cluster of several GPU types
// checks each job against the catalogs of all of them.
func CheckOn(t *traces.Trace, srv models.Server, c *models.Cluster, cat *models.Catalog) error {
	switch {
	case c == nil:
		return check(t, srv, cat, false)
	case c.Mixed():
		m, err := newMixedTruth(Run{Cluster: c})
		if err != nil {
			return err
		}
		return checkMixed(t, *c, m.cats)
	}
	return check(t, srv, cat, true)
}

// checkPolicy builds a policy by name and checks that it can run on each
// of servers (e.g. a pressure filter needs DCGM telemetry).
func checkPolicy(name string, params map[string]string, servers []models.Server) error {
	p, err := registry.New(name, params)
	if err != nil {
		return err
	}
	defer registry.Close(p)
	v, ok := p.(policies.Validator)
	if !ok {
		return nil
	}
	for _, srv := range servers {
		if err := v.Validate(&policies.View{Pressure: srv.Type.Pressure}); err != nil {
			return fmt.Errorf("policy %s on %s: %w", name, srv, err)
		}
	}
	return nil
}
