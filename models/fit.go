package models

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/optimize"

	"github.com/aegis-sched/aegis/policies"
)

// FitOptions control FitPressure and Calibrate.
type FitOptions struct {
	// Folds is the number of cross-validation folds (default 5).
	Folds int
	// NWayExponent is the assumed PressureParams.NWayExponent (default 1);
	// two-job data cannot fit it.
	NWayExponent float64
	// LOWO asks Calibrate for leave-one-workload-out errors as well (one
	// refit per catalog workload, so several times slower).
	LOWO bool
	// Capacity, when positive, fixes PressureParams.Capacity (e.g. fitted
	// jointly with the N-way exponent on stacks of jobs) instead of reading
	// it off the pairs as their largest measuredLoad.
	Capacity float64
	// NoMemory holds the memory coefficients at 0: a small, noisy pair set
	// (the legacy server's 52 co-runs) fits them to extremes that make any
	// job above a few GiB immune to interference.
	NoMemory bool
}

func (o FitOptions) withDefaults() FitOptions {
	if o.Folds == 0 {
		o.Folds = 5
	}
	if o.NWayExponent == 0 {
		o.NWayExponent = 1
	}
	return o
}

// measuredLoad is the combined SM activity a measured co-run reached while
// both jobs ran: Σ SMACT_i·r_i with r_i the observed rates during the
// overlap (the shorter job's solo/pair time; for the longer one, the work
// it did before its partner finished over that time).
func measuredLoad(p PairRun, cat *Catalog) float64 {
	a, b := p.A, p.B
	if a.PairS > b.PairS {
		a, b = b, a
	}
	ra := a.SoloS / a.PairS
	rb := max(0, b.SoloS-(b.PairS-a.PairS)) / a.PairS
	return profileOf(cat, a.ID).SMACT.Mean*ra + profileOf(cat, b.ID).SMACT.Mean*rb
}

// PairLoss is FitPressure's loss of model m on measured co-runs: the mean
// over co-runs of the summed squared log ratios of predicted to measured
// co-run time of both jobs.
func PairLoss(m Interference, cat *Catalog, pairs []PairRun) float64 { return pairLoss(m, cat, pairs) }

// pairLoss is the mean over co-runs of the summed squared log ratios of
// predicted to measured co-run time of both jobs.
func pairLoss(m Interference, cat *Catalog, pairs []PairRun) float64 {
	var s float64
	jobs := make([]coRunJob, 2)
	for _, p := range pairs {
		jobs[0] = coRunJob{Profile: profileOf(cat, p.A.ID), SoloS: p.A.SoloS}
		jobs[1] = coRunJob{Profile: profileOf(cat, p.B.ID), SoloS: p.B.SoloS}
		t := simulateCoRun(m, jobs)
		la, lb := math.Log(t[0]/p.A.PairS), math.Log(t[1]/p.B.PairS)
		s += la*la + lb*lb
	}
	return s / float64(len(pairs))
}

// unpack sets the coefficients of base from x, one per free coefficient
// (free[k]: coefficient k is fitted; the others stay 0), in the order
// intercept, co SMACT, co DRAMA, co memory, self SMACT, self DRAMA, self
// memory.
func unpack(x []float64, free [7]bool, base PressureParams) PressureParams {
	var c [7]float64
	i := 0
	for k := range c {
		if free[k] {
			c[k], i = x[i], i+1
		}
	}
	base.Intercept, base.CoSMACT, base.CoDRAMA, base.CoMem = c[0], c[1], c[2], c[3]
	base.SelfSMACT, base.SelfDRAMA, base.SelfMem = c[4], c[5], c[6]
	return base
}

// freeCoefs reports which coefficients the pairs can fit: all but those of
// a feature that is 0 for every workload of the pairs (the legacy server
// has no DRAM activity measurement), which stay 0, and the memory ones
// with noMemory.
func freeCoefs(pairs []PairRun, cat *Catalog, noMemory bool) [7]bool {
	var smact, drama, mem bool
	for _, p := range pairs {
		for _, id := range []string{p.A.ID, p.B.ID} {
			pr := profileOf(cat, id)
			smact, drama, mem = smact || pr.SMACT.Mean != 0, drama || pr.DRAMA.Mean != 0, mem || pr.PeakMiB != 0
		}
	}
	mem = mem && !noMemory
	return [7]bool{true, smact, drama, mem, smact, drama, mem}
}

// FitPressure fits PressureModel to measured co-runs. Capacity is
// opt.Capacity when positive, else the largest measuredLoad among pairs;
// the seven exponent coefficients (those of a feature the pairs' workloads
// all lack, and with NoMemory the memory ones, held at 0) minimize pairLoss
// by Nelder–Mead (gonum/optimize), started from a 5 %
// per-co-runner overhead and no feature effects and restarted from its own
// result until the loss stops improving. The pairs are simulated exactly as
// measured: both start together, each runs at its co-located rate, the
// longer one finishes alone. Deterministic.
func FitPressure(pairs []PairRun, cat *Catalog, opt FitOptions) (PressureParams, error) {
	opt = opt.withDefaults()
	if len(pairs) == 0 {
		return PressureParams{}, errors.New("fit: no co-runs")
	}
	base := PressureParams{NWayExponent: opt.NWayExponent, Capacity: opt.Capacity}
	if opt.Capacity <= 0 {
		base.Capacity = 0
		for _, p := range pairs {
			base.Capacity = max(base.Capacity, measuredLoad(p, cat))
		}
	}
	free := freeCoefs(pairs, cat, opt.NoMemory)
	prob := optimize.Problem{Func: func(x []float64) float64 {
		return pairLoss(&PressureModel{P: unpack(x, free, base)}, cat, pairs)
	}}
	x := []float64{math.Log(0.05)}
	for _, f := range free[1:] {
		if f {
			x = append(x, 0)
		}
	}
	f := math.Inf(1)
	for range 8 {
		res, err := optimize.Minimize(prob, x, &optimize.Settings{FuncEvaluations: 20000}, &optimize.NelderMead{})
		if res == nil {
			return PressureParams{}, fmt.Errorf("fit: %w", err)
		}
		done := f-res.F < 1e-9
		if res.F < f {
			x, f = res.X, res.F
		}
		if done {
			break
		}
	}
	return unpack(x, free, base), nil
}

// ModelError is one model's error on co-run times: median and 90th
// percentile of the absolute percentage error (as a fraction) over N job
// predictions (two per co-run).
type ModelError struct {
	Model     string
	MedianAPE float64
	P90APE    float64
	N         int
}

// Calibration is the outcome of Calibrate.
type Calibration struct {
	Params PressureParams // fitted on all co-runs
	Pairs  int            // co-runs used
	Folds  int
	// HeldOut holds the cross-validated errors: the pressure model (refitted
	// on each fold's training pairs) first, then the baselines "none" and
	// "flat20" on the same held-out pairs.
	HeldOut []ModelError
	// LOWO holds the leave-one-workload-out errors, in HeldOut's order, when
	// FitOptions.LOWO asked for them (else nil): for each catalog workload,
	// the model is refitted on the co-runs not involving it and tested on
	// all co-runs that do. Workloads is the number of such folds.
	LOWO      []ModelError
	Workloads int
	// InSample is the final model's error on all co-runs it was fitted to.
	InSample ModelError
}

// Calibrate fits the pressure model to all pairs and estimates its error on
// unseen pairs by k-fold cross-validation grouped by catalog workload pair
// (Folds), next to two baselines on the same folds: "none" (no
// interference) and "flat20" (every shared job runs at 1/1.2). With
// opt.LOWO it also estimates the error on unseen workloads by
// leave-one-workload-out cross-validation (workloadHoldOuts), one refit per
// workload. The folds are fitted concurrently; the result is deterministic.
func Calibrate(pairs []PairRun, cat *Catalog, opt FitOptions) (*Calibration, error) {
	opt = opt.withDefaults()
	if opt.Folds < 2 {
		return nil, fmt.Errorf("calibrate: folds = %d, want at least 2", opt.Folds)
	}
	fold := Folds(pairs, opt.Folds)
	tests := make([][]int, opt.Folds)
	for i, k := range fold {
		tests[k] = append(tests[k], i)
	}
	for k, t := range tests {
		if len(t) == 0 || len(t) == len(pairs) {
			return nil, fmt.Errorf("calibrate: fold %d of %d is empty (%d distinct pairs)", k+1, opt.Folds, len(pairs))
		}
	}
	c := &Calibration{Pairs: len(pairs), Folds: opt.Folds}
	var err error
	if c.HeldOut, err = crossValidate(pairs, cat, opt, tests, func(k int) string {
		return fmt.Sprintf("fold %d", k+1)
	}); err != nil {
		return nil, err
	}
	if opt.LOWO {
		ids, tests := workloadHoldOuts(pairs)
		for k, t := range tests {
			if len(t) == len(pairs) {
				return nil, fmt.Errorf("calibrate: leave-one-workload-out: every co-run involves %s, none is left to fit on", ids[k])
			}
		}
		if c.LOWO, err = crossValidate(pairs, cat, opt, tests, func(k int) string {
			return "leave-one-workload-out " + ids[k]
		}); err != nil {
			return nil, err
		}
		c.Workloads = len(ids)
	}
	if c.Params, err = FitPressure(pairs, cat, opt); err != nil {
		return nil, err
	}
	var in []float64
	m := &PressureModel{P: c.Params}
	for _, p := range pairs {
		a, b := pairAPE(m, cat, p)
		in = append(in, a, b)
	}
	c.InSample = summarize("pressure", in)
	return c, nil
}

// crossValidate refits the pressure model once per test set (tests[k]
// holds indices into pairs; the training set is the rest) and returns the
// errors of it, "none" and "flat20" over every test set's co-runs, both
// jobs of each. The fits run concurrently, up to GOMAXPROCS at a time.
func crossValidate(pairs []PairRun, cat *Catalog, opt FitOptions, tests [][]int, label func(int) string) ([]ModelError, error) {
	names := []string{"pressure", "none", "flat20"}
	perFold := make([][][]float64, len(tests)) // [fold][model][]ape
	errs := make([]error, len(tests))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for k, test := range tests {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			in := make([]bool, len(pairs))
			for _, i := range test {
				in[i] = true
			}
			train := make([]PairRun, 0, len(pairs)-len(test))
			for i, p := range pairs {
				if !in[i] {
					train = append(train, p)
				}
			}
			pp, err := FitPressure(train, cat, opt)
			if err != nil {
				errs[k] = fmt.Errorf("calibrate: %s: %w", label(k), err)
				return
			}
			models := []Interference{&PressureModel{P: pp}, NoInterference{}, flatInterference{Slowdown: 1.2}}
			perFold[k] = make([][]float64, len(models))
			for mi, m := range models {
				for _, i := range test {
					a, b := pairAPE(m, cat, pairs[i])
					perFold[k][mi] = append(perFold[k][mi], a, b)
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]ModelError, len(names))
	for mi, n := range names {
		var apes []float64
		for k := range tests {
			apes = append(apes, perFold[k][mi]...)
		}
		out[mi] = summarize(n, apes)
	}
	return out, nil
}

func summarize(name string, apes []float64) ModelError {
	return ModelError{Model: name, MedianAPE: policies.Quantile(apes, 0.5), P90APE: policies.Quantile(apes, 0.9), N: len(apes)}
}
