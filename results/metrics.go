// Package results turns a run's events into the paper's metrics (per job and
// per run) and writes them as CSV, JSON Lines and aligned text tables.
package results

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Job is one job's outcome.
type Job struct {
	ID       policies.JobID
	Name     string
	Workload string
	GPUs     int
	SoloS    float64
	State    policies.State
	Submit   time.Duration
	Start    time.Duration // first attempt's launch; -1 if never started
	Finish   time.Duration // completion; -1 if it never finished
	Exec     time.Duration // sum of attempt run times, failed attempts included
	Attempts int
	Failed   int // failed attempts
	// Retries started alone on their GPUs, and next to other jobs.
	ExclusiveRetries, SharedRetries int
}

// JCT is finish − submit (0 for a job that never finished).
func (j *Job) JCT() time.Duration {
	if j.Finish < 0 {
		return 0
	}
	return j.Finish - j.Submit
}

// Queue is JCT − exec: time spent waiting, before and between attempts.
func (j *Job) Queue() time.Duration { return j.JCT() - j.Exec }

// NormJCT is JCT divided by the solo runtime.
func (j *Job) NormJCT() float64 { return j.JCT().Seconds() / j.SoloS }

// Collector builds per-job outcomes and counters from a run's events and
// actions. It implements the loop's Recorder.
type Collector struct {
	jobs    []Job
	started []time.Duration // current attempt's launch, per job
	defers  map[string]int
	stops   int
	events  int
	forward []Recorder
}

// Recorder receives a run's events and actions (the loop's Recorder).
type Recorder interface {
	Event(policies.Event)
	Action(policies.Action)
}

// NewCollector prepares a collector for the jobs of a run (as the backend's
// initial view lists them). Events and actions are forwarded to the extra
// recorders, in order.
func NewCollector(jobs []policies.Job, forward ...Recorder) *Collector {
	c := &Collector{jobs: make([]Job, len(jobs)), started: make([]time.Duration, len(jobs)),
		defers: map[string]int{}, forward: forward}
	for i, j := range jobs {
		c.jobs[i] = Job{ID: j.ID, Name: j.Name, Workload: j.Workload, GPUs: j.GPUs, SoloS: j.SoloS,
			Submit: j.Submit, Start: -1, Finish: -1, State: policies.Waiting}
	}
	return c
}

// Add registers a job submitted after the run started (a live queue), as
// the backend lists it; its id must be the next index.
func (c *Collector) Add(j policies.Job) error {
	if int(j.ID) != len(c.jobs) {
		return fmt.Errorf("results: added job %d (%s), expected id %d", j.ID, j.Name, len(c.jobs))
	}
	c.jobs = append(c.jobs, Job{ID: j.ID, Name: j.Name, Workload: j.Workload, GPUs: j.GPUs, SoloS: j.SoloS,
		Submit: j.Submit, Start: -1, Finish: -1, State: policies.Waiting})
	c.started = append(c.started, 0)
	return nil
}

// Event implements the Recorder.
func (c *Collector) Event(e policies.Event) {
	c.events++
	switch e := e.(type) {
	case policies.JobArrived:
		c.jobs[e.Job].State = policies.Pending
	case policies.JobStarted:
		j := &c.jobs[e.Job]
		if j.Start < 0 {
			j.Start = e.T
		}
		j.Attempts++
		j.State = policies.Running
		if e.Attempt > 1 {
			if e.Shared {
				j.SharedRetries++
			} else {
				j.ExclusiveRetries++
			}
		}
		c.started[e.Job] = e.T
	case policies.JobFinished:
		j := &c.jobs[e.Job]
		j.Exec += e.T - c.started[e.Job]
		j.Finish = e.T
		j.State = policies.Done
	case policies.JobFailed:
		j := &c.jobs[e.Job]
		j.Exec += e.T - c.started[e.Job]
		j.Failed++
		j.State = policies.Pending
	case policies.JobStopped:
		c.jobs[e.Job].State = policies.Stopped
		c.stops++
	}
	for _, f := range c.forward {
		f.Event(e)
	}
}

// Action implements the Recorder.
func (c *Collector) Action(a policies.Action) {
	if d, ok := a.(policies.Defer); ok {
		c.defers[d.Reason]++
	}
	for _, f := range c.forward {
		f.Action(a)
	}
}

// Jobs returns the per-job outcomes, by job id.
func (c *Collector) Jobs() []Job { return c.jobs }

// Events returns how many backend events the run had.
func (c *Collector) Events() int { return c.events }

// Deferrals returns how many times placements were deferred, by reason.
func (c *Collector) Deferrals() map[string]int { return maps.Clone(c.defers) }

// Summary is a run's metrics. Times are in seconds. Percentiles use
// policies.Quantile (linear interpolation between closest ranks).
type Summary struct {
	Jobs, Finished, Stopped int
	MakespanS               float64 // last finish − first submit
	MeanJCTS, P95JCTS       float64
	MeanQueueS, P95QueueS   float64
	MeanExecS, P95ExecS     float64
	MeanNormJCT             float64
	FailedAttempts          int // attempts that failed
	RecoveredAttempts       int // failed attempts of jobs that later finished
	// Retries (attempts after a failure) started alone on their GPUs (the
	// exclusive fallback) and next to other jobs (the recovery ladder).
	ExclusiveRetries, SharedRetries int
	Deferrals                       map[string]int
}

// Summarize computes the run metrics over the jobs that finished.
func Summarize(jobs []Job, deferrals map[string]int) Summary {
	s := Summary{Jobs: len(jobs), Deferrals: deferrals}
	var jct, queue, exec, norm []float64
	first, last := time.Duration(-1), time.Duration(-1)
	for i := range jobs {
		j := &jobs[i]
		if first < 0 || j.Submit < first {
			first = j.Submit
		}
		s.FailedAttempts += j.Failed
		s.ExclusiveRetries += j.ExclusiveRetries
		s.SharedRetries += j.SharedRetries
		switch j.State {
		case policies.Stopped:
			s.Stopped++
		case policies.Done:
			s.Finished++
			s.RecoveredAttempts += j.Failed
			last = max(last, j.Finish)
			jct = append(jct, j.JCT().Seconds())
			queue = append(queue, j.Queue().Seconds())
			exec = append(exec, j.Exec.Seconds())
			norm = append(norm, j.NormJCT())
		}
	}
	if last >= 0 {
		s.MakespanS = (last - first).Seconds()
	}
	s.MeanJCTS, s.P95JCTS = meanP95(jct)
	s.MeanQueueS, s.P95QueueS = meanP95(queue)
	s.MeanExecS, s.P95ExecS = meanP95(exec)
	s.MeanNormJCT, _ = meanP95(norm)
	return s
}

func meanP95(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	slices.Sort(xs)
	return policies.Mean(xs), policies.SortedQuantile(xs, 0.95)
}
