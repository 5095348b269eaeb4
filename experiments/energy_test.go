package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpecEnergy: a spec with energy: true has the energy in its table
// (per-trace kWh; normalized, the ratio to the baseline), normalized.csv
// has energy_j, and the energy figure is drawn.
func TestSpecEnergy(t *testing.T) {
	for _, table := range []string{"per-trace", "normalized"} {
		t.Run(table, func(t *testing.T) {
			text := strings.Replace(smallSpec, "table: normalized\n", "table: "+table+"\nenergy: true\nfigures: [energy]\nplots: png\n", 1)
			s := loadSmall(t, text)
			dir := t.TempDir()
			_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
			require.NoError(t, err)
			tab := mustReadString(t, filepath.Join(dir, "table.csv"))
			head := strings.SplitN(tab, "\n", 2)[0]
			want := map[string]string{"per-trace": "energy_kwh", "normalized": "energy"}[table]
			require.Contains(t, strings.Split(head, ","), want, head)
			norm := mustReadString(t, filepath.Join(dir, "normalized.csv"))
			require.Contains(t, strings.SplitN(norm, "\n", 2)[0], ",energy_j,")
			st, err := os.Stat(filepath.Join(dir, "energy.png"))
			require.NoError(t, err)
			require.Greater(t, st.Size(), int64(1000))
		})
	}
}

// TestSpecEnergyNeedsPower: a GPU type without a power model cannot ask for
// energy, and its results have no energy columns.
func TestSpecEnergyNeedsPower(t *testing.T) {
	legacy := strings.Replace(smallSpec, "server: a100-40gb:2", "server: legacy-11gb:8", 1)
	for _, extra := range []string{"energy: true\n", "figures: [energy]\n"} {
		p := filepath.Join(t.TempDir(), "s.yaml")
		require.NoError(t, os.WriteFile(p, []byte(legacy+extra), 0o644))
		_, err := LoadSpec(p)
		require.ErrorContains(t, err, "legacy-11gb: no measured power model")
	}
}
