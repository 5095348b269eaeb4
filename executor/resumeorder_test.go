package executor

import (
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// bare is an executor on one 1000 MiB GPU read from src, started ago (run
// time) before now, that journals nothing, with jobs a (submitted at 0)
// and b (at 10 s) known.
func bare(t *testing.T, src gpu.Source, ago time.Duration) *Executor {
	start := time.Now().Add(-ago)
	x := &Executor{cfg: Config{Dir: t.TempDir(), Source: src, Speedup: 1, Log: io.Discard, Catalog: models.A100()}, start: start,
		devIndex: map[int]int{0: 0}, tel: make([]ring, 1), polled: -1, replaying: true}
	x.books = policies.NewBooks(&x.view)
	x.view.Pressure = true
	x.view.Telemetry = telemetry{x}
	x.view.GPUs = []policies.GPU{{CapacityMiB: 1000}}
	x.devs = []gpu.Device{{Index: 0, TotalMiB: 1000}}
	x.add(traces.Job{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 60})
	x.add(traces.Job{ID: "b", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 60, Submit: 10 * time.Second})
	return x
}

// A resumed run's adopted attempts end in its polls, stamped when the
// executor finds them ended: the arrivals and wake-ups due at the same
// wake-up come after that, never before (they were stamped at the
// wake-up's time, after 94c1f00 took the poll first: "loop: backend went
// back in time: Wakeup at T after T+x" on 6 of 6 resumes under AEGIS).
func TestDueAfterAdoptedEndInOrder(t *testing.T) {
	x := bare(t, &pastSource{Fake: gpu.NewFake(nil)}, time.Minute)
	x.waiting = x.waiting[1:] // a runs, adopted: its process ended while no executor watched
	x.arrive(0, 0)
	done := exec.Command("true")
	require.NoError(t, done.Run())
	a := &attempt{job: 0, n: 1, gpus: []int{0}, pid: done.Process.Pid, base: []float64{0}}
	a.status, a.errLog = filepath.Join(x.cfg.Dir, "job0.1.exit"), filepath.Join(x.cfg.Dir, "job0.1.err")
	require.NoError(t, writeStatus(a.status, Status{}))
	x.started(a, 0)
	x.wakes = []time.Duration{20 * time.Second}
	x.out = nil
	now := 30 * time.Second // the wake-up's time: the clock is a minute
	x.view.Now = now
	require.NoError(t, x.due(t.Context(), now))
	var got []string
	for i, e := range x.out {
		got = append(got, e.Kind.String())
		if i > 0 {
			require.GreaterOrEqual(t, e.At(), x.out[i-1].At(), "%v after %v", e, x.out[i-1])
		}
	}
	require.Equal(t, []string{"JobFinished", "JobArrived", "Wakeup"}, got)
	require.GreaterOrEqual(t, x.out[0].At(), time.Minute, "the end is stamped when it was found")
}

// A journal an older executor wrote with a record earlier than the one
// before it is replayed in order (each record no earlier than the last).
func TestReplayKeepsOrder(t *testing.T) {
	x := bare(t, &pastSource{Fake: gpu.NewFake(nil)}, time.Minute)
	launches := map[policies.JobID]*attempt{}
	for _, r := range []Record{
		{Type: "arrived", T: int64(time.Second), Job: 0},
		{Type: "launch", T: int64(time.Second), Job: 0, Attempt: 1, GPUs: []int{0}},
		{Type: "started", T: int64(time.Second), Job: 0, Attempt: 1, GPUs: []int{0}, PID: 1, Start: 1},
		{Type: "active", T: int64(15 * time.Second), Job: 0, Attempt: 1},
		{Type: "arrived", T: int64(12 * time.Second), Job: 1}, // taken before the poll's activity
	} {
		require.NoError(t, x.replayRecord(r, launches))
	}
	for i := 1; i < len(x.out); i++ {
		require.GreaterOrEqual(t, x.out[i].At(), x.out[i-1].At(), "%v after %v", x.out[i], x.out[i-1])
	}
}
