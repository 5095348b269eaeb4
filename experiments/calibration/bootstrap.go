package calibration

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
)

// Bootstrap refits the speed model n times on resampled measurements, for
// the spread that model uncertainty causes in a run's results. Refit 0
// uses the measurements as they are; refit i > 0 draws as many co-runs as
// were measured from the pairs with replacement and, with stacks, as many
// sequences from the stacks (a sequence drawn twice counts twice in the
// stack loss), from a PCG seeded with (seed, i). Each refit runs Run's
// speed stages: the pairwise coefficients, then ρ and κ on pairs and
// stacks, then the coefficients again with ρ and κ fixed; with NoStacks ρ
// and κ stay the embedded model's. The telemetry combination's steady
// saturation is refitted apart (BootstrapSteadySaturation, SteadyRefits).
// Deterministic for a seed.
func Bootstrap(opt Options, n int, seed uint64) ([]models.PressureParams, error) {
	if n < 1 {
		return nil, fmt.Errorf("bootstrap: %d refits, want at least 1", n)
	}
	opt, err := opt.Defaults()
	if err != nil {
		return nil, err
	}
	cat, pairs, err := readPairs(opt)
	if err != nil {
		return nil, err
	}
	var d *stacking.Data
	if !opt.NoStacks {
		if opt.StacksDir, err = opt.stacksDir(); err != nil {
			return nil, err
		}
		if d, err = stacking.Load(opt.StacksDir); err != nil {
			return nil, err
		}
	}
	out := make([]models.PressureParams, n)
	for i := range out {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		ps := pairs
		if i > 0 {
			ps = resample(rng, pairs)
		}
		if out[i], err = refit(opt, ps, cat, d, rng, i > 0); err != nil {
			return nil, fmt.Errorf("bootstrap refit %d: %w", i, err)
		}
	}
	return out, nil
}

// resample draws len(xs) elements of xs with replacement.
func resample[T any](rng *rand.Rand, xs []T) []T {
	out := make([]T, len(xs))
	for i := range out {
		out[i] = xs[rng.IntN(len(xs))]
	}
	return out
}

// refit runs the speed stages of Run on one (resampled) data set; with
// stacks and draw set, the sequences are resampled from rng.
func refit(opt Options, pairs []models.PairRun, cat *models.Catalog, d *stacking.Data, rng *rand.Rand, draw bool) (models.PressureParams, error) {
	emb := models.DefaultPressureParams()
	fo := models.FitOptions{Folds: opt.Folds, NWayExponent: emb.NWayExponent, Capacity: emb.Capacity, NoMemory: opt.GPU == LegacyGPU}
	if opt.GPU == LegacyGPU {
		fo.NWayExponent, fo.Capacity = opt.NWayExponent, 0
	}
	if d != nil {
		fo.NWayExponent, fo.Capacity = opt.NWayExponent, 0
		base, err := models.FitPressure(pairs, cat, fo)
		if err != nil {
			return models.PressureParams{}, err
		}
		st, err := newSpeedTable(base, pairs, cat, d, opt.Seeds)
		if err != nil {
			return models.PressureParams{}, err
		}
		train := st.seqs
		if draw {
			train = resample(rng, st.seqs)
		}
		speed := st.best(train)
		fo.NWayExponent, fo.Capacity = speed.NWayExponent, speed.Capacity
	}
	return models.FitPressure(pairs, cat, fo)
}

// SteadyRefits are the steady saturations u1 that go with n speed refits
// of gpu: BootstrapSteadySaturation of the embedded scan (Philly's runs)
// on the A100, none on the legacy server (no pressure telemetry).
func SteadyRefits(gpu string, n int, seed uint64) ([]float64, error) {
	if gpu == LegacyGPU {
		return nil, nil
	}
	scan, err := models.SteadyScanA100()
	if err != nil {
		return nil, err
	}
	return BootstrapSteadySaturation(scan, SteadyFitTrace, n, seed)
}

// WriteRefits writes each refit as an interference model file
// (DIR/refit-NN.yaml, the format of `aegis calibrate --out`, usable as a
// spec config's model:, whose cell keys hash it by content), with the
// embedded telemetry combination on the A100 (its steady saturation the
// refit's from steady when given, SteadyRefits), and returns the paths.
func WriteRefits(dir, gpu string, seed uint64, refits []models.PressureParams, steady []float64) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--bootstrap-out: %w", err)
	}
	if len(steady) > 0 && len(steady) != len(refits) {
		return nil, fmt.Errorf("--bootstrap-out: %d steady saturations for %d refits", len(steady), len(refits))
	}
	var paths []string
	for i, p := range refits {
		var tel *models.TelemetryParams
		if gpu != LegacyGPU {
			t := models.DefaultTelemetry()
			if len(steady) > 0 {
				t.SteadySaturation = steady[i]
			}
			tel = &t
		}
		f := &models.InterferenceFile{Model: "pressure", GPU: gpu, Params: p, Telemetry: tel}
		comment := fmt.Sprintf("Bootstrap refit %d of %d (aegis calibrate --bootstrap %d --bootstrap-seed %d): the speed model refitted on resampled measurements (refit 0: as measured).", i, len(refits), len(refits), seed)
		path := filepath.Join(dir, fmt.Sprintf("refit-%02d.yaml", i))
		if err := results.WriteFile(path, func(w io.Writer) error {
			return models.WriteInterference(w, f, comment)
		}); err != nil {
			return paths, fmt.Errorf("--bootstrap-out: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// WriteRefitsText writes each parameter's value in refit 0 and its range
// (min to max) and standard deviation over the refits, and the steady
// saturation's when steady holds one per refit.
func WriteRefitsText(w io.Writer, refits []models.PressureParams, steady []float64) {
	fmt.Fprintf(w, "Bootstrap: %d refits of the speed model (refit 0 as measured)\n\n", len(refits))
	fmt.Fprintf(w, "%-14s %10s %10s %10s %10s\n", "parameter", "refit 0", "min", "max", "sd")
	for _, f := range []struct {
		name string
		get  func(models.PressureParams) float64
	}{
		{"intercept", func(p models.PressureParams) float64 { return p.Intercept }},
		{"co_smact", func(p models.PressureParams) float64 { return p.CoSMACT }},
		{"co_drama", func(p models.PressureParams) float64 { return p.CoDRAMA }},
		{"co_mem", func(p models.PressureParams) float64 { return p.CoMem }},
		{"self_smact", func(p models.PressureParams) float64 { return p.SelfSMACT }},
		{"self_drama", func(p models.PressureParams) float64 { return p.SelfDRAMA }},
		{"self_mem", func(p models.PressureParams) float64 { return p.SelfMem }},
		{"nway_exponent", func(p models.PressureParams) float64 { return p.NWayExponent }},
		{"capacity", func(p models.PressureParams) float64 { return p.Capacity }},
	} {
		xs := make([]float64, len(refits))
		for i, p := range refits {
			xs[i] = f.get(p)
		}
		fmt.Fprintf(w, "%-14s %10.4f %10.4f %10.4f %10.4f\n", f.name, xs[0], slices.Min(xs), slices.Max(xs), stat.StdDev(xs, nil))
	}
	if len(steady) == len(refits) && len(steady) > 0 {
		fmt.Fprintf(w, "%-14s %10.4f %10.4f %10.4f %10.4f\n", "steady_sat u1", steady[0], slices.Min(steady), slices.Max(steady), stat.StdDev(steady, nil))
	}
}

// steadyStream offsets the PCG stream of u1's resampling from the speed
// model's (stream i), so that adding it changes no speed refit.
const steadyStream = 1 << 32

// SteadyFitTrace is the trace whose runs u1 is fitted on
// (models.SteadySaturationA100); the other trace's runs hold it out.
const SteadyFitTrace = "philly"

// BootstrapSteadySaturation refits the steady saturation u1 n times on
// resampled testbed runs: refit 0 on trace's runs in scan as they are
// (models.SteadySaturationA100 for the embedded scan and Philly), refit
// i > 0 on as many runs drawn with replacement from a PCG seeded with
// (seed, 2^32 + i), each the candidate of the scan with the least mean
// DCGM error over the drawn runs (models.FitSteadySaturation). The scan
// holds every candidate's error on every run (scripts/fit-steady-saturation.sh),
// so no run is simulated here. Deterministic for a seed.
func BootstrapSteadySaturation(scan []models.SteadyRun, trace string, n int, seed uint64) ([]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("bootstrap: %d refits, want at least 1", n)
	}
	runs := models.SteadyRuns(scan, trace)
	out := make([]float64, n)
	for i := range out {
		rs := runs
		if i > 0 {
			rs = resample(rand.New(rand.NewPCG(seed, steadyStream+uint64(i))), runs)
		}
		u, err := models.FitSteadySaturation(scan, trace, rs)
		if err != nil {
			return nil, fmt.Errorf("bootstrap refit %d: %w", i, err)
		}
		out[i] = u
	}
	return out, nil
}
