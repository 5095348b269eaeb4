// Package experiments is the composition root: it builds policies by name,
// wires traces, models, a policy and the simulator into runs, and collects
// their results; its experiment specs (Spec, RunSpec, Merge) run many such
// runs and combine them into tables, figures and provenance.
package experiments

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/policies/exclusive"
	"github.com/aegis-sched/aegis/policies/horus"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/policies/lucid"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// policy is a known policy: its one-line summary, its constructor, and the
// code that reads its parameters (the constructor's first step, run alone
// to list them).
type policy struct {
	summary string
	build   func(map[string]string) (policies.Policy, error)
	read    func(*policies.Params) error
}

// known lists the policies by name: the one place a policy is registered.
func known() map[string]policy {
	return map[string]policy{
		"exclusive": {"strict FIFO, each job alone on idle GPUs (the baseline)",
			func(p map[string]string) (policies.Policy, error) { return exclusive.New(p) },
			exclusive.ReadConfig},
		"aegis": {"runtime-guided collocation: memory feasibility, observation hold, activity-anchored telemetry window, pressure filter, placement",
			func(p map[string]string) (policies.Policy, error) { return aegis.New(p) },
			func(p *policies.Params) error { _, err := aegis.ReadConfig(p); return err }},
		"horus": {"Horus (TPDS 2021): collocation by summed profiled utilization (paper) or its cost model (original)",
			func(p map[string]string) (policies.Policy, error) { return horus.New(p) },
			func(p *policies.Params) error { _, err := horus.ReadConfig(p); return err }},
		"lucid": {"Lucid (ASPLOS 2023): pairs jobs of complementary sharing classes within memory",
			func(p map[string]string) (policies.Policy, error) { return lucid.New(p) },
			func(p *policies.Params) error { _, err := lucid.ReadConfig(p); return err }},
	}
}

// PolicySummary is a one-line description of a known policy ("" for
// others).
func PolicySummary(name string) string { return known()[name].summary }

// PolicyParams lists a policy's parameters with their defaults and valid
// values, read from the policy's own parameter code with settings (nil: all
// defaults; e.g. {"variant": "original"} shows that variant's defaults).
func PolicyParams(name string, settings map[string]string) ([]policies.ParamDef, error) {
	k, ok := known()[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(PolicyNames(), ", "))
	}
	p := policies.NewParams(settings)
	if err := k.read(p); err != nil {
		return nil, err
	}
	return p.Defs(), nil
}

// PolicyNames lists the known policies.
func PolicyNames() []string {
	var s []string
	for n := range known() {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}

// NewPolicy builds a policy by name with key=value parameters.
func NewPolicy(name string, params map[string]string) (policies.Policy, error) {
	k, ok := known()[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: %s)", name, strings.Join(PolicyNames(), ", "))
	}
	return k.build(params)
}

// CheckPolicy builds a policy by name and checks that it can run on the
// server (e.g. a pressure filter needs DCGM telemetry).
func CheckPolicy(name string, params map[string]string, srv models.Server) error {
	p, err := NewPolicy(name, params)
	if err != nil {
		return err
	}
	if v, ok := p.(policies.Validator); ok {
		if err := v.Validate(&policies.View{Pressure: srv.Type.Pressure}); err != nil {
			return fmt.Errorf("policy %s on %s: %w", name, srv, err)
		}
	}
	return nil
}

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
	// Telemetry, when not nil, receives the run's telemetry.csv: every
	// GPU's 1 Hz sample (results.TelemetryWriter). Other outputs do not
	// change.
	Telemetry io.Writer
}

// Outcome is what a run produced.
type Outcome struct {
	Jobs    []results.Job
	Summary results.Summary
	Events  int // backend events processed (arrivals, starts, ticks, ...)
}

// Simulate runs r, writing the event log to events when it is not nil.
func Simulate(r Run, events io.Writer) (*Outcome, error) {
	p, err := NewPolicy(r.Policy, r.Params)
	if err != nil {
		return nil, err
	}
	cat, err := models.CatalogFor(r.Server.Type)
	if err != nil {
		return nil, err
	}
	inter := r.Interference
	if inter == nil {
		if inter, err = models.InterferenceFor(r.Server.Type); err != nil {
			return nil, err
		}
	}
	truth := sim.DefaultTruth()
	if r.Truth != nil {
		truth = *r.Truth
	}
	if err := Check(r.Trace, r.Server, cat); err != nil {
		return nil, err
	}
	specs := make([]sim.JobSpec, len(r.Trace.Jobs))
	for i, j := range r.Trace.Jobs {
		specs[i] = sim.JobSpec{Name: j.ID, Workload: j.Workload, GPUs: j.GPUs, Submit: j.Submit, SoloS: j.SoloS}
	}
	combine, err := models.TelemetryFor(r.Server.Type)
	if err != nil {
		return nil, err
	}
	cfg := sim.Config{Server: r.Server, Catalog: cat, Interference: inter, Telemetry: combine, Truth: truth, Seed: r.Seed}
	var tel *results.TelemetryWriter
	if r.Telemetry != nil {
		tel = results.NewTelemetryWriter(r.Telemetry)
		cfg.Samples = tel.Sample
	}
	s, err := sim.New(cfg, specs)
	if err != nil {
		return nil, fmt.Errorf("trace %s: %w", r.Trace.Name, err)
	}
	var fwd []results.Recorder
	var log *results.EventLog
	if events != nil {
		log = results.NewEventLog(events)
		fwd = append(fwd, log)
	}
	col := results.NewCollector(s.Jobs(), fwd...)
	if t, ok := p.(policies.Ticker); ok {
		col.SetDecisionGrid(t.Tick())
	}
	if r.Wrap != nil {
		p = r.Wrap(p)
	}
	if err := loop.Run(s, p, col); err != nil {
		return nil, fmt.Errorf("trace %s, policy %s: %w", r.Trace.Name, r.Policy, err)
	}
	if log != nil {
		if err := log.Flush(); err != nil {
			return nil, fmt.Errorf("event log: %w", err)
		}
	}
	if tel != nil {
		if err := tel.Flush(); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
	}
	return &Outcome{Jobs: col.Jobs(), Summary: col.Summary(), Events: col.Events()}, nil
}

// WorkloadsCommand is the command that lists GPU type gpuType's workload
// catalog, for error messages.
func WorkloadsCommand(gpuType string) string {
	if gpuType == "a100-40gb" {
		return "aegis workloads"
	}
	return "aegis workloads --gpu-type " + gpuType
}

// Check reports the first job of a trace that cannot run on the server: a
// workload missing from the server's catalog, a GPU count that disagrees
// with the workload's, or more GPUs than the server has. Errors name the
// trace file and line when known.
func Check(t *traces.Trace, srv models.Server, cat *models.Catalog) error {
	for i, j := range t.Jobs {
		w, ok := cat.Get(j.Workload)
		switch {
		case !ok:
			return fmt.Errorf("%s: column workload_id: %q is not in the %s catalog (see %s)", t.Where(i), j.Workload, srv.Type.Name, WorkloadsCommand(srv.Type.Name))
		case w.GPUs != j.GPUs:
			return fmt.Errorf("%s: column num_gpus: %d, but workload %s needs %d", t.Where(i), j.GPUs, j.Workload, w.GPUs)
		case j.GPUs > srv.GPUs:
			return fmt.Errorf("%s: column num_gpus: %d GPUs, but the server %s has %d", t.Where(i), j.GPUs, srv, srv.GPUs)
		}
	}
	return nil
}
