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
	"github.com/aegis-sched/aegis/policies/registry"
)

// dispatchEvery shows the loop a dispatcher's Observe only: it decides at
// every instant with an event, skipping the servers no event touched.
type dispatchEvery struct{ *counting }

func (d dispatchEvery) Observe(e policies.Event) { d.Policy.(policies.Observer).Observe(e) }

// dispatchSelective shows the loop its Wants too.
type dispatchSelective struct{ dispatchEvery }

func (d dispatchSelective) Wants(e policies.Event) bool {
	return d.Policy.(policies.Selective).Wants(e)
}

// TestSelectiveDispatcherChangesNothing: the cluster dispatcher skips the
// instants whose events could change neither its routing nor a server's
// decision (dispatch.Dispatcher.Wants); every output byte, event log
// included, is the same as when it decides at every instant with an event
// (as it did before it was selective), under every policy, every dispatch strategy and on a cluster of two GPU
// types, with jobs larger than a server (placed on whole servers), and
// with fewer decisions.
func TestSelectiveDispatcherChangesNothing(t *testing.T) {
	for _, c := range []struct {
		cluster, dispatch string
		jobs              int
		seed              uint64
	}{
		{"a100-40gb:4x3", "bestfit", 160, 3},
		{"a100-40gb:4x3", "firstfit", 160, 3},
		{"a100-40gb:4x3", "leastloaded", 160, 3},
		{"a100-40gb:4x2,h200-141gb:8x1", "bestfit", 40, 3},
		// A server whose policy declines a job's first activity is
		// decided later, at the next decision, only as it would have
		// been then (a hold ending between ticks shows otherwise).
		{"a100-40gb:4x3", "bestfit", 300, 1},
	} {
		tr := clusterTrace(t, c.jobs, c.seed)
		cl, err := models.ParseCluster(c.cluster)
		require.NoError(t, err)
		for _, policy := range registry.Builtin() {
			t.Run(fmt.Sprint(c.cluster, "/", c.dispatch, "/", c.jobs, "jobs/", policy), func(t *testing.T) {
				var every, some *counting
				run := func(wrap func(policies.Policy) policies.Policy) map[string][]byte {
					var ev bytes.Buffer
					o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &cl, Policy: policy, Seed: 1,
						Params: map[string]string{"dispatch": c.dispatch}, Wrap: wrap}, &ev)
					require.NoError(t, err)
					files, err := o.Files(ev.Bytes())
					require.NoError(t, err)
					return files
				}
				want := run(func(p policies.Policy) policies.Policy {
					every = &counting{Policy: p}
					return dispatchEvery{every}
				})
				got := run(func(p policies.Policy) policies.Policy {
					some = &counting{Policy: p}
					return dispatchSelective{dispatchEvery{some}}
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
