package fidelity

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
)

// TestbedEnergyPath is the testbed's DCGM run summaries in the shared
// folder: the measured energy of its 10 Philly and Saturn trace runs.
const TestbedEnergyPath = "calibration/aegis/testbed_runs/dcgm_run_summary.csv"

// testbedRuns maps the testbed runs' raw_label to the table and config
// label of ours that runs the same configuration.
var testbedRuns = []struct {
	label  string
	table  int
	config string
}{
	{"exclusive", 2, "Exclusive"}, {"aegis_magm_thresholded", 2, "AEGIS Est-free"},
	{"aegis_magm_no_thresholds", 5, "MFM-NF"}, {"aegis_lug_thresholded", 5, "MU"}, {"aegis_lug_no_thresholds", 5, "MU-NF"},
}

// EnergyRow is one measured testbed run beside our simulated energy of the
// same trace and configuration (mean ± 95 % CI over seeds).
type EnergyRow struct {
	Trace, Label, Config string
	Table                int
	MeasuredKWh          float64
	MeasuredW            float64 // mean power per GPU over the run
	Ours, OursW          results.Stat
}

// loadEnergy reads the testbed's measured energy and ours from dir's
// tables' cells.csv (energy_kwh, mean_gpu_power_w). Missing files leave
// the rows out; a note says why when there are none.
func loadEnergy(dir, shared string) ([]EnergyRow, string, error) {
	if shared == "" {
		return nil, "unavailable: no shared data folder", nil
	}
	rows, err := readCSV(filepath.Join(shared, TestbedEnergyPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "unavailable: the shared data folder has no " + TestbedEnergyPath, nil
	}
	if err != nil {
		return nil, "", err
	}
	col := header(rows[0])
	for _, c := range []string{"trace", "raw_label", "total_gpu_energy_j", "window_duration_s", "energy_gpu_count"} {
		if _, ok := col[c]; !ok {
			return nil, "", fmt.Errorf("%s:1: no %q column", TestbedEnergyPath, c)
		}
	}
	ours := map[int][][]string{}
	var out []EnergyRow
	for i, row := range rows[1:] {
		var cfg *struct {
			label  string
			table  int
			config string
		}
		for k := range testbedRuns {
			if testbedRuns[k].label == row[col["raw_label"]] {
				cfg = &testbedRuns[k]
			}
		}
		if cfg == nil {
			continue
		}
		vals := map[string]float64{}
		for _, c := range []string{"total_gpu_energy_j", "window_duration_s", "energy_gpu_count"} {
			if vals[c], err = num(row, col[c]); err != nil {
				return nil, "", fmt.Errorf("%s:%d: %s: %w", TestbedEnergyPath, i+2, c, err)
			}
		}
		if _, ok := ours[cfg.table]; !ok {
			cells, err := readCSV(filepath.Join(dir, fmt.Sprintf("table%d", cfg.table), rundir.Cells))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, "", err
			}
			ours[cfg.table] = cells
		}
		r := EnergyRow{Trace: row[col["trace"]], Label: cfg.label, Config: cfg.config, Table: cfg.table,
			MeasuredKWh: vals["total_gpu_energy_j"] / 3.6e6,
			MeasuredW:   vals["total_gpu_energy_j"] / vals["window_duration_s"] / vals["energy_gpu_count"]}
		r.Ours, r.OursW = oursEnergy(ours[cfg.table], r.Trace, r.Config)
		out = append(out, r)
	}
	return out, "", nil
}

// oursEnergy is the seeds' energy_kwh and mean_gpu_power_w of a trace and
// config in cells (undefined when absent).
func oursEnergy(cells [][]string, trace, config string) (kwh, w results.Stat) {
	nan := results.Stat{Mean: math.NaN(), CI95: math.NaN()}
	if len(cells) < 2 {
		return nan, nan
	}
	col := header(cells[0])
	ke, okE := col["energy_kwh"]
	kw, okW := col["mean_gpu_power_w"]
	if !okE || !okW {
		return nan, nan
	}
	var es, ws []float64
	for _, row := range cells[1:] {
		if row[col["trace"]] != trace || row[col["config"]] != config {
			continue
		}
		e, err1 := strconv.ParseFloat(row[ke], 64)
		p, err2 := strconv.ParseFloat(row[kw], 64)
		if err1 == nil && err2 == nil {
			es, ws = append(es, e), append(ws, p)
		}
	}
	if len(es) == 0 {
		return nan, nan
	}
	return results.StatOf(es), results.StatOf(ws)
}

// writeEnergy writes the energy section: every measured run beside ours.
func (r *Report) writeEnergy(b *strings.Builder) {
	b.WriteString("## Energy beside the testbed's measured runs\n\n")
	if r.EnergyNote != "" {
		fmt.Fprintf(b, "Measured energy: %s.\n\n", r.EnergyNote)
		return
	}
	fmt.Fprintf(b, "Measured: DCGM's energy counter over each of the testbed's 10 trace runs on 3 × A100 (shared:%s; one run each). "+
		"Ours: the simulated energy to solution (power model of docs/energy.md, fitted on these same runs' mean power: "+
		"the comparison checks the simulated activity and makespan, not an independent fit), mean ± 95 %% CI over seeds. "+
		"Mean power is per GPU over the run.\n\n", TestbedEnergyPath)
	b.WriteString("| Trace | Run | Ours (table, config) | Measured kWh | Ours kWh | Error | Measured W | Ours W |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	var errs []float64
	for _, e := range r.Energy {
		errTxt := "-"
		if !math.IsNaN(e.Ours.Mean) {
			d := e.Ours.Mean/e.MeasuredKWh - 1
			errs = append(errs, math.Abs(d))
			errTxt = fmt.Sprintf("%+.1f %%", 100*d)
		}
		fmt.Fprintf(b, "| %s | %s | Table %d, %s | %.2f | %s | %s | %.1f | %s |\n", e.Trace, e.Label, e.Table, e.Config,
			e.MeasuredKWh, statText(e.Ours, 2), errTxt, e.MeasuredW, statText(e.OursW, 1))
	}
	if len(errs) > 0 {
		fmt.Fprintf(b, "\nMedian |error| of energy over the %d runs: %.1f %%.\n", len(errs), 100*median(errs))
	}
	b.WriteString("\n")
}

func statText(s results.Stat, digits int) string {
	if math.IsNaN(s.Mean) {
		return "-"
	}
	if math.IsNaN(s.CI95) || s.N < 2 {
		return strconv.FormatFloat(s.Mean, 'f', digits, 64)
	}
	return fmt.Sprintf("%.*f ± %.*f", digits, s.Mean, digits, s.CI95)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
