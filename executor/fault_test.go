package executor_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/exclusive"
)

// An I/O error on the journal at any point stops the run: nothing more is
// launched or journaled, the running attempts are left to end (none is
// killed, so none fails for it), and a resume completes the run with every
// job ending exactly once.
func TestJournalFaultThenResume(t *testing.T) {
	selfCmd := self(t)
	for _, n := range []int{0, 3, 7, 11, 15, 19} { // a run appends at least 20 times: 5 arrivals, then a launch, a start and an end per job
		t.Run(fmt.Sprintf("after %d writes", n), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			killLeftovers(t, dir)
			cfg, err := emulatedConfig(dir, selfCmd, small(), 2, 400)
			require.NoError(t, err)
			x, err := executor.New(cfg, nil)
			require.NoError(t, err)
			executor.FailJournalAfter(x, n)
			_, err = executor.Execute(t.Context(), x, newAegis())
			require.ErrorIs(t, err, executor.ErrRunDir)
			require.ErrorIs(t, err, executor.ErrInjected)
			require.ErrorContains(t, err, "aegis exec --resume "+dir)
			// Execute waited for the running attempts to end.
			b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
			require.NoError(t, err)
			started, _, err := executor.ReadJournal(bytes.NewReader(b), "journal")
			require.NoError(t, err)
			for _, r := range started {
				if r.Type == "started" && r.PID > 0 {
					require.Empty(t, liveMembers(r.PID), "job %d attempt %d still runs", r.Job, r.Attempt)
				}
			}
			exits, _ := filepath.Glob(filepath.Join(dir, "attempts", "*.exit"))
			for _, f := range exits {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				var st executor.Status
				require.NoError(t, json.Unmarshal(b, &st))
				require.Contains(t, []int{0, 1}, st.Code, "%s: an attempt was killed: %+v", f, st) // done or OOM
			}

			resumeAegis(t, dir, selfCmd)
		})
	}
}

// A log that cannot be created (the run directory failed) stops the run
// instead of failing the placement again and again; a resume completes it.
func TestLogFaultStopsLaunches(t *testing.T) {
	cfg := realConfig(t, wOK, wOK, wOK)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	logs := filepath.Join(cfg.Dir, "logs")
	require.NoError(t, os.Remove(logs))
	require.NoError(t, os.WriteFile(logs, nil, 0o644)) // not a directory: no log can be created
	_, err = executor.Execute(t.Context(), x, &exclusive.Policy{})
	require.ErrorIs(t, err, executor.ErrRunDir)
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "journal.jsonl"))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), `"type":"launch"`), "one launch, then no more")
	require.NotContains(t, string(b), "place-failed")

	require.NoError(t, os.Remove(logs))
	require.NoError(t, os.Mkdir(logs, 0o755))
	cfg.Source = fakeGPUs(2)
	j, recs, err := executor.OpenJournal(filepath.Join(cfg.Dir, "journal.jsonl"))
	require.NoError(t, err)
	x, err = executor.Resume(cfg, j, recs)
	require.NoError(t, err)
	res, err := executor.Execute(t.Context(), x, &exclusive.Policy{})
	require.NoError(t, err)
	require.Equal(t, 3, res.Summary.Finished)
}

// A shim that cannot write its status file keeps the status and tries
// again, so that the job is not taken for failed; once the directory works
// it records the status and exits with the command's code. If the
// directory is gone, it gives up at once.
func TestShimWaitsToRecordStatus(t *testing.T) {
	selfCmd := self(t)
	dir := filepath.Join(t.TempDir(), "attempts")
	status := filepath.Join(dir, "job.exit")
	shim := func() chan error {
		cmd := exec.Command(selfCmd[0], "attempt", "--status", status, "--", "true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the shim kills the rest of its group
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return done
	}
	select {
	case <-shim():
	case <-time.After(5 * time.Second):
		t.Fatal("the shim waits for a directory that is gone")
	}
	require.NoFileExists(t, status)

	// A directory where the status's temporary file stands blocks it.
	require.NoError(t, os.MkdirAll(status+".tmp", 0o755))
	done := shim()
	select {
	case err := <-done:
		t.Fatalf("the shim ended without recording its status: %v", err)
	case <-time.After(1500 * time.Millisecond):
	}
	require.NoError(t, os.Remove(status+".tmp"))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the shim did not record its status once it could")
	}
	b, err := os.ReadFile(status)
	require.NoError(t, err)
	require.JSONEq(t, `{"code":0}`, string(b))
}

// A placement that fails after a stop in the same decision is reported at
// the stop's time, not after it: the loop's record stays in order (it was
// "loop: backend went back in time").
func TestPlaceFailedAfterStopInOrder(t *testing.T) {
	cfg := realConfig(t, wOK, wOK)
	cfg.Self = []string{filepath.Join(t.TempDir(), "no-such-aegis")}
	cfg.Speedup = 1e6 // a microsecond of wall time is a second of run time
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	res, err := executor.Execute(t.Context(), x, &stopThenPlace{})
	require.NoError(t, err)
	require.Equal(t, 2, res.Summary.Stopped)
}

// stopThenPlace stops job 0 and places job 1 in its first decision, and
// stops whatever is pending afterwards.
type stopThenPlace struct{ decided bool }

func (*stopThenPlace) Name() string { return "stop-then-place" }

func (p *stopThenPlace) Schedule(v *policies.View) []policies.Action {
	if !p.decided && v.Queue.Len() == 2 {
		p.decided = true
		return []policies.Action{{Kind: policies.Stop, Job: 0, Reason: "test"}, {Kind: policies.Place, Job: 1, GPUs: []int{0}}}
	}
	var out []policies.Action
	for _, id := range v.Queue.All() {
		out = append(out, policies.Action{Kind: policies.Stop, Job: id, Reason: "test"})
	}
	return out
}
