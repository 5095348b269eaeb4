package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/traces"
)

// runTrace runs the CLI and returns its exit code, stdout and stderr.
func runTrace(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestTraceStatsText(t *testing.T) {
	code, out, errs := runTrace(t, "trace", "stats", "philly")
	require.Equal(t, 0, code, errs)
	// The reference column is the paper's table; the built-in's own column
	// depends on the catalog's solo runtimes (checked against the library).
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 15)
	require.Regexp(t, `^statistic +philly +philly \(paper\)$`, lines[0])
	require.Regexp(t, `^jobs +60 +79126$`, lines[1])
	require.Regexp(t, `^duration p95 \(s\) +[0-9.]+ +19494.5$`, lines[3])
	require.Regexp(t, `^GPU demand, 2 GPUs +0.0333 +0.0232$`, lines[9])
	require.Regexp(t, `^inter-arrival p95 \(s\) +589.5 +600$`, lines[13])
	require.Regexp(t, `^zero inter-arrival +0.4237 +0.0836$`, lines[14])
	width := len(lines[0])
	for _, l := range lines {
		require.Len(t, l, width, "aligned: %q", l)
	}

	// A log with skipped records says so.
	code, out, _ = runTrace(t, "trace", "stats", "../../traces/testdata/philly/cluster_job_log.json", "--like", "philly")
	require.Equal(t, 0, code)
	require.Contains(t, out, "cluster_job_log.json  philly (paper)\n")
	require.Contains(t, out, "8 records read, 4 skipped: 2 never started, 1 no end time, 1 no submit time\n")
}

// TestTraceStatsLikeGPUs checks that --like profiles only 1- and 2-GPU jobs
// by default (the reference profiles cover only those), that an explicit
// --gpus wins, and that the output says when jobs were left out.
func TestTraceStatsLikeGPUs(t *testing.T) {
	const log = "../../traces/testdata/philly/cluster_job_log.json" // jobs of 0, 1, 2 and 4 GPUs
	for _, tc := range []struct {
		name   string
		args   []string
		jobs   int
		counts []string // GPU counts of the profile's demand mix
		note   string
	}{
		{"like defaults to 1,2", []string{"--like", "philly"}, 2, []string{"1", "2"}, "profiled the 2 of 4 jobs with 1,2 GPUs (--gpus)"},
		{"explicit gpus win", []string{"--like", "philly", "--gpus", "1,2,4"}, 3, []string{"1", "2", "4"}, "profiled the 3 of 4 jobs with 1,2,4 GPUs (--gpus)"},
		{"explicit all", []string{"--like", "philly", "--gpus", ""}, 4, []string{"0", "1", "2", "4"}, ""},
		{"no like: all", nil, 4, []string{"0", "1", "2", "4"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runTrace(t, append([]string{"trace", "stats", log, "--json"}, tc.args...)...)
			require.Equal(t, 0, code, errs)
			var p struct {
				JobCount int                `json:"job_count"`
				Mix      map[string]float64 `json:"gpu_demand_fractions"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &p))
			require.Equal(t, tc.jobs, p.JobCount)
			var counts []string
			for g := range p.Mix {
				counts = append(counts, g)
			}
			require.ElementsMatch(t, tc.counts, counts)

			code, out, errs = runTrace(t, append([]string{"trace", "stats", log}, tc.args...)...)
			require.Equal(t, 0, code, errs)
			require.Equal(t, slices.Contains(tc.counts, "4"), strings.Contains(out, "GPU demand, 4 GPUs"))
			if tc.note != "" {
				require.True(t, strings.HasSuffix(out, tc.note+"\n"), out)
			} else {
				require.NotContains(t, out, "profiled the")
			}
		})
	}
	code, out, _ := runTrace(t, "trace", "stats", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "with\n--like, --gpus defaults to 1,2")
}

func TestTraceStatsJSON(t *testing.T) {
	code, out, errs := runTrace(t, "trace", "stats", "demo", "--json")
	require.Equal(t, 0, code, errs)
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	require.ElementsMatch(t, []string{"job_count", "duration_p50_s", "duration_p95_s", "runtime_cdf", "gpu_demand_fractions",
		"gpu_service_fractions", "interarrival_p50_s", "interarrival_p95_s", "zero_interarrival_fraction"}, keys)
	var cdf map[string]float64
	require.NoError(t, json.Unmarshal(got["runtime_cdf"], &cdf))
	require.Len(t, cdf, 4)
	require.Contains(t, cdf, "under_10m")
	var mix map[string]float64
	require.NoError(t, json.Unmarshal(got["gpu_demand_fractions"], &mix))
	require.Contains(t, mix, "1")

	// The same numbers as the library computes.
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	p, err := traces.ProfileTrace(tr, models.A100())
	require.NoError(t, err)
	var back traces.Profile
	require.NoError(t, json.Unmarshal([]byte(out), &back))
	require.Equal(t, p, back)

	// --like adds the reference.
	code, out, _ = runTrace(t, "trace", "stats", "demo", "--json", "--like", "venus")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"like": "venus"`)
	require.Contains(t, out, `"reference": {`)
}

// TestTraceGenSelectMapSimulatable is the user's path from a log to a
// runnable trace: generate a log, select its window with a report, map it,
// and load both outputs as traces.
func TestTraceGenSelectMapSimulatable(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.csv")
	code, out, errs := runTrace(t, "trace", "gen", "--like", "venus", "--jobs", "20000", "--seed", "7", "--map=false", "--out", big)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "generated venus-like-20000-seed7: 20000 jobs")
	head, err := os.ReadFile(big)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(head), "job_id,submit_offset_s,num_gpus,duration_s,status\n"))

	win, rep := filepath.Join(dir, "window.csv"), filepath.Join(dir, "report.json")
	code, out, errs = runTrace(t, "trace", "select", "--input", big, "--like", "venus", "--seed", "42", "--out", win, "--report", rep)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "20000 records, 20000 kept (skipped: none), 20000 eligible with [1 2] GPUs")
	require.Contains(t, out, "selected eligible jobs ")
	var report traces.SelectReport
	require.NoError(t, json.Unmarshal(traceReadFile(t, rep), &report))
	require.Equal(t, 60, report.WindowJobs)
	require.Equal(t, map[int]int{2: 1}, report.MinPerGPU)
	require.LessOrEqual(t, report.Distances.GPUMix, 0.05)
	require.LessOrEqual(t, report.Distances.RuntimeCDF, 0.10)
	tr, err := traces.Load(win)
	require.NoError(t, err, "the window with workloads is a runnable trace")
	require.Len(t, tr.Jobs, 60)
	cat := models.A100()
	for _, j := range tr.Jobs {
		w, ok := cat.Get(j.Workload)
		require.True(t, ok)
		require.Equal(t, w.GPUs, j.GPUs)
	}

	// Durations only, then map.
	bare, mapped := filepath.Join(dir, "bare.csv"), filepath.Join(dir, "mapped.csv")
	code, _, errs = runTrace(t, "trace", "select", "--input", big, "--like", "venus", "--map=false", "--out", bare)
	require.Equal(t, 0, code, errs)
	_, err = traces.Load(bare)
	require.ErrorContains(t, err, "a job log without workloads (duration_s, no workload_id), not a trace: map it onto the catalog with aegis trace map")
	code, out, errs = runTrace(t, "trace", "map", "--input", bare, "--out", mapped)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "mapped 60 of 60 jobs")
	again, err := traces.Load(mapped)
	require.NoError(t, err)
	require.Equal(t, tr.Jobs, again.Jobs, "select --map and select + map agree")
	// Mapping the mapped trace again is refused, unless asked for.
	code, _, errs = runTrace(t, "trace", "map", "--input", mapped)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "its jobs already name workloads (it is a trace, or mapped): give --remap")
	code, out, errs = runTrace(t, "trace", "map", "--input", mapped, "--remap", "--out", filepath.Join(dir, "remapped.csv"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "mapped 60 of 60 jobs")

	// Same seed, same bytes.
	win2 := filepath.Join(dir, "window2.csv")
	code, _, _ = runTrace(t, "trace", "select", "--input", big, "--like", "venus", "--out", win2)
	require.Equal(t, 0, code)
	require.Equal(t, string(traceReadFile(t, win)), string(traceReadFile(t, win2)))
}

func TestTraceSelectPhillyLogToStdout(t *testing.T) {
	in := "../../traces/testdata/philly/cluster_job_log.json"
	// Philly's default minimum of two 2-GPU jobs cannot be met.
	code, _, errs := runTrace(t, "trace", "select", "--format", "philly", "--input", in, "--jobs", "2")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "none of 1 windows of 2 jobs is acceptable (1 lack the minimum jobs per GPU count map[2:2]")
	code, out, errs := runTrace(t, "trace", "select", "--input", in, "--jobs", "2", "--min-per-gpu", "none", "--max-gpu-mix", "1", "--max-runtime-cdf", "1")
	require.Equal(t, 0, code, errs)
	jobs := []traces.LogJob{
		{ID: "application_0006", Submit: 0, Duration: 30 * time.Second, GPUs: 2, Status: "Pass"},
		{ID: "application_0001", Submit: 67 * time.Second, Duration: 1157 * time.Second, GPUs: 1, Status: "Pass"},
	}
	wl, err := traces.MapWorkloads(jobs, models.A100())
	require.NoError(t, err)
	require.Equal(t, "job_id,submit_offset_s,num_gpus,duration_s,status,workload_id\n"+
		"application_0006,0,2,30,Pass,"+wl[0]+"\n"+
		"application_0001,67,1,1157,Pass,"+wl[1]+"\n", out)
	require.Contains(t, errs, "8 records, 4 kept (skipped: 2 never started, 1 no end time, 1 no submit time), 2 eligible")
}

// TestTraceSelectZeroLimits checks that --max-gpu-mix 0 and
// --max-runtime-cdf 0 are limits of 0 (they used to become 0.05 and 0.10).
func TestTraceSelectZeroLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.csv")
	code, _, errs := runTrace(t, "trace", "gen", "--like", "venus", "--jobs", "2000", "--map=false", "--out", big)
	require.Equal(t, 0, code, errs)
	for _, tc := range []struct {
		name     string
		input    string
		args     []string
		code     int
		mix, cdf float64
		want     string
	}{
		{"defaults", big, nil, 0, 0.05, 0.10, ""},
		// The built-in trace is a single 60-job window: at distance 0.
		{"both zero, one window", "philly", []string{"--max-gpu-mix", "0", "--max-runtime-cdf", "0"}, 0, 0, 0, ""},
		// No 60-job window has the 5.7 % 2-GPU share of the whole log.
		{"zero mix", big, []string{"--max-gpu-mix", "0"}, 1, 0, 0, "exceed GPU-mix distance 0,"},
		{"zero cdf", big, []string{"--max-gpu-mix", "1", "--max-runtime-cdf", "0"}, 1, 0, 0, "exceed runtime-CDF distance 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := filepath.Join(dir, "report.json")
			args := append([]string{"trace", "select", "--input", tc.input, "--map=false", "--out", filepath.Join(dir, "w.csv"), "--report", rep}, tc.args...)
			code, _, errs := runTrace(t, args...)
			require.Equal(t, tc.code, code, errs)
			if tc.code != 0 {
				require.Contains(t, errs, tc.want)
				return
			}
			var r traces.SelectReport
			require.NoError(t, json.Unmarshal(traceReadFile(t, rep), &r))
			require.Equal(t, tc.mix, r.MaxGPUMix)
			require.Equal(t, tc.cdf, r.MaxRuntimeCDF)
		})
	}
}

// TestTraceSelectMinPerGPUAuto checks --min-per-gpu auto: Philly's two
// 2-GPU jobs for a cluster_job_log whether its format is given or detected
// (detected logs used to get one), --like deciding when given.
func TestTraceSelectMinPerGPUAuto(t *testing.T) {
	// A Philly log of 12 jobs, every third of 2 GPUs.
	var b strings.Builder
	b.WriteString("[\n")
	for i := range 12 {
		gpus := `"g0"`
		if i%3 == 0 {
			gpus = `"g0", "g1"`
		}
		at := time.Date(2017, 10, 3, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format("2006-01-02 15:04:05")
		end := time.Date(2017, 10, 3, 1, 0, 0, 0, time.UTC).Add(time.Duration(i*i) * time.Minute).Format("2006-01-02 15:04:05")
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"jobid": "j%d", "status": "Pass", "submitted_time": %q, "attempts": [{"start_time": %q, "end_time": %q, "detail": [{"ip": "m", "gpus": [%s]}]}]}`, i, at, at, end, gpus)
	}
	b.WriteString("\n]\n")
	dir := t.TempDir()
	log := filepath.Join(dir, "cluster_job_log")
	require.NoError(t, os.WriteFile(log, []byte(b.String()), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want map[int]int
	}{
		{"detected philly", nil, map[int]int{2: 2}},
		{"explicit philly", []string{"--format", "philly"}, map[int]int{2: 2}},
		{"like venus wins", []string{"--like", "venus"}, map[int]int{2: 1}},
		{"like philly", []string{"--like", "philly"}, map[int]int{2: 2}},
		{"explicit minimum", []string{"--min-per-gpu", "2:1"}, map[int]int{2: 1}},
		{"no 2-GPU jobs eligible", []string{"--gpus", "1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := filepath.Join(dir, "report.json")
			args := append([]string{"trace", "select", "--input", log, "--jobs", "4", "--max-gpu-mix", "1", "--max-runtime-cdf", "1",
				"--map=false", "--out", filepath.Join(dir, "w.csv"), "--report", rep}, tc.args...)
			code, _, errs := runTrace(t, args...)
			require.Equal(t, 0, code, errs)
			var r traces.SelectReport
			require.NoError(t, json.Unmarshal(traceReadFile(t, rep), &r))
			if tc.want == nil {
				require.Empty(t, r.MinPerGPU)
			} else {
				require.Equal(t, tc.want, r.MinPerGPU)
			}
		})
	}
	// Philly's minimum applies to the detected format: a 3-job window can
	// hold at most one 2-GPU job here.
	code, _, errs := runTrace(t, "trace", "select", "--input", log, "--jobs", "3", "--max-gpu-mix", "1", "--max-runtime-cdf", "1", "--map=false")
	require.Equal(t, 1, code)
	require.Contains(t, errs, "lack the minimum jobs per GPU count map[2:2]")
}

func TestTraceGenToStdoutDeterministic(t *testing.T) {
	code, a, _ := runTrace(t, "trace", "gen", "--like", "saturn", "--jobs", "50", "--seed", "3")
	require.Equal(t, 0, code)
	_, b, _ := runTrace(t, "trace", "gen", "--like", "saturn", "--jobs", "50", "--seed", "3")
	require.Equal(t, a, b)
	require.Equal(t, 51, strings.Count(a, "\n"))
	code, c, _ := runTrace(t, "trace", "gen", "--like", "saturn", "--jobs", "50", "--seed", "3", "--max-gpus", "8", "--map=false")
	require.Equal(t, 0, code)
	require.NotContains(t, c, "workload_id")
}

func TestTraceErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("job_id,gpu_num,submit_time,duration\n1,1,2020-04-01 00:00:07,5\n2,x,2020-04-01 00:00:07,5\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"trace"}, 2, "missing subcommand"},
		{"select no input", []string{"trace", "select"}, 2, "--input is required"},
		{"select bad format", []string{"trace", "select", "--input", "x", "--format", "xml"}, 2, `--format "xml": want one of auto|philly|helios|csv|jsonl`},
		{"select bad gpus", []string{"trace", "select", "--input", "x", "--gpus", "one"}, 2, `--gpus "one": want GPU counts like 1,2`},
		{"select bad min", []string{"trace", "select", "--input", "x", "--min-per-gpu", "2"}, 2, `--min-per-gpu "2": want GPUS:MIN pairs`},
		{"select min not eligible", []string{"trace", "select", "--input", "x", "--min-per-gpu", "4:1"}, 2, "--min-per-gpu: 4-GPU jobs are not among --gpus [1 2]"},
		{"select bad like", []string{"trace", "select", "--input", "x", "--like", "earth"}, 2, `--like "earth"`},
		{"select bad jobs", []string{"trace", "select", "--input", "x", "--jobs", "1"}, 2, "--jobs 1: want at least 2"},
		{"select unknown flag", []string{"trace", "select", "--frobnicate"}, 2, "unknown flag: --frobnicate"},
		{"select missing file", []string{"trace", "select", "--input", filepath.Join(dir, "none.csv")}, 1, "none.csv: no such file"},
		{"select malformed", []string{"trace", "select", "--input", bad}, 1, `bad.csv:3: column gpu_num: "x" is not a whole number`},
		{"select too few", []string{"trace", "select", "--input", "philly", "--jobs", "61"}, 1, "60 eligible jobs (GPU counts [1 2]) of 60, fewer than the window's 61"},
		{"map no input", []string{"trace", "map"}, 2, "--input is required"},
		{"map no catalog workload", []string{"trace", "map", "--input", "../../traces/testdata/helios/cluster_log.csv"}, 1, "job 6000003 needs 0 GPUs, but the catalog has no 0-GPU workload (1 such jobs) (use --gpus to keep GPU counts the catalog has)"},
		{"map none left", []string{"trace", "map", "--input", "philly", "--remap", "--gpus", "4"}, 1, "no job with [4] GPUs"},
		{"map a trace", []string{"trace", "map", "--input", "philly"}, 1, "map philly: its jobs already name workloads (it is a trace, or mapped): give --remap"},
		{"map a JSON Lines trace", []string{"trace", "map", "--input", "../../traces/testdata/trace.jsonl"}, 1, "its jobs already name workloads"},
		{"stats no file", []string{"trace", "stats"}, 2, "accepts 1 arg(s), received 0"},
		{"stats missing", []string{"trace", "stats", filepath.Join(dir, "none.csv")}, 1, "no such file"},
		{"gen no like", []string{"trace", "gen"}, 2, `--like "": want one of philly, saturn, venus`},
		{"gen bad jobs", []string{"trace", "gen", "--like", "venus", "--jobs", "0"}, 2, "--jobs 0: want 1 to 1000000000"},
		{"gen bad max", []string{"trace", "gen", "--like", "venus", "--max-gpus", "128"}, 2, "--max-gpus 128: want 2, 4, 8, 16, 32 or 64"},
		{"select negative mix", []string{"trace", "select", "--input", "philly", "--max-gpu-mix", "-0.1"}, 2, "--max-gpu-mix -0.1: want a distance of at least 0"},
		{"select NaN cdf", []string{"trace", "select", "--input", "philly", "--max-runtime-cdf", "NaN"}, 2, "--max-runtime-cdf NaN: want a distance of at least 0"},
		{"select negative cdf", []string{"trace", "select", "--input", "x", "--max-runtime-cdf", "-1"}, 2, "--max-runtime-cdf -1: want a distance of at least 0"},
		{"gen unwritable", []string{"trace", "gen", "--like", "venus", "--out", filepath.Join(dir, "no", "such", "dir.csv")}, 1, "dir.csv: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runTrace(t, tc.args...)
			require.Equal(t, tc.code, code, errs)
			require.Contains(t, errs, tc.want)
		})
	}
}

func traceReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// The limited-telemetry study's workflow: a window mapped onto the legacy
// 11 GB catalog runs on the legacy server under the policies that need no
// DCGM pressure metrics; the pressure filter is refused there.
func TestTraceGPUTypeLegacyWorkflow(t *testing.T) {
	dir := t.TempDir()
	log, win := filepath.Join(dir, "log.csv"), filepath.Join(dir, "win.csv")
	code, _, errs := runTrace(t, "trace", "gen", "--like", "venus", "--jobs", "3000", "--seed", "3", "--map=false", "--out", log)
	require.Equal(t, 0, code, errs)
	code, _, errs = runTrace(t, "trace", "select", "--input", log, "--gpus", "1", "--gpu-type", "legacy-11gb", "--out", win)
	require.Equal(t, 0, code, errs)
	tr, err := traces.ReadCSVFile(win)
	require.NoError(t, err)
	legacy := models.Legacy11GB()
	for _, j := range tr.Jobs {
		_, ok := legacy.Get(j.Workload)
		require.True(t, ok, j.Workload)
	}
	for _, args := range [][]string{{"--policy", "aegis", "--set", "filter=mem-only"}, {"--policy", "aegis", "--set", "filter=util:70"}, {"--policy", "horus"}, {"--policy", "lucid"}} {
		code, out, errs := runTrace(t, append([]string{"simulate", "--trace", win, "--server", "legacy-11gb:8"}, args...)...)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, "60 finished")
	}
	code, _, errs = runTrace(t, "simulate", "--trace", win, "--server", "legacy-11gb:8", "--policy", "aegis")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "filter=mem-only")
	code, _, errs = runTrace(t, "trace", "map", "--input", log, "--gpu-type", "nope")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "--gpu-type")
}

// trace gen streams a log longer than one generator block: mapped onto the
// catalog block by block, written whole, and identical to the in-memory
// generator's log.
func TestTraceGenStreamsBlocks(t *testing.T) {
	n := traces.GenerateBlock + 100
	out := filepath.Join(t.TempDir(), "big.csv")
	code, _, errs := runTrace(t, "trace", "gen", "--like", "saturn", "--jobs", strconv.Itoa(n), "--seed", "4", "--out", out)
	require.Equal(t, 0, code, errs)
	l, err := traces.ReadLogFile(out, traces.FormatCSV, models.A100())
	require.NoError(t, err)
	want, err := traces.GenerateLike("saturn", n, 4, 0)
	require.NoError(t, err)
	require.Len(t, l.Jobs, n)
	for i, j := range l.Jobs {
		w := want.Jobs[i]
		if j.ID != w.ID || j.Submit != w.Submit || j.Duration != w.Duration || j.GPUs != w.GPUs {
			t.Fatalf("job %d: %+v, want %+v", i, j, w)
		}
	}
	tr, err := traces.Load(out)
	require.NoError(t, err)
	require.Len(t, tr.Jobs, n, "every job has a catalog workload")
}

// TestTraceGenClusterRunnable: a --max-gpus 4, 8 or 64 trace (more GPUs
// per job than the A100 catalog's workloads have) maps every job onto a
// workload whose GPU count divides the job's, carries its durations as
// solo_s, and simulates without further flags on a cluster of servers as
// large as its largest job (or larger), every job finished for its
// generated length.
func TestTraceGenClusterRunnable(t *testing.T) {
	for _, tc := range []struct {
		maxGPUs, jobs, over string
		cluster             string
	}{
		{"4", "300", "2", "a100-40gb:4x1"},
		{"8", "300", "4", "a100-40gb:8x1"},
		{"64", "40", "8", "a100-40gb:8x16"},
	} {
		t.Run(tc.maxGPUs, func(t *testing.T) {
			testTraceGenClusterRunnable(t, tc.maxGPUs, tc.jobs, tc.over, tc.cluster)
		})
	}
}

func testTraceGenClusterRunnable(t *testing.T, maxG, jobs, over, cluster string) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	code, _, errs := runTrace(t, "trace", "gen", "--like", "venus", "--jobs", jobs, "--max-gpus", maxG, "--seed", "2", "--out", tr)
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(tr)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Equal(t, "job_id,submit_offset_s,num_gpus,duration_s,status,workload_id,solo_s", lines[0])
	n, err := strconv.Atoi(jobs)
	require.NoError(t, err)
	require.Len(t, lines, n+1)
	solo := map[string]string{}
	maxGPUs := 0
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		g, err := strconv.Atoi(f[2])
		require.NoError(t, err)
		maxGPUs = max(maxGPUs, g)
		wg := 1
		if strings.HasSuffix(f[5], "_2gpu") {
			wg = 2
		}
		require.Zero(t, g%wg, l)
		require.Equal(t, f[3], f[6], l)
		solo[f[0]] = f[3]
	}
	least, err := strconv.Atoi(over)
	require.NoError(t, err)
	require.Greater(t, maxGPUs, least)

	out := filepath.Join(dir, "out")
	code, stdout, errs := aegis("simulate", "--trace", tr, "--cluster", cluster, "--policy", "exclusive", "--out", out)
	require.Equal(t, 0, code, errs)
	require.Contains(t, stdout, fmt.Sprintf("%d finished, 0 stopped, %d total", n, n))
	jb, err := os.ReadFile(filepath.Join(out, "jobs.csv"))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(jb)), "\n")
	require.Len(t, rows, n+1)
	head := strings.Split(rows[0], ",")
	col := func(name string) int { return slices.Index(head, name) }
	for _, r := range rows[1:] {
		f := strings.Split(r, ",")
		require.Equal(t, "done", f[col("state")], r)
		want, err := strconv.ParseFloat(solo[f[col("job_id")]], 64)
		require.NoError(t, err)
		got, err := strconv.ParseFloat(f[col("solo_s")], 64)
		require.NoError(t, err)
		require.Equal(t, want, got, r)
	}
}

// TestTraceGenMapFalse: --map=false writes durations only.
func TestTraceGenMapFalse(t *testing.T) {
	code, c, _ := runTrace(t, "trace", "gen", "--like", "venus", "--jobs", "10", "--max-gpus", "16", "--map=false")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(c, "job_id,submit_offset_s,num_gpus,duration_s,status\n"), c)
}
