package fidelity

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeSummary(t *testing.T, dir, name, body string) {
	t.Helper()
	sub := filepath.Join(dir, MeasuredDir, name)
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "summary.csv"), []byte("measure,measured,ours_mean,ours_ci95,seeds\n"+body), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(sub, "running.png"), []byte("png"), 0o644))
}

// The testbed's runs beside ours: a row per run, the verdict counting the
// runs within the bounds, "within noise" where the testbed's value is
// inside ours' CI.
func TestMeasuredSection(t *testing.T) {
	dir := t.TempDir()
	writeSummary(t, dir, "philly-aegis_magm_thresholded", "max_running,13,14.0,1.5,5\nmean_running,6.4,6.5,0.4,5\n"+
		"span_mean_s,3360,3457,235,5\nmakespan_s,30208,28908,880,5\nfailed_attempts,3,6.8,1.8,5\n"+
		"job_span_abs_err_median,,0.346,0.07,5\njob_span_abs_err_p90,,0.845,0.3,5\n")
	writeSummary(t, dir, "philly-exclusive", "max_running,4,4,0,5\nmean_running,2.67,2.67,0,5\nspan_mean_s,1895,1874,0,5\n"+
		"makespan_s,42634,42136,0,5\nfailed_attempts,0,0,0,5\njob_span_abs_err_median,,0.019,0,5\njob_span_abs_err_p90,,0.071,0,5\n")
	runs, err := LoadMeasured(dir)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	require.Equal(t, "measured/philly-aegis_magm_thresholded/running.png", runs[0].Figure)
	var b strings.Builder
	writeMeasured(&b, runs)
	s := b.String()
	require.Contains(t, s, "**Verdict:** peak jobs at once within ±2 in 1 of 1 AEGIS runs; mean exec span within 8 % in 1; "+
		"failed attempts within ±2 in 0; per-job median exec error ≤ 15 % in 0; Exclusive makespan within 3 % in 1 of 1.")
	require.Contains(t, s, "| philly-aegis_magm_thresholded | 13 / 14.0 ± 1.5 (+1.0, within noise) | 6.40 / 6.50 ± 0.40 (+0.10, within noise) | +2.9 % ± 7.0, within noise | -4.3 % ± 2.9 | 35 % (84 %) | 3 / 7 (5–9) (+4) | [running](measured/philly-aegis_magm_thresholded/running.png) |")

	require.NotContains(t, s, "seed floor", "no floor in summary.csv (written before it): none in the report")

	// With the seed floor's row (measured.FloorKey; no CI) the per-job
	// error is read against it, in the table and the verdict.
	writeSummary(t, dir, "philly-aegis_lug_thresholded", "max_running,14,14.0,1.5,5\nmean_running,5.9,6.2,0.2,5\n"+
		"span_mean_s,3520,3219,58,5\nmakespan_s,33560,28610,967,5\nfailed_attempts,3,5.8,0.6,5\n"+
		"job_span_abs_err_median,,0.3297,0.043,5\njob_span_abs_err_p90,,0.663,0.06,5\njob_span_abs_err_seed_floor,,0.1212,,5\n")
	runs, err = LoadMeasured(dir)
	require.NoError(t, err)
	require.Len(t, runs, 3)
	require.Equal(t, "philly-aegis_lug_thresholded", runs[0].Name)
	require.True(t, math.IsNaN(runs[0].Ours["job_span_abs_err_seed_floor"].CI95), "no CI: NaN")
	b.Reset()
	writeMeasured(&b, runs)
	s = b.String()
	require.Contains(t, s, "| 33 % (66 %) vs a seed floor of 12 % |")
	require.Contains(t, s, "| 35 % (84 %) | 3 / 7", "a run without a floor keeps its cell")
	require.Contains(t, s, "per-job median exec error ≤ 15 % in 0 (errors 33–35 % vs a seed floor of 12 %, the same figure between two of our own seeds);")
	require.Contains(t, s, "The seed floor beside the per-job error is the same figure between two of our own seeds")

	none, err := LoadMeasured(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, none)
	b.Reset()
	writeMeasured(&b, none)
	require.Empty(t, b.String(), "no section without comparisons")

	writeSummary(t, dir, "bad", "max_running,x,1,1,5\n")
	_, err = LoadMeasured(dir)
	require.ErrorContains(t, err, filepath.Join(dir, MeasuredDir, "bad", "summary.csv")+":2:")
}

// Attempt counts get their CI over the seeds from the cells: per seed the
// sum over the traces.
func TestCountCIs(t *testing.T) {
	v := Values{{Table: 5, Config: "MFM"}: {"failed": {Mean: 5, CI95: math.NaN()}}}
	cells := [][]string{{"trace", "config", "seed", "failed_attempts"},
		{"philly", "MFM", "1", "2"}, {"saturn", "MFM", "1", "2"}, // seed 1: 4
		{"philly", "MFM", "2", "3"}, {"saturn", "MFM", "2", "3"}, // seed 2: 6
		{"philly", "Exclusive", "1", "0"}}
	require.NoError(t, countCIs(v, 5, cells))
	require.InDelta(t, 12.706, v[Key{Table: 5, Config: "MFM"}]["failed"].CI95, 1e-3, "t(0.975, 1)·sd/√n with sd √2, n 2")
	require.Equal(t, "5 (0–18) / 3 (+2)", countCell(v[Key{Table: 5, Config: "MFM"}]["failed"], true, Stat{Mean: 3}, true))
	require.ErrorContains(t, countCIs(v, 5, [][]string{cells[0], {"philly", "MFM", "1", "x"}}), "line 2: failed_attempts")
}

// Table 5's cause from the testbed's runs: per trace and placement with a
// filtered and an NF run, the peak's rise and the exec span ratio there
// and here, averaged; the words follow the numbers; "" without a pair.
func TestFilterCause(t *testing.T) {
	run := func(name string, peakT, peakO, spanT, spanO float64) MeasuredRun {
		return MeasuredRun{Name: name, Measured: map[string]float64{"max_running": peakT, "span_mean_s": spanT},
			Ours: map[string]Stat{"max_running": {Mean: peakO}, "span_mean_s": {Mean: spanO}}}
	}
	runs := []MeasuredRun{
		run("philly-aegis_magm_thresholded", 13, 17, 3000, 3000),
		run("philly-aegis_magm_no_thresholds", 17, 17.5, 4500, 3150),
		run("saturn-aegis_lug_thresholded", 15, 19, 3600, 3300),
		run("saturn-aegis_lug_no_thresholds", 15, 19.5, 3600, 3300),
		run("saturn-aegis_magm_thresholded", 15, 20, 3500, 3100), // no NF run: left out
		run("philly-exclusive", 4, 4, 1900, 1880),
	}
	require.Equal(t, "The testbed's own runs (docs/crowding.md, 2 trace–placement pairs): turning the filter off let 2.0 more jobs run at once at the peak "+
		"and made execution 1.25× as long (NF ÷ filter exec span mean); here 0.5 more and 1.02×. Our filter holds back fewer jobs, and crowding costs less, "+
		"at the depths those runs reached (peaks of 13–17 jobs on 3 GPUs).", filterCause(runs))
	runs[2] = run("saturn-aegis_lug_thresholded", 15, 21, 3600, 3300)
	require.Contains(t, filterCause(runs), "; here 0.5 fewer and 1.02×.", "a peak that fell says so")
	runs[2] = run("saturn-aegis_lug_thresholded", 15, 19, 3600, 3300)
	runs[1] = run("philly-aegis_magm_no_thresholds", 17, 22, 4500, 6000)
	require.Contains(t, filterCause(runs), "Our filter holds back as many jobs or more, and crowding costs as much or more,")
	require.Empty(t, filterCause(runs[4:]), "no filtered and NF pair")

	// The testbed's code versions (runs.csv's git_commit): which pairs
	// compare one.
	vs := slices.Clone(runs)
	vs[3] = run("saturn-aegis_lug_no_thresholds", 15, 19.5, 3960, 3465) // NF ÷ filter 1.10 there, 1.05 here
	for i, v := range []string{"7460bc2", "19425c6", "19425c6", "19425c6", "771cd9b", "a62fbb1"} {
		vs[i].Version = v
	}
	require.Contains(t, filterCause(vs), "(peaks of 13–17 jobs on 3 GPUs). On the testbed only Saturn MU compares one code version (runs.csv's git_commit; "+
		"NF ÷ filter exec span mean 1.10× there, 1.05× here); in Philly MFM the filtered and NF runs ran different ones.")
	vs[0].Version = "19425c6"
	require.True(t, strings.HasSuffix(filterCause(vs), " On the testbed each pair's two runs ran one code version (runs.csv's git_commit)."))
	vs[0].Version, vs[2].Version = "x", "y"
	require.True(t, strings.HasSuffix(filterCause(vs), " On the testbed no pair's two runs ran one code version (runs.csv's git_commit): in Philly MFM and Saturn MU the filtered and NF runs ran different ones."))
	vs[1].Version = ""
	require.True(t, strings.HasSuffix(filterCause(vs), "in Saturn MU the filtered and NF runs ran different ones."), "a pair of unknown versions is not named")
	require.NotContains(t, filterCause(runs), "code version", "no versions known: nothing said")
	runs[1].Measured["span_mean_s"] = math.NaN()
	require.NotContains(t, filterCause(runs), "2 trace–placement pairs", "a pair without a value is left out")
}

// Each measured run's code version on the testbed comes from the shared
// runs.csv's git_commit, by trace and configuration label; without the
// file or the column nothing is set and nothing fails.
func TestTestbedVersions(t *testing.T) {
	runs := func() []MeasuredRun {
		return []MeasuredRun{{Name: "philly-aegis_magm_thresholded"}, {Name: "philly-aegis_magm_no_thresholds"}, {Name: "venus-exclusive"}}
	}
	for _, tc := range []struct {
		name, csv string
		want      []string
	}{
		{"git_commit", "trace_name,repetition,configuration_label,git_commit\nphilly,1,aegis_magm_thresholded,7460bc2\n" +
			"philly,1,aegis_magm_no_thresholds,19425c6\nsaturn,1,exclusive,15a2c0c\n", []string{"7460bc2", "19425c6", ""}},
		{"no git_commit column", "trace_name,configuration_label\nphilly,aegis_magm_thresholded\n", []string{"", "", ""}},
		{"no runs.csv", "", []string{"", "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared := t.TempDir()
			if tc.csv != "" {
				p := filepath.Join(shared, TestbedRunsPath)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(tc.csv), 0o644))
			}
			rs := runs()
			require.NoError(t, testbedVersions(rs, shared))
			for i, r := range rs {
				require.Equal(t, tc.want[i], r.Version, r.Name)
			}
		})
	}
	rs := runs()
	require.NoError(t, testbedVersions(rs, ""), "no shared folder")
	require.Empty(t, rs[0].Version)
}
