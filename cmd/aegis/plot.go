package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
)

func newPlotCmd() *cobra.Command {
	var (
		format          string
		figures, sweeps []string
		ys              []string
		sz              sizeFlags
	)
	c := &cobra.Command{
		Use:   "plot DIR...",
		Short: "Draw the figures of results directories (spec runs or aegis simulate --out) without re-running",
		Long: `Draw figures from the CSV files of each results directory into it, as SVG (default), PNG or PDF.

From a spec run (aegis run --out DIR): normalized makespan/JCT bars per trace with GeoMean
and p95 diamonds (normalized.svg, Figure 3), per-job JCT/solo and absolute JCT CDFs (jct-cdf.svg, Figure 4),
per-trace normalized queueing and execution time bars with p95 diamonds (queue-exec.svg,
Figure 5), window stability (stability.svg,
Figure 6), the threshold sweep (thresholds.svg, Figure 7), makespan and mean JCT over
seeds as means with 95 % CIs and a ring per seed (seeds-cdf.svg; equal seeds one ring) and the spec's sweep figures (sweep_figures: metrics against a swept
parameter with 95 % CI bands). From an aegis simulate --out directory: the JCT/solo CDF and
a GPU timeline (timeline.svg: jobs per GPU, and memory and SMACT with --telemetry).
Without --figure or --sweep, a spec run's directory gets the figures its spec asks for
(figures and sweep_figures in run.json; when it asks for none, nothing is drawn and a
note on stderr lists what --figure NAME can draw there), any other directory every figure
its files allow.
A figure drawn also redraws the same figure in the other formats present beside it: no
stale copy stays, and none is removed (a page may link it: results/paper's link the SVG).
The paths written are printed.

--sweep X draws metrics (--y, default makespan_s,mean_jct_s) against the swept column X
of cells.csv (a swept parameter, or a tuple's component such as thresholds.1) into
sweep-X.svg. With several directories each gets its own figures; aegis compare --out
overlays several runs in one figure.

--width, --height (a length: 3.3in, 8.4cm, 84mm, 240pt) and --font-scale draw the
figures at a paper's column width instead of their own size: the height follows the
width unless given, and every text size is multiplied by the scale (e.g. --width 3.3in
--font-scale 0.8 for a two-column paper's column). A figure drawn at a size asked for
is written in --format only; the other formats beside it keep their own size.`,
		Example: "  aegis plot results/paper/figure3\n  aegis plot results/paper/table3 --figure normalized,jct-cdf --format png\n  aegis plot out/fig3 --format pdf --width 3.3in --font-scale 0.8\n  aegis plot out/tau1-sweep --sweep thresholds.1 --y makespan_s,p95_jct_s\n" +
			"  aegis simulate --trace philly --policy aegis --out out/run --telemetry && aegis plot out/run --format png",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("%s: give at least one results directory", c.CommandPath())}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := plots.CheckFormat(format); err != nil {
				return usageError{err}
			}
			size, err := sz.size()
			if err != nil {
				return usageError{err}
			}
			var extra []plots.Sweep
			for _, x := range sweeps {
				sw := plots.Sweep{X: x, Y: ys}
				if err := sw.Check(); err != nil {
					return usageError{fmt.Errorf("--sweep %s: %w", x, err)}
				}
				extra = append(extra, sw)
			}
			for _, dir := range args {
				paths, err := plotDir(dir, format, size, figures, extra)
				for _, p := range paths {
					fmt.Fprintln(c.OutOrStdout(), p)
				}
				var none noFigures
				if errors.As(err, &none) {
					fmt.Fprintln(c.ErrOrStderr(), "aegis: "+none.Error())
					continue
				}
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "svg", "output format: "+strings.Join(plots.Formats, ", "))
	c.Flags().StringSliceVar(&figures, "figure", nil, "draw only these figures ("+strings.Join(plots.FigureNames, ", ")+", or a spec's sweep figure)")
	c.Flags().StringArrayVar(&sweeps, "sweep", nil, "draw metrics against this swept column of cells.csv (repeatable)")
	c.Flags().StringSliceVar(&ys, "y", nil, "the metrics of --sweep figures (default makespan_s,mean_jct_s)")
	sz.add(c)
	return c
}

// sizeFlags are --width, --height and --font-scale, the size figures are
// drawn at for a paper's column: aegis plot's, compare --out's and
// measured --out's (docs/plots.md).
type sizeFlags struct {
	width, height string
	fontScale     float64
}

// add defines the flags on c.
func (fl *sizeFlags) add(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&fl.width, "width", "", "draw the figures this wide, e.g. 3.3in, 8.4cm (default: each figure's own)")
	f.StringVar(&fl.height, "height", "", "draw the figures this high (default: each figure's own, or following --width)")
	f.Float64Var(&fl.fontScale, "font-scale", 1, "multiply every text size by this, e.g. 0.8 (0.3 to 3)")
}

// size is the size the flags ask for.
func (fl *sizeFlags) size() (plots.Size, error) {
	var s plots.Size
	var err error
	if fl.width != "" {
		if s.Width, err = plots.ParseLength(fl.width); err != nil {
			return s, fmt.Errorf("--width: %w", err)
		}
	}
	if fl.height != "" {
		if s.Height, err = plots.ParseLength(fl.height); err != nil {
			return s, fmt.Errorf("--height: %w", err)
		}
	}
	if !(fl.fontScale >= 0.3 && fl.fontScale <= 3) {
		return s, fmt.Errorf("--font-scale %v: want a factor from 0.3 to 3", fl.fontScale)
	}
	s.FontScale = fl.fontScale
	return s, nil
}

// plotDir draws dir's figures: the named ones (or, with none named and no
// extra sweep figures, those its spec asks for, a noFigures error when it
// asks for none, or every one its files allow in a directory without a
// spec), its spec's sweep figures (run.json) and the extra ones.
func plotDir(dir, format string, size plots.Size, figures []string, extra []plots.Sweep) ([]string, error) {
	var specSweeps []plots.Sweep
	var specFigs []string
	var specName, specFile string
	if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err == nil {
		m, err := experiments.ReadMeta(dir)
		if err != nil {
			return nil, err
		}
		specSweeps, specFigs = m.Spec.SweepFigures, append([]string{}, m.Spec.Figures...) // not nil: a spec run
		specName, specFile = m.Spec.Name, m.SpecFile
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	} else if err := checkMeasuredDir(dir); err != nil {
		return nil, err
	}
	if len(figures) == 0 && len(extra) == 0 && specFigs != nil {
		if len(specFigs)+len(specSweeps) == 0 {
			// Nothing to draw; the page (its table, any figure drawn
			// earlier) is still what the directory should hold.
			if err := experiments.WritePage(dir); err != nil {
				return nil, err
			}
			return nil, noFigures{dir: dir, spec: specName, avail: plots.Available(dir)}
		}
		// What the spec asks for, as aegis run drew it.
		figures = slices.Clone(specFigs)
		for _, sw := range specSweeps {
			figures = append(figures, sw.FileName())
		}
	}
	var named []string
	sweeps := slices.Clone(extra)
	for _, sw := range specSweeps {
		drawn := slices.ContainsFunc(extra, func(e plots.Sweep) bool { return e.FileName() == sw.FileName() })
		if !drawn && (len(figures) == 0 && len(extra) == 0 || slices.Contains(figures, sw.FileName())) {
			sweeps = append(sweeps, sw) // unless a --sweep figure of its name replaces it
		}
	}
	for _, f := range figures {
		if !slices.ContainsFunc(specSweeps, func(sw plots.Sweep) bool { return sw.FileName() == f }) {
			named = append(named, f)
		}
	}
	var paths []string
	var err error
	if len(named) > 0 || len(figures) == 0 && len(extra) == 0 && len(sweeps) == 0 {
		if err := checkEventGPUs(dir); err != nil {
			return nil, err
		}
		paths, err = plots.DrawDirSized(dir, format, size, named...)
	}
	if err == nil {
		var p []string
		p, err = plots.DrawSweepsSized(dir, format, size, sweeps...)
		paths = append(paths, p...)
	}
	if len(paths) > 0 { // the figures changed: so does the page
		if perr := writeDirPage(dir); err == nil {
			err = perr
		}
	}
	if me := (*plots.MissingError)(nil); errors.As(err, &me) {
		err = fmt.Errorf("%w; %s", err, rerunHint(dir, specFile, specFigs != nil))
	}
	return paths, err
}

// rerunHint says how to write a file a figure needs, missing from dir: a
// spec run's by rerunning its spec (specFile; a quick run's is quickName),
// a simulate directory's by rerunning aegis simulate.
func rerunHint(dir, specFile string, spec bool) string {
	switch {
	case spec && specFile != "" && specFile != quickName:
		return fmt.Sprintf("a folder of kept results may leave it out (results/paper does): rerun the spec to write it, "+
			"aegis run %s --out %s (cells whose key is unchanged are reused)", specFile, dir)
	case spec:
		return fmt.Sprintf("rerun the aegis run --trace ... --policy ... that made it (run.json's spec) with --out %s to write it", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SimulateFile)); err == nil {
		return fmt.Sprintf("rerun the aegis simulate that made it (simulate.json) with --out %s to write it", dir)
	}
	return "is it a results directory (aegis run --out or aegis simulate --out)?"
}

// noFigures is plotDir's answer for a spec run whose spec asks for no
// figure (the tables' specs): nothing to redraw (only its page), which is
// no failure. Its message names the figures --figure can draw from the
// directory's files.
type noFigures struct {
	dir, spec string
	avail     []string // plots.Available
}

func (e noFigures) Error() string {
	msg := fmt.Sprintf("%s: spec %s asks for no figures, so none was drawn", e.dir, e.spec)
	if len(e.avail) == 0 {
		return msg + "; its files allow none"
	}
	return msg + "; draw one with --figure NAME, one of: " + strings.Join(e.avail, ", ")
}

// checkEventGPUs refuses an events.jsonl that starts an attempt on a GPU
// the run in dir did not have (its simulate.json or exec.json says how many
// it had; with telemetry.csv, the timeline checks against that file's
// GPUs): a timeline of it would draw a lane per GPU up to that one (GPU
// 999 of 3: 1000 lanes).
func checkEventGPUs(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "telemetry.csv")); err == nil {
		return nil // the timeline checks the events against its GPUs
	}
	n, from := experiments.DirGPUs(dir)
	if n == 0 {
		return nil
	}
	p := filepath.Join(dir, "events.jsonl")
	evs, err := runfiles.ReadEvents(p)
	if err != nil {
		return nil // no events, or bad ones: DrawDir says so
	}
	for _, e := range evs {
		for _, g := range e.GPUs {
			if g >= n {
				return fmt.Errorf("%s:%d: job %d (%s event) on GPU %d, but the run had GPUs 0-%d (%s): the events are not this run's", p, e.Line, e.Job, e.Kind, g, n-1, from)
			}
		}
	}
	return nil
}
