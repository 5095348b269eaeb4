// Package compare sets results directories (aegis run or aegis simulate
// --out) side by side: per trace and configuration each run metric's mean
// and 95 % confidence interval over seeds, the paired difference to the
// first side with its interval and a paired t-test over seeds, per-job JCT
// / solo runtime with a Wilcoxon signed-rank test over (seed, job) pairs,
// and the per-job CDFs overlaid. It answers "policy X vs Y" and "before vs
// after my change" (docs/plots.md, "Comparing runs").
package compare

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// unit is one run: a cell of a spec run, or a simulate directory.
type unit struct {
	trace, variant, seed string
	// shown is a simulate directory's trace name (simulate.json), for the
	// tables and figures; its runs pair whatever their traces and seeds.
	shown   string
	metrics map[string]float64
	jobs    map[string]float64 // job_id -> JCT / solo runtime of the finished jobs
}

// source is a loaded directory: its runs in file order.
type source struct {
	name  string
	units []*unit
	// run is a simulate directory's policy and seed ("aegis, seed 1",
	// from simulate.json), for the figure's legend.
	run string
}

// load reads a spec run's cells.csv and jobs.csv, or a simulate
// directory's summary.csv and jobs.csv.
func load(dir string, metrics []string) (*source, error) {
	_, err := os.Stat(filepath.Join(dir, rundir.Cells))
	switch {
	case err == nil:
		return loadRun(dir, metrics)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.Summary)); err != nil {
		return nil, fmt.Errorf("%s: neither cells.csv (aegis run --out) nor summary.csv (aegis simulate --out)", dir)
	}
	sum, err := runfiles.ReadTable(filepath.Join(dir, rundir.Summary), metrics...)
	if err != nil {
		return nil, err
	}
	if sum.Len() != 1 {
		return nil, fmt.Errorf("%s: want one row, have %d", sum.Name, sum.Len())
	}
	sim := plots.ReadSimRun(dir)
	u := &unit{shown: sim.Trace.Name}
	if u.metrics, err = rowMetrics(sum, 0, metrics); err != nil {
		return nil, err
	}
	jobs, err := runfiles.ReadTable(filepath.Join(dir, rundir.Jobs), "job_id", "norm_jct")
	if err != nil {
		return nil, err
	}
	all := make([]int, jobs.Len())
	for i := range all {
		all[i] = i
	}
	if u.jobs, err = jobValues(jobs, all); err != nil {
		return nil, err
	}
	src := &source{units: []*unit{u}}
	if sim.Policy != "" {
		src.run = fmt.Sprintf("%s, seed %d", sim.Policy, sim.Seed)
	}
	return src, nil
}

// loadRun reads a spec run's combined files.
func loadRun(dir string, metrics []string) (*source, error) {
	cells, err := runfiles.ReadTable(filepath.Join(dir, rundir.Cells), append([]string{"trace", "seed"}, metrics...)...)
	if err != nil {
		return nil, err
	}
	src := &source{}
	byKey := map[[3]string]*unit{}
	sweep := plots.SweepColumns(cells, results.SummaryColumns)
	for i := range cells.Len() {
		u := &unit{trace: cells.String(i, "trace"), variant: plots.SeriesName(cells, i, sweep), seed: cells.String(i, "seed")}
		if u.metrics, err = rowMetrics(cells, i, metrics); err != nil {
			return nil, err
		}
		k := [3]string{u.trace, u.variant, u.seed}
		if byKey[k] != nil {
			return nil, fmt.Errorf("%s: trace %s, %s, seed %s twice", cells.Where(i), u.trace, u.variant, u.seed)
		}
		byKey[k] = u
		src.units = append(src.units, u)
	}
	jobs, err := runfiles.ReadTable(filepath.Join(dir, rundir.Jobs), "trace", "seed", "job_id", "norm_jct")
	if err != nil {
		return nil, err
	}
	rows := map[*unit][]int{}
	jsweep := plots.SweepColumns(jobs, results.JobColumns)
	for i := range jobs.Len() {
		u := byKey[[3]string{jobs.String(i, "trace"), plots.SeriesName(jobs, i, jsweep), jobs.String(i, "seed")}]
		if u == nil {
			return nil, fmt.Errorf("%s: a job of no row of cells.csv", jobs.Where(i))
		}
		rows[u] = append(rows[u], i)
	}
	for _, u := range src.units {
		if u.jobs, err = jobValues(jobs, rows[u]); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// rowMetrics reads row i's metrics (NaN where empty).
func rowMetrics(t *runfiles.Table, i int, metrics []string) (map[string]float64, error) {
	m := map[string]float64{}
	for _, c := range metrics {
		v, err := t.OptFloat(i, c)
		if err != nil {
			return nil, err
		}
		m[c] = v
	}
	return m, nil
}

// jobValues reads the JCT / solo runtime of the jobs of rows by job ID
// (NaN for a job that did not finish).
func jobValues(t *runfiles.Table, rows []int) (map[string]float64, error) {
	out := map[string]float64{}
	for _, i := range rows {
		v, err := t.OptFloat(i, "norm_jct")
		if err != nil {
			return nil, err
		}
		id := t.String(i, "job_id")
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%s: job %s twice in one run", t.Where(i), id)
		}
		out[id] = v
	}
	return out, nil
}

// variants lists a source's variants in order of first appearance.
func (s *source) variants() []string {
	var out []string
	for _, u := range s.units {
		if !slices.Contains(out, u.variant) {
			out = append(out, u.variant)
		}
	}
	return out
}

// allHave reports whether every directory's run metrics (cells.csv, else
// summary.csv) have column c.
func allHave(dirs []string, c string) bool {
	for _, d := range dirs {
		name := filepath.Join(d, rundir.Cells)
		if _, err := os.Stat(name); err != nil {
			name = filepath.Join(d, rundir.Summary)
		}
		t, err := runfiles.ReadTable(name)
		if err != nil || !t.Has(c) {
			return false
		}
	}
	return true
}
