package calibration

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
)

// A100BoardW is the A100 SXM4 40 GB's maximum board power (TDP), 400 W,
// from NVIDIA's A100 datasheet: the power model's upper bound, not fitted.
const A100BoardW = 400

// PowerSource names the embedded A100 power model's measurements.
const PowerSource = "DCGM run summaries of the testbed's 10 Philly and Saturn trace runs on 3 x A100 SXM4 40 GB (calibration/aegis/testbed_runs/dcgm_run_summary.csv of the shared calibration data)"

// PowerComment heads the embedded power model's YAML file.
const PowerComment = `Power model of the A100 SXM4 40 GB (models.PowerModel), fitted by ` + "`aegis calibrate power`" + `.
Derived parameters only: the measurements stay in the shared data folder (see source).
Regenerate: go test ./experiments/calibration -run TestEmbeddedPower -update`

// PowerRunsPath is the shared DCGM run summaries (dcgm_run_summary.csv).
func PowerRunsPath() (string, error) {
	shared, ok := models.SharedDir()
	if !ok {
		return "", fmt.Errorf("%w: %w; or give --runs", ErrNoData, models.SharedDirError())
	}
	return filepath.Join(shared, "calibration", "aegis", "testbed_runs", "dcgm_run_summary.csv"), nil
}

// PowerOptions are aegis calibrate power's inputs.
type PowerOptions struct {
	// RunsPath is the DCGM run summaries (default: PowerRunsPath).
	RunsPath string
	// ExecDirs, instead, are aegis exec run directories whose
	// telemetry.csv has the GPUs' power (ExecPowerRun).
	ExecDirs []string
	// GPU is the GPU type measured; BoardW its power limit (0: the
	// A100's for a100-40gb, else required).
	GPU    string
	BoardW float64
	// MemGiB is the memory a full load uses (the bound's check); 0: the
	// GPU type's capacity.
	MemGiB float64
}

// FitPowerRuns fits a power model on the runs of o (models.FitPower).
func FitPowerRuns(o PowerOptions) (*models.PowerFit, error) {
	gt, err := models.ResolveGPUType(o.GPU)
	if err != nil {
		return nil, err
	}
	if len(o.ExecDirs) > 0 && o.RunsPath != "" {
		return nil, errors.New("--runs and --exec: give one of them")
	}
	source := PowerSource
	if len(o.ExecDirs) > 0 {
		source = "the power readings of aegis exec runs " + strings.Join(o.ExecDirs, ", ")
	} else if o.RunsPath == "" {
		if o.RunsPath, err = PowerRunsPath(); err != nil {
			return nil, err
		}
	} else {
		source = "DCGM run summaries in " + filepath.Base(o.RunsPath)
	}
	if o.BoardW == 0 {
		if gt.Name != "a100-40gb" {
			return nil, fmt.Errorf("--board-w: the power limit of %s is not known here; give it (W, from its datasheet or nvidia-smi -q)", gt.Name)
		}
		o.BoardW = A100BoardW
	}
	if o.MemGiB == 0 {
		o.MemGiB = gt.MemoryMiB / 1024
	}
	var runs []models.PowerRun
	for _, d := range o.ExecDirs {
		r, err := ExecPowerRun(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		f, err := os.Open(o.RunsPath)
		if err != nil {
			return nil, fmt.Errorf("power runs: %w", err)
		}
		defer f.Close()
		if runs, err = models.ReadPowerRuns(f, o.RunsPath); err != nil {
			return nil, err
		}
	}
	return models.FitPower(runs, gt.Name, source, o.BoardW, o.MemGiB)
}

// WritePowerText prints a power fit: the model, why its terms, and every
// term set's errors of run energy.
func WritePowerText(w io.Writer, fit *models.PowerFit) error {
	m := fit.Model
	pct := func(x float64) string {
		if math.IsNaN(x) {
			return "-"
		}
		return fmt.Sprintf("%.2f %%", 100*x)
	}
	fmt.Fprintf(w, "power model of %s, fitted on %d runs (%s)\n", m.GPU, m.Fit.Runs, m.Source)
	fmt.Fprintf(w, "  idle %.1f W; busy +%.1f W; smact %.1f W, drama %.1f W, smocc %.1f W per unit; %.2f W per GiB used; board limit %.0f W\n",
		m.IdleW, m.BusyW, m.SMACTW, m.DRAMAW, m.SMOCCW, m.MemWPerGiB, m.BoardW)
	fmt.Fprintf(w, "  terms kept: %s (each lowered the median leave-one-run-out error by >= %.1f points with a physical fit)\n",
		termsText(m.Fit.Terms), 100*models.MinPowerGain)
	fmt.Fprintf(w, "  full-load power %.0f W (all signals 1, memory full); run energy error: leave one run out median %s, max %s; in sample median %s; fit on one trace, other trace median %s\n\n",
		fit.Chosen.FullW, pct(fit.Chosen.LOOMedian), pct(fit.Chosen.LOOMax), pct(policies.Quantile(fit.Chosen.InSample, 0.5)), pct(fit.Chosen.CrossM))
	fmt.Fprintf(w, "%-24s %10s %10s %12s %9s %9s  %s\n", "terms (+ idle, busy)", "LOO med", "LOO max", "other trace", "idle W", "full W", "physical")
	for _, s := range fit.Sets {
		phys := "yes"
		if !s.Physical {
			phys = "no"
		}
		fmt.Fprintf(w, "%-24s %10s %10s %12s %9.1f %9.0f  %s\n", termsText(s.Terms), pct(s.LOOMedian), pct(s.LOOMax), pct(s.CrossM), s.IdleW, s.FullW, phys)
	}
	return nil
}

func termsText(ts []string) string {
	if len(ts) == 0 {
		return "none"
	}
	return strings.Join(ts, "+")
}
