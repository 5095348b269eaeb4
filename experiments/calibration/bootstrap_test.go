package calibration

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

// TestBootstrap: refit 0 (the measurements as they are) reproduces the
// embedded model (the A100's pairwise coefficients with its ρ and κ; the
// legacy server's whole fit); resampled refits differ from it and from
// each other; the same seed gives the same refits, another seed others.
func TestBootstrap(t *testing.T) {
	if _, ok := models.SharedDir(); !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
	for _, tc := range []struct{ name, gpu string }{{"A100 pairs", "a100-40gb"}, {"legacy pairs", LegacyGPU}} {
		t.Run(tc.name, func(t *testing.T) {
			gt, err := models.ResolveGPUType(tc.gpu)
			require.NoError(t, err)
			inter, err := models.InterferenceFor(gt)
			require.NoError(t, err)
			emb := inter.(*models.PressureModel).P
			opt := Options{NoStacks: true, GPU: tc.gpu}
			a, err := Bootstrap(opt, 3, 7)
			require.NoError(t, err)
			for _, f := range [][2]float64{{emb.Intercept, a[0].Intercept}, {emb.CoSMACT, a[0].CoSMACT}, {emb.CoDRAMA, a[0].CoDRAMA},
				{emb.CoMem, a[0].CoMem}, {emb.SelfSMACT, a[0].SelfSMACT}, {emb.SelfDRAMA, a[0].SelfDRAMA}, {emb.SelfMem, a[0].SelfMem},
				{emb.NWayExponent, a[0].NWayExponent}, {emb.Capacity, a[0].Capacity}} {
				require.InDelta(t, f[0], f[1], 1e-4, "refit 0 is the embedded fit")
			}
			require.NotEqual(t, a[0], a[1])
			require.NotEqual(t, a[0], a[2])
			require.NotEqual(t, a[1], a[2])
			b, err := Bootstrap(opt, 3, 7)
			require.NoError(t, err)
			require.Equal(t, a, b, "deterministic for a seed")
			c, err := Bootstrap(opt, 2, 8)
			require.NoError(t, err)
			require.Equal(t, a[0], c[0], "refit 0 does not resample")
			require.NotEqual(t, a[1], c[1], "another seed draws other measurements")
		})
	}
}

func TestBootstrapNoRefits(t *testing.T) {
	_, err := Bootstrap(Options{}, 0, 1)
	require.ErrorContains(t, err, "want at least 1")
}

// TestBestCountsDraws: a sequence drawn twice weighs twice in the stack
// loss.
func TestBestCountsDraws(t *testing.T) {
	st := &speedTable{
		params: []models.PressureParams{{NWayExponent: 1}, {NWayExponent: 2}},
		pair:   []float64{0, 0},
		stack:  [][]float64{{0, 1}, {0.6, 0}},
		seqs:   []string{"s1", "s2"},
	}
	require.Equal(t, 2.0, st.best([]string{"s1", "s2"}).NWayExponent)
	require.Equal(t, 1.0, st.best([]string{"s1", "s1", "s2"}).NWayExponent)
	require.Equal(t, 2.0, st.best([]string{"s1", "s2", "s2"}).NWayExponent)
	require.Equal(t, 1.0, st.best([]string{"s1"}).NWayExponent)
}
