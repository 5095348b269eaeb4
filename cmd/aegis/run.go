package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments"
)

func newRunCmd() *cobra.Command {
	var (
		out, shard string
		jobs       int
		force      bool
		quick      quickRun
	)
	c := &cobra.Command{
		Use:   "run SPEC...",
		Short: "Run experiment specs: every cell in parallel, then tables, plots and provenance",
		Long: `Run experiment specs (see docs/experiments.md). Each cell (trace × config × sweep
point × seed) is simulated, --jobs at a time; its outputs go to OUT/cells/ID/,
written under a temporary name and renamed, so an interrupted run (Ctrl-C) leaves
no half-written cell and the next run continues where it stopped: a cell whose
outputs exist with the same key (the content of its trace, server and GPU types,
policy, parameters, truth settings, model, seed and the aegis executable) is
skipped (--force redoes it); editing the rest of a spec reruns nothing. Then
OUT/run.json (provenance), cells.csv, jobs.csv, normalized.csv and the spec's
table (table.md, table.csv, table.tex) are written. The outputs are
byte-identical whatever --jobs is.

With one spec the outputs go to OUT; with several, to OUT/NAME for each spec's
name, and OUT/README.md indexes them. Every run's directory gets a README.md
page: its table, every figure, links to its files and its provenance.

Without a spec, --trace and --policy (comma-separated or repeated) with --seeds
(e.g. 1-5 or 1,3,7) run a quick comparison as a spec would: every policy on every
trace and seed, on --server (or --cluster), with --set and --truth for every
policy; the spec made from the flags is kept in run.json, the table is per trace,
and the figures are the JCT CDFs (and, with several seeds, the seeds' means and
CIs). aegis compare OUT then sets the policies side by side.

--shard I/N runs only the cells whose index modulo N is I (0-based, as Slurm
array and Kubernetes Indexed Job indexes are) and writes the cells and run.json;
combine the shards with aegis merge.

Among several specs, one that needs the shared data folder (e.g. figure7.yaml,
the measured stacking sequences) where there is none, as on a fresh clone, is
skipped with a line naming it and what it needs; the others run.

A progress bar (cells done / total, ETA) shows on a terminal.`,
		Example: `  aegis run experiments/table3.yaml --out results/table3
  aegis run experiments/*.yaml --out results/paper --jobs 8
  aegis run big-sweep.yaml --shard 3/16 --out part3 && aegis merge part*/ --out all
  aegis run --trace philly,venus --policy aegis,lucid --seeds 1-5 --out pol && aegis compare pol`,
		Args: func(c *cobra.Command, args []string) error {
			switch {
			case len(args) == 0 && !quick.asked():
				return usageError{fmt.Errorf("%s: give at least one spec file, or --trace and --policy", c.CommandPath())}
			case len(args) > 0 && quick.asked():
				return usageError{fmt.Errorf("%s: give spec files or --trace/--policy/--seeds, not both", c.CommandPath())}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("%s: --out DIR is required", c.CommandPath())}
			}
			opt := experiments.RunOptions{Jobs: jobs, Force: force}
			if shard != "" {
				i, n, err := parseShard(shard)
				if err != nil {
					return usageError{err}
				}
				opt.Shard, opt.Shards = i, n
			}
			if jobs < 0 {
				return usageError{fmt.Errorf("--jobs %d: want 0 (GOMAXPROCS) or more", jobs)}
			}
			specs, err := quick.specs(args, c.ErrOrStderr())
			if err != nil {
				return err
			}
			names := map[string]string{}
			for _, s := range specs {
				if prev, dup := names[s.Name]; dup && len(args) > 1 {
					return fmt.Errorf("%s and %s are both named %q; their outputs would collide", prev, s.File(), s.Name)
				}
				names[s.Name] = s.File()
			}
			ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt)
			defer stop()
			for _, s := range specs {
				o := opt
				o.Out = out
				if len(args) > 1 { // skipped specs count: the layout is the arguments'
					o.Out = filepath.Join(out, s.Name)
				}
				bar := newBar(c.OutOrStdout(), s.Name, len(s.Cells()))
				if bar != nil {
					o.Progress = func(done, total int) {
						bar.ChangeMax(total)
						bar.Set(done)
						if done == total { // the combined files, tables and figures take a while
							bar.Describe(s.Name + ": tables, figures")
						}
					}
				}
				rep, err := experiments.RunPlan(ctx, s, o)
				if bar != nil {
					bar.Finish()
					fmt.Fprintln(c.OutOrStdout())
				}
				if err != nil {
					if ctx.Err() != nil {
						return fmt.Errorf("%s: interrupted: finished cells are kept; run again to continue", s.File())
					}
					return fmt.Errorf("%s: %w", s.File(), err)
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: %d cells (%d run, %d already done) -> %s\n", s.File(), rep.Cells, rep.Ran, rep.Skipped, o.Out)
			}
			if len(args) > 1 {
				return experiments.WriteIndex(out)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&out, "out", "", "output directory (required)")
	f.IntVar(&jobs, "jobs", 0, "cells run at once (0: GOMAXPROCS)")
	f.BoolVar(&force, "force", false, "rerun cells whose outputs exist")
	f.StringVar(&shard, "shard", "", "run shard I/N of the cells (0 <= I < N)")
	quick.flags(c)
	addProfileFlags(c)
	return c
}

// loadSpecs loads and compiles the spec files (experiments.LoadPlan). Among several, a spec that needs the
// shared data folder where there is none (a fresh clone) is skipped, with a
// line on w naming it and what it needs; it is an error when no spec is
// left.
func loadSpecs(paths []string, w io.Writer) ([]*experiments.Plan, error) {
	var specs []*experiments.Plan
	var skipped error
	for _, p := range paths {
		s, err := experiments.LoadPlan(p)
		if errors.Is(err, experiments.ErrNoSharedData) && len(paths) > 1 {
			fmt.Fprintf(w, "skipped %s (an earlier run of it is left as it is): %v\n", p, err)
			skipped = err
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, m := range s.Warnings() {
			fmt.Fprintln(w, "warning: "+m)
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("nothing to run: every spec was skipped; the last: %w", skipped)
	}
	return specs, nil
}

// parseShard parses "I/N".
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with 0 <= I < N, e.g. 3/16", s)
	}
	return i, n, nil
}

func newMergeCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "merge DIR...",
		Short: "Combine the shard directories of a spec run (aegis run --shard) into one",
		Long: `Combine shard directories written by aegis run --shard I/N: they must come from
the same spec and the same aegis build with the same inputs (equal spec hashes,
builds and cell keys), every cell.json must be whole and carry its key, and
together they must hold every cell exactly once; otherwise nothing is written.
The cells are copied to OUT/cells/ and the combined files (run.json, cells.csv,
jobs.csv, normalized.csv, tables) are written as a whole run would. OUT is
written all or nothing and replaces an earlier merge's OUT whole.`,
		Example: "  aegis merge part*/ --out all",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("%s: give the shard directories", c.CommandPath())}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if out == "" {
				return usageError{fmt.Errorf("%s: --out DIR is required", c.CommandPath())}
			}
			files, err := experiments.Merge(args, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "merged %d shard directories -> %s (%d files)\n", len(args), out, len(files))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "output directory (required)")
	return c
}

// versionString is what aegis --version prints: the module version, the
// commit (stamped by make build) and the Go version.
func versionString() string {
	t := experiments.ToolInfo()
	return t.Version + " " + cmp.Or(t.Commit, "(commit unknown: build with make build)") + " " + t.GoVersion
}
