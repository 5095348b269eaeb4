package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/results"
)

// run is a synthetic spec run: per (config, seed) a makespan, and the
// jobs' JCT / solo runtimes.
type run struct {
	configs []string
	seeds   []int
	// value gives config c's makespan at seed s, job gives job j's
	// JCT / solo runtime (NaN: not finished).
	value func(c string, s int) float64
	job   func(c string, s, j int) float64
}

const jobsPerRun = 40

// write writes the run's cells.csv and jobs.csv into a new directory.
func (r run) write(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var cells, jobs strings.Builder
	cells.WriteString("spec,trace,config,policy,seed," + strings.Join(results.SummaryColumns, ",") + "\n")
	jobs.WriteString("spec,trace,config,policy,seed,job_id,norm_jct\n")
	for _, c := range r.configs {
		for _, s := range r.seeds {
			v := r.value(c, s)
			cells.WriteString(fmt.Sprintf("x,p,%s,aegis,%d,%g", c, s, v))
			for range results.SummaryColumns[1:] {
				cells.WriteString(fmt.Sprintf(",%g", v/2))
			}
			cells.WriteString("\n")
			for j := range jobsPerRun {
				nj := ""
				if x := r.job(c, s, j); !math.IsNaN(x) {
					nj = fmt.Sprint(x)
				}
				jobs.WriteString(fmt.Sprintf("x,p,%s,aegis,%d,%d,%s\n", c, s, j, nj))
			}
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cells.csv"), []byte(cells.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.csv"), []byte(jobs.String()), 0o644))
	return dir
}

// noise is a fixed pseudo-random perturbation of (seed, job, side).
func noise(s, j, side int) float64 {
	r := rand.New(rand.NewPCG(uint64(s*1000+j), uint64(side)))
	return r.NormFloat64()
}

func base(_ string, s int) float64       { return 3600 * (10 + float64(s%3)) }
func baseJob(_ string, s, j int) float64 { return 2 + float64((s*7+j)%11) }
func seeds(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// A real difference (B 10 % slower, with noise) gives small p-values; pure
// noise around A gives large ones; identical runs give Δ 0 and p 1.
func TestKnownDifferenceAndNone(t *testing.T) {
	a := run{configs: []string{"AEGIS"}, seeds: seeds(5), value: base, job: baseJob}.write(t, "A")
	slower := run{configs: []string{"AEGIS"}, seeds: seeds(5),
		value: func(c string, s int) float64 { return base(c, s)*1.1 + 60*noise(s, -1, 1) },
		job:   func(c string, s, j int) float64 { return baseJob(c, s, j)*1.1 + 0.1*noise(s, j, 1) }}.write(t, "B")
	same := run{configs: []string{"AEGIS"}, seeds: seeds(5),
		value: func(c string, s int) float64 { return base(c, s) + 600*noise(s, -1, 2) },
		job:   func(c string, s, j int) float64 { return baseJob(c, s, j) + 0.5*noise(s, j, 2) }}.write(t, "C")

	res, err := Dirs([]string{a, slower}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Equal(t, []string{"A", "B"}, res.Sides)
	require.Len(t, res.Rows, 2)
	mk, jobs := res.Rows[0], res.Rows[1]
	require.Equal(t, 5, mk.Seeds)
	require.InDelta(t, 0.1*36000, mk.Delta[1].Mean, 0.03*36000, "about 10 % of ~11 h")
	require.Less(t, mk.P(1), 1e-4)
	require.Equal(t, PerJob, jobs.Metric)
	require.Equal(t, 5*jobsPerRun, jobs.Signed[1].N)
	require.Less(t, jobs.P(1), 1e-10)

	res, err = Dirs([]string{a, same}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Greater(t, res.Rows[0].P(1), 0.2)
	require.Greater(t, res.Rows[1].P(1), 0.2)

	res, err = Dirs([]string{a, a}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Clean(a), filepath.Clean(a)}, res.Sides, "equal base names: the paths")
	require.Equal(t, 0.0, res.Rows[0].Delta[1].Mean)
	require.Equal(t, 1.0, res.Rows[0].P(1))
	require.Equal(t, 1.0, res.Rows[1].P(1))
}

// Which sides and groups: configurations of one directory; the same
// configurations in several; one each whatever their names.
func TestSidesAndGroups(t *testing.T) {
	two := run{configs: []string{"AEGIS", "Lucid"}, seeds: seeds(3), value: base, job: baseJob}
	one := func(c string) run { return run{configs: []string{c}, seeds: seeds(3), value: base, job: baseJob} }
	d2, d2b := two.write(t, "two"), two.write(t, "again")
	res, err := Dirs([]string{d2}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Equal(t, []string{"AEGIS", "Lucid"}, res.Sides)
	require.Equal(t, "", res.Rows[0].Group)

	res, err = Dirs([]string{d2, d2b}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Equal(t, []string{"two", "again"}, res.Sides)
	require.Equal(t, []string{"AEGIS", "AEGIS", "Lucid", "Lucid"}, []string{res.Rows[0].Group, res.Rows[1].Group, res.Rows[2].Group, res.Rows[3].Group})

	res, err = Dirs([]string{one("X").write(t, "x"), one("Y").write(t, "y")}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Equal(t, []string{"x (X)", "y (Y)"}, res.Sides)

	_, err = Dirs([]string{d2, one("X").write(t, "x")}, nil)
	require.ErrorContains(t, err, "the directories hold different configurations (two: AEGIS, Lucid; x: X)")
	_, err = Dirs([]string{one("X").write(t, "x")}, nil)
	require.ErrorContains(t, err, "x holds one configuration")
	other := run{configs: []string{"AEGIS", "Lucid"}, seeds: []int{7, 8}, value: base, job: baseJob}
	_, err = Dirs([]string{d2, other.write(t, "other")}, nil)
	require.ErrorContains(t, err, `trace "p", AEGIS: no seed that every side has (two, other)`)
	_, err = Dirs([]string{t.TempDir()}, nil)
	require.ErrorContains(t, err, "neither cells.csv (aegis run --out) nor summary.csv (aegis simulate --out)")
}

// Unfinished jobs are left out of the pairs; the table shows times in
// hours with the tests named.
func TestTableAndUnfinishedJobs(t *testing.T) {
	a := run{configs: []string{"A", "B"}, seeds: seeds(2), value: base, job: func(c string, s, j int) float64 {
		if c == "B" && j == 0 {
			return math.NaN()
		}
		return baseJob(c, s, j)
	}}.write(t, "d")
	res, err := Dirs([]string{a}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Equal(t, 2*(jobsPerRun-1), res.Rows[1].Delta[1].N)
	require.Len(t, res.Jobs, 1)
	require.Len(t, res.Jobs[0].Values[1], 2*(jobsPerRun-1))
	var b strings.Builder
	require.NoError(t, res.Table().WriteMarkdown(&b))
	require.Contains(t, b.String(), "| Trace | Metric | n | A | B | Δ B | Δ % B | p B | test |")
	require.Contains(t, b.String(), "| p | makespan (h) | 2 seeds | 11.500 ± 6.353 | 11.500 ± 6.353 | 0.000 ± 0.000 | +0.0 | 1 | paired t |")
	require.Contains(t, b.String(), "| p | JCT / solo runtime, per job | 78 jobs |")
	fig, err := res.Figure()
	require.NoError(t, err)
	require.Len(t, fig.Legend, 2)
}

// Simulate directories: the trace their simulate.json names (not "(run)"),
// no test over one pair (not "paired t" with n = 1), and in the figure
// each side by policy and seed, in its policy's colour.
func TestSimulateDirs(t *testing.T) {
	sim := func(name, policy string, mk float64) string {
		dir := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		vals := strings.Repeat(","+fmt.Sprint(mk), len(results.SummaryColumns))[1:]
		sum := strings.Join(results.SummaryColumns, ",") + "\n" + vals + "\n"
		var jobs strings.Builder
		jobs.WriteString("job_id,norm_jct\n")
		for j := range jobsPerRun {
			jobs.WriteString(fmt.Sprintf("%d,%g\n", j, mk/1000+float64(j)))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.csv"), []byte(sum), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.csv"), []byte(jobs.String()), 0o644))
		js := fmt.Sprintf(`{"trace": {"name": "philly"}, "policy": %q, "seed": 3}`, policy)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "simulate.json"), []byte(js), 0o644))
		return dir
	}
	res, err := Dirs([]string{sim("s1", "aegis", 3600), sim("s2", "lucid", 7200)}, []string{"makespan_s"})
	require.NoError(t, err)
	require.Equal(t, []string{"s1", "s2"}, res.Sides)
	require.Equal(t, []string{"aegis, seed 3 (s1)", "lucid, seed 3 (s2)"}, res.Legends)
	var b strings.Builder
	require.NoError(t, res.Table().WriteMarkdown(&b))
	require.Contains(t, b.String(), "| philly | makespan (h) | 1 run | 1.000 | 2.000 | 1.000 | +100.0 | n/a | none (1 pair) |\n")
	require.NotContains(t, b.String(), "(run)")
	f, err := res.Figure()
	require.NoError(t, err)
	var svg strings.Builder
	require.NoError(t, f.WriteTo(&svg, "svg"))
	for _, want := range []string{"aegis, seed 3 (s1)", "lucid, seed 3 (s2)", "trace philly", "stroke:#0072B2", "stroke:#E69F00"} {
		require.Contains(t, svg.String(), want)
	}
}
