package executor_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/policies/exclusive"
)

// An attempt that finished is never run again, and one the executor
// interrupted is: job 0 saves its work and exits 0 on SIGTERM (its status
// says 0), job 1 dies of SIGTERM. After aegis exec is interrupted (and
// also when it was killed after journaling that it terminates the
// attempts, before their ends: "cut"), the resume finishes job 1 with a
// second attempt and leaves job 0 finished. Job 0 was journaled
// interrupted whatever its exit status and ran again: completed twice.
func TestFinishedAttemptNeverRunsAgain(t *testing.T) {
	for _, cut := range []bool{false, true} {
		t.Run(fmt.Sprintf("cut=%v", cut), func(t *testing.T) {
			cfg := realConfig(t, wOK, wFail)
			// Each command exits 0 at once when it ran before (a marker in
			// the run directory): a second attempt of a job ends it.
			y := fmt.Sprintf(`workloads:
  - id: %s
    command: [sh, -c, 'if [ -e ran0 ]; then exit 0; fi; touch ran0; trap "exit 0" TERM; sleep 1000 & wait']
    dir: %s
  - id: %s
    command: [sh, -c, 'if [ -e ran1 ]; then exit 0; fi; touch ran1; sleep 1000 & wait']
    dir: %s
`, wOK, cfg.Dir, wFail, cfg.Dir)
			var err error
			cfg.Workloads, err = executor.ParseWorkloads([]byte(y), "test.yaml")
			require.NoError(t, err)
			x, err := executor.New(cfg, nil)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for !(fileExists(filepath.Join(cfg.Dir, "ran0")) && fileExists(filepath.Join(cfg.Dir, "ran1"))) {
					time.Sleep(10 * time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond) // the shells wait
				cancel()
			}()
			_, err = executor.Execute(ctx, x, &exclusive.Policy{})
			require.ErrorIs(t, err, executor.ErrInterrupted)
			journal := filepath.Join(cfg.Dir, "journal.jsonl")
			got := ends(t, journal)
			require.Equal(t, []string{"terminate 0.1", "terminate 1.1", "finished 0.1", "interrupted 1.1"}, got)
			if cut {
				b, err := os.ReadFile(journal)
				require.NoError(t, err)
				lines := strings.SplitAfter(string(b), "\n")
				for len(lines) > 0 && !strings.Contains(lines[len(lines)-1], `"type":"terminate"`) {
					lines = lines[:len(lines)-1]
				}
				require.NoError(t, os.WriteFile(journal, []byte(strings.Join(lines, "")), 0o644))
			}
			cfg.Source = fakeGPUs(2)
			j, recs, err := executor.OpenJournal(journal)
			require.NoError(t, err)
			x, err = executor.Resume(cfg, j, recs)
			require.NoError(t, err)
			res, err := executor.Execute(t.Context(), x, &exclusive.Policy{})
			require.NoError(t, err)
			require.Equal(t, 2, res.Summary.Finished)
			jobs, err := executor.Audit(cfg.Dir)
			require.NoError(t, err)
			require.Equal(t, 2, jobs)
			require.Equal(t, []string{"terminate 0.1", "terminate 1.1", "finished 0.1", "interrupted 1.1", "finished 1.2"}, ends(t, journal))
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ends lists a journal's terminate, interrupted, finished and failed
// records as "type job.attempt".
func ends(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	recs, _, err := executor.ReadJournal(bytes.NewReader(b), path)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		switch r.Type {
		case "terminate", "interrupted", "finished", "failed":
			out = append(out, fmt.Sprintf("%s %d.%d", r.Type, r.Job, r.Attempt))
		}
	}
	return out
}
