package executor_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/loop"
)

// failing is a policy that fails (policies.Fallible) at its first decision
// with a job running and another queued: an external policy that exited,
// hung or answered what cannot be done.
type failing struct {
	policies.Policy
	err error
	at  time.Duration
}

func (f *failing) Err() error { return f.err }

func (f *failing) Schedule(v *policies.View) []policies.Action {
	running := false
	for _, g := range v.GPUs {
		running = running || len(g.Jobs) > 0
	}
	if running && v.Queue.Len() > 0 {
		f.err, f.at = errors.New("the policy's process ended"), v.Now
		return nil
	}
	return f.Policy.Schedule(v)
}

// A policy that fails stops the run: nothing is launched after it, the
// attempts running then are left to end (and their ends journaled, none is
// killed), and a resume completes the run with every job ending exactly
// once.
func TestPolicyFailureLetsRunningJobsEnd(t *testing.T) {
	selfCmd := self(t)
	dir := filepath.Join(t.TempDir(), "run")
	killLeftovers(t, dir)
	cfg, err := emulatedConfig(dir, selfCmd, small(), 2, 400)
	require.NoError(t, err)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	p := &failing{Policy: newAegis()}
	res, err := executor.Execute(t.Context(), x, p)
	var pe *loop.PolicyError
	require.ErrorAs(t, err, &pe)
	require.ErrorContains(t, err, "aegis exec --resume "+dir)
	require.NotNil(t, res)

	b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	require.NoError(t, err)
	recs, _, err := executor.ReadJournal(bytes.NewReader(b), "journal")
	require.NoError(t, err)
	running := map[[2]int]bool{}
	ended := 0
	for _, r := range recs {
		switch r.Type {
		case "launch":
			require.LessOrEqual(t, time.Duration(r.T), p.at, "job %d launched after the policy failed", r.Job)
		case "started":
			running[[2]int{r.Job, r.Attempt}] = true
		case "finished", "failed":
			delete(running, [2]int{r.Job, r.Attempt})
			ended++
		case "interrupted":
			t.Fatalf("job %d attempt %d was interrupted: running attempts must be left to end", r.Job, r.Attempt)
		}
	}
	require.Empty(t, running, "every attempt running at the failure ended and was journaled")
	require.Positive(t, ended)
	require.Less(t, res.Summary.Finished, len(small()), "jobs are left for the resume")

	resumeAegis(t, dir, selfCmd)
}
