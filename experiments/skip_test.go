package experiments

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
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
