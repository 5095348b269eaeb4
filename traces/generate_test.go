package traces

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratorsMatchReference checks each generator's whole-trace profile
// at 200k jobs against the README table: runtime CDF points within 0.03, GPU
// mix within 0.01, inter-arrival p50/p95 within 15 %, and (looser, the
// model's other targets) duration p50/p95 within 15 %, zero inter-arrival
// fraction within 0.01 and GPU-service split within 0.03.
func TestGeneratorsMatchReference(t *testing.T) {
	for _, like := range ReferenceNames() {
		t.Run(like, func(t *testing.T) {
			l, err := GenerateLike(like, 200000, 1, 0)
			require.NoError(t, err)
			require.Len(t, l.Jobs, 200000)
			got := ProfileOf(l.Jobs)
			ref, ok := ReferenceProfile(like)
			require.True(t, ok)
			want := ref.Profile
			g, gw := got.RuntimeCDF.points(), want.RuntimeCDF.points()
			var maxCDF float64
			for k := range g {
				maxCDF = max(maxCDF, math.Abs(g[k]-gw[k]))
			}
			require.Less(t, maxCDF, 0.03, "runtime CDF %v vs %v", g, gw)
			require.Equal(t, []int{1, 2}, got.GPUCounts())
			mix := math.Abs(got.GPUDemand[2] - want.GPUDemand[2])
			require.Less(t, mix, 0.01)
			relErr := func(a, b float64) float64 { return math.Abs(a-b) / b }
			require.Less(t, relErr(got.InterArrivalP50S, want.InterArrivalP50S), 0.15)
			require.Less(t, relErr(got.InterArrivalP95S, want.InterArrivalP95S), 0.15)
			require.Less(t, relErr(got.DurationP50S, want.DurationP50S), 0.15)
			require.Less(t, relErr(got.DurationP95S, want.DurationP95S), 0.15)
			require.InDelta(t, want.ZeroInterArrival, got.ZeroInterArrival, 0.01)
			svc := math.Abs(got.GPUService[2] - want.GPUService[2])
			require.Less(t, svc, 0.03)
			t.Logf("%s-like 200k: max |ΔCDF| %.4f, |Δmix| %.4f, IA p50 %.1f%% p95 %.1f%%, duration p50 %.1f%% p95 %.1f%%, |Δzero| %.4f, |Δservice| %.4f",
				like, maxCDF, mix, 100*relErr(got.InterArrivalP50S, want.InterArrivalP50S), 100*relErr(got.InterArrivalP95S, want.InterArrivalP95S),
				100*relErr(got.DurationP50S, want.DurationP50S), 100*relErr(got.DurationP95S, want.DurationP95S),
				math.Abs(got.ZeroInterArrival-want.ZeroInterArrival), svc)
		})
	}
}

func TestGeneratorDeterministicAnySize(t *testing.T) {
	for _, n := range []int{1, 2, 60, 1000} {
		a, err := GenerateLike("venus-like", n, 7, 0)
		require.NoError(t, err)
		b, err := GenerateLike("venus", n, 7, 0)
		require.NoError(t, err)
		require.Equal(t, a.Jobs, b.Jobs)
		require.Len(t, a.Jobs, n)
		require.Equal(t, fmt.Sprintf("venus-like-%d-seed7", n), a.Name)
		checkLog(t, a)
		require.Zero(t, a.Jobs[0].Submit)
	}
	a, _ := GenerateLike("saturn", 100, 1, 0)
	b, _ := GenerateLike("saturn", 100, 2, 0)
	require.NotEqual(t, a.Jobs, b.Jobs, "seeds differ")
}

// TestGeneratorManyGPUs checks the cluster-scale option: jobs of 4 and 8
// GPUs are added in the reference's proportion of multi-GPU jobs, and the
// 1-/2-GPU jobs keep their profile (inter-arrivals recomputed after
// filtering).
func TestGeneratorManyGPUs(t *testing.T) {
	for _, tc := range []struct {
		max  int
		want []int
	}{{4, []int{1, 2, 4}}, {8, []int{1, 2, 4, 8}}} {
		l, err := GenerateLike("venus", 100000, 3, tc.max)
		require.NoError(t, err)
		require.Len(t, l.Jobs, 100000)
		checkLog(t, l)
		all := ProfileOf(l.Jobs)
		require.Equal(t, tc.want, all.GPUCounts())
		ref, _ := ReferenceProfile("venus")
		big := 1 - all.GPUDemand[1] - all.GPUDemand[2]
		require.InDelta(t, 1-float64(ref.JobCount)/float64(ref.SourceJobs), big, 0.01)
		el := ProfileOf(FilterGPUs(l.Jobs, []int{1, 2}))
		require.InDelta(t, ref.GPUDemand[2], el.GPUDemand[2], 0.01)
		require.InDelta(t, ref.RuntimeCDF.Under1h, el.RuntimeCDF.Under1h, 0.03)
		require.InEpsilon(t, ref.InterArrivalP95S, el.InterArrivalP95S, 0.15)
		require.InEpsilon(t, ref.InterArrivalP50S, el.InterArrivalP50S, 0.15)
	}
}

func TestGeneratorErrors(t *testing.T) {
	_, err := GenerateLike("earth", 10, 1, 0)
	require.ErrorContains(t, err, `no reference profile "earth" (have [philly saturn venus])`)
	_, err = GenerateLike("venus", 10, 1, 3)
	require.ErrorContains(t, err, "max GPUs 3: want 2, 4 or 8")
	_, err = GenerateLike("venus", 0, 1, 0)
	require.ErrorContains(t, err, "0 jobs: want at least 1")
}

func TestGeneratorQuantileFunction(t *testing.T) {
	g, err := NewGenerator("philly", 0)
	require.NoError(t, err)
	require.Equal(t, "philly", g.Like())
	require.InDelta(t, 1052, g.durationAt(0.5), 1e-9)
	require.InDelta(t, 600, g.durationAt(0.41), 1e-9)
	require.InDelta(t, 19494.5, g.durationAt(0.95), 1e-9)
	require.InDelta(t, 1, g.durationAt(0), 1e-9)
	require.InDelta(t, maxDurationS, g.durationAt(1), 1e-6)
	require.Greater(t, g.Skew(), 1.0, "2-GPU jobs run longer")
	r := rand.New(rand.NewPCG(1, 1))
	// Over both GPU counts, duration quantiles are uniform.
	const n = 200000
	var below float64
	for range n {
		u := g.complement(r)
		if r.Float64() < g.p2 {
			u = g.skewed(r)
		}
		if u < 0.5 {
			below++
		}
	}
	require.InDelta(t, 0.5, below/n, 0.005)
}

// BenchmarkGenerate1M generates a million Venus-like jobs.
func BenchmarkGenerate1M(b *testing.B) {
	for b.Loop() {
		if _, err := GenerateLike("venus", 1_000_000, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}
