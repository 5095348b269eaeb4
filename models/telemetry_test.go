package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCombineTelemetry(t *testing.T) {
	light := TelemetryJob{SMACT: 0.2, SMOCC: 0.1, DRAMA: 0.05, Util: 0.3, Rate: 1}
	heavy := TelemetryJob{SMACT: 0.8, SMOCC: 0.4, DRAMA: 0.4, Util: 0.9, Rate: 0.5}
	for _, tc := range []struct {
		name    string
		p       TelemetryParams
		jobs    []TelemetryJob
		s, o, d float64
	}{
		{"alone is the solo draw", TelemetryParams{RateWeight: 1, Saturation: 1}, []TelemetryJob{{SMACT: 0.5, SMOCC: 0.3, DRAMA: 0.2, Util: 0.9, Rate: 1}}, 0.5, 0.3, 0.2},
		{"zero value sums and saturates", TelemetryParams{}, []TelemetryJob{light, heavy}, 1, 0.5, 0.45},
		{"rate weight", TelemetryParams{RateWeight: 1}, []TelemetryJob{light, heavy}, 0.6, 0.3, 0.25},
		{"saturation divides by the summed duty", TelemetryParams{Saturation: 1}, []TelemetryJob{light, heavy}, 1 / 1.2, 0.5 / 1.2, 0.45 / 1.2},
		{"saturation below the duty leaves it", TelemetryParams{Saturation: 2}, []TelemetryJob{light, heavy}, 1, 0.5, 0.45},
		{"both", TelemetryParams{RateWeight: 1, Saturation: 0.5}, []TelemetryJob{light, heavy}, 0.6 * 0.5 / 0.75, 0.3 * 0.5 / 0.75, 0.25 * 0.5 / 0.75},
		{"none", TelemetryParams{Saturation: 1}, nil, 0, 0, 0},
		// light·0.3/1 + heavy·0.9/2 = 0.75: under 1, so the sum.
		{"steady saturation for the jobs past their first window", TelemetryParams{Saturation: 1, SteadySaturation: 2}, []TelemetryJob{light, steady(heavy)}, 1, 0.5, 0.45},
		{"steady saturation, all steady", TelemetryParams{Saturation: 1, SteadySaturation: 0.8}, []TelemetryJob{steady(light), steady(heavy)}, 1 / 1.5, 0.5 / 1.5, 0.45 / 1.5},
		{"steady saturation, none steady: u0", TelemetryParams{Saturation: 1, SteadySaturation: 2}, []TelemetryJob{light, heavy}, 1 / 1.2, 0.5 / 1.2, 0.45 / 1.2},
		{"no steady saturation: u0 for steady jobs too", TelemetryParams{Saturation: 1}, []TelemetryJob{steady(light), steady(heavy)}, 1 / 1.2, 0.5 / 1.2, 0.45 / 1.2},
		// 0.3/1 + 0.9/1.5 = 0.9: the mixed divisor stays under 1.
		{"young at u0, steady at u1", TelemetryParams{Saturation: 1, SteadySaturation: 1.5}, []TelemetryJob{light, steady(heavy)}, 1, 0.5, 0.45},
		{"young and steady both count", TelemetryParams{Saturation: 0.5, SteadySaturation: 1}, []TelemetryJob{light, steady(heavy)}, 1 / 1.5, 0.5 / 1.5, 0.45 / 1.5},
	} {
		s, o, d := tc.p.CombineTelemetry(tc.jobs)
		require.InDelta(t, tc.s, s, 1e-12, tc.name)
		require.InDelta(t, tc.o, o, 1e-12, tc.name)
		require.InDelta(t, tc.d, d, 1e-12, tc.name)
	}
	require.Error(t, TelemetryParams{RateWeight: -1}.Check())
	require.Error(t, TelemetryParams{Saturation: 1e9}.Check())
	require.NoError(t, TelemetryParams{RateWeight: 1, Saturation: 1.2}.Check())
	require.ErrorContains(t, TelemetryParams{SteadySaturation: -1}.Check(), "steady_saturation -1")
	require.NoError(t, TelemetryParams{Saturation: 1, SteadySaturation: 1.2}.Check())
	require.ErrorContains(t, TelemetryParams{Scale: map[string]SignalScale{"w": {SMACT: 2, SMOCC: 0, DRAMA: 1}}}.Check(), "scale.w.smocc 0")
	require.ErrorContains(t, TelemetryParams{Scale: map[string]SignalScale{" ": {1, 1, 1}}}.Check(), "empty workload ID")
	require.NoError(t, TelemetryParams{Scale: map[string]SignalScale{"w": {2, 3, 0.5}}}.Check())
}

func steady(j TelemetryJob) TelemetryJob { j.Steady = true; return j }

// TestSteadySaturationMonotone: a job passing its first window moves the
// combination one way (up for u1 > u0), which SampleRange's bounds rely on.
func TestSteadySaturationMonotone(t *testing.T) {
	p := TelemetryParams{Saturation: 1, SteadySaturation: 1.2}
	jobs := []TelemetryJob{{SMACT: 0.3, SMOCC: 0.2, DRAMA: 0.1, Util: 0.6}, {SMACT: 0.5, SMOCC: 0.3, DRAMA: 0.4, Util: 0.8}, {SMACT: 0.2, SMOCC: 0.1, DRAMA: 0.05, Util: 0.4}}
	prev, _, _ := p.CombineTelemetry(jobs)
	for i := range jobs {
		jobs[i].Steady = true
		s, _, _ := p.CombineTelemetry(jobs)
		require.Greater(t, s, prev, "job %d steady", i)
		prev = s
	}
}

func TestShown(t *testing.T) {
	prof := Profile{PeakMiB: 100, SMACT: Stat{Mean: 0.3, P95: 0.3}, SMOCC: Stat{Mean: 0.1, P95: 0.2}, DRAMA: Stat{Mean: 0.5, P95: 0.6}, UtilPct: 90}
	p := TelemetryParams{Scale: map[string]SignalScale{"w": {SMACT: 2, SMOCC: 4, DRAMA: 0.5}}}
	require.Equal(t, Profile{PeakMiB: 100, SMACT: Stat{Mean: 0.6, P95: 0.6}, SMOCC: Stat{Mean: 0.4, P95: 0.8}, DRAMA: Stat{Mean: 0.25, P95: 0.3}, UtilPct: 90}, p.Shown("w", prof))
	require.Equal(t, prof, p.Shown("other", prof))
	require.Equal(t, prof, TelemetryParams{}.Shown("w", prof))
}

func TestTelemetryInModelFile(t *testing.T) {
	base := "model: pressure\nparams:\n  intercept: -4\n  co_smact: 4\n  co_drama: 0\n  co_mem_per_10gib: 0.5\n  self_smact: 0\n  self_drama: 2\n  self_mem_per_10gib: 0\n  capacity: 1.1\n  nway_exponent: 1\n"
	f, err := ReadInterference([]byte(base+"telemetry:\n  rate_weight: 0.5\n  saturation: 1.2\n"), "m.yaml")
	require.NoError(t, err)
	require.Equal(t, &TelemetryParams{RateWeight: 0.5, Saturation: 1.2}, f.Telemetry)
	f, err = ReadInterference([]byte(base+"telemetry:\n  saturation: 1\n  steady_saturation: 1.2\n"), "m.yaml")
	require.NoError(t, err)
	require.Equal(t, &TelemetryParams{Saturation: 1, SteadySaturation: 1.2}, f.Telemetry)
	_, err = ReadInterference([]byte(base+"telemetry:\n  rate_weight: 0.5\n  saturation: -1\n"), "m.yaml")
	require.ErrorContains(t, err, "m.yaml:12: telemetry: saturation -1")
	_, err = ReadInterference([]byte(base+"telemetry:\n  rate_wieght: 0.5\n"), "m.yaml")
	require.ErrorContains(t, err, "m.yaml:13")
	f, err = ReadInterference([]byte(base+"telemetry:\n  saturation: 1\n  scale:\n    w:\n      smact: 2\n      smocc: 3\n      drama: 0.9\n"), "m.yaml")
	require.NoError(t, err)
	require.Equal(t, &TelemetryParams{Saturation: 1, Scale: map[string]SignalScale{"w": {SMACT: 2, SMOCC: 3, DRAMA: 0.9}}}, f.Telemetry)
	_, err = ReadInterference([]byte(base+"telemetry:\n  scale:\n    w:\n      smact: 2\n      smocc: 3\n"), "m.yaml")
	require.ErrorContains(t, err, "scale.w.drama 0", "a factor left out is an error, not 0")
	f, err = ReadInterference([]byte(base), "m.yaml")
	require.NoError(t, err)
	require.Nil(t, f.Telemetry)
	require.NoError(t, DefaultTelemetry().Check())
	require.Equal(t, SteadySaturationA100, DefaultTelemetry().SteadySaturation, "the embedded model's steady_saturation is the fitted one (aegis calibrate --out writes it)")
	require.Equal(t, DepthOverlapA100, DefaultTelemetry().DepthOverlap, "the embedded model's depth_overlap is the fitted one (aegis calibrate --out writes it)")
}

// combineReference is CombineTelemetry as the formula reads, all jobs in
// one loop (its form before Load).
func combineReference(p TelemetryParams, jobs []TelemetryJob) (smact, smocc, drama float64) {
	var u, split float64
	steady := false
	for _, j := range jobs {
		w := 1.0
		if p.RateWeight != 0 && j.Rate > 0 {
			w = math.Pow(j.Rate, p.RateWeight)
		}
		smact += j.SMACT * w
		smocc += j.SMOCC * w
		drama += j.DRAMA * w
		u += j.Util * w
		if s := p.saturationOf(j.Steady); s > 0 {
			split += j.Util * w / s
		}
		steady = steady || j.Steady
	}
	if steady && p.SteadySaturation > 0 {
		if split > 1 {
			smact, smocc, drama = smact/split, smocc/split, drama/split
		}
	} else if p.Saturation > 0 && u > p.Saturation {
		f := p.Saturation / u
		smact, smocc, drama = smact*f, smocc*f, drama*f
	}
	return min(max(smact, 0), 1), min(max(smocc, 0), 1), min(max(drama, 0), 1)
}

// Combining signal by signal through Load (as the simulator does while it
// draws) gives the formula's values bit for bit, under every parameter
// kind, for random sets of up to six jobs.
func TestCombineByLoadIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []TelemetryParams{{}, {RateWeight: 1}, {RateWeight: 0.7, Saturation: 1}, {Saturation: 0.8, SteadySaturation: 1.2}, {RateWeight: 1.3, Saturation: 1, SteadySaturation: 1.25}} {
		for range 2000 {
			jobs := make([]TelemetryJob, 1+rng.IntN(6))
			for i := range jobs {
				jobs[i] = TelemetryJob{SMACT: rng.Float64(), SMOCC: rng.Float64(), DRAMA: rng.Float64(),
					Util: rng.Float64(), Rate: rng.Float64() * 1.2, Steady: rng.IntN(2) == 0}
			}
			a, o, d := combineReference(p, jobs)
			var l Load
			var sa, so, sd float64
			for _, j := range jobs {
				w := p.Add(&l, j.Util, j.Rate, j.Steady)
				sa, so, sd = sa+j.SMACT*w, so+j.SMOCC*w, sd+j.DRAMA*w
			}
			require.Equal(t, [3]float64{a, o, d}, [3]float64{p.Combined(l, sa), p.Combined(l, so), p.Combined(l, sd)}, "%+v %+v", p, jobs)
			ca, co, cd := p.CombineTelemetry(jobs)
			require.Equal(t, [3]float64{a, o, d}, [3]float64{ca, co, cd})
		}
	}
}

// TestWithinIsBuiltins holds Within to min(max(x, 0), hi), bit for bit, on
// special and ordinary operands (a NaN to a NaN).
func TestWithinIsBuiltins(t *testing.T) {
	xs := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, 100, math.Nextafter(1, 2),
		math.Nextafter(100, 101), 1e-300, -1e-300, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1e300, -1e300}
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		xs = append(xs, 300*(r.Float64()-0.3))
	}
	for _, hi := range []float64{1, 100, 0.5} {
		for _, x := range xs {
			if math.IsNaN(x) { // NaNs' bits may differ
				require.True(t, math.IsNaN(Within(x, hi)))
				continue
			}
			require.Equal(t, math.Float64bits(min(max(x, 0), hi)), math.Float64bits(Within(x, hi)), "Within(%v, %v)", x, hi)
		}
	}
}

// TestTermIsAdd holds AddTerm with prepared terms to Add, bit for bit: the
// loads after each job and the weights, under parameters with and without
// a rate weight and either saturation.
func TestTermIsAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range []TelemetryParams{{}, {Saturation: 1}, {Saturation: 1, SteadySaturation: 1.2},
		{RateWeight: 0.7, Saturation: 0.9, SteadySaturation: 1.3}, {RateWeight: 1.5, SteadySaturation: 0.8}} {
		for range 500 {
			var a, b Load
			for range 1 + r.IntN(4) {
				util, rate, steady := r.Float64(), r.Float64()*1.2, r.IntN(2) == 0
				if r.IntN(5) == 0 {
					rate = 0
				}
				w := p.Add(&a, util, rate, steady)
				tm := p.Term(util, rate)
				b.AddTerm(&tm, steady)
				require.Equal(t, math.Float64bits(w), math.Float64bits(tm.W))
				require.Equal(t, a, b)
			}
		}
	}
}

// TestDepthOverlap: the depth term changes nothing up to DepthMeasured
// jobs, and beyond it shrinks the time-shared divisor by 1 + δ·(k − 5), so
// a GPU stacked with light jobs reads heavier (never above their sum).
func TestDepthOverlap(t *testing.T) {
	light := TelemetryJob{SMACT: 0.3, SMOCC: 0.15, DRAMA: 0.2, Util: 0.4, Rate: 1, Steady: true}
	stack := func(k int) []TelemetryJob { return slices.Repeat([]TelemetryJob{light}, k) }
	base := TelemetryParams{Saturation: 1, SteadySaturation: 1.2}
	deep := base
	deep.DepthOverlap = 0.25
	for _, tc := range []struct {
		name   string
		jobs   []TelemetryJob
		factor float64 // deep's reading over base's
	}{
		{"five jobs: unchanged", stack(5), 1},
		{"eight jobs: divisor / 1.75", stack(8), 1.75},
		{"eight jobs in their first window: u0's divisor / 1.75", slices.Repeat([]TelemetryJob{{SMACT: 0.1, SMOCC: 0.05, DRAMA: 0.08, Util: 0.4}}, 8), 1.75},
		{"eleven jobs: divisor / 2.5", stack(11), 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bs, bo, bd := base.CombineTelemetry(tc.jobs)
			ds, do, dd := deep.CombineTelemetry(tc.jobs)
			require.InDelta(t, min(1, bs*tc.factor), ds, 1e-12)
			require.InDelta(t, min(1, bo*tc.factor), do, 1e-12)
			require.InDelta(t, min(1, bd*tc.factor), dd, 1e-12)
			// Through Load, as the simulator combines: the same values.
			var l Load
			var so float64
			for _, j := range tc.jobs {
				w := deep.Add(&l, j.Util, j.Rate, j.Steady)
				so += j.SMOCC * w
			}
			require.Equal(t, do, deep.Combined(l, so))
		})
	}
	// Never above the plain sum: a divisor below 1 is 1.
	sum := TelemetryParams{}
	huge := TelemetryParams{Saturation: 1, SteadySaturation: 1.2, DepthOverlap: 10}
	s0, o0, d0 := sum.CombineTelemetry(stack(7))
	s1, o1, d1 := huge.CombineTelemetry(stack(7))
	require.Equal(t, [3]float64{s0, o0, d0}, [3]float64{s1, o1, d1})
	require.Error(t, TelemetryParams{DepthOverlap: -0.1}.Check())
	require.NoError(t, deep.Check())
}
