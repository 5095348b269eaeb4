package experiments

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
)

// Events and actions are passed as values, never boxed: once a run is set
// up, an event costs no allocation. The allocations a run of twice the jobs
// adds, per event it adds, stay far below one (1.3 when each event and
// placement was boxed into an interface, 0.33 with boxed placements only,
// 0.07 when the simulator kept only 4 telemetry segments' arrays for reuse).
func TestAllocationsPerEvent(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:16")
	require.NoError(t, err)
	run := func(n int) (allocs float64, events int) {
		tr := likeTrace(t, "saturn", n, 1)
		allocs = testing.AllocsPerRun(1, func() {
			o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "exclusive", Seed: 1}, io.Discard)
			require.NoError(t, err)
			events = o.Events
		})
		return allocs, events
	}
	a1, e1 := run(2000)
	a2, e2 := run(4000)
	require.Greater(t, e2, e1)
	perEvent := (a2 - a1) / float64(e2-e1)
	t.Logf("%.0f and %.0f allocations for %d and %d events: %.3f per added event", a1, a2, e1, e2, perEvent)
	require.Less(t, perEvent, 0.04)
}
