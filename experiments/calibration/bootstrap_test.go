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
	_, err = BootstrapSteadySaturation(nil, SteadyFitTrace, 0, 1)
	require.ErrorContains(t, err, "want at least 1")
	_, err = BootstrapDepthOverlap(nil, SteadyFitTrace, 0, 1)
	require.ErrorContains(t, err, "want at least 1")
}

// TestTelemetryRefits: the A100's refits of the telemetry combination
// refit u1 and δ on the same draws of Philly's four testbed runs (from the
// embedded scans, no shared data): refit 0 reproduces the shipped u1 = 1.2
// and δ = 0.2, every refit's δ and u1 are the fits on its own draw, the
// draws vary δ (not held at 0.2), and the same seed gives the same refits.
func TestTelemetryRefits(t *testing.T) {
	const n = 21
	u1, delta, err := TelemetryRefits("a100-40gb", n, 1)
	require.NoError(t, err)
	require.Len(t, u1, n)
	require.Len(t, delta, n)
	require.Equal(t, models.SteadySaturationA100, u1[0], "refit 0: u1 as fitted")
	require.Equal(t, models.DepthOverlapA100, delta[0], "refit 0: δ as fitted")

	steady, err := models.SteadyScanA100()
	require.NoError(t, err)
	depth, err := models.DepthScanA100()
	require.NoError(t, err)
	runs := models.DepthRuns(depth, SteadyFitTrace)
	require.Equal(t, models.SteadyRuns(steady, SteadyFitTrace), runs, "both scans list Philly's runs alike")
	draws := TestbedDraws(runs, n, 1)
	require.Equal(t, runs, draws[0], "refit 0 does not resample")
	differ := 0
	for i, rs := range draws {
		require.Len(t, rs, len(runs))
		d, err := models.FitDepthOverlap(depth, SteadyFitTrace, rs)
		require.NoError(t, err)
		require.Equal(t, d, delta[i], "refit %d: δ is the fit on its draw %v", i, rs)
		u, err := models.FitSteadySaturation(steady, SteadyFitTrace, rs)
		require.NoError(t, err)
		require.Equal(t, u, u1[i], "refit %d: u1 is the fit on the same draw", i)
		if delta[i] != models.DepthOverlapA100 {
			differ++
		}
	}
	require.Positive(t, differ, "the draws refit δ: some differ from 0.2")

	u1b, deltab, err := TelemetryRefits("a100-40gb", n, 1)
	require.NoError(t, err)
	require.Equal(t, u1, u1b, "deterministic for a seed")
	require.Equal(t, delta, deltab, "deterministic for a seed")
	_, delta2, err := TelemetryRefits("a100-40gb", n, 2)
	require.NoError(t, err)
	require.Equal(t, delta[0], delta2[0])
	require.NotEqual(t, delta, delta2, "another seed draws other runs")

	u1, delta, err = TelemetryRefits(LegacyGPU, n, 1)
	require.NoError(t, err)
	require.Nil(t, u1, "no pressure telemetry on the legacy server")
	require.Nil(t, delta)
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
