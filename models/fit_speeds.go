package models

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// ExclusiveJob is one job of a measured Exclusive run (the AEGIS
// artifact's per-job metrics layout): which trace, which workload, when it
// was dispatched and completed, and how long it executed.
type ExclusiveJob struct {
	Line     int // line in the source file
	Trace    string
	Workload string  // catalog workload ID
	Submit   float64 // seconds since the Unix epoch
	Dispatch float64
	Done     float64
	ExecS    float64 // execution span (launch to completion), seconds
	// GPU is the GPU the job ran on, inferred by PlaceLowestFree (the data
	// do not record it).
	GPU int
}

var exclusiveCols = []string{"trace_name", "task_file", "submitted_at", "first_dispatched_at", "completed_at", "execution_span_s"}

// ReadExclusiveJobs parses the per-job metrics of measured Exclusive runs:
// columns trace_name, task_file (a workload spec path whose base name
// without .yaml is the catalog workload), submitted_at,
// first_dispatched_at, completed_at (timestamps "2006-01-02
// 15:04:05.999999-07:00") and execution_span_s; others are ignored. Every
// workload must be in cat. Errors name the file, line and column.
func ReadExclusiveJobs(r io.Reader, name string, cat *Catalog) ([]ExclusiveJob, error) {
	rows, err := readTable(r, name, exclusiveCols)
	if err != nil {
		return nil, err
	}
	var out []ExclusiveJob
	for _, row := range rows {
		line, _ := strconv.Atoi(row["line"])
		j := ExclusiveJob{Line: line, Trace: row["trace_name"], GPU: -1}
		file := row["task_file"]
		j.Workload = strings.TrimSuffix(path.Base(file), ".yaml")
		if _, ok := cat.Get(j.Workload); !ok || file == "" {
			return nil, fmt.Errorf("%s:%d: column task_file: workload %q is not in the catalog", name, line, j.Workload)
		}
		for _, c := range []struct {
			col string
			v   *float64
		}{{"submitted_at", &j.Submit}, {"first_dispatched_at", &j.Dispatch}, {"completed_at", &j.Done}} {
			t, err := time.Parse("2006-01-02 15:04:05.999999-07:00", row[c.col])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: column %s: %q is not a timestamp like 2026-06-28 13:12:13.459830+00:00", name, line, c.col, row[c.col])
			}
			*c.v = float64(t.UnixMicro()) / 1e6
		}
		s := row["execution_span_s"]
		if j.ExecS, err = strconv.ParseFloat(s, 64); err != nil || !(j.ExecS > 0) || math.IsInf(j.ExecS, 0) {
			return nil, fmt.Errorf("%s:%d: column execution_span_s: want a positive number of seconds, got %q", name, line, s)
		}
		if j.Trace == "" {
			return nil, fmt.Errorf("%s:%d: column trace_name: empty", name, line)
		}
		out = append(out, j)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no jobs", name)
	}
	return out, nil
}

// PlaceLowestFree infers the GPU of each job of each trace's Exclusive run
// on a server of gpus GPUs: in dispatch order, each job takes the
// lowest-numbered GPU whose previous job has completed, as the AEGIS
// scheduler places exclusive jobs. A dispatch a moment before the
// completion it waits for (the records' clocks differ by under tol
// seconds) takes the GPU that completes first. It sets jobs[i].GPU.
func PlaceLowestFree(jobs []ExclusiveJob, gpus int, tol float64) error {
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := strings.Compare(jobs[a].Trace, jobs[b].Trace); c != 0 {
			return c
		}
		return cmpFloat(jobs[a].Dispatch, jobs[b].Dispatch)
	})
	var busy []float64 // completion time per GPU; 0 = free
	trace := ""
	for _, i := range idx {
		j := &jobs[i]
		if j.Trace != trace || busy == nil {
			trace, busy = j.Trace, make([]float64, gpus)
		}
		g, first := -1, 0
		for k, done := range busy {
			if done <= j.Dispatch && g < 0 {
				g = k
			}
			if done < busy[first] {
				first = k
			}
		}
		if g < 0 {
			if busy[first]-j.Dispatch > tol {
				return fmt.Errorf("line %d: trace %s: job dispatched at %.1f with all %d GPUs busy (the first frees %.1f s later)", j.Line, j.Trace, j.Dispatch, gpus, busy[first]-j.Dispatch)
			}
			g = first
		}
		busy[g], j.GPU = j.Done, g
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// epochs matches the run-length part of a workload ID (…_50e_1gpu): jobs
// of one model, data set and batch size differing only in epochs run the
// same iterations, so they share a speed factor.
var epochs = regexp.MustCompile(`_\d+e(_\d+gpu)$`)

// Program is a workload's model, data set and batch size: its ID without
// the epoch count (resnet34_cifar100_bs128_50e_1gpu →
// resnet34_cifar100_bs128_1gpu).
func Program(id string) string { return epochs.ReplaceAllString(id, "$1") }

// FitSpeeds fits the speed class cls (name and GPUs set) to jobs placed by
// PlaceLowestFree: each job's ratio is its execution time over its
// workload's catalog solo time. A program (see Program) seen on the class's
// GPUs gets the geometric mean of its jobs' ratios there as every one of
// its workloads' factor; the utilization slope, for the others, is the
// least-squares fit of log ratio = slope·u through the origin (u the solo
// nvidia-smi utilization as a fraction) on the class's jobs. cls.Fit
// records the cross-validated errors on those jobs' execution times.
func FitSpeeds(jobs []ExclusiveJob, cat *Catalog, cls SpeedClass) (SpeedClass, error) {
	var slow []ExclusiveJob
	for _, j := range jobs {
		if j.GPU < 0 {
			return cls, errors.New("fit speeds: jobs not placed (PlaceLowestFree)")
		}
		if slices.Contains(cls.GPUs, j.GPU) {
			slow = append(slow, j)
		}
	}
	if len(slow) < 2 {
		return cls, fmt.Errorf("fit speeds: %d jobs on GPUs %v, want at least 2", len(slow), cls.GPUs)
	}
	cls.Factors, cls.UtilSlope = programFactors(slow, cat, -1), utilSlope(slow, cat, "")
	rec := &SpeedFitRecord{Jobs: len(slow)}
	var lojo, lopo, none []float64
	for i, j := range slow {
		w, _ := cat.Get(j.Workload)
		f, ok := programFactors(slow, cat, i)[j.Workload]
		if !ok {
			f = math.Exp(utilSlope(slices.Delete(slices.Clone(slow), i, i+1), cat, "") * w.UtilPct() / 100)
		}
		lojo = append(lojo, ape(w.SoloS*f, j.ExecS))
		lopo = append(lopo, ape(w.SoloS*math.Exp(utilSlope(slow, cat, Program(j.Workload))*w.UtilPct()/100), j.ExecS))
		none = append(none, ape(w.SoloS, j.ExecS))
	}
	rec.LeaveOneJobOut, rec.LeaveOneProgramOut, rec.None = apeOf(lojo), apeOf(lopo), apeOf(none)
	cls.Fit = rec
	return cls, nil
}

// programFactors is the geometric mean ratio of each program's jobs, by
// workload ID (every catalog workload of a program seen), leaving out job
// skip (-1: none).
func programFactors(slow []ExclusiveJob, cat *Catalog, skip int) map[string]float64 {
	sum, n := map[string]float64{}, map[string]int{}
	for i, j := range slow {
		if i == skip {
			continue
		}
		w, _ := cat.Get(j.Workload)
		p := Program(j.Workload)
		sum[p] += math.Log(j.ExecS / w.SoloS)
		n[p]++
	}
	out := map[string]float64{}
	for _, id := range cat.IDs() {
		if p := Program(id); n[p] > 0 {
			out[id] = round6(math.Exp(sum[p] / float64(n[p])))
		}
	}
	return out
}

// utilSlope is the least-squares slope of log ratio on utilization through
// the origin, leaving out the jobs of program skip ("" none).
func utilSlope(slow []ExclusiveJob, cat *Catalog, skip string) float64 {
	var xy, xx float64
	for _, j := range slow {
		if skip != "" && Program(j.Workload) == skip {
			continue
		}
		w, _ := cat.Get(j.Workload)
		u := w.UtilPct() / 100
		xy += u * math.Log(j.ExecS/w.SoloS)
		xx += u * u
	}
	if xx == 0 {
		return 0
	}
	return round6(xy / xx)
}

func ape(pred, meas float64) float64 { return math.Abs(pred/meas - 1) }

func apeOf(xs []float64) APE {
	return APE{Median: round6(policies.Quantile(xs, 0.5)), P90: round6(policies.Quantile(xs, 0.9))}
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
