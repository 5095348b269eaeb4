package models

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/aegis-sched/aegis/internal/csvhead"
)

// DepthRun is one entry of the scan behind DepthOverlapA100: one testbed
// run simulated with one candidate δ under one seed set, against the
// testbed's own run.
type DepthRun struct {
	// Delta is the candidate depth term δ.
	Delta float64
	// Seeds is the seed set the run was simulated with ("1-5").
	Seeds string
	// Trace and Run name the testbed run (testbed_runs/TRACE/job_metrics__RUN.csv).
	Trace, Run string
	// PeakMeasured and PeakOurs are the most jobs running at once on the
	// testbed and ours (the mean over the seed set).
	PeakMeasured, PeakOurs float64
	// FailedMeasured and FailedOurs are the failed attempts, likewise.
	FailedMeasured, FailedOurs float64
	// Err is aegis measured's DCGM mean |ours − measured| over SMACT,
	// SMOCC and DRAMA × mean, p50, p95.
	Err float64
}

// DepthScanFile is the embedded scan's name (as errors name it).
const DepthScanFile = "models/data/depth_overlap_a100.csv"

// DepthGuard is the DCGM error that the depth fit weighs as much as one
// unit of its loss (a tolerance of the acceptance's peak or failed
// attempts): a candidate's J adds its rise of the DCGM mean |error| over
// δ = 0's divided by DepthGuard (docs/crowding.md, "A depth term").
const DepthGuard = 0.01

// The δ scan of scripts/fit-depth-overlap.sh (its output): derived counts
// and errors only, the testbed's runs and DCGM distributions stay in the
// shared folder.
//
//go:embed data/depth_overlap_a100.csv
var depthScanCSV []byte

// DepthScanA100 is the embedded δ scan: every candidate δ on every AEGIS
// run of Philly and Saturn, seed sets 1-5 and 6-10.
func DepthScanA100() ([]DepthRun, error) {
	return ReadDepthScan(bytes.NewReader(depthScanCSV), DepthScanFile)
}

// depthCols are a δ scan's columns, as scripts/fit-depth-overlap.sh writes
// them.
var depthCols = []string{"delta", "seeds", "trace", "run", "peak_measured", "peak_ours", "failed_measured", "failed_ours", "dcgm_error"}

// ReadDepthScan reads a δ scan: CSV with the columns delta, seeds, trace,
// run, peak_measured, peak_ours, failed_measured, failed_ours, dcgm_error
// (any order; others ignored), one row per candidate, seed set and run.
func ReadDepthScan(r io.Reader, name string) ([]DepthRun, error) {
	cr, err := csvhead.NewReader(csv.NewReader(r), name, depthCols...)
	if err != nil {
		return nil, err
	}
	var out []DepthRun
	err = cr.Each(func() error {
		var x [6]float64
		for i, c := range [6]string{"delta", "peak_measured", "peak_ours", "failed_measured", "failed_ours", "dcgm_error"} {
			v, err := strconv.ParseFloat(cr.Get(c), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("%s:%d: %s %q: want a number >= 0", name, cr.Line, c, cr.Get(c))
			}
			x[i] = v
		}
		if cr.Get("seeds") == "" || cr.Get("trace") == "" || cr.Get("run") == "" {
			return fmt.Errorf("%s:%d: seeds, trace and run: want all three", name, cr.Line)
		}
		out = append(out, DepthRun{Delta: x[0], Seeds: cr.Get("seeds"), Trace: cr.Get("trace"), Run: cr.Get("run"),
			PeakMeasured: x[1], PeakOurs: x[2], FailedMeasured: x[3], FailedOurs: x[4], Err: x[5]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows", name)
	}
	return out, nil
}

// DepthFit is one candidate δ's standing in the depth fit.
type DepthFit struct {
	Delta float64
	// Loss is the mean over the runs of |peak error| / 2 and |failed
	// error| / 2, each figure first averaged over the seed sets.
	Loss float64
	// Err is the mean DCGM error over the runs (each averaged over the
	// seed sets).
	Err float64
	// J is Loss plus (Err − δ = 0's Err) / DepthGuard: what the fit
	// minimizes.
	J float64
}

// DepthFits is every candidate δ of scan on trace's runs (the run names,
// each counted as often as listed), in increasing δ. Each run's figures
// are averaged over its seed sets; every candidate must have as many seed
// sets of every run listed as δ = 0, which the scan must hold (the DCGM
// guard's baseline).
func DepthFits(scan []DepthRun, trace string, runs []string) ([]DepthFit, error) {
	type agg struct{ measPeak, peak, measFailed, failed, err, n float64 }
	by := map[float64]map[string]*agg{}
	for _, s := range scan {
		if s.Trace != trace {
			continue
		}
		if by[s.Delta] == nil {
			by[s.Delta] = map[string]*agg{}
		}
		a := by[s.Delta][s.Run]
		if a == nil {
			a = &agg{}
			by[s.Delta][s.Run] = a
		}
		a.measPeak += s.PeakMeasured
		a.peak += s.PeakOurs
		a.measFailed += s.FailedMeasured
		a.failed += s.FailedOurs
		a.err += s.Err
		a.n++
	}
	if len(by) == 0 || len(runs) == 0 {
		return nil, fmt.Errorf("δ fit: no runs of trace %q", trace)
	}
	if by[0] == nil {
		return nil, fmt.Errorf("δ fit: trace %s: no δ = 0 rows (the DCGM guard's baseline)", trace)
	}
	ds := make([]float64, 0, len(by))
	for d := range by {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	out := make([]DepthFit, len(ds))
	for i, d := range ds {
		var loss, e float64
		for _, r := range runs {
			a, ok := by[d][r]
			if !ok {
				return nil, fmt.Errorf("δ fit: trace %s, δ = %g: no row for run %s", trace, d, r)
			}
			if b := by[0][r]; b == nil || b.n != a.n {
				return nil, fmt.Errorf("δ fit: trace %s, run %s: %g seed sets at δ = %g, want as many as at δ = 0", trace, r, a.n, d)
			}
			loss += (math.Abs(a.peak-a.measPeak)/a.n + math.Abs(a.failed-a.measFailed)/a.n) / 2
			e += a.err / a.n
		}
		n := float64(len(runs))
		out[i] = DepthFit{Delta: d, Loss: loss / (2 * n), Err: e / n}
	}
	for i := range out {
		out[i].J = out[i].Loss + (out[i].Err-out[0].Err)/DepthGuard
	}
	return out, nil
}

// FitDepthOverlap is the candidate δ of scan with the least J on trace's
// runs (DepthFits), the smaller δ on a tie.
func FitDepthOverlap(scan []DepthRun, trace string, runs []string) (float64, error) {
	fits, err := DepthFits(scan, trace, runs)
	if err != nil {
		return 0, err
	}
	best := fits[0]
	for _, f := range fits[1:] {
		if f.J < best.J {
			best = f
		}
	}
	return best.Delta, nil
}

// DepthRuns are the run names of trace in scan, in first-seen order.
func DepthRuns(scan []DepthRun, trace string) []string {
	var out []string
	for _, s := range scan {
		if s.Trace == trace && !slices.Contains(out, s.Run) {
			out = append(out, s.Run)
		}
	}
	return out
}
