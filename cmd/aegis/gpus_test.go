package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/gpu"
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
// machine runs, at least syntactically valid, and runs its report on a
// simulated run (same events.jsonl and jobs.csv as aegis exec writes).
func TestGPUCheckScripts(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := exec.LookPath("bash"); err == nil {
		out, err := exec.Command("bash", "-n", filepath.Join(root, "scripts", "gpu-check.sh")).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3: the Python scripts are not checked")
	}
	for _, f := range []string{"train.py", "report.py"} {
		p := filepath.Join(root, "scripts", "gpu-check", f)
		out, err := exec.Command("python3", "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", p).CombinedOutput()
		require.NoError(t, err, "%s: %s", f, out)
	}

	dir := t.TempDir()
	var so, se bytes.Buffer
	require.Equal(t, 0, run([]string{"simulate", "--trace", "demo", "--policy", "aegis", "--server", "a100-40gb:3", "--out", dir}, &so, &se), se.String())
	samples := filepath.Join(dir, "samples.txt")
	require.NoError(t, os.WriteFile(samples, []byte("telemetry auto: using nvml+gpm: GPM on every GPU\n\n"+
		"time          gpu   used MiB\n10:00:01.000    0        512     143771      3       yes  0.100  0.100  0.100\n"), 0o644))
	out, err := exec.Command("python3", filepath.Join(root, "scripts", "gpu-check", "report.py"), "--run", dir, "--samples", samples).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "1 readings, 1 with pressure signals")
	require.Regexp(t, `job \d+: failed attempt=1 reason="oom"`, string(out))
	require.Regexp(t, `gpu-check: PASS: 60 jobs done, \d+ OOM\(s\) classified and recovered`, string(out))

	// A run without an OOM fails the check.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(`{"t":0,"event":"arrived","job":0}`+"\n"), 0o644))
	out, err = exec.Command("python3", filepath.Join(root, "scripts", "gpu-check", "report.py"), "--run", dir, "--samples", samples).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "no failure was classified as OOM")
}

// TestGPUCheckInputs runs make gpu-check's workloads file, trace and policy
// settings through the real parsers and, on emulated GPUs, through aegis
// exec, and its report on that run: what the GPU machine will run is at
// least accepted here. (An emulated H200 holds both big jobs, so no OOM.)
func TestGPUCheckInputs(t *testing.T) {
	dir := filepath.Join("..", "..", "scripts", "gpu-check")
	raw, err := os.ReadFile(filepath.Join(dir, "workloads.yaml"))
	require.NoError(t, err)
	ws, err := executor.ParseWorkloads(bytes.ReplaceAll(raw, []byte("@TRAIN@"), []byte("/repo/scripts/gpu-check/train.py")), "workloads.yaml")
	require.NoError(t, err)
	require.Len(t, ws, 3)
	require.Equal(t, []string{"python3", "/repo/scripts/gpu-check/train.py"}, ws["gpt2_xl_wiki_bs2_1gpu"].Command[:2])

	t.Setenv(selfEnv, "1")
	out := filepath.Join(t.TempDir(), "run")
	killGroups(t, out)
	var so, se bytes.Buffer
	// The settings scripts/gpu-check.sh passes.
	code := run([]string{"exec", "--emulate", "h200-141gb:1", "--trace", filepath.Join(dir, "trace.csv"), "--policy", "aegis",
		"--set", "hold=10s", "--set", "window=5", "--speedup", "500", "--out", out}, &so, &se)
	require.Equal(t, 0, code, se.String())
	require.Contains(t, so.String(), "4 finished, 0 stopped, 4 total")

	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3: report.py not run")
	}
	samples := filepath.Join(t.TempDir(), "samples.txt")
	require.NoError(t, os.WriteFile(samples, nil, 0o644))
	rep, err := exec.Command("python3", filepath.Join(dir, "report.py"), "--run", out, "--samples", samples).CombinedOutput()
	require.Error(t, err, "no OOM and no samples: the check fails")
	for _, want := range []string{"job 1: started attempt=1 gpus=[0]", "big-b", "no NVML sample was read", "no failure was classified as OOM"} {
		require.Contains(t, string(rep), want)
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
