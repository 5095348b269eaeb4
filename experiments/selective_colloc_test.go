package experiments

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// TestSelectiveCollocChangesNothing: Horus and Lucid skip the instants whose
// events cannot change their decision (colloc.Scheduler.Wants: nothing
// waiting, their own placements' starts after a settled decision, arrivals
// behind the blocked job); every output is the same as when they decide at
// every instant with an event, on a Venus-like backlog (jobs of 1 and 2
// GPUs on 4 GPUs: the head is blocked most of the time; on 16 GPUs: jobs
// rarely wait) and on Philly, with at least 1.2 x fewer decisions on the
// Venus-like trace.
func TestSelectiveCollocChangesNothing(t *testing.T) {
	backlog := likeTrace(t, "venus", 1500, 1)
	philly, err := traces.Load("philly")
	require.NoError(t, err)
	for _, c := range []struct {
		tr     *traces.Trace
		server string
		policy string
		sets   []string
	}{
		{backlog, "a100-40gb:4", "horus", nil},
		{backlog, "a100-40gb:4", "horus", []string{"variant=original"}},
		{backlog, "a100-40gb:4", "lucid", nil},
		{backlog, "a100-40gb:4", "lucid", []string{"variant=original", "lookahead=3", "hold=0s"}},
		{backlog, "a100-40gb:16", "horus", nil},
		{philly, "a100-40gb:4", "horus", []string{"recovery=ladder"}},
		{philly, "a100-40gb:4", "lucid", []string{"lookahead=2"}},
	} {
		tr := c.tr
		params, err := policies.ParseSets(c.sets)
		require.NoError(t, err)
		srv, err := models.ParseServer(c.server)
		require.NoError(t, err)
		t.Run(fmt.Sprint(tr.Name, "/", c.server, "/", c.policy, c.sets), func(t *testing.T) {
			t.Parallel()
			var every, some *counting
			run := func(wrap func(policies.Policy) policies.Policy) map[string][]byte {
				var ev bytes.Buffer
				o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: c.policy, Params: params, Seed: 1, Wrap: wrap}, &ev)
				require.NoError(t, err)
				files, err := o.Files(ev.Bytes())
				require.NoError(t, err)
				return files
			}
			want := run(func(p policies.Policy) policies.Policy { every = &counting{Policy: p}; return every })
			got := run(func(p policies.Policy) policies.Policy {
				some = &counting{Policy: p}
				return countingSelective{some}
			})
			for name := range want {
				require.Equal(t, string(want[name]), string(got[name]), name)
			}
			t.Logf("decisions: every instant %d, selective %d", every.decisions, some.decisions)
			require.Less(t, some.decisions, every.decisions)
			if tr == backlog {
				require.Greater(t, 5*every.decisions, 6*some.decisions, "decisions: every instant %d, selective %d", every.decisions, some.decisions)
			}
		})
	}
}
