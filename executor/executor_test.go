package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// The small trace runs to completion on emulated GPUs: real processes,
// modelled GPUs, the results files of a simulation.
func TestEmulatedRunCompletes(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir)
	cfg, err := emulatedConfig(dir, self(t), small(), 2, 400)
	require.NoError(t, err)
	var progress [][2]int // aegis exec's count of jobs done
	cfg.Progress = func(done, total int) { progress = append(progress, [2]int{done, total}) }
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	res, err := executor.Execute(context.Background(), x, newAegis())
	require.NoError(t, err)
	for _, j := range res.Jobs {
		require.Equal(t, policies.Done, j.State, j.Name)
		require.Positive(t, j.Finish)
	}
	require.Len(t, progress, len(res.Jobs), "one report per job done")
	require.Equal(t, [2]int{len(res.Jobs), len(res.Jobs)}, progress[len(progress)-1])
	for _, f := range []string{"jobs.csv", "summary.csv", "deferrals.csv", "events.jsonl", "journal.jsonl", executor.TelemetryName} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
	// Deferral episodes carry the decisions they spanned, as in a simulation.
	require.NotEmpty(t, res.Summary.Deferrals, "the small trace collocates and defers")
	for reason, n := range res.Summary.Deferrals {
		require.GreaterOrEqual(t, res.Summary.DeferralDecisions[reason], n, reason)
	}
}

// Jobs that were not known at the start (a live queue) arrive, run and are
// collected; a job the run cannot take is rejected with a message.
func TestLiveQueue(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir)
	jobs := small()
	cfg, err := emulatedConfig(dir, self(t), jobs[:1], 2, 400)
	require.NoError(t, err)
	live := make(chan traces.Job)
	cfg.Live = live
	var log strings.Builder
	cfg.Log = &log
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	go func() {
		for _, j := range jobs[1:] {
			time.Sleep(20 * time.Millisecond)
			live <- j
		}
		live <- traces.Job{ID: "bad", Workload: "no_such_workload", GPUs: 1}
		close(live)
	}()
	res, err := executor.Execute(context.Background(), x, newAegis())
	require.NoError(t, err)
	require.Len(t, res.Jobs, len(jobs))
	for i, j := range res.Jobs {
		require.Equal(t, jobs[i].ID, j.Name)
		require.Equal(t, policies.Done, j.State, j.Name)
		if i > 0 {
			require.GreaterOrEqual(t, j.Submit, jobs[i].Submit, "a live job is submitted when it is received at the earliest")
		}
	}
	require.Contains(t, log.String(), `job bad: workload "no_such_workload" is not in the catalog`)
}

// Config.Done runs after the results files are written and while the run
// directory is still locked: what it writes (aegis exec's page) cannot
// race an executor resuming the run.
func TestDoneWhileLocked(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir)
	cfg, err := emulatedConfig(dir, self(t), small()[:1], 2, 400)
	require.NoError(t, err)
	var calls int
	cfg.Done = func(res *executor.Result, runErr error) error {
		calls++
		require.NoError(t, runErr)
		require.Len(t, res.Jobs, 1)
		require.FileExists(t, filepath.Join(dir, "summary.csv"))
		_, _, err := executor.OpenJournal(filepath.Join(dir, "journal.jsonl"))
		require.ErrorIs(t, err, executor.ErrLocked, "the journal is still this executor's")
		return nil
	}
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	_, err = executor.Execute(context.Background(), x, newAegis())
	require.NoError(t, err)
	require.Equal(t, 1, calls)
	j, _, err := executor.OpenJournal(filepath.Join(dir, "journal.jsonl"))
	require.NoError(t, err, "released after Done")
	require.NoError(t, j.Close())
}
