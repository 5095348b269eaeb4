package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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
	seeds, format string
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
90th percentile of |ratio − 1|), the jobs paired in submission order.

RUN.csv is the measured run's per-job timeline: the testbed's job_metrics file
(calibration/aegis/testbed_runs; its configuration_label picks the policy and
parameters when --policy is not given), or a minimal CSV written from any cluster's
logs with columns submit_s,start_s,finish_s and optionally last_start_s (launch of
the attempt that completed; default start_s), queue_s, failed_attempts, workload_id,
job_id. Times are seconds or timestamps (docs/measured.md).

--out DIR writes DIR/measured.md (the report), DIR/running.png (or --format svg:
both runs' jobs running at once over time) and DIR/jobs.csv (each job side by side).`,
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
	f.StringVar(&fl.out, "out", "", "directory for measured.md, running.png and jobs.csv")
	f.StringVar(&fl.format, "format", "png", "figure format: png or svg")
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
	var sims []*measured.Run
	for _, seed := range seeds {
		var ev bytes.Buffer
		r := assemble.Run{Trace: tr, Server: srv, Policy: fl.policy, Params: params, Seed: seed, Truth: &truth}
		o, err := assemble.Simulate(c.Context(), r, &ev)
		if err != nil {
			return err
		}
		evs, err := runfiles.ParseEvents("events", &ev)
		if err != nil {
			return err
		}
		att, err := runfiles.Attempts("events", evs)
		if err != nil {
			return err
		}
		sims = append(sims, measured.FromSim(fmt.Sprintf("seed %d", seed), o.Jobs, att))
	}
	cmp, err := measured.Compare(meas, sims, seeds)
	if err != nil {
		return fmt.Errorf("measured: %s against trace %s: %w", path, tr.Name, err)
	}
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
	return writeMeasured(fl.out, fl.format, filepath.Base(path), what, cmp, b.Bytes())
}

// writeMeasured writes aegis measured's files into dir.
func writeMeasured(dir, format, name, what string, cmp *measured.Comparison, report []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("measured: %w", err)
	}
	fig, err := cmp.Figure(name + " beside " + what)
	if err != nil {
		return err
	}
	if err := fig.Save(filepath.Join(dir, "running."+format)); err != nil {
		return err
	}
	var jb bytes.Buffer
	if err := cmp.WriteJobsCSV(&jb); err != nil {
		return err
	}
	md := append([]byte("# "+name+" beside ours\n\n![jobs running at once](running."+format+")\n\n"), report...)
	for f, b := range map[string][]byte{"measured.md": md, "jobs.csv": jb.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return fmt.Errorf("measured: %w", err)
		}
	}
	return nil
}
