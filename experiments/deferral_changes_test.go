package experiments

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// kinds counts a collocating policy's actions by kind. It is Selective,
// an Observer and a Ticker as the policy is, so that it decides as the
// policy does; it hides the policy's policies.DeferralChanges (the loop
// then hands on every deferral), which kindsChanges shows.
type kinds struct {
	policies.Policy
	n map[policies.ActionKind]int
}

func (k *kinds) Schedule(v *policies.View) []policies.Action {
	acts := k.Policy.Schedule(v)
	for _, a := range acts {
		k.n[a.Kind]++
	}
	return acts
}

func (k *kinds) Observe(e policies.Event)    { k.Policy.(policies.Observer).Observe(e) }
func (k *kinds) Wants(e policies.Event) bool { return k.Policy.(policies.Selective).Wants(e) }
func (k *kinds) Tick() time.Duration         { return k.Policy.(policies.Ticker).Tick() }

func (k *kinds) Validate(v *policies.View) error {
	if val, ok := k.Policy.(policies.Validator); ok {
		return val.Validate(v)
	}
	return nil
}

type kindsChanges struct{ *kinds }

func (k kindsChanges) ReportDeferralChanges() {
	k.Policy.(policies.DeferralChanges).ReportDeferralChanges()
}

// TestDeferralChangesChangeNothing: Horus, Lucid and AEGIS list their
// deferrals as changes from their previous decision (Defers for the new
// ones and those of jobs started since, Undefers for the ended ones) when
// the simulator and the recorders take them; every output (jobs.csv,
// summary.csv, deferrals.csv with its episode and decision counts, the
// event log) is the same as when every deferral is handed on, on a
// Venus-like backlog, with OOM retries on the recovery ladder (jobs
// deferred again after an attempt) and with the event log piped; and the
// changes are fewer actions.
func TestDeferralChangesChangeNothing(t *testing.T) {
	backlog := likeTrace(t, "venus", 1500, 1)
	philly, err := traces.Load("philly")
	require.NoError(t, err)
	for _, c := range []struct {
		tr     *traces.Trace
		server string
		policy string
		sets   []string
		pipe   bool
	}{
		{backlog, "a100-40gb:4", "horus", nil, false},
		{backlog, "a100-40gb:4", "horus", []string{"variant=original"}, true},
		{backlog, "a100-40gb:4", "lucid", nil, false},
		{backlog, "a100-40gb:4", "lucid", []string{"variant=original", "lookahead=3", "hold=0s"}, false},
		{backlog, "a100-40gb:4", "aegis", nil, false},
		{philly, "a100-40gb:4", "horus", []string{"recovery=ladder"}, false},
		{philly, "a100-40gb:3", "aegis", []string{"recovery=ladder"}, true},
		{philly, "a100-40gb:4", "lucid", []string{"lookahead=2"}, false},
	} {
		tr := c.tr
		params, err := policies.ParseSets(c.sets)
		require.NoError(t, err)
		srv, err := models.ParseServer(c.server)
		require.NoError(t, err)
		t.Run(fmt.Sprint(tr.Name, "/", c.server, "/", c.policy, c.sets, "/pipe=", c.pipe), func(t *testing.T) {
			t.Parallel()
			run := func(changes bool) (map[string][]byte, map[policies.ActionKind]int) {
				k := &kinds{n: map[policies.ActionKind]int{}}
				wrap := func(p policies.Policy) policies.Policy {
					k.Policy = p
					if changes {
						return kindsChanges{k}
					}
					return k
				}
				var ev bytes.Buffer
				o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: c.policy,
					Params: params, Seed: 1, Wrap: wrap, PipeOutputs: c.pipe}, &ev)
				require.NoError(t, err)
				files, err := o.Files(ev.Bytes())
				require.NoError(t, err)
				return files, k.n
			}
			want, every := run(false)
			got, changed := run(true)
			for name := range want {
				require.Equal(t, string(want[name]), string(got[name]), name)
			}
			t.Logf("actions: every deferral %v, changes %v", every, changed)
			require.Zero(t, every[policies.Undefer])
			require.Positive(t, changed[policies.Undefer])
			require.Less(t, changed[policies.Defer], every[policies.Defer])
			require.Equal(t, every[policies.Place], changed[policies.Place])
		})
	}
}
