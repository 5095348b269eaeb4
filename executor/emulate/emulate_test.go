package emulate_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/emulate"
	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// helperEnv makes the test binary a job's process: `aegis fake-train`
// once it reads a line on stdin (before that it catches no signal).
const helperEnv = "AEGIS_EMULATE_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		fmt.Println("started")
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(executor.FakeTrain("w", os.Stderr))
	}
	os.Exit(m.Run())
}

// clock is a run clock the test sets: run time now, and wall time at
// 1/speedup of run time after start.
type clock struct {
	start   time.Time
	speedup float64
	now     time.Duration
}

func (c *clock) RunTime(time.Time) time.Duration { return c.now }
func (c *clock) WallTime(d time.Duration) time.Time {
	return c.start.Add(time.Duration(float64(d) / c.speedup))
}

// job is a job's process: the test binary as fake-train.
type job struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stderr bytes.Buffer
	done   chan error
}

// startJob starts a job's process; it catches the emulator's signals only
// after catch.
func startJob(t *testing.T) *job {
	t.Helper()
	j := &job{done: make(chan error, 1)}
	r, w, err := os.Pipe()
	require.NoError(t, err)
	j.stdin = w
	j.cmd = exec.Command(os.Args[0])
	j.cmd.Env = append(os.Environ(), helperEnv+"=1")
	j.cmd.Stdin, j.cmd.Stderr = r, &j.stderr
	out, err := j.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, j.cmd.Start())
	r.Close()
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "started\n", line)
	go func() { j.done <- j.cmd.Wait() }()
	t.Cleanup(func() {
		j.cmd.Process.Kill()
		w.Close()
	})
	return j
}

// catch lets the process install its signal handlers.
func (j *job) catch(t *testing.T) {
	t.Helper()
	_, err := j.stdin.WriteString("go\n")
	require.NoError(t, err)
}

// exitCode waits for the process to end, sampling e (which signals ended
// jobs again at every step) meanwhile; -1 if it runs on for 10 s.
func (j *job) exitCode(t *testing.T, e *emulate.Emulator) int {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(10 * time.Second)
	for {
		select {
		case err := <-j.done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode()
			}
			require.NoError(t, err)
			return 0
		case <-tick.C:
			_, err := e.Sample(context.Background())
			require.NoError(t, err)
		case <-limit:
			return -1
		}
	}
}

func newEmulator(t *testing.T, server string, c *clock) *emulate.Emulator {
	t.Helper()
	srv, err := models.ParseServer(server)
	require.NoError(t, err)
	inter, err := models.InterferenceFor(srv.Type)
	require.NoError(t, err)
	e, err := emulate.New(srv, models.A100(), inter, sim.DefaultTruth(), 1, nil)
	require.NoError(t, err)
	if c != nil {
		e.Attach(c)
	}
	return e
}

// The emulated server lists its type's GPUs, one device each, with the
// type's memory.
func TestDevices(t *testing.T) {
	tests := []struct {
		server string
		n      int
		uuid   string
		mib    float64
	}{
		{"a100-40gb:1", 1, "EMU-a100-40gb-0", 40960},
		{"a100-40gb:3", 3, "EMU-a100-40gb-2", 40960},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			e := newEmulator(t, tt.server, nil)
			ds, err := e.Devices()
			require.NoError(t, err)
			require.Len(t, ds, tt.n)
			last := ds[len(ds)-1]
			require.Equal(t, gpu.Device{Index: tt.n - 1, UUID: tt.uuid, Name: "emulated a100-40gb", TotalMiB: tt.mib}, last)
			require.Equal(t, "emulated", e.Name())
		})
	}
}

// A sample needs the executor's clock, and a live context.
func TestSampleErrors(t *testing.T) {
	_, err := newEmulator(t, "a100-40gb:1", nil).Sample(context.Background())
	require.EqualError(t, err, "emulator: not attached to an executor")
	_, err = newEmulator(t, "a100-40gb:1", nil).Backlog(context.Background(), 0)
	require.EqualError(t, err, "emulator: not attached to an executor")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = newEmulator(t, "a100-40gb:1", &clock{start: time.Now(), speedup: 1}).Sample(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// The model runs on the executor's clock: a sample is the model's reading
// of the clock's current whole second, stamped with that second's wall
// time at the run's speedup; a job the executor placed (Mirror) holds
// memory and lists its process once the model says it started, and the
// idle GPU reads zero.
func TestSampleFollowsClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		speedup float64
		now     time.Duration
		busy    bool
	}{
		{"idle, real time", 1, 3500 * time.Millisecond, false},
		{"idle, 100x", 100, 3500 * time.Millisecond, false},
		{"placed, started, 100x", 100, 90 * time.Second, true},
		{"placed, started, 2000x", 2000, 90 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{start: start, speedup: tt.speedup}
			e := newEmulator(t, "a100-40gb:2", c)
			var j *job
			if tt.busy {
				j = startJob(t)
				e.Submit(traces.Job{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 3600})
				e.Placed(0, []int{1}, j.cmd.Process.Pid, 0)
			}
			c.now = tt.now
			ss, err := e.Sample(context.Background())
			require.NoError(t, err)
			require.Len(t, ss, 2)
			sec := tt.now.Truncate(time.Second)
			for g, s := range ss {
				require.Equal(t, g, s.GPU)
				require.True(t, s.Pressure, "an A100 has pressure signals")
				require.Equal(t, 40960.0, s.TotalMiB)
				require.True(t, start.Add(time.Duration(float64(sec)/tt.speedup)).Equal(s.At), "GPU %d read at %v", g, s.At)
			}
			require.Zero(t, ss[0].UsedMiB, "GPU 0 stays idle")
			require.Zero(t, ss[0].SMACT)
			require.Empty(t, ss[0].Procs)
			pm := models.A100Power()
			require.True(t, ss[0].HasPower && ss[1].HasPower, "an A100 has a power model")
			require.Equal(t, pm.IdleW, ss[0].PowerW, "an idle GPU draws the model's idle power")
			if !tt.busy {
				require.Zero(t, ss[1].UsedMiB)
				return
			}
			require.Positive(t, ss[1].UsedMiB)
			require.Positive(t, ss[1].SMACT)
			require.Len(t, ss[1].Procs, 1)
			require.Equal(t, j.cmd.Process.Pid, ss[1].Procs[0].PID)
			require.Equal(t, ss[1].UsedMiB, ss[1].Procs[0].UsedMiB)
			require.Greater(t, ss[1].PowerW, pm.IdleW+pm.BusyW, "a busy GPU draws the busy power and its memory's")
			require.LessOrEqual(t, ss[1].PowerW, pm.BoardW)
		})
	}
}

// A GPU type without a power model reads no power, and says why.
func TestSampleNoPower(t *testing.T) {
	srv, err := models.ParseServer("h200-141gb:1")
	require.NoError(t, err)
	inter, err := models.InterferenceFor(srv.Type)
	require.NoError(t, err)
	cat, err := models.CatalogFor(srv.Type)
	require.NoError(t, err)
	e, err := emulate.New(srv, cat, inter, sim.DefaultTruth(), 1, nil)
	require.NoError(t, err)
	e.Attach(&clock{start: time.Now(), speedup: 1})
	ss, err := e.Sample(context.Background())
	require.NoError(t, err)
	require.False(t, ss[0].HasPower)
	require.Contains(t, ss[0].NoPower, "emulated: GPU type h200-141gb: no measured power model")
}

// The emulator ends a job's process when the model says: SIGUSR1 when its
// work is done (exit 0), SIGUSR2 when its GPU's memory overflowed (exit 1,
// a PyTorch-style OOM message). A process that does not catch the signal
// yet (a Go program drops it) is signalled again at every step until it
// is gone.
func TestEndsProcesses(t *testing.T) {
	const big = "llama3_width_8layer_wiki_bs1_1gpu" // 28 GiB at its peak: two overflow an A100-40GB
	tests := []struct {
		name      string
		workloads []string
		on        []int // GPU of each job
		soloS     float64
		exits     []int // each job's exit code
	}{
		{"done", []string{"mnist_bs32_1gpu"}, []int{0}, 40, []int{0}},
		{"two done, own GPUs", []string{big, big}, []int{0, 1}, 40, []int{0, 0}},
		{"the second OOM beside the first, the first done", []string{big, big}, []int{0, 0}, 400, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{start: time.Now(), speedup: 1}
			e := newEmulator(t, "a100-40gb:2", c)
			var jobs []*job
			for i, w := range tt.workloads {
				j := startJob(t)
				jobs = append(jobs, j)
				e.Submit(traces.Job{ID: fmt.Sprint(i), Workload: w, GPUs: 1, SoloS: tt.soloS})
				c.now = time.Duration(i) * time.Minute
				e.Placed(policies.JobID(i), []int{tt.on[i]}, j.cmd.Process.Pid, c.now)
			}
			c.now = 24 * time.Hour
			_, err := e.Sample(context.Background())
			require.NoError(t, err)
			for i, j := range jobs {
				select {
				case err := <-j.done:
					t.Fatalf("job %d ended before it caught a signal: %v", i, err)
				default:
				}
				j.catch(t)
			}
			for i, j := range jobs {
				require.Equal(t, tt.exits[i], j.exitCode(t, e), "job %d: %s", i, j.stderr.String())
				if tt.exits[i] == 1 {
					require.Contains(t, j.stderr.String(), "torch.OutOfMemoryError: CUDA out of memory")
				}
			}
		})
	}
}

// Backlog gives the model's readings of the whole seconds after the last
// poll's and before the current one, GPU by GPU and oldest first, each
// stamped with its second's wall time and listing the processes that held
// memory then; nothing when no second was skipped.
func TestBacklog(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		after time.Duration
		now   time.Duration
		secs  []int64 // the seconds read, per GPU
	}{
		{"no second skipped", 89 * time.Second, 90500 * time.Millisecond, nil},
		{"same second", 90 * time.Second, 90500 * time.Millisecond, nil},
		{"three skipped", 86*time.Second + 300*time.Millisecond, 90500 * time.Millisecond, []int64{87, 88, 89}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{start: start, speedup: 100}
			e := newEmulator(t, "a100-40gb:2", c)
			j := startJob(t)
			e.Submit(traces.Job{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 3600})
			e.Placed(0, []int{1}, j.cmd.Process.Pid, 0)
			c.now = tt.now
			ss, err := e.Backlog(context.Background(), tt.after)
			require.NoError(t, err)
			require.Len(t, ss, 2*len(tt.secs))
			for k, s := range ss {
				g, sec := k/len(tt.secs), tt.secs[k%len(tt.secs)]
				require.Equal(t, g, s.GPU)
				require.True(t, c.WallTime(time.Duration(sec)*time.Second).Equal(s.At), "reading %d at %v", k, s.At)
				if g == 0 {
					require.Zero(t, s.UsedMiB)
					require.Empty(t, s.Procs)
					continue
				}
				require.Positive(t, s.UsedMiB)
				require.Equal(t, []gpu.Proc{{PID: j.cmd.Process.Pid, UsedMiB: s.UsedMiB}}, s.Procs)
			}
		})
	}
}

// A backlog reading lists the processes of the attempts on the GPU at its
// second, those that have ended since included: a job placed beside
// another that shows activity and overflows the GPU's memory between two
// polls is seen active in the readings of its seconds on the GPU, not
// only in the current reading (where it is gone).
func TestBacklogListsEndedAttempts(t *testing.T) {
	const big = "llama3_width_8layer_wiki_bs1_1gpu" // two overflow an A100-40GB
	c := &clock{start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), speedup: 100}
	e := newEmulator(t, "a100-40gb:1", c)
	var pids []int
	for i := range 2 {
		j := startJob(t)
		pids = append(pids, j.cmd.Process.Pid)
		e.Submit(traces.Job{ID: fmt.Sprint(i), Workload: big, GPUs: 1, SoloS: 3600})
		c.now = time.Duration(i) * time.Minute
		e.Placed(policies.JobID(i), []int{0}, pids[i], c.now)
	}
	c.now = 30 * time.Minute
	past, err := e.Backlog(context.Background(), time.Minute)
	require.NoError(t, err)
	seen := map[int]int{} // pid -> readings listing it
	for _, s := range past {
		var sum float64
		for _, p := range s.Procs {
			seen[p.PID]++
			sum += p.UsedMiB
		}
		require.InDelta(t, s.UsedMiB, sum, 1e-6, "the processes hold the GPU's memory at %v", s.At)
	}
	require.Positive(t, seen[pids[0]])
	require.Positive(t, seen[pids[1]], "the attempt that overflowed the GPU, in the seconds it held memory")
	ss, err := e.Sample(context.Background())
	require.NoError(t, err)
	require.Equal(t, []int{pids[0]}, procPIDs(ss[0].Procs), "now only the first job is on the GPU")
}

func procPIDs(ps []gpu.Proc) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.PID)
	}
	return out
}

// An attempt whose process ended otherwise than the model said (the
// executor interrupted it at its shutdown, or it was killed) leaves the
// model when the executor says it ended (Ended): its GPU reads idle at
// once. And the job's next attempt is modelled and ended like any other,
// also when the model had finished the attempt the process did not (a
// resumed run's terminating attempt): the model follows the executor (a
// resume under the emulator hung, its next attempt never signalled).
func TestEndedAttemptLeavesTheModel(t *testing.T) {
	tests := []struct {
		name  string
		ended time.Duration // when the first attempt's process ends
	}{
		{"interrupted while running", 10 * time.Second},
		{"finished in the model, interrupted", 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{start: time.Now(), speedup: 1}
			e := newEmulator(t, "a100-40gb:2", c)
			e.Submit(traces.Job{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 40})
			first := startJob(t)
			e.Placed(0, []int{0}, first.cmd.Process.Pid, 0)
			c.now = tt.ended
			_, err := e.Sample(context.Background())
			require.NoError(t, err)
			require.NoError(t, first.cmd.Process.Kill()) // it ends as it was, uncaught signals or not
			<-first.done
			e.Ended(0, c.now)
			c.now += time.Second
			ss, err := e.Sample(context.Background())
			require.NoError(t, err)
			require.Zero(t, ss[0].UsedMiB, "the ended attempt's memory left its GPU")
			require.Empty(t, ss[0].Procs)
			second := startJob(t)
			e.Placed(0, []int{1}, second.cmd.Process.Pid, c.now)
			c.now += time.Hour
			second.catch(t)
			require.Equal(t, 0, second.exitCode(t, e), "the next attempt is ended when the model says it is done: %s", second.stderr.String())
		})
	}
}
