package calibration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/models"
)

// embeddedRefits is how many refits the embedded sets hold: refit 0 (as
// measured) and 20 resampled, the 20 a spec's model_uncertainty may ask for.
const embeddedRefits = 21

// TestEmbeddedRefits: the embedded refit sets are calibration.Bootstrap's
// refits of the shared measurements with seed 1 (A100: pairs and stacks;
// legacy: its pairs): the first refits are recomputed and compared (all
// of them, and the files rewritten, with -update).
func TestEmbeddedRefits(t *testing.T) {
	if _, ok := models.SharedDir(); !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the embedded refits are not recomputed")
	}
	for _, tc := range []struct {
		gpu, file, source string
	}{
		{"a100-40gb", "refits_a100.yaml", "the A100 pairs (pairwise_a100_lucid_calibration.csv) and progressive stacks (calibration/aegis/stacking) of the shared calibration data"},
		{LegacyGPU, "refits_legacy11gb.yaml", "the legacy server's 52 pairs (pairwise_legacy.csv) of the shared calibration data"},
	} {
		t.Run(tc.gpu, func(t *testing.T) {
			gt, err := models.ResolveGPUType(tc.gpu)
			require.NoError(t, err)
			n := 2
			if golden.Update() {
				n = embeddedRefits
			}
			got, err := Bootstrap(Options{GPU: tc.gpu}, n, 1)
			require.NoError(t, err)
			steady, delta, err := TelemetryRefits(tc.gpu, embeddedRefits, 1)
			require.NoError(t, err)
			path := filepath.Join("..", "..", "models", "data", tc.file)
			if golden.Update() {
				f := &models.RefitsFile{GPU: tc.gpu, Seed: 1, Source: tc.source, Refits: got, SteadySaturation: steady, DepthOverlap: delta}
				if steady != nil {
					f.SteadySource = "u1 refitted on Philly's four AEGIS runs drawn with replacement (calibration.BootstrapSteadySaturation), " +
						"each the candidate with the least DCGM error in " + models.SteadyScanFile + " (scripts/fit-steady-saturation.sh PER_RUN, at δ = 0.2)"
				}
				if delta != nil {
					f.DepthSource = "δ refitted on the same draws of Philly's four AEGIS runs as u1 (calibration.BootstrapDepthOverlap), " +
						"each the candidate with the least J (peaks and failed attempts against the testbed's, DCGM error over δ = 0's / 0.01) in " +
						models.DepthScanFile + " (scripts/fit-depth-overlap.sh, at u1 = 1.2, seed sets 1-5 and 6-10)"
				}
				var b bytes.Buffer
				comment := fmt.Sprintf("Bootstrap refits of the %s speed model (calibration.Bootstrap, %d refits, seed 1; refit 0 as measured).\n"+
					"Derived parameters only: the measurements stay in the shared data folder (see source).\n"+
					"Regenerate: go test ./experiments/calibration -run TestEmbeddedRefits -update", tc.gpu, n)
				require.NoError(t, models.WriteRefits(&b, f, comment))
				require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
			}
			emb, _, err := models.RefitsFor(gt)
			require.NoError(t, err)
			require.Len(t, emb.Refits, embeddedRefits)
			require.Equal(t, uint64(1), emb.Seed)
			for i := range got {
				requireParamsNear(t, got[i], emb.Refits[i], fmt.Sprintf("refit %d", i))
			}
			// u1 and δ with every refit (all of them: no run is simulated).
			require.Equal(t, steady, emb.SteadySaturation)
			require.Equal(t, delta, emb.DepthOverlap)
		})
	}
}

func requireParamsNear(t *testing.T, want, got models.PressureParams, msg string) {
	t.Helper()
	for _, f := range [][2]float64{{want.Intercept, got.Intercept}, {want.CoSMACT, got.CoSMACT}, {want.CoDRAMA, got.CoDRAMA},
		{want.CoMem, got.CoMem}, {want.SelfSMACT, got.SelfSMACT}, {want.SelfDRAMA, got.SelfDRAMA}, {want.SelfMem, got.SelfMem},
		{want.NWayExponent, got.NWayExponent}, {want.Capacity, got.Capacity}} {
		require.InDelta(t, f[0], f[1], 1e-6, msg)
	}
}
