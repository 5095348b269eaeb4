package executor_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/policies/exclusive"
)

// killRounds is how many times the kill-and-resume test SIGKILLs a real
// executor process.
const killRounds = 20

// A real executor process (emulated GPUs, real attempt processes) is
// SIGKILLed at random points and resumed, killRounds times; then it runs to
// the end. Every job ends exactly once: one finished or stopped record in
// the journal, and for each finished job exactly one attempt that exited
// successfully (no job runs twice to completion). No attempt process is
// left running.
func TestKillAndResume(t *testing.T) {
	selfCmd := self(t)
	rng := rand.New(rand.NewPCG(10, 1))
	var dirs []string
	newDir := func() string {
		d := filepath.Join(t.TempDir(), "run")
		killLeftovers(t, d)
		dirs = append(dirs, d)
		return d
	}
	start := func(dir string) *exec.Cmd {
		cmd := exec.Command(selfCmd[0], "emulated-run", dir)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		return cmd
	}
	dir := newDir()
	for kills := 0; kills < killRounds; {
		cmd := start(dir)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done: // the run ended before the kill: a new one
			require.NoError(t, err)
			dir = newDir()
		case <-time.After(time.Duration(20+rng.IntN(180)) * time.Millisecond):
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			<-done
			kills++
		}
	}
	require.NoError(t, start(dir).Wait(), "the last run completes")
	for _, d := range dirs {
		checkExactlyOnce(t, d)
		if os.Getenv("DBG") != "" {
			b, _ := os.ReadFile(filepath.Join(d, "journal.jsonl"))
			t.Logf("%s", b)
		}
	}
	t.Logf("%d kills over %d runs", killRounds, len(dirs))
}

func checkExactlyOnce(t *testing.T, dir string) {
	t.Helper()
	jobs, err := executor.Audit(dir)
	require.NoError(t, err, dir)
	require.Equal(t, len(small()), jobs, dir)
}

// On resume, an attempt whose process is gone without an exit status fails
// with a reason saying so; a live process with the recorded PID but another
// start time (a reused PID) is not adopted; a launch that recorded no
// process is a failed placement, the job stays pending and runs again.
func TestResumeVanishedAndReusedPID(t *testing.T) {
	cfg := realConfig(t, wOK, wOK, wOK)
	start := time.Now()
	recs := []executor.Record{{Type: "run", Run: &executor.Run{Start: start}}}
	for i, sp := range cfg.Jobs {
		recs = append(recs, executor.Record{Type: "job", Job: i, Spec: &executor.Spec{Name: sp.ID, Workload: sp.Workload, GPUs: 1}})
		recs = append(recs, executor.Record{Type: "arrived", Job: i})
	}
	recs = append(recs,
		executor.Record{Type: "launch", Job: 0, Attempt: 1, GPUs: []int{0}},
		executor.Record{Type: "started", Job: 0, Attempt: 1, GPUs: []int{0}, PID: 999999999, Start: 1},
		// This test process is alive, but started at another time.
		executor.Record{Type: "launch", Job: 1, Attempt: 1, GPUs: []int{1}},
		executor.Record{Type: "started", Job: 1, Attempt: 1, GPUs: []int{1}, PID: os.Getpid(), Start: 1},
		executor.Record{Type: "launch", Job: 2, Attempt: 1, GPUs: []int{0}})
	j, err := executor.CreateJournal(filepath.Join(cfg.Dir, "journal.jsonl"), recs...)
	require.NoError(t, err)
	require.NoError(t, j.Close())
	j, recs, err = executor.OpenJournal(filepath.Join(cfg.Dir, "journal.jsonl"))
	require.NoError(t, err)
	x, err := executor.Resume(cfg, j, recs)
	require.NoError(t, err)
	_, err = executor.Execute(t.Context(), x, &exclusive.Policy{})
	require.NoError(t, err)
	_, recs, err = executor.OpenJournal(filepath.Join(cfg.Dir, "journal.jsonl"))
	require.NoError(t, err)
	var got []string
	for _, r := range recs[len(recs)-8:] {
		got = append(got, fmt.Sprintf("%s %d %s", r.Type, r.Job, r.Reason))
	}
	require.Contains(t, got, "failed 0 the attempt's process 999999999 vanished while the executor was down and recorded no exit status")
	require.Contains(t, got, fmt.Sprintf("failed 1 the attempt's process %d vanished while the executor was down and recorded no exit status", os.Getpid()))
	require.Contains(t, got, "place-failed 2 the executor stopped before the attempt's process started")
	require.Contains(t, got, "finished 2 ")
	require.Contains(t, got, "stopped 0 failed exclusively: other")
}
