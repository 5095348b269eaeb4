package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/policies"
)

// The small trace runs to completion on emulated GPUs: real processes,
// modelled GPUs, the results files of a simulation.
func TestEmulatedRunCompletes(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir)
	cfg, err := emulatedConfig(dir, self(t), small(), 2, 400)
	require.NoError(t, err)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	res, err := executor.Execute(context.Background(), x, newAegis())
	require.NoError(t, err)
	for _, j := range res.Jobs {
		require.Equal(t, policies.Done, j.State, j.Name)
		require.Positive(t, j.Finish)
	}
	for _, f := range []string{"jobs.csv", "summary.csv", "deferrals.csv", "events.jsonl", "journal.jsonl"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
}
