package executor_test

import (
	"bytes"
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
	"github.com/aegis-sched/aegis/policies/exclusive"
)

// others returns the live members of process group pgid but pgid itself.
func others(pgid int) []string {
	var ms []string
	for _, m := range liveMembers(pgid) {
		if !strings.HasPrefix(m, strconv.Itoa(pgid)+" ") {
			ms = append(ms, m)
		}
	}
	return ms
}

// groupOf waits up to 5 s until process group pgid has at least n members
// but pgid itself, and returns them.
func groupOf(pgid, n int) []string {
	return waitFor(func() []string { return others(pgid) }, func(ms []string) bool { return len(ms) >= n })
}

// gone waits up to 5 s for process group pgid to have no live member but
// pgid itself, and returns what is left.
func gone(pgid int) []string {
	return waitFor(func() []string { return others(pgid) }, func(ms []string) bool { return len(ms) == 0 })
}

func waitFor(get func() []string, ok func([]string) bool) []string {
	var ms []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ms = get(); ok(ms) {
			break
		}
	}
	return ms
}

// A shim killed with SIGKILL takes its command with it (the command's
// parent-death signal), even with no executor watching.
func TestKilledShimKillsCommand(t *testing.T) {
	selfCmd := self(t)
	status := filepath.Join(t.TempDir(), "job.exit")
	cmd := exec.Command(selfCmd[0], "attempt", "--status", status, "--", "sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	require.Len(t, groupOf(pid, 1), 1, "the shim starts its command")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	require.Empty(t, gone(pid), "the command outlived its killed shim")
	require.NoFileExists(t, status)
}

// When an attempt's shim is killed, the executor kills what is left of the
// attempt's process group (the command's own children) and fails the
// attempt saying so.
func TestExecutorReapsKilledShim(t *testing.T) {
	cfg := realConfig(t, wStub)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := executor.Execute(t.Context(), x, &exclusive.Policy{})
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pid = startedPID(t, cfg.Dir)
	}
	require.NotZero(t, pid, "the attempt starts")
	require.Len(t, groupOf(pid, 3), 3, "sh and its two sleeps run")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.NoError(t, <-done)
	require.Empty(t, gone(pid), "the attempt's processes outlived its killed shim")
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "journal.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(b), "what was left of its process group "+strconv.Itoa(pid)+" was killed")
}

// startedPID is the PID of the first started attempt in dir's journal (0:
// none yet).
func startedPID(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	require.NoError(t, err)
	recs, _, err := executor.ReadJournal(bytes.NewReader(b), "journal")
	require.NoError(t, err)
	for _, r := range recs {
		if r.Type == "started" {
			return r.PID
		}
	}
	return 0
}
