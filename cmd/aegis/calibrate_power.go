package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments/calibration"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
)

func newCalibratePowerCmd() *cobra.Command {
	var o calibration.PowerOptions
	var outPath string
	var asJSON bool
	c := &cobra.Command{
		Use:   "power",
		Short: "Fit a GPU type's power model to measured runs' DCGM summaries and report its leave-one-run-out energy error",
		Long: `Fit the power model the simulator's energy columns use (docs/energy.md): a GPU's
power is its idle power when no job is active on it, and otherwise idle + busy plus
terms linear in the activity (SMACT, DRAMA, SMOCC, memory used), capped at the board
power limit. Idle power is the runs' mean power over their idle GPU-seconds; busy and
the terms are fitted by least squares on the runs' mean power over their active
GPU-seconds. A term is kept when it lowers the median leave-one-run-out error of run
energy by at least 0.1 point and the fit stays physical (no negative coefficient,
full load within the board limit). The report lists every term set's errors, and the
error of fitting on one trace and predicting the other.

--runs takes one row per measured run with the columns
  trace,raw_label,window_duration_s,active_row_fraction,power_trace_mean_w,
  power_active_mean_w,total_gpu_energy_j,energy_gpu_count,smact_active_mean,
  smocc_active_mean,drama_active_mean,used_gpu_memory_active_mean_gb
(the testbed's dcgm_run_summary.csv; docs/energy.md says how to make it from a
DCGM or NVML log). The default is the shared testbed_runs/dcgm_run_summary.csv;
models/data/power_a100.yaml is this command's --out on it. --exec DIR (repeated,
instead of --runs) fits on aegis exec run directories of your own GPUs: each
one's telemetry.csv, with the power read every second, is summarized into such a
row (a reading is active when util, SMACT, SMOCC or DRAMA is above 0). --out writes the model
as YAML, which a GPU type file's power: key names.`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			fit, err := calibration.FitPowerRuns(o)
			if errors.Is(err, calibration.ErrNoData) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			if outPath != "" {
				if err := results.WriteFile(outPath, func(w io.Writer) error {
					return models.WritePowerModel(w, fit.Model, calibration.PowerComment)
				}); err != nil {
					return fmt.Errorf("--out: %w", err)
				}
			}
			out := c.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(fit.Model)
			}
			if err := calibration.WritePowerText(out, fit); err != nil {
				return err
			}
			if outPath != "" {
				fmt.Fprintf(out, "\nwrote %s\n", outPath)
			}
			return nil
		},
	}
	c.Flags().StringVar(&o.RunsPath, "runs", "", "DCGM run summaries CSV (default: shared testbed_runs/dcgm_run_summary.csv)")
	c.Flags().StringArrayVar(&o.ExecDirs, "exec", nil, "an aegis exec run directory with power in its telemetry.csv (repeat: one per run), instead of --runs")
	c.Flags().StringVar(&o.GPU, "gpu", "a100-40gb", "GPU type the runs were measured on (built-in name or GPU type YAML)")
	c.Flags().Float64Var(&o.BoardW, "board-w", 0, "the GPU's board power limit, W (default: 400 for a100-40gb; required otherwise)")
	c.Flags().StringVar(&outPath, "out", "", "write the fitted model as YAML to this file")
	c.Flags().BoolVar(&asJSON, "json", false, "print the model as JSON")
	return c
}
