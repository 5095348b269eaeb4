package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/results/runfiles"
)

func TestPrintGPUs(t *testing.T) {
	at := time.Date(2026, 1, 1, 10, 0, 1, 0, time.UTC)
	f := gpu.NewFake([]gpu.Device{{Index: 0, UUID: "GPU-aaaa", Name: "NVIDIA H200", TotalMiB: 143771}},
		gpu.FakeStep{Samples: []gpu.Sample{{GPU: 0, At: at, UsedMiB: 512, TotalMiB: 143771, UtilPct: 3}}},
		gpu.FakeStep{Samples: []gpu.Sample{{GPU: 0, At: at.Add(time.Second), UsedMiB: 20480, TotalMiB: 143771, UtilPct: 97,
			Pressure: true, SMACT: 0.81, SMOCC: 0.4, DRAMA: 0.25, Procs: []gpu.Proc{{PID: 4242, UsedMiB: 19968}}}}},
	)
	var b bytes.Buffer
	require.NoError(t, printGPUs(context.Background(), &b, f, 2, time.Millisecond))
	out := b.String()
	require.Contains(t, out, "  0  GPU-aaaa")
	require.Contains(t, out, "NVIDIA H200")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 6, out)
	require.Regexp(t, `^10:00:01\.000 +0 +512 +143771 +3 +no +- +- +-$`, lines[4])
	require.Regexp(t, `^10:00:02\.000 +0 +20480 +143771 +97 +yes +0\.810 +0\.400 +0\.250 +4242:19968$`, lines[5])
	require.Equal(t, 2, f.Calls())
}

// TestPrintGPUsDegrades: a failed reading prints as missed and the
// readings go on; a dropped GPM metric and an unknown process list show as
// such; only a source that never reads is an error.
func TestPrintGPUsDegrades(t *testing.T) {
	at := time.Date(2026, 1, 1, 10, 0, 1, 0, time.UTC)
	dev := []gpu.Device{{Index: 0, UUID: "GPU-aaaa", Name: "NVIDIA H200", TotalMiB: 143771}}
	f := gpu.NewFake(dev,
		gpu.FakeStep{Err: errors.New("nvml: nvmlGpmSampleGet on GPU 0: GPU is lost")},
		gpu.FakeStep{Samples: []gpu.Sample{{GPU: 0, At: at, UsedMiB: 512, TotalMiB: 143771, UtilPct: 3,
			Dropped: "metric NVML_GPM_METRIC_SM_UTIL: value NaN outside 0..100", ProcsUnknown: true}}},
	)
	var b bytes.Buffer
	require.NoError(t, printGPUs(context.Background(), &b, f, 2, time.Millisecond))
	out := b.String()
	require.Contains(t, out, "sample 1 missed: nvml: nvmlGpmSampleGet on GPU 0: GPU is lost")
	require.Regexp(t, `10:00:01\.000 +0 +512 +143771 +3 +dropped +- +- +- +\? \(metric NVML_GPM_METRIC_SM_UTIL: value NaN outside 0\.\.100\)`, out)

	f = gpu.NewFake(dev, gpu.FakeStep{Err: errors.New("GPU is lost")}, gpu.FakeStep{Err: errors.New("GPU is lost")})
	b.Reset()
	require.EqualError(t, printGPUs(context.Background(), &b, f, 2, time.Millisecond), "no sample from fake (2 tries): GPU is lost")
}

func TestGPUsCommandErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"gpus", "--telemetry", "magic"}, 1, `unknown telemetry "magic"`},
		{[]string{"gpus", "--gpus", "0,x"}, 2, `"x" is not a GPU index`},
		{[]string{"gpus", "--samples", "-1"}, 2, "--samples -1"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		require.Equal(t, tc.code, run(tc.args, &out, &errb), tc.args)
		require.Contains(t, errb.String(), tc.msg)
	}
}

// TestGPUCheckScripts keeps make gpu-check's scripts, which only a GPU
// machine runs for real, valid: bash -n, the Python scripts parse, and the
// workloads file parses with the executor's parser.
func TestGPUCheckScripts(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := exec.LookPath("bash"); err == nil {
		out, err := exec.Command("bash", "-n", filepath.Join(root, "scripts", "gpu-check.sh")).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	dir := filepath.Join(root, "scripts", "gpu-check")
	raw, err := os.ReadFile(filepath.Join(dir, "workloads.yaml"))
	require.NoError(t, err)
	ws, err := executor.ParseWorkloads(bytes.ReplaceAll(raw, []byte("@TRAIN@"), []byte("/repo/scripts/gpu-check/train.py")), "workloads.yaml")
	require.NoError(t, err)
	require.Len(t, ws, 3)
	require.Equal(t, []string{"python3", "/repo/scripts/gpu-check/train.py"}, ws["llama3_width_8layer_wiki_bs1_1gpu"].Command[:2])
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3: the Python scripts are not checked")
	}
	for _, f := range []string{"train.py", "report.py"} {
		p := filepath.Join(dir, f)
		out, err := exec.Command("python3", "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", p).CombinedOutput()
		require.NoError(t, err, "%s: %s", f, out)
	}
}

// TestGPUCheckEmulated runs make gpu-check end to end on an emulated A100
// (the script, aegis exec --emulate, the report), then its report on the
// same run posing as a real H200 with nvidia-smi's readings, and with each
// thing a check guards broken: every check must catch its fault.
func TestGPUCheckEmulated(t *testing.T) {
	for _, c := range []string{"bash", "python3", "awk", "timeout"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("no %s: make gpu-check cannot run here", c)
		}
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	work := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "gpu-check.sh"))
	cmd.Env = append(os.Environ(), selfEnv+"=1", "AEGIS_BIN="+os.Args[0], "GPU_CHECK_EMULATE=a100-40gb",
		"GPU_CHECK_SPEEDUP=100", "GPU_CHECK_DIR="+work)
	out, err := cmd.CombinedOutput()
	killGroups(t, filepath.Join(work, "run"))
	require.NoError(t, err, "%s", out)
	for _, want := range []string{
		"source is NVML GPM           SKIP  emulated a100-40gb",
		"pressure in most readings    PASS",
		"SMACT ~0 when idle           PASS  mean SMACT 0.000",
		"SMACT high, heavy alone      PASS  median SMACT ",
		"memory = nvidia-smi          SKIP",
		"OOM from collocation         PASS  big-a attempt 1 failed OOM",
		"collocated job seen active   PASS  big-a attempt 1: placed",
		"OOM job recovered            PASS  big-a: attempt 1 OOM, finished after a retry",
		"every job done               PASS  4 of 4 jobs done",
		"energy counter moved         PASS  ",
		"mean power in bounds         PASS  ",
		"(the power model models/data/power_a100.yaml)",
		"power in telemetry           PASS  ",
		"telemetry power = counter    PASS  ",
		"gpu-check: PASS (emulated a100-40gb",
	} {
		require.Contains(t, string(out), want)
	}
	// The emulator's readings of the seconds the executor's loop woke too
	// late to poll (a run second is 10 ms here) are taken too: every
	// second has its reading, however loaded the machine.
	m := regexp.MustCompile(`pressure in most readings    PASS  (\d+) of (\d+) seconds`).FindStringSubmatch(string(out))
	require.NotNil(t, m)
	require.Equal(t, m[2], m[1], "seconds of the run with a reading")

	// The same run as if read on a real H200, with nvidia-smi beside it.
	run := filepath.Join(work, "run")
	tel, err := runfiles.ReadTelemetry(filepath.Join(run, executor.TelemetryName))
	require.NoError(t, err)
	j, err := os.ReadFile(filepath.Join(run, "journal.jsonl"))
	require.NoError(t, err)
	var head struct {
		Run struct{ Start time.Time } `json:"run"`
	}
	require.NoError(t, json.Unmarshal(bytes.SplitN(j, []byte("\n"), 2)[0], &head))
	smi := func(offsetMiB float64) string {
		var b strings.Builder
		for sec, s := range tel.S[0] {
			at := head.Run.Start.Add(time.Duration(sec)*time.Second + 400*time.Millisecond).Local()
			fmt.Fprintf(&b, "%s, %.0f\n", at.Format("2006/01/02 15:04:05.000"), s.UsedMiB+offsetMiB)
		}
		p := filepath.Join(t.TempDir(), "smi.csv")
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		return p
	}
	info := filepath.Join(work, "gpu.txt")
	require.NoError(t, os.WriteFile(info, []byte("name=NVIDIA H200\ncompute_cap=9.0\ndriver=570.86.15\n"), 0o644))
	gpmLog := filepath.Join(work, "gpm.txt")
	require.NoError(t, os.WriteFile(gpmLog, []byte("telemetry auto: using nvml+gpm: GPM on every GPU: SMACT, SMOCC, DRAMA valid\n"), 0o644))
	utilLog := filepath.Join(work, "util.txt")
	require.NoError(t, os.WriteFile(utilLog, []byte("telemetry auto: using nvml: WARNING: the first GPM reading failed\n"), 0o644))
	report := func(args ...string) (string, error) {
		args = append([]string{filepath.Join(root, "scripts", "gpu-check", "report.py"), "--run", run,
			"--trace", filepath.Join(work, "trace.csv"), "--gpu-info", info}, args...)
		b, err := exec.Command("python3", args...).CombinedOutput()
		return string(b), err
	}
	rep, err := report("--exec-log", gpmLog, "--smi", smi(0))
	require.NoError(t, err, rep)
	require.Contains(t, rep, "source is NVML GPM           PASS  source nvml+gpm on NVIDIA H200 (compute capability 9.0 >= 9.0")
	require.Contains(t, rep, "memory = nvidia-smi          PASS  median |aegis - nvidia-smi| 0 MiB")
	require.Contains(t, rep, "idle memory ~0               PASS")

	rep, err = report("--exec-log", utilLog, "--smi", smi(0))
	require.Error(t, err, "a GPM that fell back to utilization fails the check on Hopper")
	require.Contains(t, rep, "source is NVML GPM           FAIL  source nvml on NVIDIA H200")
	require.Contains(t, rep, "pressure in most readings    FAIL  source nvml gives no pressure signals")

	rep, err = report("--exec-log", gpmLog, "--smi", smi(600))
	require.Error(t, err, "memory read with the driver's reservation (v1) is off by ~600 MiB")
	require.Contains(t, rep, "memory = nvidia-smi          FAIL  median |aegis - nvidia-smi| 600 MiB")

	// Break the run's record: no OOM, no activity of shared attempts, a
	// heavy job that reads idle.
	ev, err := os.ReadFile(filepath.Join(run, "events.jsonl"))
	require.NoError(t, err)
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(string(ev)), "\n") {
		if !strings.Contains(l, `"failed"`) && !strings.Contains(l, `"active","job":1`) {
			kept = append(kept, l)
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(run, "events.jsonl"), []byte(strings.Join(kept, "\n")+"\n"), 0o644))
	tb, err := os.ReadFile(filepath.Join(run, executor.TelemetryName))
	require.NoError(t, err)
	flat := regexp.MustCompile(`(?m)^(0,\d+),[0-9.]+,`).ReplaceAll(tb, []byte("${1},0.0100,"))
	require.NoError(t, os.WriteFile(filepath.Join(run, executor.TelemetryName), flat, 0o644))
	rep, err = report("--exec-log", gpmLog, "--smi", smi(0), "--emulated", "a100-40gb")
	require.Error(t, err)
	for _, want := range []string{
		"SMACT high, heavy alone      FAIL  median SMACT 0.010",
		"OOM from collocation         FAIL  no attempt failed with an OOM",
		"collocated job seen active   FAIL  big-a attempt 1: placed",
	} {
		require.Contains(t, rep, want)
	}

	// A busy reading on the idle GPU; a third of the seconds without a
	// reading (dropped pressure metrics).
	busy := regexp.MustCompile(`(?m)^(0,\d+),[0-9.]+,`).ReplaceAll(tb, []byte("${1},0.5000,"))
	var gaps []string
	for i, l := range strings.Split(strings.TrimSuffix(string(tb), "\n"), "\n") {
		if !strings.HasPrefix(l, "0,") || i%3 != 0 {
			gaps = append(gaps, l)
		}
	}
	for _, tc := range []struct {
		tel  []byte
		want string
	}{
		{busy, "SMACT ~0 when idle           FAIL  mean SMACT 0.500"},
		{[]byte(strings.Join(gaps, "\n") + "\n"), "pressure in most readings    FAIL"},
	} {
		require.NoError(t, os.WriteFile(filepath.Join(run, executor.TelemetryName), tc.tel, 0o644))
		rep, err = report("--exec-log", gpmLog, "--smi", smi(0), "--emulated", "a100-40gb")
		require.Error(t, err)
		require.Contains(t, rep, tc.want)
	}

	// Energy: power readings missing or above the board limit, a mean
	// power below idle, readings that disagree with the counter.
	last := regexp.MustCompile(`(?m)^(0,.*),[0-9.]+$`)
	for _, tc := range []struct {
		tel        []byte
		idle, want string
	}{
		{last.ReplaceAll(tb, []byte("${1},")), "59.9", `power in telemetry\s+FAIL  telemetry.csv: every power_w cell empty`},
		{last.ReplaceAll(tb, []byte("${1},450.0")), "59.9", `power in telemetry\s+FAIL  \d+ of \d+ readings with power \(want >= 80%\), 450.0-450.0 W`},
		{last.ReplaceAll(tb, []byte("${1},60.0")), "59.9", `telemetry power = counter\s+FAIL  mean of the readings 60.0 W`},
		{tb, "300", `mean power in bounds\s+FAIL  mean [0-9.]+ W per GPU; idle 300.0 W, board limit 400 W`},
	} {
		require.NoError(t, os.WriteFile(info, []byte("idle_w="+tc.idle+"\nboard_w=400\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(run, executor.TelemetryName), tc.tel, 0o644))
		rep, err = report("--exec-log", gpmLog, "--emulated", "a100-40gb")
		require.Error(t, err)
		require.Regexp(t, tc.want, rep)
	}
}

// TestExecWarnsInheritedMPS: an MPS pipe directory inherited from the
// environment, without --mps-pipe-dir, is named in a warning before the
// run starts (here it then stops: no NVML on this machine).
func TestExecWarnsInheritedMPS(t *testing.T) {
	wl := filepath.Join("..", "..", "scripts", "gpu-check", "workloads.yaml")
	tr := filepath.Join("..", "..", "scripts", "gpu-check", "trace.csv")
	for _, tc := range []struct {
		env, flag string
		warn      bool
	}{
		{"/tmp/mps-inherited", "", true},
		{"/tmp/mps-inherited", "/tmp/mps-inherited", false},
		{"", "", false},
	} {
		t.Setenv("CUDA_MPS_PIPE_DIRECTORY", tc.env)
		args := []string{"exec", "--trace", tr, "--workloads", wl, "--out", filepath.Join(t.TempDir(), "run")}
		if tc.flag != "" {
			args = append(args, "--mps-pipe-dir", tc.flag)
		}
		var so, se bytes.Buffer
		run(args, &so, &se)
		msg := "CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-inherited is set in this environment but --mps-pipe-dir is not"
		if tc.warn {
			require.Contains(t, se.String(), msg)
		} else {
			require.NotContains(t, se.String(), "CUDA_MPS_PIPE_DIRECTORY")
		}
	}
}
