package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/results/measured"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/results/runfiles"
	"github.com/aegis-sched/aegis/traces"
)

// measuredFlags are aegis measured's flags.
type measuredFlags struct {
	simulateFlags
	seeds, format, dcgm string
	sz                  sizeFlags
}

// testbedConfigs maps the testbed's configuration_label
// (calibration/aegis/testbed_runs) to the policy and parameters that run
// it here.
var testbedConfigs = map[string]struct {
	policy string
	sets   []string
}{
	"exclusive":                {"exclusive", nil},
	"aegis_magm_thresholded":   {"aegis", []string{"placement=mfm", "filter=pressure"}},
	"aegis_magm_no_thresholds": {"aegis", []string{"placement=mfm", "filter=nf"}},
	"aegis_lug_thresholded":    {"aegis", []string{"placement=mu", "filter=pressure"}},
	"aegis_lug_no_thresholds":  {"aegis", []string{"placement=mu", "filter=nf"}},
}

func newMeasuredCmd() *cobra.Command {
	var fl measuredFlags
	c := &cobra.Command{
		Use:   "measured RUN.csv",
		Short: "Set a simulated run beside a measured run of the same trace, job by job",
		Long: `Replay the trace a measured run ran (--trace) under the same policy and
configuration, one run per seed, and set the runs beside the measured one: jobs
running at once over time (max and time-weighted mean), makespan, execution span
(first launch to completion) mean and p95, queue mean and p95, JCT mean, failed
attempts, and per job the execution span ours ÷ measured (median ratio, median and
90th percentile of |ratio − 1|), the jobs paired in submission order, beside the
seed floor: the same median |ratio − 1| between two of our own seeds (jobs matched
by id), the median over all pairs of --seeds (two seeds at least).

RUN.csv is the measured run's per-job timeline: the testbed's job_metrics file
(calibration/aegis/testbed_runs; its configuration_label picks the policy and
parameters when --policy is not given), or a minimal CSV written from any cluster's
logs with columns submit_s,start_s,finish_s and optionally last_start_s (launch of
the attempt that completed; default start_s), queue_s, failed_attempts, workload_id,
job_id. Times are seconds or timestamps (docs/measured.md).

It also tabulates what our GPUs read: SMACT, SMOCC and DRAMA over all GPU-seconds
(mean, median, p95) and by the number of jobs on the GPU, with the share of seconds
over the pressure rule. --dcgm FILE sets the measured run's own distributions beside
them: the testbed's dcgm_run_distributions.csv, the rows of --trace's name and the
file's configuration_label.

--out DIR writes DIR/measured.md (the report), DIR/running.png (or --format svg or
pdf: both runs' jobs running at once over time; --width, --height and --font-scale as
in aegis plot), DIR/jobs.csv (each job side by side, with its own seed-to-seed error)
and DIR/summary.csv (each figure: measured, ours' mean and CI over the seeds; the seed
floor's row last).`,
		Example: `  aegis measured $AEGIS_SHARED/calibration/aegis/testbed_runs/philly/job_metrics__aegis_lug_thresholded.csv --trace philly
  aegis measured my_cluster_run.csv --trace my_trace.csv --policy aegis --set placement=mu --seeds 1-5 --out cmp/`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return fl.run(c, args[0]) },
	}
	f := c.Flags()
	f.StringVar(&fl.trace, "trace", "", "the trace the measured run replayed: built-in name or CSV file (required)")
	f.StringVar(&fl.policy, "policy", "", "scheduling policy (default: from the testbed file's configuration_label)")
	f.StringVar(&fl.server, "server", "a100-40gb:3", "server as TYPE:COUNT")
	f.StringArrayVar(&fl.sets, "set", nil, "policy parameter key=value (repeatable; see aegis policies)")
	f.StringArrayVar(&fl.truths, "truth", nil, "simulator truth setting key=value (repeatable)")
	f.StringVar(&fl.seeds, "seeds", "1-5", "seeds to simulate, e.g. 1-5 or 1,3,7")
	f.StringVar(&fl.out, "out", "", "directory for measured.md, running.png, jobs.csv and summary.csv")
	f.StringVar(&fl.format, "format", "png", "figure format: "+strings.Join(plots.Formats, ", "))
	f.StringVar(&fl.dcgm, "dcgm", "", "the testbed's dcgm_run_distributions.csv: the measured run's SMACT/SMOCC/DRAMA beside ours")
	fl.sz.add(c)
	return c
}

// run is aegis measured.
func (fl *measuredFlags) run(c *cobra.Command, path string) error {
	if fl.trace == "" {
		return usageError{fmt.Errorf("measured: give --trace, the trace the measured run replayed")}
	}
	if err := plots.CheckFormat(fl.format); err != nil {
		return usageError{err}
	}
	size, err := fl.sz.size()
	if err != nil {
		return usageError{err}
	}
	seeds, err := parseSeeds(fl.seeds)
	if err != nil {
		return usageError{err}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("measured: %w", err)
	}
	meas, err := measured.Parse(path, bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("measured: %w", err)
	}
	meas.Name = filepath.Base(path) // the report names the file, not where it lies
	if fl.policy == "" {
		label, err := measured.Label(path, bytes.NewReader(raw))
		if err != nil {
			return err
		}
		cfg, ok := testbedConfigs[label]
		if !ok {
			return usageError{fmt.Errorf("measured: give --policy (%s names no testbed configuration)", path)}
		}
		fl.policy, fl.sets = cfg.policy, append(cfg.sets, fl.sets...)
	}
	srv, _, err := fl.hardware(c)
	if err != nil {
		return err
	}
	params, truth, err := fl.check(srv, nil)
	if err != nil {
		return err
	}
	tr, err := traces.Load(fl.trace)
	if err != nil {
		return err
	}
	var dcgm *measured.Signals
	if fl.dcgm != "" {
		if dcgm, err = readDCGM(fl.dcgm, path, raw, tr.Name); err != nil {
			return err
		}
	}
	sims, rd, err := simulateSeeds(c, assemble.Run{Trace: tr, Server: srv, Policy: fl.policy, Params: params, Truth: &truth}, seeds)
	if err != nil {
		return err
	}
	cmp, err := measured.Compare(meas, sims, seeds)
	if err != nil {
		return fmt.Errorf("measured: %s against trace %s: %w", path, tr.Name, err)
	}
	rd.Measured, cmp.Readings = dcgm, rd
	what := fmt.Sprintf("trace %s on %s, policy %s", tr.Name, srv, fl.policy)
	if len(fl.sets) > 0 {
		what += " " + strings.Join(fl.sets, " ")
	}
	var b bytes.Buffer
	if err := cmp.WriteMarkdown(&b, what); err != nil {
		return err
	}
	if _, err := c.OutOrStdout().Write(b.Bytes()); err != nil {
		return err
	}
	if fl.out == "" {
		return nil
	}
	return writeMeasured(fl.out, fl.format, size, filepath.Base(path), what, fl.policy, cmp, b.Bytes())
}

// writeMeasured writes aegis measured's files into dir, the figure drawn
// at size.
func writeMeasured(dir, format string, size plots.Size, name, what, policy string, cmp *measured.Comparison, report []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("measured: %w", err)
	}
	fig, err := cmp.Figure(name+" beside "+what, policy)
	if err != nil {
		return err
	}
	if err := fig.Resize(size); err != nil {
		return err
	}
	if _, err := fig.Save(filepath.Join(dir, "running."+format)); err != nil {
		return err
	}
	var jb, sb bytes.Buffer
	if err := cmp.WriteJobsCSV(&jb); err != nil {
		return err
	}
	if err := cmp.WriteSummaryCSV(&sb); err != nil {
		return err
	}
	md := append([]byte("# "+name+" beside ours\n\n![jobs running at once](running."+format+")\n\n"), report...)
	for f, b := range map[string][]byte{"measured.md": md, "jobs.csv": jb.Bytes(), "summary.csv": sb.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return fmt.Errorf("measured: %w", err)
		}
	}
	return nil
}

// simulateSeeds runs r once per seed and returns each run's jobs and what
// its GPUs read.
func simulateSeeds(c *cobra.Command, r assemble.Run, seeds []uint64) ([]*measured.Run, *measured.Readings, error) {
	var (
		sims []*measured.Run
		tels []*runfiles.Telemetry
		atts [][]runfiles.Attempt
	)
	rd := &measured.Readings{Tau: [3]float64{0.65, 0.35, 0.5}}
	if v, ok := r.Params["thresholds"]; ok {
		if _, err := fmt.Sscanf(v, "%g,%g,%g", &rd.Tau[0], &rd.Tau[1], &rd.Tau[2]); err != nil {
			return nil, nil, usageError{fmt.Errorf("measured: thresholds %q: %w", v, err)}
		}
	}
	for _, seed := range seeds {
		var ev, tb bytes.Buffer
		r.Seed, r.Telemetry = seed, &tb
		o, err := assemble.Simulate(c.Context(), r, &ev)
		if err != nil {
			return nil, nil, err
		}
		evs, err := runfiles.ParseEvents("events", &ev)
		if err != nil {
			return nil, nil, err
		}
		att, err := runfiles.Attempts("events", evs)
		if err != nil {
			return nil, nil, err
		}
		tel, err := runfiles.ParseTelemetry("telemetry", &tb)
		if err != nil {
			return nil, nil, err
		}
		sims = append(sims, measured.FromSim(fmt.Sprintf("seed %d", seed), o.Jobs, att))
		tels, atts = append(tels, tel), append(atts, att)
		rd.Ours = append(rd.Ours, measured.SignalsOf(tel))
	}
	rd.Depth = measured.Depths(tels, atts, rd.Tau)
	return sims, rd, nil
}

// readDCGM reads the measured run's signal distributions from the
// testbed's DCGM file: the rows of trace and the run file's label.
func readDCGM(file, run string, raw []byte, trace string) (*measured.Signals, error) {
	label, err := measured.Label(run, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if label == "" {
		return nil, usageError{fmt.Errorf("measured: --dcgm: %s has no configuration_label to find its rows by", run)}
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("measured: %w", err)
	}
	defer f.Close()
	s, err := measured.ReadDCGM(file, f, trace, label)
	if err != nil {
		return nil, fmt.Errorf("measured: %w", err)
	}
	return &s, nil
}

// measuredDirError is aegis plot's answer for a directory aegis measured
// --out wrote (recognised by summary.csv's columns): its figure is no run's,
// so aegis plot draws none; Cmd is the aegis measured command that redraws
// it, with the flags measured.md records.
type measuredDirError struct {
	Dir, Cmd string
}

func (e *measuredDirError) Error() string {
	return fmt.Sprintf("%s: an aegis measured --out directory (measured.md, summary.csv: a measured run beside ours), "+
		"not a run's results: aegis plot draws none of its figures; aegis measured draws its figure, running.FORMAT: %s", e.Dir, e.Cmd)
}

// ours is measured.md's line naming both runs (WriteMarkdown, with run's what).
var ours = regexp.MustCompile(`(?m)^Measured: (.+) \(\d+ jobs\)\. Ours: trace (\S+) on (\S+), policy (\S+)((?: \S+=\S+)*), seeds ([0-9, ]+);`)

// checkMeasuredDir returns a *measuredDirError when aegis measured --out
// wrote dir, nil otherwise.
func checkMeasuredDir(dir string) error {
	t, err := runfiles.ReadTable(filepath.Join(dir, "summary.csv"))
	if err != nil || !slices.Equal(t.Header, measured.SummaryColumns) {
		return nil
	}
	cmd := "aegis measured RUN.csv --trace TRACE --format png --out " + dir
	md, _ := os.ReadFile(filepath.Join(dir, "measured.md"))
	if m := ours.FindSubmatch(md); m != nil {
		cmd = fmt.Sprintf("aegis measured %s --trace %s --server %s --policy %s", m[1], m[2], m[3], m[4])
		for _, s := range strings.Fields(string(m[5])) {
			cmd += " --set " + s
		}
		cmd += " --seeds " + strings.ReplaceAll(string(m[6]), " ", "")
		if bytes.Contains(md, []byte("measured (DCGM)")) {
			cmd += " --dcgm dcgm_run_distributions.csv"
		}
		cmd += " --format png --out " + dir + " (" + string(m[1]) + ": the measured run's file, which the directory names but does not hold)"
	}
	return &measuredDirError{Dir: dir, Cmd: cmd}
}
