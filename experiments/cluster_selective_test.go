package experiments

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
)

// dispatchSelective shows the loop a dispatcher's Observe and Wants.
type dispatchSelective struct{ *counting }

func (d dispatchSelective) Observe(e policies.Event) { d.Policy.(policies.Observer).Observe(e) }

func (d dispatchSelective) Wants(e policies.Event) bool {
	return d.Policy.(policies.Selective).Wants(e)
}

// TestSelectiveDispatcherChangesNothing: the cluster dispatcher skips the
// instants whose events could change neither its routing nor a server's
// decision (cluster.Dispatcher.Wants), and skips the servers and the idle
// GPU counts that no event touched; every output byte, event log included,
// is the same as when it decides at every instant with an event and
// observes none (every server asked, every GPU counted), under every policy, every dispatch strategy and on a cluster of two GPU
// types, with jobs larger than a server (placed on whole servers), and
// with fewer decisions.
func TestSelectiveDispatcherChangesNothing(t *testing.T) {
	for _, c := range []struct {
		cluster, dispatch string
		jobs              int
	}{
		{"a100-40gb:4x3", "bestfit", 160},
		{"a100-40gb:4x3", "firstfit", 160},
		{"a100-40gb:4x3", "leastloaded", 160},
		{"a100-40gb:4x2,h200-141gb:8x1", "bestfit", 40},
	} {
		tr := clusterTrace(t, c.jobs, 3)
		cl, err := models.ParseCluster(c.cluster)
		require.NoError(t, err)
		for _, policy := range PolicyNames() {
			t.Run(fmt.Sprint(c.cluster, "/", c.dispatch, "/", policy), func(t *testing.T) {
				var every, some *counting
				run := func(wrap func(policies.Policy) policies.Policy) map[string][]byte {
					var ev bytes.Buffer
					o, err := Simulate(Run{Trace: tr, Cluster: &cl, Policy: policy, Seed: 1,
						Params: map[string]string{"dispatch": c.dispatch}, Wrap: wrap}, &ev)
					require.NoError(t, err)
					files, err := o.Files(ev.Bytes())
					require.NoError(t, err)
					return files
				}
				// The reference observes nothing either: every server is
				// asked and every server's idle GPUs counted at every
				// decision.
				want := run(func(p policies.Policy) policies.Policy {
					every = &counting{Policy: p}
					return every
				})
				got := run(func(p policies.Policy) policies.Policy {
					some = &counting{Policy: p}
					return dispatchSelective{some}
				})
				for name := range want {
					require.Equal(t, string(want[name]), string(got[name]), name)
				}
				t.Logf("decisions: every instant %d, selective %d", every.decisions, some.decisions)
				require.Less(t, some.decisions, every.decisions)
			})
		}
	}
}
