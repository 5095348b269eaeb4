package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies/exclusive"
	"github.com/aegis-sched/aegis/traces"
)

// fakeGPUs is a steady telemetry source of n idle 40 GiB GPUs.
func fakeGPUs(n int) *gpu.Fake {
	var devs []gpu.Device
	var samples []gpu.Sample
	for i := range n {
		devs = append(devs, gpu.Device{Index: i, UUID: "GPU-fake-" + string(rune('a'+i)), Name: "fake", TotalMiB: 40960})
		samples = append(samples, gpu.Sample{GPU: i, TotalMiB: 40960})
	}
	return gpu.NewFake(devs, gpu.FakeStep{Samples: samples})
}

// Catalog workloads used as names for test commands.
const (
	wOK      = "mnist_bs32_1gpu"
	wOOM     = "resnet18_cifar100_bs128_20e_1gpu"
	wOOMCode = "mobilenet_cifar100_bs128_20e_1gpu"
	wFail    = "resnet18_cifar100_bs64_20e_1gpu"
	wStub    = "resnet18_cifar100_bs32_20e_1gpu"
)

func workloads(t *testing.T, dir string) map[string]*executor.Workload {
	t.Helper()
	y := `workloads:
  - id: ` + wOK + `
    command: [sh, -c, 'sleep 1000 & echo "gpus=$CUDA_VISIBLE_DEVICES x=$X pwd=$(pwd) mps=$CUDA_MPS_PIPE_DIRECTORY"']
    env: {X: "42"}
    dir: ` + dir + `
  - id: ` + wOOM + `
    command: [sh, -c, 'echo "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2; exit 1']
  - id: ` + wOOMCode + `
    command: [sh, -c, 'exit 3']
    oom_exit_code: 3
  - id: ` + wFail + `
    command: [sh, -c, 'echo "ValueError: bad" >&2; exit 2']
  - id: ` + wStub + `
    command: [sh, -c, 'trap "" TERM; sleep 1000 & sleep 1000 & wait']
`
	ws, err := executor.ParseWorkloads([]byte(y), "test.yaml")
	require.NoError(t, err)
	return ws
}

func realConfig(t *testing.T, jobs ...string) executor.Config {
	dir := t.TempDir()
	killLeftovers(t, dir)
	var specs []traces.Job
	for i, w := range jobs {
		specs = append(specs, traces.Job{ID: w + "-" + string(rune('0'+i)), Workload: w, GPUs: 1})
	}
	return executor.Config{Dir: dir, Jobs: specs, Catalog: models.A100(), Workloads: workloads(t, dir),
		Source: fakeGPUs(2), Speedup: 1, Self: self(t), Grace: 300 * time.Millisecond, MPSPipeDir: "/tmp/mps-pipe"}
}

// Real commands: exit 0 finishes; OOM messages of the frameworks and the
// workload's oom_exit_code are OOM; anything else is a non-OOM failure. The
// attempt sees its GPUs' UUIDs, the workload's env and dir, and MPS.
func TestRealCommandsAndClassification(t *testing.T) {
	cfg := realConfig(t, wOK, wOOM, wOOMCode, wFail)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	_, err = executor.Execute(context.Background(), x, &exclusive.Policy{})
	require.NoError(t, err)
	got := map[int]string{}
	for _, e := range readEvents(t, cfg.Dir) {
		job := int(e["job"].(float64))
		switch e["event"] {
		case "finished":
			got[job] = "finished"
		case "failed":
			got[job] = "failed:" + e["reason"].(string)
		}
	}
	require.Equal(t, map[int]string{0: "finished", 1: "failed:oom", 2: "failed:oom", 3: "failed:other"}, got)
	out, err := os.ReadFile(filepath.Join(cfg.Dir, "logs", "job0.1.out"))
	require.NoError(t, err)
	require.Equal(t, "gpus=GPU-fake-a x=42 pwd="+cfg.Dir+" mps=/tmp/mps-pipe\n", string(out))
	// The background sleep of job 0 ended with the job: no orphans.
	j, recs, err := executor.OpenJournal(cfg.Dir + "/journal.jsonl")
	require.NoError(t, err)
	j.Close()
	for _, r := range recs {
		if r.Type == "started" {
			require.Empty(t, liveMembers(r.PID), "job %d's process group", r.Job)
		}
	}
	errLog, err := os.ReadFile(filepath.Join(cfg.Dir, "logs", "job1.1.err"))
	require.NoError(t, err)
	require.Contains(t, string(errLog), "CUDA out of memory")
}

// Cancelling a run (SIGINT/SIGTERM in aegis exec) terminates every
// attempt's process group, kills what ignores SIGTERM after the grace
// period, and leaves no process behind; the attempts are journaled as
// interrupted and the results are written.
func TestShutdownLeavesNoOrphans(t *testing.T) {
	cfg := realConfig(t, wStub, wStub)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !strings.Contains(readFile(cfg.Dir+"/journal.jsonl"), `"job":1,"attempt":1,"gpus":[1],"pid"`) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // the shells have started their sleeps
		cancel()
	}()
	_, err = executor.Execute(ctx, x, &exclusive.Policy{})
	require.ErrorIs(t, err, executor.ErrInterrupted)
	j, recs, err := executor.OpenJournal(cfg.Dir + "/journal.jsonl")
	require.NoError(t, err)
	j.Close()
	var pids []int
	interrupted := 0
	for _, r := range recs {
		switch r.Type {
		case "started":
			pids = append(pids, r.PID)
		case "interrupted":
			interrupted++
		}
	}
	require.Len(t, pids, 2)
	require.Equal(t, 2, interrupted)
	for _, pid := range pids {
		require.Empty(t, liveMembers(pid), "process group %d", pid)
	}
	_, err = os.Stat(cfg.Dir + "/jobs.csv")
	require.NoError(t, err)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// liveMembers returns the live (not zombie) processes of process group pgid.
func liveMembers(pgid int) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, e.Name()+" "+s)
		}
	}
	return out
}
