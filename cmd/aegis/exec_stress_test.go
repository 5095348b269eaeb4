package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
)

// startExec starts this test binary as aegis with args.
func startExec(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), selfEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	return cmd, &stderr
}

// holds waits up to 30 s until the lock of run directory dir names pid.
func holds(dir string, pid int) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, executor.LockName))
		if strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// refusesResume checks that aegis exec --resume dir is refused while the
// executor pid holds dir, naming it.
func refusesResume(t *testing.T, dir string, pid int) {
	t.Helper()
	cmd, stderr := startExec(t, "exec", "--resume", dir)
	err := cmd.Wait()
	require.Error(t, err, "a second executor resumed %s", dir)
	require.Contains(t, stderr.String(), "run directory in use by another executor (process "+strconv.Itoa(pid)+" holds")
}

// While aegis exec runs, aegis exec --resume of its directory is refused
// (it ran most jobs twice and broke the journal).
func TestExecConcurrentResumeRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	killGroups(t, out)
	cmd, _ := startExec(t, "exec", "--emulate", "a100-40gb:2", "--trace", smallTrace(t), "--speedup", "1", "--out", out)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	require.True(t, holds(out, cmd.Process.Pid), "the executor takes the lock")
	refusesResume(t, out, cmd.Process.Pid)
}

// make exec-stress: aegis exec on the philly trace (60 jobs, 3 emulated
// A100s, speedup 2000) SIGKILLed at random moments and resumed
// AEGIS_EXEC_STRESS times (a concurrent resume refused each time), then run
// to the end: every job ends exactly once, no job completes twice, no
// attempt's process is left. AEGIS_EXEC_STRESS_SEED picks the moments.
func TestExecKillResumeStress(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AEGIS_EXEC_STRESS"))
	if n <= 0 {
		t.Skip("set AEGIS_EXEC_STRESS=20 (make exec-stress) to kill and resume aegis exec on the philly trace that many times")
	}
	seed, _ := strconv.ParseUint(os.Getenv("AEGIS_EXEC_STRESS_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 17))
	out := filepath.Join(t.TempDir(), "run")
	killGroups(t, out)
	args := []string{"exec", "--emulate", "a100-40gb:3", "--trace", "philly", "--speedup", "2000", "--out", out}
	began := time.Now()
	kills, ended := 0, false
	for kills < n && !ended {
		cmd, stderr := startExec(t, args...)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		args = []string{"exec", "--resume", out}
		require.True(t, holds(out, cmd.Process.Pid), "the executor takes the lock")
		refusesResume(t, out, cmd.Process.Pid)
		select {
		case err := <-done:
			require.NoError(t, err, stderr.String())
			ended = true
		case <-time.After(time.Duration(100+rng.IntN(1500)) * time.Millisecond):
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			<-done
			kills++
		}
	}
	if !ended {
		cmd, stderr := startExec(t, args...)
		require.NoError(t, cmd.Wait(), stderr.String())
	}
	jobs, err := executor.Audit(out)
	require.NoError(t, err)
	require.Equal(t, 60, jobs)
	t.Logf("%d SIGKILLs and resumes (each with a concurrent resume refused) in %v: %d jobs, each ended exactly once, none completed twice, no process left",
		kills, time.Since(began).Round(time.Second), jobs)
}
