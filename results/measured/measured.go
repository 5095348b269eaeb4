// Package measured reads a measured run's per-job timeline (a real server's
// or cluster's job log) and sets simulated runs of the same trace beside it:
// jobs running at once over time, each job's execution span, queueing,
// makespan and failed attempts.
package measured

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// Job is one job of a run, in seconds from the run's first submission.
type Job struct {
	ID       string // the job's name in its file (job_id, task_id or row)
	Workload string // its workload id; "" when the file has none
	Submit   float64
	Start    float64 // first attempt's launch
	Last     float64 // launch of the attempt that completed
	Finish   float64
	Queue    float64 // time waiting, before and between attempts
	Failed   int     // failed attempts
}

// Span is the job's execution span: first launch to completion (the
// testbed's execution_span_s).
func (j Job) Span() float64 { return j.Finish - j.Start }

// Run is a run's jobs in submission order.
type Run struct {
	Name string
	Jobs []Job
}

// The testbed's job_metrics columns (calibration/aegis/testbed_runs).
const (
	tbSubmit = "submitted_at"
	tbStart  = "first_launched_at"
	tbLast   = "final_successful_launch_at"
	tbFinish = "completed_at"
	tbQueue  = "total_queue_wait_s"
	tbFailed = "failed_attempt_count"
	tbTask   = "task_file"
	tbID     = "task_id"
	tbConfig = "configuration_label"
)

// The minimal CSV's columns: submit_s, start_s and finish_s are required,
// the others optional (docs/measured.md).
const (
	colSubmit   = "submit_s"
	colStart    = "start_s"
	colLast     = "last_start_s"
	colFinish   = "finish_s"
	colQueue    = "queue_s"
	colFailed   = "failed_attempts"
	colWorkload = "workload_id"
	colID       = "job_id"
)

// columns names one format's columns.
type columns struct {
	submit, start, last, finish, queue, failed, workload, id string
	taskFile                                                 bool // workload is a spec path: its base name without .yaml
}

var (
	testbedCols = columns{tbSubmit, tbStart, tbLast, tbFinish, tbQueue, tbFailed, tbTask, tbID, true}
	minimalCols = columns{colSubmit, colStart, colLast, colFinish, colQueue, colFailed, colWorkload, colID, false}
)

// Parse reads a measured run's per-job timeline from r: the testbed's
// job_metrics CSV (recognised by its submitted_at column) or the minimal
// CSV (submit_s, start_s, finish_s[, last_start_s][, queue_s]
// [, failed_attempts][, workload_id][, job_id]). Times are seconds or
// timestamps (RFC 3339, or "2006-01-02 15:04:05.999999-07:00"), one kind per
// file; they are made relative to the first submission and the jobs sorted
// by submission (stable). name is used in errors, and as the run's name.
func Parse(name string, r io.Reader) (*Run, error) {
	t, err := runfiles.ParseTable(name, r)
	if err != nil {
		return nil, err
	}
	c := minimalCols
	if t.Has(tbSubmit) {
		c = testbedCols
	}
	for _, col := range []string{c.submit, c.start, c.finish} {
		if !t.Has(col) {
			return nil, fmt.Errorf("%s:1: missing column %q: want the testbed's job_metrics columns or %s,%s,%s (have %s)",
				name, col, colSubmit, colStart, colFinish, strings.Join(t.Header, ","))
		}
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("%s: no jobs", name)
	}
	p := timeParser{}
	run := &Run{Name: name}
	for i := range t.Len() {
		j, err := c.job(t, i, &p)
		if err != nil {
			return nil, err
		}
		run.Jobs = append(run.Jobs, j)
	}
	base := math.Inf(1)
	for _, j := range run.Jobs {
		base = min(base, j.Submit)
	}
	for i := range run.Jobs {
		j := &run.Jobs[i]
		j.Submit -= base
		j.Start -= base
		j.Last -= base
		j.Finish -= base
	}
	slices.SortStableFunc(run.Jobs, func(a, b Job) int {
		switch {
		case a.Submit < b.Submit:
			return -1
		case a.Submit > b.Submit:
			return 1
		}
		return 0
	})
	return run, nil
}

// Label is the testbed's configuration_label of a job_metrics file ("" for
// another file or when rows disagree).
func Label(name string, r io.Reader) (string, error) {
	t, err := runfiles.ParseTable(name, r)
	if err != nil {
		return "", err
	}
	if !t.Has(tbConfig) || t.Len() == 0 {
		return "", nil
	}
	l := t.String(0, tbConfig)
	for i := range t.Len() {
		if t.String(i, tbConfig) != l {
			return "", nil
		}
	}
	return l, nil
}

// job reads row i.
func (c columns) job(t *runfiles.Table, i int, p *timeParser) (Job, error) {
	j := Job{ID: strconv.Itoa(i)}
	if t.Has(c.id) && strings.TrimSpace(t.String(i, c.id)) != "" {
		j.ID = strings.TrimSpace(t.String(i, c.id))
	}
	if t.Has(c.workload) {
		j.Workload = strings.TrimSpace(t.String(i, c.workload))
		if c.taskFile && j.Workload != "" {
			j.Workload = strings.TrimSuffix(filepath.Base(j.Workload), filepath.Ext(j.Workload))
		}
	}
	var err error
	at := func(col string) float64 {
		if err != nil {
			return 0
		}
		var v float64
		v, err = p.parse(t, i, col)
		return v
	}
	j.Submit, j.Start, j.Finish = at(c.submit), at(c.start), at(c.finish)
	j.Last = j.Start
	if t.Has(c.last) && strings.TrimSpace(t.String(i, c.last)) != "" {
		j.Last = at(c.last)
	}
	if err != nil {
		return j, err
	}
	switch {
	case j.Start < j.Submit:
		return j, fmt.Errorf("%s: column %s: launch before submission", t.Where(i), c.start)
	case j.Last < j.Start:
		return j, fmt.Errorf("%s: column %s: last launch before the first", t.Where(i), c.last)
	case j.Finish < j.Last:
		return j, fmt.Errorf("%s: column %s: completion before launch", t.Where(i), c.finish)
	}
	j.Queue = j.Start - j.Submit
	if t.Has(c.queue) {
		q, err := t.OptFloat(i, c.queue)
		if err != nil {
			return j, err
		}
		if !math.IsNaN(q) {
			if q < 0 {
				return j, fmt.Errorf("%s: column %s: negative wait %g", t.Where(i), c.queue, q)
			}
			j.Queue = q
		}
	}
	if t.Has(c.failed) && strings.TrimSpace(t.String(i, c.failed)) != "" {
		if j.Failed, err = t.Int(i, c.failed); err != nil {
			return j, err
		}
		if j.Failed < 0 {
			return j, fmt.Errorf("%s: column %s: negative count %d", t.Where(i), c.failed, j.Failed)
		}
	}
	return j, nil
}

// timeParser reads time cells, all seconds or all timestamps.
type timeParser struct {
	kind string // "seconds" or "timestamps" once the first cell is read
}

// timeLayouts are the timestamp forms read besides RFC 3339.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00"}

func (p *timeParser) parse(t *runfiles.Table, i int, col string) (float64, error) {
	s := strings.TrimSpace(t.String(i, col))
	if s == "" {
		return 0, fmt.Errorf("%s: column %s: empty, want a time", t.Where(i), col)
	}
	kind, v := "seconds", 0.0
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		v = f
	} else {
		kind = "timestamps"
		var ts time.Time
		for _, l := range timeLayouts {
			if ts, err = time.Parse(l, s); err == nil {
				break
			}
		}
		if err != nil {
			return 0, fmt.Errorf("%s: column %s: %q is neither seconds nor a timestamp such as 2026-06-11 09:05:21.6+00:00", t.Where(i), col, s)
		}
		v = float64(ts.UnixNano()) / 1e9
	}
	if p.kind == "" {
		p.kind = kind
	} else if p.kind != kind {
		return 0, fmt.Errorf("%s: column %s: %q: the file mixes seconds and timestamps", t.Where(i), col, s)
	}
	return v, nil
}

// FromSim is a simulated run as a Run: its jobs (results.Job) with the
// launch of each job's last attempt taken from its attempts (events.jsonl).
// Jobs that never finished are left out.
func FromSim(name string, jobs []results.Job, attempts []runfiles.Attempt) *Run {
	last := map[int]float64{}
	for _, a := range attempts {
		if a.Outcome == "finished" {
			last[a.Job] = a.Start
		}
	}
	run := &Run{Name: name}
	for _, j := range jobs {
		if j.Finish < 0 || j.Start < 0 {
			continue
		}
		id := int(j.ID)
		x := Job{ID: strconv.Itoa(id), Workload: j.Workload, Submit: j.Submit.Seconds(), Start: j.Start.Seconds(),
			Finish: j.Finish.Seconds(), Queue: j.Queue().Seconds(), Failed: j.Failed}
		x.Last = x.Start
		if s, ok := last[id]; ok {
			x.Last = s
		}
		run.Jobs = append(run.Jobs, x)
	}
	return run
}
