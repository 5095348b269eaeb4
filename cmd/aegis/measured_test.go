package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// A "measured" run written from one of our own runs in the minimal CSV
// compares to the same run with no error at all; another seed does not.
func TestMeasuredAgainstItself(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim")
	code, _, errs := aegis("simulate", "--trace", "philly", "--policy", "aegis", "--set", "placement=mu", "--seed", "2", "--out", sim)
	require.Equal(t, 0, code, errs)
	jobs, err := runfiles.ReadTable(filepath.Join(sim, "jobs.csv"))
	require.NoError(t, err)
	evs, err := runfiles.ReadEvents(filepath.Join(sim, "events.jsonl"))
	require.NoError(t, err)
	att, err := runfiles.Attempts("events.jsonl", evs)
	require.NoError(t, err)
	last := map[int]float64{}
	for _, a := range att {
		if a.Outcome == "finished" {
			last[a.Job] = a.Start
		}
	}
	var b strings.Builder
	b.WriteString("job_id,workload_id,submit_s,start_s,last_start_s,finish_s,queue_s,failed_attempts\n")
	failed := 0
	for i := range jobs.Len() {
		id, err := jobs.Int(i, "job_id")
		require.NoError(t, err)
		f, err := jobs.Int(i, "failed_attempts")
		require.NoError(t, err)
		failed += f
		fmt.Fprintf(&b, "%d,%s,%s,%s,%.3f,%s,%s,%d\n", id, jobs.String(i, "workload"), jobs.String(i, "submit_s"), jobs.String(i, "start_s"),
			last[id], jobs.String(i, "finish_s"), jobs.String(i, "queue_s"), f)
	}
	require.Positive(t, failed, "the run retried jobs: the last launch matters")
	csvPath := filepath.Join(dir, "run.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte(b.String()), 0o644))

	out := filepath.Join(dir, "cmp")
	code, stdout, errs := aegis("measured", csvPath, "--trace", "philly", "--policy", "aegis", "--set", "placement=mu", "--seeds", "2", "--out", out)
	require.Equal(t, 0, code, errs)
	require.Contains(t, stdout, "| median \\|ratio − 1\\| | 0.000 |")
	require.Contains(t, stdout, "| makespan, s |")
	require.Regexp(t, `\| jobs running at once, max \| (\d+)\.0 \| (\d+)\.0 \| \+0\.0 \|`, stdout)
	require.Regexp(t, `\| failed attempts \| \d+\.0 \| \d+\.0 \| \+0\.0 \|`, stdout)
	require.Contains(t, stdout, "| seed floor: median \\|ratio − 1\\| between two of our seeds | needs two seeds (--seeds) |")
	for _, f := range []string{"measured.md", "running.png", "jobs.csv", "summary.csv"} {
		_, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err, f)
	}

	code, stdout, errs = aegis("measured", csvPath, "--trace", "philly", "--policy", "aegis", "--set", "placement=mu", "--seeds", "3,4", "--out", out)
	require.Equal(t, 0, code, errs)
	require.NotContains(t, stdout, "| median \\|ratio − 1\\| | 0.000", "other seeds differ")
	// Two seeds: the floor from their one pair, in the report and summary.csv.
	m := regexp.MustCompile(`median over the 1 pair of seeds \(range\) \| (0\.\d{3}) \(`).FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	sum, err := os.ReadFile(filepath.Join(out, "summary.csv"))
	require.NoError(t, err)
	row := regexp.MustCompile(`\njob_span_abs_err_seed_floor,,([0-9.]+),,2\n$`).FindStringSubmatch(string(sum))
	require.NotNil(t, row, string(sum))
	md, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	csv, err := strconv.ParseFloat(row[1], 64)
	require.NoError(t, err)
	require.InDelta(t, md, csv, 0.00051, "the report rounds to 3 digits, summary.csv to 4")
	require.Contains(t, stdout, "| jobs on the GPU | share | SMACT | SMOCC | DRAMA | over the rule |")
}

// The testbed's run, its configuration from its label, its DCGM readings
// beside ours.
func TestMeasuredTestbedRun(t *testing.T) {
	shared, ok := models.SharedDir()
	dir := filepath.Join(shared, "calibration", "aegis", "testbed_runs")
	if _, err := os.Stat(dir); !ok || err != nil {
		t.Skip("no shared data folder (set AEGIS_SHARED): the testbed's runs (calibration/aegis/testbed_runs) are not here")
	}
	code, stdout, errs := aegis("measured", filepath.Join(dir, "saturn", "job_metrics__aegis_lug_no_thresholds.csv"), "--trace", "saturn",
		"--seeds", "1", "--dcgm", filepath.Join(dir, "dcgm_run_distributions.csv"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, stdout, "policy aegis placement=mu filter=nf, seeds 1;")
	require.Contains(t, stdout, "| jobs running at once, max | 15.0 |")
	require.Contains(t, stdout, "| smact | 0.509 / ", "the testbed's SMACT mean over the run")
	require.Contains(t, stdout, "Mean |ours − measured| over the three signals and statistics:")
}

func TestMeasuredErrors(t *testing.T) {
	dir := t.TempDir()
	minimal := filepath.Join(dir, "m.csv")
	require.NoError(t, os.WriteFile(minimal, []byte("submit_s,start_s,finish_s\n0,0,10\n"), 0o644))
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("submit_s,start_s,finish_s\n0,5,1\n"), 0o644))
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"measured", minimal}, 2, "give --trace"},
		{[]string{"measured", minimal, "--trace", "demo"}, 2, "give --policy"},
		{[]string{"measured", minimal, "--trace", "demo", "--policy", "aegis", "--seeds", "x"}, 2, "--seeds"},
		{[]string{"measured", minimal, "--trace", "philly", "--policy", "aegis", "--seeds", "1"}, 1, "the measured run has 1 jobs, the simulated trace 60"},
		{[]string{"measured", bad, "--trace", "philly", "--policy", "aegis"}, 1, "bad.csv:2: column finish_s: completion before launch"},
		{[]string{"measured", minimal, "--trace", "demo", "--policy", "aegis", "--dcgm", bad}, 2, "has no configuration_label to find its rows by"},
	} {
		code, _, errs := aegis(tc.args...)
		require.Equal(t, tc.code, code, errs)
		require.Contains(t, errs, tc.err)
	}
}

// TestTestbedScansCurrent: the committed scans behind the refits of u1 and
// δ (models.SteadyScanA100, models.DepthScanA100, written by
// scripts/fit-steady-saturation.sh and fit-depth-overlap.sh) are of the
// shipped model: their rows at the shipped u1 = 1.2 and δ = 0.2 are what
// `aegis measured` gives today on the built-in A100 (one run per trace,
// seeds 1-5). A model change that moves these runs fails here until the
// scans are rerun.
func TestTestbedScansCurrent(t *testing.T) {
	shared, ok := models.SharedDir()
	dir := filepath.Join(shared, "calibration", "aegis", "testbed_runs")
	if _, err := os.Stat(dir); !ok || err != nil {
		t.Skip("no shared data folder (set AEGIS_SHARED): the testbed's runs (calibration/aegis/testbed_runs) are not here; the scans are not checked")
	}
	steady, err := models.SteadyScanA100()
	require.NoError(t, err)
	depth, err := models.DepthScanA100()
	require.NoError(t, err)
	for _, tc := range []struct{ trace, run string }{{"philly", "aegis_magm_thresholded"}, {"saturn", "aegis_lug_thresholded"}} {
		t.Run(tc.trace, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, errs := aegis("measured", filepath.Join(dir, tc.trace, "job_metrics__"+tc.run+".csv"), "--trace", tc.trace,
				"--seeds", "1-5", "--dcgm", filepath.Join(dir, "dcgm_run_distributions.csv"), "--out", out)
			require.Equal(t, 0, code, errs)
			var dcgm float64
			_, err := fmt.Sscanf(stdout[strings.Index(stdout, "Mean |ours − measured| over the three signals and statistics: "):],
				"Mean |ours − measured| over the three signals and statistics: %f.", &dcgm)
			require.NoError(t, err, "the report's DCGM error")
			sum, err := runfiles.ReadTable(filepath.Join(out, "summary.csv"), "measure", "measured", "ours_mean")
			require.NoError(t, err)
			figures := map[string][2]string{}
			for i := range sum.Len() {
				figures[sum.String(i, "measure")] = [2]string{sum.String(i, "measured"), sum.String(i, "ours_mean")}
			}
			var found [2]bool
			for _, s := range steady {
				if s.U1 == models.SteadySaturationA100 && s.Trace == tc.trace && s.Run == tc.run {
					require.Equal(t, dcgm, s.Err, "%s at u1 = %g: rerun scripts/fit-steady-saturation.sh", models.SteadyScanFile, s.U1)
					found[0] = true
				}
			}
			for _, d := range depth {
				if d.Delta == models.DepthOverlapA100 && d.Seeds == "1-5" && d.Trace == tc.trace && d.Run == tc.run {
					msg := fmt.Sprintf("%s at δ = %g: rerun scripts/fit-depth-overlap.sh", models.DepthScanFile, d.Delta)
					require.Equal(t, dcgm, d.Err, msg)
					require.Equal(t, [2]string{fmt.Sprintf("%.4f", d.PeakMeasured), fmt.Sprintf("%.4f", d.PeakOurs)}, figures["max_running"], msg)
					require.Equal(t, [2]string{fmt.Sprintf("%.4f", d.FailedMeasured), fmt.Sprintf("%.4f", d.FailedOurs)}, figures["failed_attempts"], msg)
					found[1] = true
				}
			}
			require.Equal(t, [2]bool{true, true}, found, "both scans hold the run at the shipped values")
		})
	}
}
