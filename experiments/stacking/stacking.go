// Package stacking replays the progressive stacking protocol of the AEGIS
// artifact's threshold experiments on the simulator: one GPU, a fixed launch
// sequence of jobs, the first launched at once and each next one once the
// newest job has shown GPU activity and 30 s more have passed, admitted only
// if the pressure thresholds pass and retried every second. It is the one
// implementation of that protocol, used by calibration (models' N-way speed
// and telemetry combination), tests and the Figure 7 experiment, and it
// reads the measured data set (progressive_sequences.csv,
// progressive_targets.csv, threshold_grid.csv).
package stacking

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/policies/colloc"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// Job is one job of a launch sequence.
type Job struct {
	Position int     // 1-based launch position
	Run      string  // the run as launched (e.g. a truncated ImageNet run)
	Workload string  // the catalog workload whose profile it has
	SoloS    float64 // its run time measured alone on the same GPU, seconds
}

// Sequence is a fixed launch order of jobs onto one GPU.
type Sequence struct {
	Name string
	Jobs []Job // in launch order
}

// Protocol constants of the artifact's experiment.
const (
	// Gap is the wait after the newest job's first activity before the
	// next one may be admitted (the observation hold).
	Gap = 30 * time.Second
	// Window is the telemetry window, in 1 Hz samples.
	Window = 30
)

// Config is how a sequence is replayed. The zero value replays with the
// pressure filter at thresholds 0/0/0 (every job waits for an idle GPU) on
// an A100-40GB with the default models and truth; set Thresholds or NoFilter.
type Config struct {
	// Thresholds τ1, τ2, τ3 on the SMACT, SMOCC and DRAMA window scores:
	// a job is rejected while SMACT ≥ τ1 and (SMOCC ≥ τ2 or DRAMA ≥ τ3).
	Thresholds [3]float64
	// NoFilter admits every job as soon as the hold allows (the
	// protocol's no-deferral runs).
	NoFilter bool
	// GPU is the GPU type (zero: a100-40gb). Its catalog gives the jobs'
	// profiles; their solo times are the sequence's.
	GPU models.GPUType
	// Catalog overrides the GPU type's catalog when not nil.
	Catalog *models.Catalog
	// Interference is the speed truth (nil: models.InterferenceFor(GPU)).
	Interference models.Interference
	// Telemetry is how co-located jobs' telemetry combines (nil:
	// models.TelemetryFor(GPU)).
	Telemetry *models.TelemetryParams
	// Truth overrides the simulator's default truth when not nil.
	Truth *sim.Truth
	// Seed seeds the simulator (startup jitter, telemetry noise).
	Seed uint64
}

// JobResult is one job's outcome in a replay.
type JobResult struct {
	Job
	// Start (launch), Active (first GPU activity) and Finish, from the
	// replay's start.
	Start, Active, Finish time.Duration
	// RunS is launch to exit in seconds; Slowdown is RunS / SoloS.
	RunS, Slowdown float64
	// Deferrals counts the whole seconds in which the filter rejected it.
	Deferrals int
	// Probed reports whether the job had to pass the filter (it did not
	// find the GPU idle); Scores are then the SMACT, SMOCC and DRAMA window
	// scores at its first decision after the hold, i.e. what the filter saw
	// when the job was first eligible, and Running the number of jobs on
	// the GPU then.
	Probed  bool
	Scores  [3]float64
	Running int
}

// Result is the outcome of one replay.
type Result struct {
	Sequence string
	Jobs     []JobResult // in launch order
	// MakespanS is first start to last finish, seconds.
	MakespanS float64
	// MeanSlowdown and MaxSlowdown are over the jobs' slowdowns.
	MeanSlowdown, MaxSlowdown float64
	// FirstRejected is the position of the first job the filter deferred
	// (0: none); Deferrals sums the jobs' deferrals.
	FirstRejected int
	Deferrals     int
}

// Catalog returns a catalog holding the sequence's workloads with their
// profiles from base and their solo times from the sequence.
func (s Sequence) Catalog(base *models.Catalog) (*models.Catalog, error) {
	var ws []models.Workload
	for _, j := range s.Jobs {
		w, ok := base.Get(j.Workload)
		if !ok {
			return nil, fmt.Errorf("sequence %s, position %d: workload %q is not in the catalog", s.Name, j.Position, j.Workload)
		}
		if w.GPUs != 1 {
			return nil, fmt.Errorf("sequence %s, position %d: workload %s needs %d GPUs; the protocol stacks single-GPU jobs", s.Name, j.Position, j.Workload, w.GPUs)
		}
		if slices.ContainsFunc(ws, func(x models.Workload) bool { return x.ID == j.Workload }) {
			return nil, fmt.Errorf("sequence %s, position %d: workload %s appears twice", s.Name, j.Position, j.Workload)
		}
		c := *w
		c.SoloS = j.SoloS
		ws = append(ws, c)
	}
	return models.NewCatalog(ws)
}

// Replay runs the stacking protocol for one sequence on the simulator: all
// jobs are submitted at time 0 in launch order to the AEGIS policy on one
// GPU with a 30 s hold, a 1 s decision tick, strict FIFO, an activity-
// anchored 30-sample window and no memory check (the protocol has none),
// placement irrelevant on one GPU.
func Replay(seq Sequence, cfg Config) (*Result, error) {
	if len(seq.Jobs) == 0 {
		return nil, fmt.Errorf("sequence %s: no jobs", seq.Name)
	}
	gt := cfg.GPU
	if gt.Name == "" {
		var err error
		if gt, err = models.LookupGPU("a100-40gb"); err != nil {
			return nil, err
		}
	}
	base := cfg.Catalog
	if base == nil {
		var err error
		if base, err = models.CatalogFor(gt); err != nil {
			return nil, err
		}
	}
	cat, err := seq.Catalog(base)
	if err != nil {
		return nil, err
	}
	inter := cfg.Interference
	if inter == nil {
		if inter, err = models.InterferenceFor(gt); err != nil {
			return nil, err
		}
	}
	var tel models.TelemetryParams
	if cfg.Telemetry != nil {
		tel = *cfg.Telemetry
	} else if tel, err = models.TelemetryFor(gt); err != nil {
		return nil, err
	}
	truth := sim.DefaultTruth()
	if cfg.Truth != nil {
		truth = *cfg.Truth
	}
	specs := make([]traces.Job, len(seq.Jobs))
	for i, j := range seq.Jobs {
		specs[i] = traces.Job{ID: fmt.Sprintf("%d:%s", j.Position, j.Run), Workload: j.Workload, GPUs: 1}
	}
	s, err := sim.New(sim.Config{Server: models.Server{Type: gt, GPUs: 1}, Catalog: cat,
		Interference: inter, Telemetry: tel, Truth: truth, Seed: cfg.Seed}, specs)
	if err != nil {
		return nil, fmt.Errorf("sequence %s: %w", seq.Name, err)
	}
	pc := aegis.DefaultConfig()
	pc.Hold, pc.Tick, pc.Lookahead = Gap, time.Second, 1
	pc.EveryTick = true // the probe counts deferrals per decision
	pc.Memory, pc.EstFreeMiB = aegis.EstFree, 0
	pc.Thresholds, pc.Window, pc.Anchored = cfg.Thresholds, Window, true
	pc.Filter = "pressure"
	if cfg.NoFilter {
		pc.Filter = "nf"
	}
	pr := &probe{inner: aegis.NewWith(pc), jobs: make([]JobResult, len(seq.Jobs)), sec: make([]int64, len(seq.Jobs))}
	for i, j := range seq.Jobs {
		pr.jobs[i].Job = j
		pr.jobs[i].Start, pr.jobs[i].Active, pr.jobs[i].Finish = -1, -1, -1
		pr.sec[i] = -1
	}
	if err := loop.Run(context.Background(), s, pr, pr); err != nil {
		return nil, fmt.Errorf("sequence %s: %w", seq.Name, err)
	}
	res := &Result{Sequence: seq.Name, Jobs: pr.jobs}
	var first, last time.Duration = -1, 0
	for i := range res.Jobs {
		j := &res.Jobs[i]
		if j.Start < 0 || j.Finish < 0 {
			return nil, fmt.Errorf("sequence %s: job %d (%s) did not finish", seq.Name, j.Position, j.Workload)
		}
		if first < 0 || j.Start < first {
			first = j.Start
		}
		last = max(last, j.Finish)
		j.RunS = (j.Finish - j.Start).Seconds()
		j.Slowdown = j.RunS / j.SoloS
		res.MeanSlowdown += j.Slowdown / float64(len(res.Jobs))
		res.MaxSlowdown = max(res.MaxSlowdown, j.Slowdown)
		res.Deferrals += j.Deferrals
		if j.Deferrals > 0 && res.FirstRejected == 0 {
			res.FirstRejected = j.Position
		}
	}
	res.MakespanS = (last - first).Seconds()
	return res, nil
}

// probe wraps the policy to record, per job, the window scores at its first
// eligible decision and the seconds in which the filter rejected it; it is
// also the loop's recorder (launch, activity and finish times).
type probe struct {
	inner *aegis.Policy
	jobs  []JobResult
	sec   []int64 // last whole second counted as a deferral, per job
	now   time.Duration
	win   []policies.Sample
	xs    []float64
	tmp   []float64
}

func (p *probe) Name() string { return p.inner.Name() }

// Validate passes the policy's requirements on.
func (p *probe) Validate(v *policies.View) error { return p.inner.Validate(v) }

// Schedule records the scores the filter sees when the head job first
// becomes eligible (the GPU busy and out of hold), then decides.
func (p *probe) Schedule(v *policies.View) []policies.Action {
	p.now = v.Now
	if v.Queue.Len() > 0 && len(v.GPUs[0].Jobs) > 0 && !colloc.Held(v, 0, Gap) {
		j := &p.jobs[v.Queue.At(0)]
		if !j.Probed {
			j.Probed, j.Running = true, len(v.GPUs[0].Jobs)
			p.win = policies.Window(v, 0, Window, true, p.win)
			for sig := range 3 {
				xs := p.xs[:0]
				for _, x := range p.win {
					xs = append(xs, [3]float64{x.SMACT, x.SMOCC, x.DRAMA}[sig])
				}
				p.xs = xs
				p.tmp = slices.Grow(p.tmp[:0], len(xs))
				j.Scores[sig] = policies.Score(xs, p.tmp)
			}
		}
	}
	return p.inner.Schedule(v)
}

// Event implements the loop's Recorder.
func (p *probe) Event(e policies.Event) {
	p.now = e.At()
	switch e.Kind {
	case policies.JobStarted:
		if p.jobs[e.Job].Start < 0 {
			p.jobs[e.Job].Start = e.T
		}
	case policies.JobActive:
		if p.jobs[e.Job].Active < 0 {
			p.jobs[e.Job].Active = e.T
		}
	case policies.JobFinished:
		p.jobs[e.Job].Finish = e.T
	}
}

// Action implements the loop's Recorder: a pressure rejection counts once
// per whole second.
func (p *probe) Action(a policies.Action) {
	if a.Kind != policies.Defer || a.Reason != string(aegis.DeferPressure) {
		return
	}
	if k := int64(p.now / time.Second); p.sec[a.Job] != k {
		p.sec[a.Job] = k
		p.jobs[a.Job].Deferrals++
	}
}

// Rejects reports whether the rule rejects a GPU with the given SMACT,
// SMOCC and DRAMA window scores: SMACT ≥ τ1 and (SMOCC ≥ τ2 or DRAMA ≥ τ3).
func Rejects(scores, th [3]float64) bool {
	return scores[0] >= th[0] && (scores[1] >= th[1] || scores[2] >= th[2])
}

// FirstRejectedAt predicts, from a no-filter replay, the first position the
// filter with thresholds th would defer (0: none): the first probed job
// whose scores the rule rejects. Up to the first rejection a filtered
// replay with the same seed is the no-filter one (samples depend only on
// seed, GPU, second, job and attempt), so this equals Replay's
// FirstRejected at a fraction of the cost (tested).
func (r *Result) FirstRejectedAt(th [3]float64) int {
	for _, j := range r.Jobs {
		if j.Probed && Rejects(j.Scores, th) {
			return j.Position
		}
	}
	return 0
}
