package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/models"
)

// calibrateJSON is the --json output of aegis calibrate.
type calibrateJSON struct {
	Model            string                      `json:"model"`
	HeldOutMedianAPE float64                     `json:"heldout_median_ape"`
	HeldOutP90APE    float64                     `json:"heldout_p90_ape"`
	Baselines        map[string]calibrateAPEJSON `json:"baselines"`
	InSample         calibrateInSampleJSON       `json:"in_sample"`
	Pairs            int                         `json:"pairs"`
	Folds            int                         `json:"folds"`
	Params           models.PressureParams       `json:"params"`
	// LOWO is present with --lowo only.
	LOWO *calibrateLOWOJSON `json:"leave_one_workload_out,omitempty"`
}

// calibrateLOWOJSON is the leave-one-workload-out part of --json: the
// pressure model's errors and the baselines', as at the top level.
type calibrateLOWOJSON struct {
	Model            string                      `json:"model"`
	HeldOutMedianAPE float64                     `json:"heldout_median_ape"`
	HeldOutP90APE    float64                     `json:"heldout_p90_ape"`
	Baselines        map[string]calibrateAPEJSON `json:"baselines"`
	Workloads        int                         `json:"workloads"`
	Predictions      int                         `json:"predictions"`
}

type calibrateAPEJSON struct {
	HeldOutMedianAPE float64 `json:"heldout_median_ape"`
	HeldOutP90APE    float64 `json:"heldout_p90_ape"`
}

type calibrateInSampleJSON struct {
	MedianAPE float64 `json:"median_ape"`
	P90APE    float64 `json:"p90_ape"`
}

func newCalibrateCmd() *cobra.Command {
	var pairsPath, catalogPath, outPath, gpu string
	var folds int
	var nway float64
	var asJSON, lowo bool
	c := &cobra.Command{
		Use:   "calibrate",
		Short: "Fit the interference truth model to measured co-runs and report its held-out error",
		Long: `Fit the pressure interference model (see README, "Models and calibration") to
measured two-job co-runs by simulating each pair, estimate its error on unseen
pairs by k-fold cross-validation grouped by workload pair (the catalog
workloads the model sees, so runs it cannot tell apart stay in one fold), and
compare it with two baselines on the same folds: no interference, and a flat
20 % slowdown.

--lowo adds leave-one-workload-out cross-validation, the error on workloads
the fit has never seen: for each catalog workload the model is refitted on the
co-runs not involving it and tested on every co-run that does (one refit per
workload, several times slower).

--pairs takes the AEGIS artifact's pairwise_results.csv layout; --catalog takes
either the artifact's workload characterization (workload_catalog_a100.csv) or
our derived catalog format (models/data/catalog_a100.csv). Both default to the
shared calibration data (found beside the repository, or $AEGIS_SHARED).
--out writes the fitted parameters as YAML (models/data/interference_a100.yaml
is this command's output on the shipped data).`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if folds < 2 || folds > 50 {
				return usageError{fmt.Errorf("--folds %d: want 2..50", folds)}
			}
			if !(nway > 0 && nway <= 10) {
				return usageError{fmt.Errorf("--nway-exponent %v: want a number in (0, 10]", nway)}
			}
			gt, err := models.ResolveGPUType(gpu)
			if err != nil {
				return usageError{fmt.Errorf("--gpu: %w", err)}
			}
			gpu = gt.Name
			shared, ok := models.SharedDir()
			if pairsPath == "" || catalogPath == "" {
				if !ok {
					return usageError{fmt.Errorf("shared calibration data not found: %w; or give --pairs and --catalog", models.SharedDirError())}
				}
				if pairsPath == "" {
					pairsPath = filepath.Join(shared, "calibration", "aegis", "pairwise_a100_lucid_calibration.csv")
				}
				if catalogPath == "" {
					catalogPath = filepath.Join(shared, "calibration", "aegis", "workload_catalog_a100.csv")
				}
			}
			cat, err := models.LoadCatalog(catalogPath)
			if err != nil {
				return err
			}
			f, err := os.Open(pairsPath)
			if err != nil {
				return fmt.Errorf("pairs: %w", err)
			}
			defer f.Close()
			pairs, err := models.ReadPairs(f, pairsPath, cat)
			if err != nil {
				return err
			}
			cal, err := models.Calibrate(pairs, cat, models.FitOptions{Folds: folds, NWayExponent: nway, LOWO: lowo})
			if err != nil {
				return err
			}
			if outPath != "" {
				if err := calibrateWriteModel(outPath, pairsPath, gpu, cal); err != nil {
					return err
				}
			}
			out := c.OutOrStdout()
			if asJSON {
				j := calibrateJSON{Model: cal.HeldOut[0].Model, HeldOutMedianAPE: cal.HeldOut[0].MedianAPE,
					HeldOutP90APE: cal.HeldOut[0].P90APE, Baselines: map[string]calibrateAPEJSON{},
					InSample: calibrateInSampleJSON{cal.InSample.MedianAPE, cal.InSample.P90APE},
					Pairs:    cal.Pairs, Folds: cal.Folds, Params: cal.Params}
				for _, b := range cal.HeldOut[1:] {
					j.Baselines[b.Model] = calibrateAPEJSON{b.MedianAPE, b.P90APE}
				}
				if cal.LOWO != nil {
					l := &calibrateLOWOJSON{Model: cal.LOWO[0].Model, HeldOutMedianAPE: cal.LOWO[0].MedianAPE,
						HeldOutP90APE: cal.LOWO[0].P90APE, Baselines: map[string]calibrateAPEJSON{},
						Workloads: cal.Workloads, Predictions: cal.LOWO[0].N}
					for _, b := range cal.LOWO[1:] {
						l.Baselines[b.Model] = calibrateAPEJSON{b.MedianAPE, b.P90APE}
					}
					j.LOWO = l
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(j)
			}
			fmt.Fprintf(out, "%d co-runs, %d-fold cross-validation grouped by catalog workload pair\n\n", cal.Pairs, cal.Folds)
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "model\theld-out median APE\theld-out p90 APE\tpredictions")
			for _, m := range cal.HeldOut {
				fmt.Fprintf(tw, "%s\t%.1f %%\t%.1f %%\t%d\n", m.Model, 100*m.MedianAPE, 100*m.P90APE, m.N)
			}
			fmt.Fprintf(tw, "pressure (in-sample)\t%.1f %%\t%.1f %%\t%d\n", 100*cal.InSample.MedianAPE, 100*cal.InSample.P90APE, cal.InSample.N)
			if err := tw.Flush(); err != nil {
				return err
			}
			if cal.LOWO != nil {
				fmt.Fprintf(out, "\nleave-one-workload-out: %d workloads, each refitted without its co-runs and tested on all of them\n\n", cal.Workloads)
				tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "model\tunseen-workload median APE\tunseen-workload p90 APE\tpredictions")
				for _, m := range cal.LOWO {
					fmt.Fprintf(tw, "%s\t%.1f %%\t%.1f %%\t%d\n", m.Model, 100*m.MedianAPE, 100*m.P90APE, m.N)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
			p := cal.Params
			fmt.Fprintf(out, "\nfitted parameters (all co-runs):\n")
			tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			for _, kv := range []struct {
				k string
				v float64
			}{{"intercept", p.Intercept}, {"co_smact", p.CoSMACT}, {"co_drama", p.CoDRAMA}, {"co_mem_per_10gib", p.CoMem},
				{"self_smact", p.SelfSMACT}, {"self_drama", p.SelfDRAMA}, {"self_mem_per_10gib", p.SelfMem},
				{"capacity", p.Capacity}, {"nway_exponent", p.NWayExponent}} {
				fmt.Fprintf(tw, "  %s\t%.4f\n", kv.k, kv.v)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if outPath != "" {
				fmt.Fprintf(out, "\nwrote %s\n", outPath)
			}
			return nil
		},
	}
	c.Flags().StringVar(&pairsPath, "pairs", "", "measured co-runs CSV (default: shared pairwise_a100_lucid_calibration.csv)")
	c.Flags().StringVar(&catalogPath, "catalog", "", "workload catalog CSV, source or derived format (default: shared workload_catalog_a100.csv)")
	c.Flags().IntVar(&folds, "folds", 5, "cross-validation folds")
	c.Flags().Float64Var(&nway, "nway-exponent", 1, "assumed N-way exponent ρ (1 = co-runners' terms add); pairs cannot fit it")
	c.Flags().BoolVar(&asJSON, "json", false, "print the errors as one JSON object")
	c.Flags().BoolVar(&lowo, "lowo", false, "also report leave-one-workload-out errors (one refit per workload; slower)")
	c.Flags().StringVar(&outPath, "out", "", "write the fitted model as YAML to this file")
	c.Flags().StringVar(&gpu, "gpu", "a100-40gb", "GPU type the co-runs were measured on (recorded in --out)")
	return c
}

func calibrateWriteModel(path, pairsPath, gpu string, cal *models.Calibration) error {
	rec := &models.FitRecord{Source: filepath.Base(pairsPath), Pairs: cal.Pairs, Folds: cal.Folds,
		HeldOut:  map[string]models.APE{},
		InSample: models.APE{Median: calibrateRound6(cal.InSample.MedianAPE), P90: calibrateRound6(cal.InSample.P90APE)}}
	for _, m := range cal.HeldOut {
		rec.HeldOut[m.Model] = models.APE{Median: calibrateRound6(m.MedianAPE), P90: calibrateRound6(m.P90APE)}
	}
	if cal.LOWO != nil {
		rec.LOWO = map[string]models.APE{}
		for _, m := range cal.LOWO {
			rec.LOWO[m.Model] = models.APE{Median: calibrateRound6(m.MedianAPE), P90: calibrateRound6(m.P90APE)}
		}
	}
	file := &models.InterferenceFile{Model: "pressure", GPU: gpu, Params: cal.Params, Fit: rec}
	comment := "Interference truth model fitted by `aegis calibrate` (models.PressureModel).\n" +
		"Data: the AEGIS artifact's measured co-runs (" + rec.Source + ", see NOTICE)\n" +
		"and the workloads' solo pressure profiles from the catalog. Errors are absolute\n" +
		"percentage errors of co-run time (fractions); heldout = k-fold cross-validation\n" +
		"grouped by catalog workload pair.\n"
	if rec.LOWO != nil {
		comment += "leave_one_workload_out = one refit per workload without its co-runs (--lowo).\n"
	}
	comment += "Regenerate: go run ./cmd/aegis calibrate --out models/data/interference_a100.yaml"
	var b bytes.Buffer
	err := models.WriteInterference(&b, file, comment)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

func calibrateRound6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
