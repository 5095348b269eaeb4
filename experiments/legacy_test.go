package experiments

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/traces"
)

// TestLegacyExclusiveMakespan compares each legacy trace's simulated
// Exclusive makespan with the measured Exclusive run
// (calibration/aegis/legacy/exclusive_runs_legacy.csv): within 5 %, the
// issue's target. In-sample (the speed factors come from these runs) and
// fragile: which GPU a few long jobs land on moves a makespan by several
// percent (docs/legacy.md).
func TestLegacyExclusiveMakespan(t *testing.T) {
	shared, ok := models.SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): no measured legacy runs to compare with")
	}
	f, err := os.Open(filepath.Join(shared, "calibration", "aegis", "legacy", "exclusive_runs_legacy.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	measured := map[string]float64{}
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[2], 64)
		require.NoError(t, err)
		measured[r[0]] = v
	}
	srv, err := models.ParseServer("legacy-11gb:8")
	require.NoError(t, err)
	for name, run := range map[string]string{"legacy-philly": "philly_legacy", "legacy-saturn": "saturn_legacy", "legacy-venus": "venus_gapfix600"} {
		t.Run(name, func(t *testing.T) {
			tr, err := traces.Load(name)
			require.NoError(t, err)
			o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: "exclusive", Seed: 1}, nil)
			require.NoError(t, err)
			m, ok := measured[run]
			require.True(t, ok, run)
			e := o.Summary.MakespanS/m - 1
			t.Logf("%s: simulated %.0f s, measured %.0f s (%+.1f %%)", name, o.Summary.MakespanS, m, 100*e)
			require.LessOrEqual(t, math.Abs(e), 0.05)
		})
	}
}
