package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments/calibration"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/sim"
)

// legacySpeeds fits the legacy server's speed classes on the Exclusive
// runs at path (default: the shared data) and writes them to out when set.
func legacySpeeds(path, out string) (*models.Speeds, error) {
	if path == "" {
		_, jobs, err := calibration.LegacyPaths()
		if err != nil {
			return nil, usageError{fmt.Errorf("%w; or give --exclusive", err)}
		}
		path = jobs
	}
	sp, err := calibration.FitLegacySpeeds(path)
	if err != nil {
		return nil, err
	}
	if out != "" {
		if err := results.WriteFile(out, func(w io.Writer) error {
			return models.WriteSpeeds(w, sp, calibration.SpeedsComment)
		}); err != nil {
			return nil, fmt.Errorf("--speeds-out: %w", err)
		}
	}
	return sp, nil
}

// checkCalibrateOptions checks calibrate's flags (nwaySet: --nway-exponent
// was given) and sets o.GPU to the GPU type's canonical name.
func checkCalibrateOptions(o *calibration.Options, nwaySet bool) error {
	if o.Folds < 2 || o.Folds > 50 {
		return usageError{fmt.Errorf("--folds %d: want 2..50", o.Folds)}
	}
	if !(o.NWayExponent > 0 && o.NWayExponent <= 10) {
		return usageError{fmt.Errorf("--nway-exponent %v: want a number in (0, 10]", o.NWayExponent)}
	}
	if nwaySet && !o.NoStacks {
		return usageError{errors.New("--nway-exponent: with the stacking data ρ is fitted; give --no-stacks to set it")}
	}
	gt, err := models.ResolveGPUType(o.GPU)
	if err != nil {
		return usageError{fmt.Errorf("--gpu: %w", err)}
	}
	o.GPU = gt.Name
	if o.Seeds < 1 || o.Seeds > 20 {
		return usageError{fmt.Errorf("--seeds %d: want 1..20", o.Seeds)}
	}
	return nil
}

// calibrateReport prints calibrate --report: the model at modelPath (default
// the embedded one) against the stacking data, under the --truth settings.
func calibrateReport(out io.Writer, o calibration.Options, modelPath string, truths []string) error {
	tm, err := policies.ParseFlagSets("--truth", truths)
	if err != nil {
		return usageError{err}
	}
	truth, err := sim.ParseTruth(tm)
	if err != nil {
		return usageError{fmt.Errorf("--truth: %w", err)}
	}
	rep, err := calibration.ReportModel(o.StacksDir, modelPath, &truth, o.Seeds)
	if errors.Is(err, calibration.ErrNoData) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	return calibration.WriteReport(out, rep)
}

func newCalibrateCmd() *cobra.Command {
	var o calibration.Options
	var outPath, modelPath, speedsOut, jobsPath, bootOut string
	var bootstrap int
	var bootSeed uint64
	var asJSON, report bool
	var truths []string
	c := &cobra.Command{
		Use:   "calibrate",
		Short: "Fit the interference truth model to measured co-runs and stacks and report its held-out errors",
		Long: `Fit the pressure interference model (docs/models.md, docs/nway.md) to measured
two-job co-runs by simulating each pair, estimate its error on unseen pairs by
k-fold cross-validation grouped by workload pair, and compare it with two
baselines on the same folds: no interference, and a flat 20 % slowdown.

With the progressive stacking data (--stacks DIR, default the shared
calibration/aegis/nway), the N-way parameters are fitted too: the exponent ρ
and capacity κ jointly on pairs and the 4-5-job stacks' no-deferral runs, and
the telemetry combination (how co-located jobs' SMACT/SMOCC/DRAMA add up) on
the threshold grid's admission decisions; their errors are reported for the
embedded model (before), in-sample, leaving one sequence out and leaving one
workload set out. --no-stacks fits the pairs only (ρ from --nway-exponent).

--report prints, without fitting, Markdown tables comparing a model (--model
FILE, default the embedded one) with every stack and grid measurement, under
the simulator's truth settings (--truth key=value, e.g. speed_jitter=0.03 to
compare the spread over --seeds with the testbed's run-to-run spread).

--lowo adds leave-one-workload-out cross-validation of the pairs (one refit
per workload, several times slower).

Data. --pairs takes the AEGIS artifact's pairwise results layout (one row per
co-run: workload_a,workload_b,solo_time_a_s,solo_time_b_s,pair_time_a_s,
pair_time_b_s); --catalog either the artifact's workload characterization
(workload_catalog_a100.csv) or our derived catalog format; --stacks a folder
with progressive_sequences.csv, progressive_targets.csv and threshold_grid.csv.
All default to the shared calibration data (found beside the repository, or
$AEGIS_SHARED); without it, the error explains where the data come from.
--out writes the fitted model as YAML (models/data/interference_a100.yaml is
this command's output on the shipped data).

--gpu legacy-11gb fits the legacy 8 x 11 GB server from its own measurements
(docs/legacy.md): the pressure model on its 52 co-runs (spec_a_key/spec_b_key
layout) with nvidia-smi utilization as the activity feature (no stacks there),
and the speed classes of its GPUs from its three Exclusive runs (--exclusive);
--speeds-out writes those (models/data/speeds_legacy11gb.yaml).

` + "`aegis calibrate power`" + ` fits the power model of the energy columns (docs/energy.md).`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkCalibrateOptions(&o, c.Flags().Changed("nway-exponent")); err != nil {
				return err
			}
			if (modelPath != "" || len(truths) > 0) && !report {
				return usageError{errors.New("--model and --truth are read by --report only")}
			}
			out := c.OutOrStdout()
			if report {
				return calibrateReport(out, o, modelPath, truths)
			}
			if bootstrap > 0 {
				return runBootstrap(c, o, bootstrap, bootSeed, bootOut)
			}
			if speedsOut != "" && o.GPU != calibration.LegacyGPU {
				return usageError{fmt.Errorf("--speeds-out: only --gpu %s has speed classes to fit", calibration.LegacyGPU)}
			}
			res, err := calibration.Run(o)
			if errors.Is(err, calibration.ErrNoData) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			var speeds *models.Speeds
			if o.GPU == calibration.LegacyGPU {
				if speeds, err = legacySpeeds(jobsPath, speedsOut); err != nil {
					return err
				}
			}
			if outPath != "" {
				if err := res.WriteModel(outPath); err != nil {
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				j := res.JSON()
				j.Speeds = speeds
				return enc.Encode(j)
			}
			if err := res.WriteText(out); err != nil {
				return err
			}
			calibration.WriteSpeedsText(out, speeds)
			for _, p := range []string{outPath, speedsOut} {
				if p != "" {
					fmt.Fprintf(out, "\nwrote %s\n", p)
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&o.PairsPath, "pairs", "", "measured co-runs CSV (default: shared pairwise_a100_lucid_calibration.csv)")
	c.Flags().StringVar(&o.CatalogPath, "catalog", "", "workload catalog CSV, source or derived format (default: shared workload_catalog_a100.csv)")
	c.Flags().StringVar(&o.StacksDir, "stacks", "", "progressive stacking data folder (default: shared calibration/aegis/nway)")
	c.Flags().BoolVar(&o.NoStacks, "no-stacks", false, "fit the pairs only (ρ from --nway-exponent, κ from the pairs)")
	c.Flags().IntVar(&o.Folds, "folds", 5, "cross-validation folds of the pairs")
	c.Flags().Float64Var(&o.NWayExponent, "nway-exponent", 1, "N-way exponent ρ with --no-stacks (1 = co-runners' terms add)")
	c.Flags().IntVar(&o.Seeds, "seeds", 3, "simulator seeds per stack replay")
	c.Flags().BoolVar(&asJSON, "json", false, "print the errors as one JSON object")
	c.Flags().BoolVar(&o.LOWO, "lowo", false, "also report leave-one-workload-out errors (one refit per workload; slower)")
	c.Flags().StringVar(&outPath, "out", "", "write the fitted model as YAML to this file")
	c.AddCommand(newCalibratePowerCmd())
	c.Flags().StringVar(&speedsOut, "speeds-out", "", "with --gpu legacy-11gb: write the fitted GPU speed classes as YAML to this file")
	c.Flags().StringVar(&jobsPath, "exclusive", "", "with --gpu legacy-11gb: the measured Exclusive runs' per-job metrics (default: shared legacy/exclusive_jobs_legacy.csv)")
	c.Flags().IntVar(&bootstrap, "bootstrap", 0, "refit the speed model this many times on resampled pairs (and stacks) instead, and on the A100 the steady saturation u1 and depth term δ on resampled testbed runs (about 20; refit 0 as measured)")
	c.Flags().Uint64Var(&bootSeed, "bootstrap-seed", 1, "with --bootstrap: the resampling's seed")
	c.Flags().StringVar(&bootOut, "bootstrap-out", "", "with --bootstrap: write each refit as a model file DIR/refit-NN.yaml (a spec config's model:)")
	c.Flags().StringVar(&o.GPU, "gpu", "a100-40gb", "GPU type the data were measured on (recorded in --out)")
	c.Flags().BoolVar(&report, "report", false, "print Markdown tables comparing a model with the stacking data, without fitting")
	c.Flags().StringVar(&modelPath, "model", "", "with --report: the model YAML to compare (default: the embedded model)")
	c.Flags().StringArrayVar(&truths, "truth", nil, "with --report: simulator truth setting key=value (repeatable), e.g. speed_jitter=0.03")
	return c
}

// runBootstrap is aegis calibrate --bootstrap: n refits on resampled
// measurements, their parameters' spread, and with dir the refits' files.
func runBootstrap(c *cobra.Command, o calibration.Options, n int, seed uint64, dir string) error {
	if n > 200 {
		return usageError{fmt.Errorf("--bootstrap %d: want 1..200", n)}
	}
	refits, err := calibration.Bootstrap(o, n, seed)
	if errors.Is(err, calibration.ErrNoData) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	steady, delta, err := calibration.TelemetryRefits(o.GPU, n, seed)
	if err != nil {
		return err
	}
	out := c.OutOrStdout()
	calibration.WriteRefitsText(out, refits, steady, delta)
	if dir == "" {
		return nil
	}
	paths, err := calibration.WriteRefits(dir, o.GPU, seed, refits, steady, delta)
	for _, p := range paths {
		fmt.Fprintf(out, "wrote %s\n", p)
	}
	return err
}
