package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments"
	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// simulateFlags are aegis simulate's flags.
type simulateFlags struct {
	trace, policy, server, out string
	clusterSpec                string
	seed                       uint64
	sets, truths               []string
	telemetry                  bool
}

func newSimulateCmd() *cobra.Command {
	var fl simulateFlags
	c := &cobra.Command{
		Use:   "simulate",
		Short: "Replay a trace on a simulated server under a policy and print the metrics",
		Long: `Replay a trace on a simulated server under a scheduling policy.

The trace is a built-in name (` + traces.BuiltinNames() + `) or a CSV file with
columns submit_offset_s,workload_id,num_gpus[,job_id][,solo_s] (solo_s: the job's
length in solo seconds, else its workload's). Policy parameters are given
with --set key=value (repeatable), simulator truth settings with --truth
key=value; aegis policies lists both with their defaults and valid values.
With --out DIR the run writes DIR/jobs.csv, DIR/summary.csv, DIR/deferrals.csv,
DIR/events.jsonl, DIR/simulate.json (provenance: build, trace and GPU types by
content hash, policy, settings, seed) and DIR/README.md (a page of the run: its
summary, figures, files and provenance); --telemetry adds DIR/telemetry.csv, every
GPU's 1 Hz sample (gpu,t_s,smact,smocc,drama,util,used_mib,power_w; power_w is the
second's mean power in W as the energy meter charges it, summing to the GPU's
metered energy in J, empty without a power model). aegis plot DIR draws
the run (and rewrites the page). On a terminal, a bar on stderr counts the jobs done.

--cluster TYPE:GPUSxSERVERS (e.g. a100-40gb:8x16; groups joined by commas, of
one or several GPU types, e.g. a100-40gb:8x8,h200-141gb:8x4) replaces --server:
one instance of the policy per server behind a dispatcher (--set
dispatch=bestfit|firstfit|leastloaded); a job of at most a server's GPUs runs
inside one server, a larger one on whole idle servers of one type, and a job of
a multiple of its workload's GPU count repeats the workload's profile per GPU.
Each GPU type keeps its memory, catalog and models; a job goes only to types
whose catalog has its workload and whose memory holds its profiled peak.
jobs.csv gains a server column (and gpu_type with several types). See
docs/simulator.md, "Clusters".`,
		Example: "  aegis simulate --trace demo --policy exclusive --server a100-40gb:3 --seed 1 --out out/",
		Args:    exactArgs(0),
		RunE:    func(c *cobra.Command, _ []string) error { return fl.run(c) },
	}
	f := c.Flags()
	f.StringVar(&fl.trace, "trace", "demo", "built-in trace name or CSV file")
	f.StringVar(&fl.policy, "policy", "exclusive", fmt.Sprintf("scheduling policy %v", registry.Names()))
	f.StringVar(&fl.server, "server", "a100-40gb:3", fmt.Sprintf("server as TYPE:COUNT, TYPE one of %v", models.GPUTypeNames()))
	f.StringVar(&fl.clusterSpec, "cluster", "", "cluster as TYPE:GPUSxSERVERS[,...] instead of --server, e.g. a100-40gb:8x16")
	f.Uint64Var(&fl.seed, "seed", 1, "seed of the run's randomness (startup jitter, telemetry noise)")
	f.StringArrayVar(&fl.sets, "set", nil, "policy parameter key=value (repeatable; see aegis policies)")
	f.StringArrayVar(&fl.truths, "truth", nil, "simulator truth setting key=value (repeatable; see aegis policies)")
	f.StringVar(&fl.out, "out", "", "directory for jobs.csv, summary.csv, deferrals.csv and events.jsonl")
	f.BoolVar(&fl.telemetry, "telemetry", false, "also write telemetry.csv (every GPU's 1 Hz sample and power) into --out")
	addProfileFlags(c)
	return c
}

// simulateOwns reports whether an entry of an existing --out directory is
// one a rerun may replace: an output of aegis simulate or a figure aegis
// plot drew from them.
func simulateOwns(name string) bool {
	switch name {
	case rundir.Events, rundir.Jobs, rundir.Telemetry, rundir.Summary, rundir.Deferrals, rundir.SimulateFile, page.Name:
		return true
	}
	ext := filepath.Ext(name)
	return ext == ".svg" || ext == ".png"
}

func isYAML(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// writeSummary writes a run's summary.csv and deferrals.csv into the
// existing directory dir (the files a run does not stream).
func writeSummary(dir string, sum results.Summary) error {
	var sb, db bytes.Buffer
	if err := results.WriteSummaryCSV(&sb, sum); err != nil {
		return err
	}
	if err := results.WriteDeferralsCSV(&db, sum); err != nil {
		return err
	}
	for name, b := range map[string][]byte{rundir.Summary: sb.Bytes(), rundir.Deferrals: db.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("output: %w", err)
		}
	}
	return nil
}

// run is aegis simulate.
func (fl *simulateFlags) run(c *cobra.Command) error {
	srv, cl, err := fl.hardware(c)
	if err != nil {
		return err
	}
	// The GPU types' embedded models are decoded beside the checks and
	// the trace's reading, where a core would idle.
	types := []models.GPUType{srv.Type}
	if cl != nil {
		types = cl.Types
	}
	go func() {
		for _, t := range types {
			models.Predecode(t)
		}
	}()
	params, truth, err := fl.check(srv, cl)
	if err != nil {
		return err
	}
	if fl.telemetry && fl.out == "" {
		return usageError{fmt.Errorf("--telemetry needs --out DIR")}
	}
	var od *results.OutDir
	if fl.out != "" {
		// All or nothing: the files go to a temporary directory
		// beside --out, which replaces --out only when the run succeeds
		// (so no file of an earlier run stays).
		if od, err = results.NewOutDir(fl.out, simulateOwns); err != nil {
			return err
		}
		defer od.Discard()
	}
	tr, err := traces.Load(fl.trace)
	if err != nil {
		return err
	}
	// The run lets go of the trace's jobs once the simulator has its
	// own (ReleaseTrace): the title's name and count are kept here, and
	// the provenance hashes a copy of the trace (startMeta).
	name, njobs := tr.Name, len(tr.Jobs)
	r := assemble.Run{Trace: tr, Server: srv, Policy: fl.policy, Params: params, Seed: fl.seed, Truth: &truth, Cluster: cl,
		PipeOutputs: true, ReleaseTrace: true,
		Released: func() { collectIfPast(gcFloor) }}
	// The big files stream into the output directory while the
	// run goes on; summary.csv and deferrals.csv follow at the end.
	var events io.Writer
	var files outFiles
	defer files.close()
	var meta <-chan metaOf
	if od != nil {
		// The event log, and jobs.csv but on a cluster (whose server
		// column another recorder keeps), write from goroutines of
		// their own (assemble.Run.PipeOutputs).
		if events, err = files.create(od.Path(), rundir.Events, true); err == nil {
			r.Jobs, err = files.create(od.Path(), rundir.Jobs, cl == nil)
		}
		if err == nil && fl.telemetry {
			r.Telemetry, err = files.create(od.Path(), rundir.Telemetry, false)
		}
		if err == nil {
			meta, err = startMeta(r, fl.trace, fl.truths)
		}
		if err != nil {
			return err
		}
	}
	o, err := simulateShown(c, r, events)
	if err != nil {
		return err
	}
	where := srv.String()
	if cl != nil {
		where = fmt.Sprintf("cluster %s (%d servers, %d GPUs)", cl, len(cl.Servers), cl.GPUs())
	}
	title := fmt.Sprintf("trace %s (%d jobs) on %s, policy %s, seed %d", name, njobs, where, fl.policy, fl.seed)
	if err := results.WriteSummaryTable(c.OutOrStdout(), title, o.Summary); err != nil {
		return err
	}
	if od == nil {
		return nil
	}
	if err := files.close(); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := writeSummary(od.Path(), o.Summary); err != nil {
		return err
	}
	m := <-meta
	if m.err != nil {
		return m.err
	}
	if err := experiments.WriteSimulate(od.Path(), m.m); err != nil {
		return err
	}
	return od.Commit()
}

// outFiles are the files a run streams into its output directory.
type outFiles []io.Closer

// create makes file name in dir, written through an asyncWriter unless
// piped (its writer writes from a goroutine of its own already).
func (of *outFiles) create(dir, name string, piped bool) (io.Writer, error) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if piped {
		*of = append(*of, f)
		return f, nil
	}
	a := &asyncFile{newAsyncWriter(f), f}
	*of = append(*of, a)
	return a, nil
}

// close closes the files (once) and reports the first error.
func (of *outFiles) close() error {
	var first error
	for _, f := range *of {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	*of = nil
	return first
}

// metaOf is a run's provenance, or why there is none.
type metaOf struct {
	m   *rundir.SimulateMeta
	err error
}

// startMeta works out r's provenance (the trace's hash above all) on a
// goroutine of its own, beside the run: both only read the trace's jobs.
// The goroutine hashes a copy of r.Trace (the same jobs), which the run's
// ReleaseTrace does not empty: the jobs are freed when both are done.
func startMeta(r assemble.Run, source string, truths []string) (<-chan metaOf, error) {
	tm, err := policies.ParseFlagSets("--truth", truths)
	if err != nil {
		return nil, err
	}
	tr := *r.Trace
	r.Trace = &tr
	meta := make(chan metaOf, 1)
	go func() {
		m, err := experiments.NewSimulateMeta(r, source, tm)
		meta <- metaOf{m, err}
	}()
	return meta, nil
}

// simulateShown runs r with progress on a terminal (stderr: the summary
// on stdout stays clean), cleared when the run ends.
func simulateShown(c *cobra.Command, r assemble.Run, events io.Writer) (*assemble.Outcome, error) {
	bar := newBar(c.ErrOrStderr(), "simulate: jobs done", len(r.Trace.Jobs), progressbar.OptionClearOnFinish())
	if bar != nil {
		r.Progress = func(done, _ int) { bar.Set(done) }
	}
	o, err := assemble.Simulate(c.Context(), r, events)
	if bar != nil {
		bar.Finish()
		bar.Clear()
	}
	return o, err
}

// hardware is the simulated server (--server), or the cluster (--cluster)
// and its first server.
func (fl *simulateFlags) hardware(c *cobra.Command) (srv models.Server, cl *models.Cluster, err error) {
	if c.Flags().Changed("cluster") {
		if c.Flags().Changed("server") {
			return srv, nil, usageError{fmt.Errorf("--cluster and --server: give one (a cluster's servers are in --cluster)")}
		}
		x, err := models.ParseCluster(fl.clusterSpec)
		if err != nil {
			return srv, nil, usageError{fmt.Errorf("--cluster: %w", err)}
		}
		cl, srv = &x, x.Server()
	} else if srv, err = models.ParseServer(fl.server); err != nil {
		if name, _, _ := strings.Cut(fl.server, ":"); isYAML(name) {
			return srv, nil, err // the GPU type file's content is at fault
		}
		return srv, nil, usageError{err}
	}
	return srv, cl, nil
}

// check reads the policy's parameters and the simulator's truth settings
// and checks them against the hardware.
func (fl *simulateFlags) check(srv models.Server, cl *models.Cluster) (params map[string]string, truth sim.Truth, err error) {
	params, err = policies.ParseSets(fl.sets)
	if err != nil {
		return nil, truth, usageError{err}
	}
	tm, err := policies.ParseFlagSets("--truth", fl.truths)
	if err != nil {
		return nil, truth, usageError{err}
	}
	if truth, err = sim.ParseTruth(tm); err != nil {
		return nil, truth, usageError{err}
	}
	r := assemble.Run{Server: srv, Cluster: cl, Policy: fl.policy, Params: params, Truth: &truth}
	if err := r.Check(); err != nil {
		return nil, truth, usageError{err}
	}
	return params, truth, nil
}
