package experiments

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// TestStreamedJobsCSV: a run that streams jobs.csv (Run.Jobs) writes the
// bytes of the run that holds its jobs and writes them at the end, on a
// server and on a cluster (server column), with the same summary and
// event log.
func TestStreamedJobsCSV(t *testing.T) {
	tr, err := traces.Load("philly")
	require.NoError(t, err)
	cl, err := models.ParseCluster("a100-40gb:2x2")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	for _, c := range []struct {
		name    string
		policy  string
		cluster *models.Cluster
	}{{"server/aegis", "aegis", nil}, {"server/exclusive", "exclusive", nil}, {"cluster/lucid", "lucid", &cl}} {
		t.Run(c.name, func(t *testing.T) {
			r := assemble.Run{Trace: tr, Server: srv, Policy: c.policy, Seed: 3, Cluster: c.cluster}
			var ev1, ev2, jobs bytes.Buffer
			held, err := assemble.Simulate(context.Background(), r, &ev1)
			require.NoError(t, err)
			files, err := held.Files(ev1.Bytes())
			require.NoError(t, err)
			r.Jobs = &jobs
			streamed, err := assemble.Simulate(context.Background(), r, &ev2)
			require.NoError(t, err)
			require.Equal(t, string(files["jobs.csv"]), jobs.String())
			require.Equal(t, held.Summary, streamed.Summary)
			require.Equal(t, ev1.String(), ev2.String())
			require.Empty(t, streamed.Jobs)
		})
	}
}

// counting counts a policy's decisions; with wants it is Selective as the
// policy is, without it hides that.
type counting struct {
	policies.Policy
	decisions int
}

func (c *counting) Schedule(v *policies.View) []policies.Action {
	c.decisions++
	return c.Policy.Schedule(v)
}

type countingSelective struct{ *counting }

func (c countingSelective) Wants(e policies.Event) bool {
	return c.Policy.(policies.Selective).Wants(e)
}

// TestSelectiveExclusiveChangesNothing: Exclusive skips the instants whose
// events cannot change its decision (policies.Selective): every output is
// the same as when it decides at every instant, with at least 2 x fewer
// decisions, on a backlogged trace, a paper trace and a pool where jobs
// rarely wait.
func TestSelectiveExclusiveChangesNothing(t *testing.T) {
	backlog := likeTrace(t, "saturn", 3000, 1)
	philly, err := traces.Load("philly")
	require.NoError(t, err)
	for _, c := range []struct {
		tr     *traces.Trace
		server string
	}{{backlog, "a100-40gb:4"}, {philly, "a100-40gb:4"}, {backlog, "a100-40gb:200"}} {
		tr := c.tr
		srv, err := models.ParseServer(c.server)
		require.NoError(t, err)
		t.Run(tr.Name+"/"+c.server, func(t *testing.T) {
			var every, some *counting
			run := func(wrap func(policies.Policy) policies.Policy) (map[string][]byte, int) {
				var ev bytes.Buffer
				o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "exclusive", Seed: 1, Wrap: wrap}, &ev)
				require.NoError(t, err)
				files, err := o.Files(ev.Bytes())
				require.NoError(t, err)
				return files, o.Events
			}
			want, n1 := run(func(p policies.Policy) policies.Policy { every = &counting{Policy: p}; return every })
			got, n2 := run(func(p policies.Policy) policies.Policy {
				some = &counting{Policy: p}
				return countingSelective{some}
			})
			require.Equal(t, n1, n2)
			for name := range want {
				require.Equal(t, string(want[name]), string(got[name]), name)
			}
			t.Logf("decisions: every instant %d, selective %d", every.decisions, some.decisions)
			require.Greater(t, every.decisions, 2*some.decisions, "decisions: every instant %d, selective %d", every.decisions, some.decisions)
		})
	}
}
