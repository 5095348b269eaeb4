package experiments

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/traces"
)

// TestSkippedTicksChangeNothing runs collocating policies twice, deciding
// at every tick (skip=off) and only when something could change (the
// default), and requires byte-identical output files and far fewer
// decisions. The settings cover every horizon: holds, memory ramps seen
// after a short hold, empty windows (hold 0), the pressure and utilization
// filters, the recovery ladder, and the profile-only rules.
func TestSkippedTicksChangeNothing(t *testing.T) {
	for _, c := range []struct {
		trace, policy string
		sets          []string
	}{
		{"philly", "aegis", nil},
		{"demo", "aegis", []string{"placement=mu"}},
		{"saturn", "aegis", []string{"hold=0s"}},
		{"venus", "aegis", []string{"hold=5s", "recovery=ladder"}},
		{"philly", "aegis", []string{"filter=util:70", "hold=10s"}},
		{"demo", "aegis", []string{"memory=peakmem", "anchor=off"}},
		{"saturn", "aegis", []string{"thresholds=0.9,0.6,0.7", "tick=250ms"}},
		{"venus", "horus", []string{"variant=original"}},
		{"philly", "lucid", []string{"variant=original", "lookahead=3"}},
	} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			t.Parallel()
			params, err := policies.ParseSets(c.sets)
			require.NoError(t, err)
			on := runFiles(t, c.trace, c.policy, params, 3)
			params["skip"] = "off"
			off := runFiles(t, c.trace, c.policy, params, 3)
			for name := range off {
				require.Equal(t, string(off[name]), string(on[name]), name)
			}
			delete(params, "skip")
			eOn := events(t, c.trace, c.policy, params)
			params["skip"] = "off"
			eOff := events(t, c.trace, c.policy, params)
			// At least 1.5× fewer (venus hold=5s ladder: 1.84× since the
			// calibrated telemetry combination admits more sharing).
			require.Less(t, 3*eOn, 2*eOff, "skipping decides far less often")
		})
	}
}

// events is how many backend events (decisions included) a run had.
func events(t *testing.T, trace, policy string, params map[string]string) int {
	tr, err := traces.Load(trace)
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: policy, Params: params, Seed: 3}, io.Discard)
	require.NoError(t, err)
	return o.Events
}

// everyTime hides a policy's Wants: the loop asks it at every instant.
type everyTime struct{ policies.Policy }

// counted counts a selective policy's decisions.
type counted struct {
	policies.Policy
	n *int
}

func (c counted) Schedule(v *policies.View) []policies.Action {
	*c.n++
	return c.Policy.Schedule(v)
}

func (c counted) Wants(e policies.Event) bool { return c.Policy.(policies.Selective).Wants(e) }

// TestExclusiveSkipsChangeNothing runs Exclusive (policies.Selective) on
// a loaded Venus-like trace, a queue blocked at its head most of the run,
// as it is and asked at every instant, and requires byte-identical
// outputs and far fewer decisions (2,993 against 11,342 when written).
func TestExclusiveSkipsChangeNothing(t *testing.T) {
	tr := loadedTrace(t, likeTrace(t, "venus", 3000, 1), 16, 1.2)
	srv, err := models.ParseServer("a100-40gb:16")
	require.NoError(t, err)
	run := func(every bool) (string, string, int) {
		var ev, jb bytes.Buffer
		n := 0
		wrap := func(p policies.Policy) policies.Policy {
			if every {
				return everyTime{counted{p, &n}}
			}
			return counted{p, &n}
		}
		o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "exclusive", Seed: 1, Wrap: wrap}, &ev)
		require.NoError(t, err)
		require.NoError(t, results.WriteJobsCSV(&jb, o.Jobs))
		return ev.String(), jb.String(), n
	}
	ev, jb, n := run(false)
	evAll, jbAll, nAll := run(true)
	require.Equal(t, evAll, ev, "events.jsonl")
	require.Equal(t, jbAll, jb, "jobs.csv")
	t.Logf("decisions: %d skipping, %d at every instant", n, nAll)
	require.Less(t, 2*n, nAll, "skipping decides far less often")
}
