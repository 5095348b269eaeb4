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

// SteadyRun is one entry of the scan behind SteadySaturationA100: the
// DCGM error of one testbed run simulated with one candidate u1.
type SteadyRun struct {
	// U1 is the candidate steady saturation.
	U1 float64
	// Trace and Run name the testbed run (testbed_runs/TRACE/job_metrics__RUN.csv).
	Trace, Run string
	// Err is aegis measured's mean |ours − measured| over SMACT, SMOCC and
	// DRAMA × mean, p50, p95 (seeds 1-5).
	Err float64
}

// SteadyScanFile is the embedded scan's name (as errors name it).
const SteadyScanFile = "models/data/steady_saturation_a100.csv"

// The u1 scan of scripts/fit-steady-saturation.sh (its PER_RUN file):
// derived errors only, the DCGM distributions stay in the shared folder.
//
//go:embed data/steady_saturation_a100.csv
var steadyScanCSV []byte

// SteadyScanA100 is the embedded u1 scan: every candidate u1 on every
// AEGIS run of Philly and Saturn.
func SteadyScanA100() ([]SteadyRun, error) {
	return ReadSteadyScan(bytes.NewReader(steadyScanCSV), SteadyScanFile)
}

// ReadSteadyScan reads a u1 scan: CSV with the columns u1, trace, run,
// dcgm_error (any order; others ignored), one row per candidate and run.
func ReadSteadyScan(r io.Reader, name string) ([]SteadyRun, error) {
	cr, err := csvhead.NewReader(csv.NewReader(r), name, "u1", "trace", "run", "dcgm_error")
	if err != nil {
		return nil, err
	}
	var out []SteadyRun
	err = cr.Each(func() error {
		var x [2]float64
		for i, c := range [2]string{"u1", "dcgm_error"} {
			v, err := strconv.ParseFloat(cr.Get(c), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("%s:%d: %s %q: want a number >= 0", name, cr.Line, c, cr.Get(c))
			}
			x[i] = v
		}
		if cr.Get("trace") == "" || cr.Get("run") == "" {
			return fmt.Errorf("%s:%d: trace and run: want both", name, cr.Line)
		}
		out = append(out, SteadyRun{U1: x[0], Trace: cr.Get("trace"), Run: cr.Get("run"), Err: x[1]})
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

// FitSteadySaturation is the candidate u1 of scan whose mean error over
// runs (the run names, each counted as often as listed) is least, the
// smaller u1 on a tie. Every candidate must have an error for every run
// listed.
func FitSteadySaturation(scan []SteadyRun, trace string, runs []string) (float64, error) {
	errs := map[float64]map[string]float64{}
	for _, s := range scan {
		if s.Trace != trace {
			continue
		}
		if errs[s.U1] == nil {
			errs[s.U1] = map[string]float64{}
		}
		errs[s.U1][s.Run] = s.Err
	}
	if len(errs) == 0 || len(runs) == 0 {
		return 0, fmt.Errorf("u1 fit: no runs of trace %q", trace)
	}
	us := make([]float64, 0, len(errs))
	for u := range errs {
		us = append(us, u)
	}
	slices.Sort(us)
	best, bestErr := 0.0, math.Inf(1)
	for _, u := range us {
		sum := 0.0
		for _, r := range runs {
			e, ok := errs[u][r]
			if !ok {
				return 0, fmt.Errorf("u1 fit: trace %s, u1 = %g: no error for run %s", trace, u, r)
			}
			sum += e
		}
		if m := sum / float64(len(runs)); m < bestErr {
			best, bestErr = u, m
		}
	}
	return best, nil
}

// SteadyRuns are the run names of trace in scan, in first-seen order.
func SteadyRuns(scan []SteadyRun, trace string) []string {
	var out []string
	for _, s := range scan {
		if s.Trace == trace && !slices.Contains(out, s.Run) {
			out = append(out, s.Run)
		}
	}
	return out
}
