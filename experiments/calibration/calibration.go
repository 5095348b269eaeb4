// Package calibration fits the simulator's interference truth to measured
// data and reports its errors: the pairwise pressure model on two-job
// co-runs (models.Calibrate), and, with the progressive stacking data set,
// the N-way speed parameters (ρ, κ) jointly on pairs and stacks and the
// telemetry combination on the threshold grid's admission decisions, each
// validated by leaving sequences out. It is the body of `aegis calibrate`.
package calibration

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/sim"
)

// Options say what to fit and on which data.
type Options struct {
	// PairsPath and CatalogPath: the measured co-runs (the artifact's
	// pairwise results layout) and the workload catalog (source or derived
	// format). Empty: the shared calibration data.
	PairsPath, CatalogPath string
	// StacksDir is the progressive stacking data set's folder; empty: the
	// shared one when present. NoStacks fits pairs only.
	StacksDir string
	NoStacks  bool
	// Folds, NWayExponent (pairs only; with stacks ρ is fitted) and LOWO
	// as in models.FitOptions.
	Folds        int
	NWayExponent float64
	LOWO         bool
	// Seeds is how many simulator seeds each stack replay is averaged or
	// counted over (default 3).
	Seeds int
	// GPU is the GPU type the data were measured on (recorded in the model).
	GPU string
}

// Validation is one leave-some-sequences-out validation of the N-way part:
// each fold's held-out sequences replayed under the model fitted without
// them, pooled.
type Validation struct {
	Name  string // e.g. "leave one sequence out"
	Folds []Fold
	Summary
	Seqs []SeqRow
	Grid []GridRow
}

// Fold is one fold of a Validation: the held-out sequences and the
// parameters fitted without them.
type Fold struct {
	HeldOut   []string
	Speed     models.PressureParams
	Telemetry models.TelemetryParams
}

// Result is the outcome of Run.
type Result struct {
	Options   Options // with defaults and resolved paths
	Pairs     *models.Calibration
	Params    models.PressureParams  // the final speed model
	Telemetry models.TelemetryParams // the final telemetry combination
	// With stacking data only: the embedded model's replays ("before"),
	// the final model's in-sample replays, and the validations.
	Stacks      *stacking.Data
	Before      *Report
	After       *Report
	Validations []Validation
	// Reach is what any (ρ, κ) of the search could reach on the stacks'
	// max slowdown.
	Reach SpeedReach
	// Scales is the trial of per-workload telemetry scales (nil without
	// stacking data).
	Scales *ScaleTrial
}

// ScaleTrial is the test of per-workload telemetry scales
// (models.TelemetryParams.Scale) fitted on the threshold grid: the scales
// fitted on all of it, the model with them in-sample and validated like
// the model without, and whether they were adopted: only when leaving one
// sequence out they predict more first rejections right than the model
// without them.
type ScaleTrial struct {
	Fitted      map[string]models.SignalScale
	InSample    Summary
	Validations []Validation
	Adopted     bool
}

// Defaults fills in Options' defaults and the shared data paths of the
// pairs and the catalog (the stacks' folder is resolved by Run).
func (o Options) Defaults() (Options, error) {
	if o.Folds == 0 {
		o.Folds = 5
	}
	if o.NWayExponent == 0 {
		o.NWayExponent = 1
	}
	if o.Seeds == 0 {
		o.Seeds = 3
	}
	if o.GPU == "" {
		o.GPU = "a100-40gb"
	}
	if o.GPU == LegacyGPU {
		return o.legacyDefaults()
	}
	shared, ok := models.SharedDir()
	if o.PairsPath == "" || o.CatalogPath == "" {
		if !ok {
			return o, fmt.Errorf("%w: %w; or give --pairs and --catalog (and --stacks)\n\n%s", ErrNoData, models.SharedDirError(), DataHelp)
		}
		if o.PairsPath == "" {
			o.PairsPath = filepath.Join(shared, "calibration", "aegis", "pairwise_a100_lucid_calibration.csv")
		}
		if o.CatalogPath == "" {
			o.CatalogPath = filepath.Join(shared, "calibration", "aegis", "workload_catalog_a100.csv")
		}
	}
	return o, nil
}

// stacksDir is o.StacksDir, or the shared data folder's stacks. Run asks
// for it only after reading the pairs, so that a bad --pairs file is
// reported as such even where the shared data folder is absent.
func (o Options) stacksDir() (string, error) {
	if o.StacksDir != "" {
		return o.StacksDir, nil
	}
	d, ok := stacking.DefaultDir()
	if !ok {
		return "", fmt.Errorf("%w: %w; give --stacks DIR, or --no-stacks to fit pairs only\n\n%s", ErrNoData, models.SharedDirError(), DataHelp)
	}
	return d, nil
}

// ErrNoData is returned (wrapped, with DataHelp) when no data path is
// given and the shared calibration data are not found.
var ErrNoData = errors.New("shared calibration data not found")

// DataHelp explains where the measured data come from and their formats.
const DataHelp = `Where the data come from: the AEGIS artifact (ehsanyousefzadehasl/AEGIS; see NOTICE)
measured, on one A100-40GB,
  - 219 co-runs of two training jobs started together (--pairs), a CSV with one row
    per co-run and at least the columns
      workload_a,workload_b,solo_time_a_s,solo_time_b_s,pair_time_a_s,pair_time_b_s
    (run names map to catalog workloads by models.PairWorkloadID: a run-length suffix
    _maxbatchesN, _maxstepsN or _Ne is dropped, _1gpu appended);
  - every workload alone (--catalog): the artifact's workload_catalog_a100.csv, or our
    derived format (models/data/catalog_a100.csv), detected from the header;
  - five launch sequences of 4-5 jobs stacked on one GPU (--stacks DIR), three CSVs:
      progressive_sequences.csv  sequence,position,run_name,catalog_id,solo_runtime_s
      progressive_targets.csv    sequence,runs,n_runs,jobs,makespan_mean_s,...,
                                 mean_slowdown_mean,max_slowdown_mean
      threshold_grid.csv         sequence,tau_smact,tau_smocc,tau_drama,
                                 first_rejected_position,deferrals,makespan_s,...
The project keeps them read-only in shared/calibration/aegis (nway/ for the stacks),
found beside the repository or at $AEGIS_SHARED; they are not redistributed.`

// Run fits and validates the model on the data named by opt.
func Run(opt Options) (*Result, error) {
	opt, err := opt.Defaults()
	if err != nil {
		return nil, err
	}
	cat, pairs, err := readPairs(opt)
	if err != nil {
		return nil, err
	}
	fo := models.FitOptions{Folds: opt.Folds, NWayExponent: opt.NWayExponent, LOWO: opt.LOWO, NoMemory: opt.GPU == LegacyGPU}
	res := &Result{Options: opt}
	if opt.NoStacks {
		if res.Pairs, err = models.Calibrate(pairs, cat, fo); err != nil {
			return nil, err
		}
		res.Params = res.Pairs.Params
		return res, nil
	}
	if opt.StacksDir, err = opt.stacksDir(); err != nil {
		return nil, err
	}
	res.Options = opt
	d, err := stacking.Load(opt.StacksDir)
	if err != nil {
		return nil, err
	}
	res.Stacks = d
	// Before: the embedded model.
	if res.Before, err = Evaluate(d, EmbeddedModel(), opt.Seeds); err != nil {
		return nil, err
	}
	// Stage 1: the pairwise coefficients with κ read off the pairs.
	base, err := models.FitPressure(pairs, cat, fo)
	if err != nil {
		return nil, err
	}
	// Stage 2: ρ and κ on pairs and stacks, the coefficients fixed.
	st, err := newSpeedTable(base, pairs, cat, d, opt.Seeds)
	if err != nil {
		return nil, err
	}
	speed := st.best(st.seqs)
	res.Reach = st.reach(workloadSets(d))
	// Stage 3: the coefficients refitted with κ and ρ fixed; the pair
	// cross-validation reports their held-out error.
	fo.NWayExponent, fo.Capacity = speed.NWayExponent, speed.Capacity
	if res.Pairs, err = models.Calibrate(pairs, cat, fo); err != nil {
		return nil, err
	}
	res.Params = res.Pairs.Params
	final := &models.PressureModel{P: res.Params}
	// Stage 4: the telemetry combination on the grid's admissions.
	tt, err := newTelemetryTable(final, d, opt.Seeds)
	if err != nil {
		return nil, err
	}
	res.Telemetry = tt.best(tt.seqs)
	res.Telemetry.SteadySaturation = models.SteadySaturationA100
	res.Telemetry.DepthOverlap = models.DepthOverlapA100
	if res.After, err = Evaluate(d, Model{Interference: final, Telemetry: res.Telemetry}, opt.Seeds); err != nil {
		return nil, err
	}
	for i, o := range res.Reach.Orders {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range res.After.Seqs {
			if slices.Contains(o.Sequences, r.Sequence) {
				lo, hi = min(lo, r.SimMaxSlowdown), max(hi, r.SimMaxSlowdown)
			}
		}
		res.Reach.Orders[i].Fitted = hi - lo
	}
	// Validations: leave one sequence out, leave one workload set out.
	trial := &ScaleTrial{}
	if res.Validations, trial.Validations, err = validations(d, st, tt, res.Params, opt.Seeds); err != nil {
		return nil, err
	}
	// Stage 5: per-workload telemetry scales, adopted only if they predict
	// more first rejections right leaving one sequence out.
	withScales := res.Telemetry
	if withScales.Scale, err = fitScales(final, res.Telemetry, d, tt.seqs, opt.Seeds); err != nil {
		return nil, err
	}
	trial.Fitted = withScales.Scale
	after := res.After
	if len(trial.Fitted) > 0 {
		if after, err = Evaluate(d, Model{Interference: final, Telemetry: withScales}, opt.Seeds); err != nil {
			return nil, err
		}
	}
	trial.InSample = after.Summary
	trial.Adopted = len(trial.Fitted) > 0 && trial.Validations[0].FirstRight > res.Validations[0].FirstRight
	if trial.Adopted {
		res.Telemetry, res.After = withScales, after
		res.Validations, trial.Validations = trial.Validations, res.Validations
	}
	res.Scales = trial
	return res, nil
}

// readPairs reads the catalog (models.Legacy11GB without a catalog path) and
// the measured co-runs opt names.
func readPairs(opt Options) (*models.Catalog, []models.PairRun, error) {
	cat := models.Legacy11GB()
	var err error
	if opt.CatalogPath != "" {
		if cat, err = models.LoadCatalog(opt.CatalogPath); err != nil {
			return nil, nil, err
		}
	}
	f, err := os.Open(opt.PairsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("pairs: %w", err)
	}
	pairs, err := models.ReadPairs(f, opt.PairsPath, cat)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	return cat, pairs, nil
}

// validations validates the fit with telemetry table tt for pressure
// parameters p leaving one sequence out and leaving one workload set out,
// without and with the per-workload telemetry scales.
func validations(d *stacking.Data, st *speedTable, tt *telemetryTable, p models.PressureParams, seeds int) (plain, scaled []Validation, err error) {
	var loso, lowso [][]string
	for _, s := range st.seqs {
		loso = append(loso, []string{s})
	}
	lowso = append(lowso, workloadSets(d)...)
	tables := map[models.PressureParams]*telemetryTable{p: tt}
	for _, scales := range []bool{false, true} {
		for _, v := range []struct {
			name  string
			folds [][]string
		}{{"leave one sequence out", loso}, {"leave one workload set out", lowso}} {
			val, err := validate(v.name, v.folds, d, st, tables, scales, seeds)
			if err != nil {
				return nil, nil, err
			}
			if scales {
				scaled = append(scaled, *val)
			} else {
				plain = append(plain, *val)
			}
		}
	}
	return plain, scaled, nil
}

// workloadSets groups the sequences by the set of workloads they stack
// (launch orders of the same jobs), in order of first appearance.
func workloadSets(d *stacking.Data) [][]string {
	var keys []string
	var sets [][]string
	for _, s := range d.Sequences {
		if _, ok := d.Target(s.Name, "no_deferral"); !ok {
			continue
		}
		ids := make([]string, len(s.Jobs))
		for i, j := range s.Jobs {
			ids[i] = j.Workload
		}
		slices.Sort(ids)
		key := fmt.Sprint(ids)
		i := indexOf(keys, key)
		if i < 0 {
			keys, sets = append(keys, key), append(sets, nil)
			i = len(keys) - 1
		}
		sets[i] = append(sets[i], s.Name)
	}
	return sets
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// validate fits the N-way part without each fold's sequences (speed on
// pairs and the other stacks; telemetry on the other grid sequences, with
// that speed model) and replays the held-out ones. tables caches the
// telemetry tables by speed model.
func validate(name string, folds [][]string, d *stacking.Data, st *speedTable, tables map[models.PressureParams]*telemetryTable, scales bool, seeds int) (*Validation, error) {
	v := &Validation{Name: name}
	for _, out := range folds {
		speed := st.best(without(st.seqs, out...))
		inter := &models.PressureModel{P: speed}
		fold := Fold{HeldOut: out, Speed: speed}
		gridSeqs := sequenceNames(d.Grid)
		if train := without(gridSeqs, out...); len(train) > 0 {
			tt := tables[speed]
			if tt == nil {
				var err error
				if tt, err = newTelemetryTable(inter, d, seeds); err != nil {
					return nil, err
				}
				tables[speed] = tt
			}
			fold.Telemetry = tt.best(train)
			fold.Telemetry.SteadySaturation = models.SteadySaturationA100
			fold.Telemetry.DepthOverlap = models.DepthOverlapA100
			if scales {
				var err error
				if fold.Telemetry.Scale, err = fitScales(inter, fold.Telemetry, d, train, seeds); err != nil {
					return nil, err
				}
			}
		}
		v.Folds = append(v.Folds, fold)
		m := Model{Interference: inter, Telemetry: fold.Telemetry}
		for _, name := range out {
			s, _ := d.Sequence(name)
			t, _ := d.Target(name, "no_deferral")
			row, err := replayMean(s, m, seeds)
			if err != nil {
				return nil, err
			}
			row.MeasMakespanS, row.MeasMeanSlowdown, row.MeasMaxSlowdown = t.MakespanS, t.MeanSlowdown, t.MaxSlowdown
			v.Seqs = append(v.Seqs, row)
			if indexOf(gridSeqs, name) < 0 || len(without(gridSeqs, out...)) == 0 {
				continue
			}
			for _, g := range d.Grid {
				if g.Sequence != name {
					continue
				}
				r, err := stacking.Replay(s, stacking.Config{Thresholds: g.Thresholds, Interference: inter, Telemetry: &fold.Telemetry, Seed: 1})
				if err != nil {
					return nil, err
				}
				v.Grid = append(v.Grid, GridRow{GridRun: g, SimFirstRejected: r.FirstRejected, SimDeferrals: r.Deferrals, SimMakespanS: r.MakespanS})
			}
		}
	}
	v.Summary = summarize(v.Seqs, v.Grid)
	return v, nil
}

// EmbeddedModel is the simulator's built-in A100 model.
func EmbeddedModel() Model {
	return Model{Interference: models.DefaultInterference(), Telemetry: models.DefaultTelemetry()}
}

// ModelFromFile reads an interference model file (`aegis calibrate --out`)
// as a Model; without a telemetry section its combination is the plain sum.
func ModelFromFile(path string) (Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Model{}, fmt.Errorf("model: %w", err)
	}
	f, err := models.ReadInterference(data, path)
	if err != nil {
		return Model{}, err
	}
	m := Model{Interference: &models.PressureModel{P: f.Params}}
	if f.Telemetry != nil {
		m.Telemetry = *f.Telemetry
	}
	return m, nil
}

// ReportModel compares a model with the stacking data in dir (empty: the
// shared folder): the model file at modelPath (empty: the embedded model),
// replayed under truth (nil: the default truth) with seeds 1..seeds.
func ReportModel(dir, modelPath string, truth *sim.Truth, seeds int) (*Report, error) {
	if dir == "" {
		var ok bool
		if dir, ok = stacking.DefaultDir(); !ok {
			return nil, fmt.Errorf("%w: %w; or give --stacks\n\n%s", ErrNoData, models.SharedDirError(), DataHelp)
		}
	}
	d, err := stacking.Load(dir)
	if err != nil {
		return nil, err
	}
	m := EmbeddedModel()
	if modelPath != "" {
		if m, err = ModelFromFile(modelPath); err != nil {
			return nil, err
		}
	}
	m.Truth = truth
	return Evaluate(d, m, seeds)
}
