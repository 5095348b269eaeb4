package fidelity

import (
	"math"
	"os"
	"path/filepath"
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
	runs[1].Measured["span_mean_s"] = math.NaN()
	require.NotContains(t, filterCause(runs), "2 trace–placement pairs", "a pair without a value is left out")
}
