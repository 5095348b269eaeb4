package fidelity

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MeasuredDir is the folder of a results directory that holds `aegis
// measured --out` comparisons with the testbed's own runs, one folder per
// run (make reproduce writes them).
const MeasuredDir = "measured"

// MeasuredRun is one comparison read back from its summary.csv: per
// measure, the measured value (NaN where none) and ours (mean, 95 % CI
// half-width over the seeds).
type MeasuredRun struct {
	Name     string // the folder's name, e.g. philly-aegis_magm_thresholded
	Measured map[string]float64
	Ours     map[string]Stat
	Seeds    int
	Figure   string // the concurrency figure, relative to the results directory; "" if none
	// Version is the code version (git commit) the testbed's artifact ran
	// this run at, from its runs.csv (TestbedRunsPath); "" when unknown.
	Version string
}

// TestbedRunsPath is the testbed's one-row-per-run file in the shared data
// folder: its git_commit column says which code version ran each run.
const TestbedRunsPath = "calibration/aegis/testbed_runs/runs.csv"

// floorKey is summary.csv's row of the seed floor (measured.FloorKey).
const floorKey = "job_span_abs_err_seed_floor"

// floor is the run's seed floor (the per-job exec error between two of our
// seeds, median over the pairs), NaN when summary.csv has none.
func (r MeasuredRun) floor() float64 {
	if o, ok := r.Ours[floorKey]; ok {
		return o.Mean
	}
	return math.NaN()
}

// testbedVersions sets each run's Version from shared's TestbedRunsPath,
// the run found by its folder's name (<trace_name>-<configuration_label>).
// Nothing is set without the shared folder, the file or its git_commit
// column.
func testbedVersions(runs []MeasuredRun, shared string) error {
	if shared == "" || len(runs) == 0 {
		return nil
	}
	rows, err := readCSV(filepath.Join(shared, TestbedRunsPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	col := header(rows[0])
	jt, ok1 := col["trace_name"]
	jl, ok2 := col["configuration_label"]
	jc, ok3 := col["git_commit"]
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	version := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) <= max(jt, jl, jc) {
			continue
		}
		k := strings.TrimSpace(row[jt]) + "-" + strings.TrimSpace(row[jl])
		if _, ok := version[k]; !ok {
			version[k] = strings.TrimSpace(row[jc])
		}
	}
	for i := range runs {
		runs[i].Version = version[runs[i].Name]
	}
	return nil
}

// LoadMeasured reads dir's measured comparisons (none when dir has no
// MeasuredDir), in order of name.
func LoadMeasured(dir string) ([]MeasuredRun, error) {
	ents, err := os.ReadDir(filepath.Join(dir, MeasuredDir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []MeasuredRun
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, MeasuredDir, e.Name())
		rows, err := readCSV(filepath.Join(sub, "summary.csv"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		run, err := measuredRun(e.Name(), filepath.Join(sub, "summary.csv"), rows)
		if err != nil {
			return nil, err
		}
		for _, f := range []string{"running.png", "running.svg"} {
			if _, err := os.Stat(filepath.Join(sub, f)); err == nil {
				run.Figure = MeasuredDir + "/" + e.Name() + "/" + f
				break
			}
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// measuredRun reads a summary.csv's rows (measure, measured, ours_mean,
// ours_ci95, seeds).
func measuredRun(name, path string, rows [][]string) (MeasuredRun, error) {
	run := MeasuredRun{Name: name, Measured: map[string]float64{}, Ours: map[string]Stat{}}
	if len(rows) == 0 {
		return run, fmt.Errorf("%s: empty", path)
	}
	col := header(rows[0])
	for _, c := range []string{"measure", "measured", "ours_mean", "ours_ci95", "seeds"} {
		if _, ok := col[c]; !ok {
			return run, fmt.Errorf("%s:1: missing column %q", path, c)
		}
	}
	for i, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			return run, fmt.Errorf("%s:%d: %d fields, want %d", path, i+2, len(row), len(rows[0]))
		}
		m := row[col["measure"]]
		meas, err := opt(row, col, "measured")
		if err == nil {
			run.Measured[m] = meas
			var s Stat // empty: NaN (the seed floor has no CI, nor a value with one seed)
			if s.Mean, err = opt(row, col, "ours_mean"); err == nil {
				s.CI95, err = opt(row, col, "ours_ci95")
			}
			run.Ours[m] = s
		}
		if err == nil {
			run.Seeds, err = strconv.Atoi(row[col["seeds"]])
		}
		if err != nil {
			return run, fmt.Errorf("%s:%d: %w", path, i+2, err)
		}
	}
	return run, nil
}

// measuredAEGIS reports whether a run is one of the AEGIS configurations
// (not Exclusive).
func measuredAEGIS(name string) bool { return strings.Contains(name, "aegis") }

// writeMeasured writes the section on the testbed's own runs: per run the
// peak and mean of jobs running at once, exec span, per-job error, failed
// attempts (integers per seed, mean ± CI), and the figure.
func writeMeasured(b *strings.Builder, runs []MeasuredRun) {
	if len(runs) == 0 {
		return
	}
	b.WriteString("## The testbed's own runs, job by job\n\n")
	b.WriteString("`aegis measured` (docs/measured.md) of each of the testbed's Philly and Saturn runs: the same trace and configuration, " +
		"ours mean ± 95 % CI over the seeds. Units: jobs at once in jobs (the error ours − testbed in jobs); exec span and makespan as ours' error " +
		"in percent of the testbed's; the per-job exec error |ours ÷ testbed − 1| in percent (median and p90 over the jobs); failed attempts in attempts, " +
		"ours the mean over the seeds with its 95 % CI as a range of counts (the error in attempts). Within noise: the testbed's value is inside ours' CI.")
	if _, _, ok := floorRange(runs); ok {
		b.WriteString(" The seed floor beside the per-job error is the same figure between two of our own seeds (the median over the pairs of seeds): " +
			"our seeds differ from each other per job by that much, so against one measured run even a model whose runs were draws of it would show about the floor.")
	}
	b.WriteString("\n\n")
	fmt.Fprintf(b, "**Verdict:** %s.\n\n", measuredCounts(runs).text("; "))
	b.WriteString("| run | jobs at once, max: testbed / ours | time-weighted mean | exec span mean | makespan | per-job exec error, median (p90) | failed attempts: testbed / ours | figure |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		fig := ""
		if r.Figure != "" {
			fig = fmt.Sprintf("[running](%s)", r.Figure)
		}
		job := fmt.Sprintf("%.0f %% (%.0f %%)", 100*r.Ours["job_span_abs_err_median"].Mean, 100*r.Ours["job_span_abs_err_p90"].Mean)
		if f := r.floor(); !math.IsNaN(f) {
			job += fmt.Sprintf(" vs a seed floor of %.0f %%", 100*f)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Name,
			r.abs("max_running", 0, 1), r.abs("mean_running", 2, 2), r.rel("span_mean_s"), r.rel("makespan_s"),
			job, r.count("failed_attempts"), fig)
	}
	b.WriteString("\n")
}

// abs is "testbed / ours ± CI (+error)" in the measure's own unit, the
// testbed's value with tdig decimals (0 for counts), ours with digits.
func (r MeasuredRun) abs(m string, tdig, digits int) string {
	o := r.Ours[m]
	return fmt.Sprintf("%.*f / %.*f ± %.*f (%+.*f%s)", tdig, r.Measured[m], digits, o.Mean, digits, o.CI95,
		digits, o.Mean-r.Measured[m], r.noise(m))
}

// count is "testbed / ours (CI range) (+error)" for a count (Count).
func (r MeasuredRun) count(m string) string {
	o := r.Ours[m]
	return fmt.Sprintf("%.0f / %s (%s%s)", r.Measured[m], Count(o), countDiff(o, o.Mean-r.Measured[m]), r.noise(m))
}

// rel is "±x %" of ours against the testbed.
func (r MeasuredRun) rel(m string) string {
	t, o := r.Measured[m], r.Ours[m]
	if t == 0 {
		return ""
	}
	return fmt.Sprintf("%+.1f %% ± %.1f%s", 100*(o.Mean-t)/t, 100*o.CI95/t, r.noise(m))
}

// noise is ", within noise" when the testbed's value is inside ours' CI.
func (r MeasuredRun) noise(m string) string {
	o := r.Ours[m]
	if math.Abs(o.Mean-r.Measured[m]) <= o.CI95 {
		return ", within noise"
	}
	return ""
}

// measuredCount is how many of the testbed's runs meet issue 31's bounds:
// of the n AEGIS runs, how many have the peak of jobs at once within ±2,
// the mean exec span within 8 %, failed attempts within ±2 and the per-job
// median exec error ≤ 15 %; of the excl Exclusive runs, how many have
// their makespan within 3 %.
type measuredCount struct {
	n, peak, span, failed, job, excl, exclOK int
	// The AEGIS runs' per-job median errors and seed floors, their least
	// and largest (floorOK false when no run has a floor).
	errLo, errHi, floorLo, floorHi float64
	floorOK                        bool
}

// floorRange is the least and largest seed floor of the AEGIS runs; ok is
// false when none has one.
func floorRange(runs []MeasuredRun) (lo, hi float64, ok bool) {
	for _, r := range runs {
		f := r.floor()
		if !measuredAEGIS(r.Name) || math.IsNaN(f) {
			continue
		}
		if !ok {
			lo, hi, ok = f, f, true
		}
		lo, hi = min(lo, f), max(hi, f)
	}
	return lo, hi, ok
}

func measuredCounts(runs []MeasuredRun) measuredCount {
	var c measuredCount
	c.floorLo, c.floorHi, c.floorOK = floorRange(runs)
	c.errLo, c.errHi = math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		if !measuredAEGIS(r.Name) {
			c.excl++
			if math.Abs(r.Ours["makespan_s"].Mean/r.Measured["makespan_s"]-1) <= 0.03 {
				c.exclOK++
			}
			continue
		}
		c.n++
		if math.Abs(r.Ours["max_running"].Mean-r.Measured["max_running"]) <= 2 {
			c.peak++
		}
		if math.Abs(r.Ours["span_mean_s"].Mean/r.Measured["span_mean_s"]-1) <= 0.08 {
			c.span++
		}
		if math.Abs(r.Ours["failed_attempts"].Mean-r.Measured["failed_attempts"]) <= 2 {
			c.failed++
		}
		e := r.Ours["job_span_abs_err_median"].Mean
		if e <= 0.15 {
			c.job++
		}
		c.errLo, c.errHi = min(c.errLo, e), max(c.errHi, e)
	}
	return c
}

// text says the counts in a line, joined by sep.
func (c measuredCount) text(sep string) string {
	return strings.Join([]string{
		fmt.Sprintf("peak jobs at once within ±2 in %d of %d AEGIS runs", c.peak, c.n),
		fmt.Sprintf("mean exec span within 8 %% in %d", c.span),
		fmt.Sprintf("failed attempts within ±2 in %d", c.failed),
		fmt.Sprintf("per-job median exec error ≤ 15 %% in %d", c.job) + c.floorText(),
		fmt.Sprintf("Exclusive makespan within 3 %% in %d of %d", c.exclOK, c.excl),
	}, sep)
}

// floorText reads the AEGIS runs' per-job errors against their seed
// floors, each as a range: " (errors 25–35 % vs a seed floor of 12–21 %,
// …)"; "" without floors.
func (c measuredCount) floorText() string {
	if !c.floorOK || c.n == 0 {
		return ""
	}
	return fmt.Sprintf(" (errors %s vs a seed floor of %s, the same figure between two of our own seeds)",
		pctRange(c.errLo, c.errHi), pctRange(c.floorLo, c.floorHi))
}

// pctRange is "25–35 %", or "25 %" when both ends round alike.
func pctRange(lo, hi float64) string {
	a, b := fmt.Sprintf("%.0f", 100*lo), fmt.Sprintf("%.0f", 100*hi)
	if a == b {
		return a + " %"
	}
	return a + "–" + b + " %"
}
