package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/emulate"
	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/experiments"
	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// execFlags are aegis exec's settings; they are journaled so that
// --resume continues with the same ones.
type execFlags struct {
	trace, workloads, policy, gpus, emulate, out, mpsDir, telemetry, gpuType string
	sets, truths                                                             []string
	speedup                                                                  float64
	seed                                                                     uint64
	grace                                                                    time.Duration
}

func (f *execFlags) settings() map[string]string {
	return map[string]string{"trace": f.trace, "workloads": f.workloads, "policy": f.policy, "gpus": f.gpus,
		"emulate": f.emulate, "mps_pipe_dir": f.mpsDir, "telemetry": f.telemetry, "gpu_type": f.gpuType,
		"set": strings.Join(f.sets, "\n"), "truth": strings.Join(f.truths, "\n"),
		"speedup": strconv.FormatFloat(f.speedup, 'g', -1, 64), "seed": strconv.FormatUint(f.seed, 10),
		"grace": f.grace.String()}
}

// fromSettings restores the flags of a journaled run.
func fromSettings(m map[string]string) (*execFlags, error) {
	f := &execFlags{trace: m["trace"], workloads: m["workloads"], policy: m["policy"], gpus: m["gpus"],
		emulate: m["emulate"], mpsDir: m["mps_pipe_dir"], telemetry: m["telemetry"], gpuType: m["gpu_type"]}
	if s := m["set"]; s != "" {
		f.sets = strings.Split(s, "\n")
	}
	if s := m["truth"]; s != "" {
		f.truths = strings.Split(s, "\n")
	}
	var err error
	if f.speedup, err = strconv.ParseFloat(m["speedup"], 64); err != nil {
		return nil, fmt.Errorf("journal settings: speedup: %w", err)
	}
	if f.seed, err = strconv.ParseUint(m["seed"], 10, 64); err != nil {
		return nil, fmt.Errorf("journal settings: seed: %w", err)
	}
	if f.grace, err = time.ParseDuration(m["grace"]); err != nil {
		return nil, fmt.Errorf("journal settings: grace: %w", err)
	}
	return f, nil
}

func newExecCmd() *cobra.Command {
	var (
		f      execFlags
		resume string
	)
	c := &cobra.Command{
		Use:   "exec",
		Short: "Run a trace on this machine's GPUs (or emulated ones) under a policy",
		Long: `Replay a trace on this machine's GPUs: each job is a real process started from
its workload's command (--workloads YAML), scheduled by the same policy code the
simulator runs, with NVML/DCGM telemetry (--telemetry). With --emulate TYPE:COUNT
the GPUs are modelled by the simulator's truth while the processes are real
(aegis fake-train), so the whole executor runs without a GPU. --trace - reads job
lines (CSV with a header) from standard input while the run goes on.

The run directory (--out) gets journal.jsonl, lock, logs/ and attempts/, and at the
end (or on SIGINT/SIGTERM, after terminating the jobs) the files aegis simulate --out
writes: jobs.csv, summary.csv, deferrals.csv, events.jsonl, then exec.json
(provenance) and README.md (a page of the run, marked Incomplete when it was
interrupted), while the directory is still locked. aegis exec --resume DIR
continues a run after a crash, kill -9 or a failed directory, adopting the jobs still
running. One executor at a time holds a run directory: a second is refused.
On a terminal, a bar on stderr counts the jobs done, log lines (failed attempts,
telemetry) above it. See docs/executor.md.`,
		Example: `  aegis exec --trace philly --workloads workloads.yaml --policy aegis --gpus 0,1,2 --out run1
  aegis exec --resume run1
  aegis exec --emulate a100-40gb:3 --trace philly --policy aegis --speedup 1000 --out emu`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if resume != "" {
				if c.Flags().NFlag() > 1 {
					return usageError{fmt.Errorf("%s: --resume takes no other flags: the run continues with its journaled settings", c.CommandPath())}
				}
				return resumeRun(ctx, c, resume)
			}
			return startRun(ctx, c, &f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.trace, "trace", "", "built-in trace name, CSV file, or - for job lines on standard input")
	fl.StringVar(&f.workloads, "workloads", "", "workloads YAML: the command of each workload id (not with --emulate)")
	fl.StringVar(&f.policy, "policy", "aegis", fmt.Sprintf("scheduling policy %v", registry.Names()))
	fl.StringArrayVar(&f.sets, "set", nil, "policy parameter key=value (repeatable)")
	fl.StringVar(&f.gpus, "gpus", "", "GPU indices to use, e.g. 0,1,2 (default all)")
	fl.StringVar(&f.gpuType, "gpu-type", "a100-40gb", "GPU type whose workload catalog gives the profiles policies see (real GPUs)")
	fl.StringVar(&f.emulate, "emulate", "", "emulated GPUs as TYPE:COUNT, e.g. a100-40gb:3")
	fl.StringArrayVar(&f.truths, "truth", nil, "emulated GPUs' truth setting key=value (as aegis simulate --truth)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the emulated GPUs' truth (startup jitter, telemetry noise)")
	fl.Float64Var(&f.speedup, "speedup", 1, "divide the trace's time by this factor on the wall clock (demos, emulation)")
	fl.StringVar(&f.out, "out", "", "run directory (must not hold a journal yet)")
	fl.StringVar(&f.mpsDir, "mps-pipe-dir", "", "run the jobs as MPS clients of the daemon listening in this directory")
	fl.StringVar(&f.telemetry, "telemetry", gpu.KindAuto, "telemetry source: "+strings.Join(gpu.Kinds(), ", "))
	fl.DurationVar(&f.grace, "grace", 10*time.Second, "at shutdown, time between SIGTERM and SIGKILL of the jobs")
	fl.StringVar(&resume, "resume", "", "continue the run in this directory after a crash")
	return c
}

// maxSpeedup bounds --speedup: at 10^4 a trace's day passes in under 9 s
// of wall clock, and the run's int64-nanosecond clock lasts 29 years of
// wall clock (beyond 10^9 it would not last the 1e9 s a trace may span).
const maxSpeedup = 1e4

// setup is what a run needs beyond its jobs.
type setup struct {
	cfg    executor.Config
	policy policies.Policy
	title  string
	gpus   string         // what the jobs run on (the run's page)
	emu    *models.Server // the emulated GPUs; nil: real ones
	// bar counts the jobs done on a terminal; nil: none.
	bar *progressbar.ProgressBar
	// gpuType names the GPU type whose catalog is cfg.Catalog.
	gpuType string
	// run is the emulated run's policy, GPUs and truth (Run.Check), when
	// the GPUs are emulated.
	run assemble.Run
}

// prepare turns flags into an executor configuration and a policy.
func prepare(c *cobra.Command, f *execFlags, dir string) (*setup, error) {
	params, err := policies.ParseSets(f.sets)
	if err != nil {
		return nil, usageError{err}
	}
	p, err := registry.New(f.policy, params)
	if err != nil {
		return nil, usageError{err}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	// On a terminal, a bar counts the jobs done; log lines go above it.
	log := c.ErrOrStderr()
	bar := newBar(log, "exec: jobs done", 0, progressbar.OptionClearOnFinish())
	if bar != nil {
		log = barLog{w: log, bar: bar}
	}
	cfg := executor.Config{Dir: dir, Speedup: f.speedup, Self: []string{self}, MPSPipeDir: f.mpsDir,
		Grace: f.grace, Log: log}
	if bar != nil {
		cfg.Progress = func(done, total int) { bar.ChangeMax(total); bar.Set(done) }
	}
	if f.grace <= 0 {
		return nil, usageError{fmt.Errorf("--grace %v: want a positive duration", f.grace)}
	}
	if !(f.speedup >= 1 && f.speedup <= maxSpeedup) {
		return nil, usageError{fmt.Errorf("--speedup %v: want a number from 1 to %g (the run's clock is the wall clock's nanoseconds times the speedup, in int64; beyond, virtual times overflow and the shortest wall-clock wait spans minutes of trace)", f.speedup, float64(maxSpeedup))}
	}
	if f.emulate != "" {
		if f.workloads != "" || f.gpus != "" || f.mpsDir != "" || c.Flags().Changed("telemetry") || c.Flags().Changed("gpu-type") {
			return nil, usageError{fmt.Errorf("--emulate runs aegis fake-train on modelled GPUs: --workloads, --gpus, --gpu-type, --telemetry and --mps-pipe-dir do not apply")}
		}
		srv, err := models.ParseServer(f.emulate)
		if err != nil {
			return nil, usageError{fmt.Errorf("--emulate: %w", err)}
		}
		if cfg.Catalog, err = models.CatalogFor(srv.Type); err != nil {
			return nil, err
		}
		inter, err := models.InterferenceFor(srv.Type)
		if err != nil {
			return nil, err
		}
		tm, err := policies.ParseSets(f.truths)
		if err != nil {
			return nil, usageError{fmt.Errorf("--truth: %w", err)}
		}
		truth, err := sim.ParseTruth(tm)
		if err != nil {
			return nil, usageError{err}
		}
		emu, err := emulate.New(srv, cfg.Catalog, inter, truth, f.seed, log)
		if err != nil {
			return nil, err
		}
		cfg.Source, cfg.Mirror = emu, emu
		return &setup{cfg: cfg, policy: p, title: fmt.Sprintf("on emulated %s, policy %s, speedup %g", srv, f.policy, f.speedup),
			gpus: "emulated " + srv.String(), emu: &srv, gpuType: srv.Type.Name, bar: bar,
			run: assemble.Run{Server: srv, Policy: f.policy, Params: params, Truth: &truth}}, nil
	}
	if len(f.truths) > 0 {
		return nil, usageError{fmt.Errorf("--truth applies to emulated GPUs only (--emulate)")}
	}
	if d := os.Getenv("CUDA_MPS_PIPE_DIRECTORY"); d != "" && f.mpsDir == "" {
		fmt.Fprintf(c.ErrOrStderr(), "exec: warning: CUDA_MPS_PIPE_DIRECTORY=%s is set in this environment but --mps-pipe-dir is not: every job inherits it and connects to that MPS daemon (if one listens there) without aegis knowing; pass --mps-pipe-dir %s to make it explicit, or unset it\n", d, d)
	}
	if f.workloads == "" {
		return nil, usageError{fmt.Errorf("%s: --workloads FILE is needed to run real jobs (or --emulate TYPE:COUNT)", c.CommandPath())}
	}
	if cfg.Workloads, err = executor.ReadWorkloads(f.workloads); err != nil {
		return nil, err
	}
	typ, err := models.ResolveGPUType(f.gpuType)
	if err != nil {
		return nil, usageError{fmt.Errorf("--gpu-type: %w", err)}
	}
	if cfg.Catalog, err = models.CatalogFor(typ); err != nil {
		return nil, err
	}
	if cfg.GPUs, err = gpu.ParseList(f.gpus); err != nil {
		return nil, usageError{fmt.Errorf("--gpus: %w", err)}
	}
	if cfg.Source, err = gpu.Open(f.telemetry, gpu.Options{GPUs: cfg.GPUs, Log: c.ErrOrStderr()}); err != nil {
		return nil, err
	}
	return &setup{cfg: cfg, policy: p, title: fmt.Sprintf("on this machine's GPUs (%s), policy %s", cfg.Source.Name(), f.policy),
		gpus: fmt.Sprintf("this machine's GPUs (%s telemetry)", cfg.Source.Name()), gpuType: typ.Name, bar: bar}, nil
}

// checkPolicy refuses a policy that cannot run on the telemetry the source
// gives (e.g. the pressure filter without SMACT/SMOCC/DRAMA) before the run
// directory is created.
func checkPolicy(ctx context.Context, s *setup) error {
	v, ok := s.policy.(policies.Validator)
	if !ok {
		return nil
	}
	// A failed reading is retried (the executor treats one as a missed
	// sample); three in a row mean the source does not work.
	var samples []gpu.Sample
	var err error
	for try := 0; try < 3; try++ {
		if samples, err = s.cfg.Source.Sample(ctx); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("telemetry %s: three readings failed: %w", s.cfg.Source.Name(), err)
	}
	pressure := len(samples) > 0
	for _, x := range samples {
		pressure = pressure && x.FromPressureSource()
	}
	if err := v.Validate(&policies.View{Pressure: pressure}); err != nil {
		return usageError{fmt.Errorf("policy %s with telemetry %s: %w", s.policy.Name(), s.cfg.Source.Name(), err)}
	}
	return nil
}

func startRun(ctx context.Context, c *cobra.Command, f *execFlags) error {
	if f.out == "" || f.trace == "" {
		return usageError{fmt.Errorf("%s: --trace and --out are needed (or --resume DIR)", c.CommandPath())}
	}
	if _, err := os.Stat(filepath.Join(f.out, "journal.jsonl")); err == nil {
		return usageError{fmt.Errorf("%s: %s already holds a run; continue it with --resume %s", c.CommandPath(), f.out, f.out)}
	}
	s, err := prepare(c, f, f.out)
	if err != nil {
		return err
	}
	if s.cfg.Mirror == nil {
		if err := checkPolicy(ctx, s); err != nil {
			s.cfg.Source.Close()
			return err
		}
	} else if err := s.run.Check(); err != nil {
		return usageError{err}
	}
	name := "standard input"
	var tr *traces.Trace
	if f.trace == "-" {
		in, err := executor.LiveHeader(c.InOrStdin(), "stdin")
		if err != nil {
			s.cfg.Source.Close()
			return err
		}
		s.cfg.Live = executor.ReadLive(in, "stdin", c.ErrOrStderr())
	} else {
		if tr, err = traces.Load(f.trace); err != nil {
			return err
		}
		if err := assemble.CheckWorkloads(tr, s.gpuType, s.cfg.Catalog); err != nil {
			return err
		}
		s.cfg.Jobs = append(s.cfg.Jobs, tr.Jobs...)
		name = fmt.Sprintf("%s (%d jobs)", tr.Name, len(tr.Jobs))
	}
	meta, err := experiments.NewExecMeta(tr, f.trace, s.gpus, s.emu, f.settings())
	if err != nil {
		s.cfg.Source.Close()
		return err
	}
	s.cfg.Done = func(*executor.Result, error) error { return experiments.WriteExec(f.out, meta) }
	x, err := executor.New(s.cfg, f.settings())
	if err != nil {
		s.cfg.Source.Close()
		return err
	}
	return execute(ctx, c, x, s, "trace "+name+" "+s.title)
}

func resumeRun(ctx context.Context, c *cobra.Command, dir string) error {
	j, recs, err := executor.OpenJournal(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return err
	}
	// The settings are the journal's first line: an error in them (a
	// journal edited by hand) names it, and is bad input, not bad usage.
	name := filepath.Join(dir, "journal.jsonl")
	f, err := fromSettings(recs[0].Run.Settings)
	if err != nil {
		j.Close()
		return fmt.Errorf("%s:1: %w", name, err)
	}
	s, err := prepare(c, f, dir)
	if err != nil {
		j.Close()
		var u usageError
		if errors.As(err, &u) {
			err = u.err
		}
		return fmt.Errorf("%s:1: the run's journaled settings: %w", name, err)
	}
	meta, err := experiments.ResumedExecMeta(dir, s.gpus, s.emu, recs[0].Run.Settings)
	if err != nil {
		j.Close()
		s.cfg.Source.Close()
		return err
	}
	s.cfg.Done = func(*executor.Result, error) error { return experiments.WriteExec(dir, meta) }
	x, err := executor.Resume(s.cfg, j, recs)
	if err != nil {
		j.Close()
		s.cfg.Source.Close()
		return err
	}
	fmt.Fprintf(c.ErrOrStderr(), "resumed %s at t=%v\n", dir, executor.Stamp(x.Now()))
	return execute(ctx, c, x, s, fmt.Sprintf("resumed run %s %s", dir, s.title))
}

func execute(ctx context.Context, c *cobra.Command, x *executor.Executor, s *setup, title string) error {
	defer registry.Close(s.policy)
	if s.bar != nil {
		s.bar.ChangeMax(len(x.Jobs()))
		s.bar.RenderBlank()
	}
	res, err := executor.Execute(ctx, x, s.policy)
	if s.bar != nil {
		s.bar.Finish()
		s.bar.Clear()
	}
	if res != nil {
		if werr := results.WriteSummaryTable(c.OutOrStdout(), title, res.Summary); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// writeDirPage writes dir's page (experiments.WriteDirPage); an aegis exec
// run directory without exec.json (made before aegis exec wrote one) gets
// one from its journal's settings.
func writeDirPage(dir string) error {
	for _, f := range []string{rundir.RunFile, rundir.SimulateFile, rundir.ExecFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return experiments.WriteDirPage(dir)
		}
	}
	f, err := os.Open(filepath.Join(dir, "journal.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	recs, _, err := executor.ReadJournal(f, f.Name())
	if err != nil {
		return err
	}
	if len(recs) == 0 || recs[0].Run == nil {
		return fmt.Errorf("%s: no run record first", f.Name())
	}
	st := recs[0].Run.Settings
	gpus, srv := fmt.Sprintf("this machine's GPUs (telemetry %s)", st["telemetry"]), (*models.Server)(nil)
	if e := st["emulate"]; e != "" {
		s, err := models.ParseServer(e)
		if err != nil {
			return fmt.Errorf("%s: emulate: %w", f.Name(), err)
		}
		gpus, srv = "emulated "+s.String(), &s
	}
	return experiments.WriteExecPage(dir, gpus, srv, st)
}

// newAttemptCmd is the attempt shim the executor starts for every job.
func newAttemptCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "attempt --status FILE -- COMMAND [ARG...]",
		Short:              "Run one job attempt for aegis exec (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			if code := executor.RunAttempt(args, c.ErrOrStderr()); code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
}

func newFakeTrainCmd() *cobra.Command {
	var workload string
	c := &cobra.Command{
		Use:    "fake-train --workload ID",
		Short:  "Stand in for a training job on emulated GPUs (aegis exec --emulate; internal)",
		Hidden: true,
		Long: `Wait until the emulator ends this process: SIGUSR1 when the modelled job's work
is done (exit 0), SIGUSR2 when its modelled GPU ran out of memory (a PyTorch-style
out-of-memory message on stderr, exit 1). SIGTERM and SIGINT end it.`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if code := executor.FakeTrain(workload, c.ErrOrStderr()); code != 0 {
				return exitCode(code)
			}
			return nil
		},
	}
	c.Flags().StringVar(&workload, "workload", "", "workload id (named in the OOM message)")
	return c
}

// exitCode is an error that makes the process exit with a given code and
// print nothing.
type exitCode int

func (e exitCode) Error() string { return "exit code " + strconv.Itoa(int(e)) }
