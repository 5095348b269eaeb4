package models

import (
	"errors"
	"fmt"
	"io"
	"maps"
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
// workload's catalog solo time. The log ratio is modelled as its program's
// (see Program) term plus, optionally, a term of the GPU it ran on: a
// program seen on the class's GPUs gets exp(its term) as every one of its
// workloads' factor (without GPU terms, the geometric mean of its jobs'
// ratios); the utilization slope, for the others, is the least-squares fit
// of log ratio − GPU term = slope·u through the origin (u the solo
// nvidia-smi utilization as a fraction) on the class's jobs. The GPU terms
// (cls.GPUFactors, geometric mean 1 over the GPUs with jobs) are kept only
// if they lower both the median and the p90 of the leave-one-job-out error
// on the jobs' execution times. cls.Fit records the cross-validated errors.
func FitSpeeds(jobs []ExclusiveJob, cat *Catalog, cls SpeedClass) (SpeedClass, error) {
	var on []ExclusiveJob
	for _, j := range jobs {
		if j.GPU < 0 {
			return cls, errors.New("fit speeds: jobs not placed (PlaceLowestFree)")
		}
		if slices.Contains(cls.GPUs, j.GPU) {
			on = append(on, j)
		}
	}
	if len(on) < 2 {
		return cls, fmt.Errorf("fit speeds: %d jobs on GPUs %v, want at least 2", len(on), cls.GPUs)
	}
	one, perGPU := leaveOneJobOut(on, cat, false), leaveOneJobOut(on, cat, true)
	rec := &SpeedFitRecord{Jobs: len(on), LeaveOneJobOut: one, OneSpeedLeaveOneJobOut: one}
	byGPU := perGPU.Median < one.Median && perGPU.P90 < one.P90
	if byGPU {
		rec.LeaveOneJobOut = perGPU
	}
	f := fitSpeedTerms(on, cat, "", byGPU)
	cls.Factors, cls.UtilSlope, cls.GPUFactors = map[string]float64{}, round6(f.slope), nil
	for _, id := range cat.IDs() {
		if t, ok := f.prog[Program(id)]; ok {
			cls.Factors[id] = round6(math.Exp(t))
		}
	}
	if byGPU {
		cls.GPUFactors = map[int]float64{}
		for g, t := range f.gpu {
			cls.GPUFactors[g] = round6(math.Exp(t))
		}
	}
	var lopo, none []float64
	for _, j := range on {
		w, _ := cat.Get(j.Workload)
		lopo = append(lopo, ape(fitSpeedTerms(on, cat, Program(j.Workload), byGPU).slowdown(w, j.GPU, true)*w.SoloS, j.ExecS))
		none = append(none, ape(w.SoloS, j.ExecS))
	}
	rec.LeaveOneProgramOut, rec.None = apeOf(lopo), apeOf(none)
	cls.Fit = rec
	return cls, nil
}

// leaveOneJobOut is the error of predicting each job's execution time from
// the terms fitted on the others (a program left without jobs falls back
// to the utilization slope).
func leaveOneJobOut(on []ExclusiveJob, cat *Catalog, byGPU bool) APE {
	var errs []float64
	for i, j := range on {
		w, _ := cat.Get(j.Workload)
		f := fitSpeedTerms(slices.Delete(slices.Clone(on), i, i+1), cat, "", byGPU)
		errs = append(errs, ape(f.slowdown(w, j.GPU, false)*w.SoloS, j.ExecS))
	}
	return apeOf(errs)
}

// speedTerms are a class's fitted log slowdown terms: per program, per GPU
// (none without GPU terms) and the utilization slope.
type speedTerms struct {
	prog  map[string]float64
	gpu   map[int]float64
	slope float64
}

// slowdown is the fitted factor of workload w on GPU g: its program's term,
// or the utilization slope's if the program has none or bySlope is set,
// plus g's term.
func (f speedTerms) slowdown(w *Workload, g int, bySlope bool) float64 {
	t, ok := f.prog[Program(w.ID)]
	if !ok || bySlope {
		t = f.slope * w.UtilPct() / 100
	}
	return math.Exp(t + f.gpu[g])
}

// fitSpeedTerms fits the log ratios of jobs (leaving out program skip, ""
// none) as program term + GPU term (byGPU) by least squares: alternating
// means (backfitting) until the terms move less than 1e-12, the GPU terms
// centred on 0 over the GPUs with jobs; then the utilization slope through
// the origin on the log ratios net of the GPU terms.
func fitSpeedTerms(jobs []ExclusiveJob, cat *Catalog, skip string, byGPU bool) speedTerms {
	type obs struct {
		prog string
		gpu  int
		u, y float64
	}
	var xs []obs
	for _, j := range jobs {
		if p := Program(j.Workload); p != skip {
			w, _ := cat.Get(j.Workload)
			xs = append(xs, obs{p, j.GPU, w.UtilPct() / 100, math.Log(j.ExecS / w.SoloS)})
		}
	}
	f := speedTerms{gpu: map[int]float64{}}
	for range 1000 {
		prog, moved := groupMeans(len(xs), func(i int) (string, float64) { return xs[i].prog, xs[i].y - f.gpu[xs[i].gpu] }), 0.0
		if byGPU {
			gpu := groupMeans(len(xs), func(i int) (int, float64) { return xs[i].gpu, xs[i].y - prog[xs[i].prog] })
			var c float64
			for _, g := range slices.Sorted(maps.Keys(gpu)) {
				c += gpu[g] / float64(len(gpu))
			}
			for g := range gpu {
				gpu[g] -= c
				moved = math.Max(moved, math.Abs(gpu[g]-f.gpu[g]))
			}
			f.gpu = gpu
		}
		f.prog = prog
		if moved < 1e-12 {
			break
		}
	}
	var xy, xx float64
	for _, o := range xs {
		xy += o.u * (o.y - f.gpu[o.gpu])
		xx += o.u * o.u
	}
	if xx > 0 {
		f.slope = xy / xx
	}
	return f
}

// groupMeans is the mean value per key of the n items at(0..n-1), summed
// in item order (deterministic).
func groupMeans[K comparable](n int, at func(int) (K, float64)) map[K]float64 {
	sum, cnt := map[K]float64{}, map[K]int{}
	for i := range n {
		k, v := at(i)
		sum[k] += v
		cnt[k]++
	}
	for k := range sum {
		sum[k] /= float64(cnt[k])
	}
	return sum
}

func ape(pred, meas float64) float64 { return math.Abs(pred/meas - 1) }

func apeOf(xs []float64) APE {
	return APE{Median: round6(policies.Quantile(xs, 0.5)), P90: round6(policies.Quantile(xs, 0.9))}
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
