package executor

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/traces"
)

// bare is an executor on one 1000 MiB GPU read from src, started ago (run
// time) before now, that journals nothing, with jobs a (submitted at 0)
// and b (at 10 s) known.
func bare(t *testing.T, src gpu.Source, ago time.Duration) *Executor {
	start := time.Now().Add(-ago)
	x := &Executor{cfg: Config{Dir: t.TempDir(), Source: src, Speedup: 1, Log: io.Discard, Catalog: models.A100()}, start: start,
		devIndex: map[int]int{0: 0}, tel: make([]ring, 1), polled: -1, replaying: true, why: map[policies.JobID]deferral{}, stallSaid: -1}
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

// A job whose OOM retry was interrupted (a SIGTERM, then a resume) is back
// in the recovery queue with its ladder state, and AEGIS places it again:
// it was queued as a fresh job, which the recovery walk skips and the main
// queue's walk leaves to the recovery queue, so it stayed pending forever
// ("policy aegis left 1-2 job(s) unfinished").
func TestInterruptedRetryIsRecovered(t *testing.T) {
	x := bare(t, &pastSource{Fake: gpu.NewFake(nil)}, time.Minute)
	x.view.GPUs = append(x.view.GPUs, policies.GPU{Index: 1, CapacityMiB: 40960})
	x.view.GPUs[0].CapacityMiB = 40960
	x.tel = make([]ring, 2)
	x.devs = append(x.devs, gpu.Device{Index: 1, TotalMiB: 40960})
	x.devIndex[1] = 1
	launches := map[policies.JobID]*attempt{}
	sec := func(n int) int64 { return int64(time.Duration(n) * time.Second) }
	for _, r := range []Record{
		{Type: "arrived", T: 0, Job: 0},
		{Type: "launch", T: 0, Job: 0, Attempt: 1, GPUs: []int{0}},
		{Type: "started", T: 0, Job: 0, Attempt: 1, GPUs: []int{0}, PID: 1, Start: 1},
		{Type: "arrived", T: sec(10), Job: 1},
		{Type: "launch", T: sec(10), Job: 1, Attempt: 1, GPUs: []int{0}},
		{Type: "started", T: sec(10), Job: 1, Attempt: 1, GPUs: []int{0}, PID: 2, Start: 1, Shared: true},
		{Type: "failed", T: sec(20), Job: 1, Attempt: 1, Failure: "oom", GPU: 0, Shared: true},
		{Type: "launch", T: sec(30), Job: 1, Attempt: 2, GPUs: []int{1}},
		{Type: "started", T: sec(30), Job: 1, Attempt: 2, GPUs: []int{1}, PID: 3, Start: 1},
		{Type: "terminate", T: sec(40), Job: 1, Attempt: 2},
		{Type: "interrupted", T: sec(41), Job: 1, Attempt: 2, Reason: "attempt 2 interrupted by the executor's shutdown (killed by terminated)"},
	} {
		require.NoError(t, x.replayRecord(r, launches))
	}
	j := x.view.Jobs[1]
	require.Equal(t, policies.Pending, j.State)
	require.Equal(t, 1, j.OOMs, "its ladder state")
	require.Equal(t, policies.OOM, j.LastFailure)
	require.Equal(t, []policies.JobID{1}, x.view.Failed, "back in the recovery queue")
	last := x.out[len(x.out)-1]
	require.Equal(t, policies.PlaceFailed, last.Kind, "the policy hears of it")
	require.Equal(t, policies.JobID(1), last.Job)

	p, err := aegis.New(nil)
	require.NoError(t, err)
	x.view.Now = 50 * time.Second
	var placed []string
	for _, a := range p.Schedule(x.View()) {
		if a.Kind == policies.Place {
			placed = append(placed, fmt.Sprintf("job %d on %v", a.Job, a.GPUs))
		}
	}
	require.Equal(t, []string{"job 1 on [1]"}, placed, "AEGIS recovers it on the idle GPU")
}

// While the run goes on, jobs that wait with no attempt running for
// stallAfter are named once, with why each waits: the policy's last
// deferral, or that it neither placed nor deferred the job (the interrupted
// OOM retry above waited so, unnamed, until the run ended).
func TestWatchSaysWhyJobsWait(t *testing.T) {
	x := bare(t, &pastSource{Fake: gpu.NewFake(nil)}, time.Minute)
	var log strings.Builder
	x.cfg.Log = &log
	x.waiting = nil
	x.arrive(0, 0)
	x.arrive(1, 0)
	x.lastChange = 10 * time.Second
	require.NoError(t, x.Apply(policies.Action{Kind: policies.Defer, Job: 0, GPU: 0, Reason: "memory"}))
	x.watch(stallAfter)
	require.Empty(t, log.String(), "not yet")
	x.watch(stallAfter + 10*time.Second)
	require.Contains(t, log.String(), "no attempt has run since t=10s while 2 job(s) wait: job a (mnist_bs32_1gpu, 1 GPUs): deferred by the policy on GPU 0 at t=")
	require.Contains(t, log.String(), ": memory; job b (mnist_bs32_1gpu, 1 GPUs): the policy neither placed nor deferred it\n")
	n := len(log.String())
	x.watch(stallAfter + time.Hour)
	require.Len(t, log.String(), n, "once per stretch")
}

// An OOM of an attempt that shared its GPU is a shared failure even when
// the executor saw the job beside it end first (the emulator ends both in
// one step): it was taken for an OOM while running exclusively and the
// job stopped. (One make exec-stress run under AEGIS ended with one job
// stopped, 59 of 60 finished; its journal was not kept, and this race is
// the one way found to stop a job there.)
func TestOOMAfterNeighbourEndedIsShared(t *testing.T) {
	x := bare(t, &pastSource{Fake: gpu.NewFake(nil)}, time.Minute)
	x.waiting = nil
	x.arrive(0, 0)
	x.arrive(1, 0)
	a := &attempt{job: 0, n: 1, gpus: []int{0}, exclusive: true}
	b := &attempt{job: 1, n: 1, gpus: []int{0}}
	x.started(a, time.Second)
	x.started(b, 2*time.Second)
	x.finished(b, 10*time.Second)
	var log strings.Builder
	x.cfg.Log = &log
	x.last = time.Hour + 1234567*time.Microsecond // the run's clock, in the journal's microseconds
	require.NoError(t, x.fail(a, policies.OOM, "exit code 1"))
	require.True(t, x.view.Jobs[0].FailedShared)
	require.Equal(t, "t=1h0m1.235s job a attempt 1 failed (oom): exit code 1; log \n", log.String(), "the log's times to the millisecond")
}
