package experiments

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/policytest"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/traces"
)

// jobsGuard runs a policy and fails the test when a decision wrote into
// its view's jobs or their GPU lists. It hides every interface of the
// policy but Schedule (so a decision comes at every instant with events).
type jobsGuard struct {
	p policies.Policy
	policytest.WriteCheck
}

func (g *jobsGuard) Name() string { return g.p.Name() }

func (g *jobsGuard) Schedule(v *policies.View) []policies.Action {
	g.Before(v)
	acts := g.p.Schedule(v)
	g.After(v)
	return acts
}

// readerParams are the parameters TestJobsReadersWriteNoJob runs a
// built-in policy under besides its defaults: the variants and the OOM
// ladder that take other paths through the policy (Lucid's original pairs
// whole jobs, Horus's looks ahead).
var readerParams = map[string][]map[string]string{
	"horus": {{"variant": "original"}, {"recovery": "ladder"}},
	"lucid": {{"variant": "original"}, {"recovery": "ladder"}},
}

// TestJobsReadersWriteNoJob: every built-in policy that says it only reads
// jobs (policies.JobsReader, whose view then lists the simulator's own
// jobs) writes into none at any decision, on every built-in trace on two
// and three A100s (a backlog and a light load), under its defaults and
// readerParams.
func TestJobsReadersWriteNoJob(t *testing.T) {
	var readers []string
	for _, name := range registry.Builtin() {
		p, err := registry.New(name, nil)
		require.NoError(t, err)
		if _, ok := p.(policies.JobsReader); !ok {
			continue
		}
		readers = append(readers, name)
		for _, params := range append([]map[string]string{nil}, readerParams[name]...) {
			jobsReaderRuns(t, name, params)
		}
	}
	// The built-in policies that read jobs only (each declaration spares a
	// million-job run a copy of every job, docs/performance.md).
	require.Equal(t, []string{"aegis", "bestfit", "exclusive", "horus", "lucid"}, readers)
}

// jobsReaderRuns runs policy name under params on every built-in trace on
// two and three A100s and fails at a decision that wrote into a job.
func jobsReaderRuns(t *testing.T, name string, params map[string]string) {
	t.Helper()
	for _, trace := range []string{"demo", "philly", "saturn", "venus"} {
		tr, err := traces.Load(trace)
		require.NoError(t, err)
		for _, server := range []string{"a100-40gb:2", "a100-40gb:3"} {
			srv, err := models.ParseServer(server)
			require.NoError(t, err)
			var g *jobsGuard
			_, err = assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: name, Params: params,
				Seed: 1, Wrap: func(p policies.Policy) policies.Policy { g = &jobsGuard{p: p}; return g }}, nil)
			require.NoError(t, err)
			require.Empty(t, g.Wrote, "%s %v, %s on %s", name, params, trace, server)
		}
	}
}
