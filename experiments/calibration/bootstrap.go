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
// saturation u1 and depth term δ are refitted apart (TelemetryRefits).
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

// TelemetryRefits are the steady saturations u1 and depth terms δ that go
// with n speed refits of gpu: BootstrapSteadySaturation and
// BootstrapDepthOverlap of the embedded scans (Philly's runs, the same
// draws for both) on the A100, none on the legacy server (no pressure
// telemetry).
func TelemetryRefits(gpu string, n int, seed uint64) (u1, delta []float64, err error) {
	if gpu == LegacyGPU {
		return nil, nil, nil
	}
	steady, err := models.SteadyScanA100()
	if err != nil {
		return nil, nil, err
	}
	depth, err := models.DepthScanA100()
	if err != nil {
		return nil, nil, err
	}
	if a, b := models.SteadyRuns(steady, SteadyFitTrace), models.DepthRuns(depth, SteadyFitTrace); !slices.Equal(a, b) {
		return nil, nil, fmt.Errorf("%s runs %v and %s runs %v of %s: want the same runs in the same order (the refits draw them alike)",
			models.SteadyScanFile, a, models.DepthScanFile, b, SteadyFitTrace)
	}
	if u1, err = BootstrapSteadySaturation(steady, SteadyFitTrace, n, seed); err != nil {
		return nil, nil, err
	}
	if delta, err = BootstrapDepthOverlap(depth, SteadyFitTrace, n, seed); err != nil {
		return nil, nil, err
	}
	return u1, delta, nil
}

// WriteRefits writes each refit as an interference model file
// (DIR/refit-NN.yaml, the format of `aegis calibrate --out`, usable as a
// spec config's model:, whose cell keys hash it by content), with the
// embedded telemetry combination on the A100 (its steady saturation and
// depth term the refit's from steady and delta when given,
// TelemetryRefits), and returns the paths.
func WriteRefits(dir, gpu string, seed uint64, refits []models.PressureParams, steady, delta []float64) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--bootstrap-out: %w", err)
	}
	if len(steady) > 0 && len(steady) != len(refits) {
		return nil, fmt.Errorf("--bootstrap-out: %d steady saturations for %d refits", len(steady), len(refits))
	}
	if len(delta) > 0 && len(delta) != len(refits) {
		return nil, fmt.Errorf("--bootstrap-out: %d depth terms for %d refits", len(delta), len(refits))
	}
	var paths []string
	for i, p := range refits {
		var tel *models.TelemetryParams
		if gpu != LegacyGPU {
			t := models.DefaultTelemetry()
			if len(steady) > 0 {
				t.SteadySaturation = steady[i]
			}
			if len(delta) > 0 {
				t.DepthOverlap = delta[i]
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
// saturation's and depth term's when steady and delta hold one per refit.
func WriteRefitsText(w io.Writer, refits []models.PressureParams, steady, delta []float64) {
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
	if len(delta) == len(refits) && len(delta) > 0 {
		fmt.Fprintf(w, "%-14s %10.4f %10.4f %10.4f %10.4f\n", "depth δ", delta[0], slices.Min(delta), slices.Max(delta), stat.StdDev(delta, nil))
	}
}

// telemetryStream offsets the PCG stream of the testbed runs' resampling
// (u1's and δ's) from the speed model's (stream i), so that adding it
// changes no speed refit.
const telemetryStream = 1 << 32

// SteadyFitTrace is the trace whose runs u1 and δ are fitted on
// (models.SteadySaturationA100, models.DepthOverlapA100); the other
// trace's runs hold them out.
const SteadyFitTrace = "philly"

// TestbedDraws are the testbed runs each of n telemetry refits is fitted
// on: refit 0 on runs as they are, refit i > 0 on as many drawn with
// replacement from a PCG seeded with (seed, 2^32 + i). u1's and δ's
// refits (BootstrapSteadySaturation, BootstrapDepthOverlap) fit on the
// same draws, so a refit's u1 and δ come from the same resample.
func TestbedDraws(runs []string, n int, seed uint64) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = runs
		if i > 0 {
			out[i] = resample(rand.New(rand.NewPCG(seed, telemetryStream+uint64(i))), runs)
		}
	}
	return out
}

// BootstrapSteadySaturation refits the steady saturation u1 n times on
// resampled testbed runs (TestbedDraws of trace's runs in scan): refit 0
// on the runs as they are (models.SteadySaturationA100 for the embedded
// scan and Philly), refit i > 0 on its draw, each the candidate of the
// scan with the least mean DCGM error over the drawn runs
// (models.FitSteadySaturation). The scan holds every candidate's error on
// every run (scripts/fit-steady-saturation.sh), so no run is simulated
// here. Deterministic for a seed.
func BootstrapSteadySaturation(scan []models.SteadyRun, trace string, n int, seed uint64) ([]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("bootstrap: %d refits, want at least 1", n)
	}
	out := make([]float64, n)
	for i, rs := range TestbedDraws(models.SteadyRuns(scan, trace), n, seed) {
		u, err := models.FitSteadySaturation(scan, trace, rs)
		if err != nil {
			return nil, fmt.Errorf("bootstrap refit %d: %w", i, err)
		}
		out[i] = u
	}
	return out, nil
}

// BootstrapDepthOverlap refits the depth term δ n times on resampled
// testbed runs, the draws of BootstrapSteadySaturation (TestbedDraws of
// trace's runs in scan): refit 0 on the runs as they are
// (models.DepthOverlapA100 for the embedded scan and Philly), refit i > 0
// on its draw, each the candidate of the scan with the least J over the
// drawn runs (models.FitDepthOverlap: peaks and failed attempts against
// the testbed's, the DCGM error's rise over δ = 0's as a guard). The scan
// holds every candidate's figures on every run
// (scripts/fit-depth-overlap.sh), so no run is simulated here.
// Deterministic for a seed.
func BootstrapDepthOverlap(scan []models.DepthRun, trace string, n int, seed uint64) ([]float64, error) {
	if n < 1 {
		return nil, fmt.Errorf("bootstrap: %d refits, want at least 1", n)
	}
	out := make([]float64, n)
	for i, rs := range TestbedDraws(models.DepthRuns(scan, trace), n, seed) {
		d, err := models.FitDepthOverlap(scan, trace, rs)
		if err != nil {
			return nil, fmt.Errorf("bootstrap refit %d: %w", i, err)
		}
		out[i] = d
	}
	return out, nil
}
