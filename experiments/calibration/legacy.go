package calibration

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/aegis-sched/aegis/models"
)

// LegacyGPU is the legacy 8 × 11 GB server's GPU type, the one whose
// measurements LegacyPaths names.
const LegacyGPU = "legacy-11gb"

// legacyClasses are the legacy server's two GPU speed classes: in its
// measured Exclusive runs, placed on the lowest-numbered free GPU, every job
// slowed more than 1.5× ran on GPUs 4–7 and none on GPUs 0–3
// (docs/legacy.md).
var legacyClasses = []models.SpeedClass{{Name: "fast", GPUs: []int{0, 1, 2, 3}}, {Name: "slow", GPUs: []int{4, 5, 6, 7}}}

// legacyServerGPUs is the legacy server's GPU count.
const legacyServerGPUs = 8

// LegacyPaths are the legacy server's measurements in the shared data
// folder: its co-runs and its Exclusive runs' per-job metrics.
func LegacyPaths() (pairs, jobs string, err error) {
	shared, ok := models.SharedDir()
	if !ok {
		return "", "", fmt.Errorf("%w: %w", ErrNoData, models.SharedDirError())
	}
	d := filepath.Join(shared, "calibration", "aegis", "legacy")
	return filepath.Join(d, "pairwise_legacy.csv"), filepath.Join(d, "exclusive_jobs_legacy.csv"), nil
}

// legacyDefaults fills in the legacy server's data: its co-runs, the
// embedded legacy catalog (an empty CatalogPath), no stacks (none were
// measured there: ρ stays 1 unless --nway-exponent says otherwise).
func (o Options) legacyDefaults() (Options, error) {
	if o.StacksDir != "" {
		return o, fmt.Errorf("--stacks: no stacking data exist for %s; it is fitted on its pairs only", LegacyGPU)
	}
	o.NoStacks = true
	if o.PairsPath == "" {
		pairs, _, err := LegacyPaths()
		if err != nil {
			return o, fmt.Errorf("%w; or give --pairs", err)
		}
		o.PairsPath = pairs
	}
	return o, nil
}

// FitLegacySpeeds fits the legacy server's speed classes (models.Speeds)
// to its measured Exclusive runs (the per-job metrics at jobsPath): the
// jobs are placed on the lowest-numbered free GPU (models.PlaceLowestFree)
// and GPUs 0–3 and 4–7 each get every workload's factor (models.FitSpeeds), against
// the embedded legacy catalog's solo times and utilization.
func FitLegacySpeeds(jobsPath string) (*models.Speeds, error) {
	f, err := os.Open(jobsPath)
	if err != nil {
		return nil, fmt.Errorf("legacy speeds: %w", err)
	}
	defer f.Close()
	cat := models.Legacy11GB()
	jobs, err := models.ReadExclusiveJobs(f, jobsPath, cat)
	if err != nil {
		return nil, err
	}
	// The dispatch and completion records come from different clocks: a
	// dispatch up to 5 s before the completion it waited for is the same
	// instant.
	if err := models.PlaceLowestFree(jobs, legacyServerGPUs, 5); err != nil {
		return nil, fmt.Errorf("%s: %w", jobsPath, err)
	}
	sp := &models.Speeds{Source: filepath.Base(jobsPath)}
	for _, c := range legacyClasses {
		fit, err := models.FitSpeeds(jobs, cat, c)
		if err != nil {
			return nil, err
		}
		sp.Classes = append(sp.Classes, fit)
	}
	return sp, nil
}

// SpeedsComment heads a speed-class file written by `aegis calibrate`.
const SpeedsComment = `Speed classes of the legacy 8 x 11 GB server's GPUs (models.Speeds), fitted by
models.FitSpeeds on its three measured Exclusive runs (exclusive_jobs_legacy.csv, see
NOTICE): jobs placed on the lowest-numbered free GPU; each class (GPUs 0-3, GPUs 4-7)
stretches a workload's solo time by its program's factor there (log execution/solo
ratio = program term + GPU term, least squares), or by exp(util_slope * utilization)
for a program never run there, times the GPU's factor (gpu_factors: kept only where
they lower the class's leave-one-job-out error).
Errors are absolute percentage errors of the class's execution times (fractions).
Regenerate: go run ./cmd/aegis calibrate --gpu legacy-11gb --speeds-out models/data/speeds_legacy11gb.yaml`

// WriteSpeedsText prints the speed classes' fit (nothing for nil): per class
// its GPUs, utilization slope and cross-validated errors.
func WriteSpeedsText(w io.Writer, sp *models.Speeds) {
	if sp == nil {
		return
	}
	for _, c := range sp.Classes {
		fmt.Fprintf(w, "\nGPU speed class %s (GPUs %v), fitted on %s: %d workload factors, utilization slope %.3f\n",
			c.Name, c.GPUs, sp.Source, len(c.Factors), c.UtilSlope)
		if len(c.GPUFactors) > 0 {
			fmt.Fprintf(w, "per-GPU factors:")
			for _, g := range slices.Sorted(maps.Keys(c.GPUFactors)) {
				fmt.Fprintf(w, " GPU %d %.3f", g, c.GPUFactors[g])
			}
			fmt.Fprintln(w)
		}
		if r := c.Fit; r != nil {
			fmt.Fprintf(w, "execution time of its %d jobs, median / p90 APE:\n", r.Jobs)
			fmt.Fprintf(w, "  leave one job out      %5.1f %% / %5.1f %%\n", 100*r.LeaveOneJobOut.Median, 100*r.LeaveOneJobOut.P90)
			if len(c.GPUFactors) > 0 {
				fmt.Fprintf(w, "    one speed per class  %5.1f %% / %5.1f %%\n", 100*r.OneSpeedLeaveOneJobOut.Median, 100*r.OneSpeedLeaveOneJobOut.P90)
			}
			fmt.Fprintf(w, "  leave one program out  %5.1f %% / %5.1f %%\n", 100*r.LeaveOneProgramOut.Median, 100*r.LeaveOneProgramOut.P90)
			fmt.Fprintf(w, "  none (profiled speed)  %5.1f %% / %5.1f %%\n", 100*r.None.Median, 100*r.None.P90)
		}
	}
}
