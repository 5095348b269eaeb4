package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// aegis simulate --telemetry, then aegis plot on its directory, both formats.
func TestPlotSimulateDir(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := aegis("simulate", "--trace", "demo", "--policy", "exclusive", "--seed", "1", "--out", dir, "--telemetry")
	require.Equal(t, 0, code, errs)
	tel, err := os.ReadFile(filepath.Join(dir, "telemetry.csv"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(tel), "gpu,t_s,smact,smocc,drama,util,used_mib,power_w\n0,0,"))
	for i, format := range []string{"png", "svg"} { // the svg redraws the png beside it
		code, out, errs := aegis("plot", dir, "--format", format)
		require.Equal(t, 0, code, errs)
		want := filepath.Join(dir, "jct-cdf."+format) + "\n" + filepath.Join(dir, "timeline."+format) + "\n"
		if i == 1 {
			want = filepath.Join(dir, "jct-cdf.svg") + "\n" + filepath.Join(dir, "jct-cdf.png") + "\n" +
				filepath.Join(dir, "timeline.svg") + "\n" + filepath.Join(dir, "timeline.png") + "\n"
		}
		require.Equal(t, want, out)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "timeline.svg"))
	require.NoError(t, err)
	require.Contains(t, string(svg), "SM activity per GPU", "with telemetry the timeline shows SMACT")
	require.Contains(t, string(svg), ">GPUs over time: exclusive on demo, seed 1, a100-40gb:3<", "the run named from simulate.json, not its folder")
	cdf, err := os.ReadFile(filepath.Join(dir, "jct-cdf.svg"))
	require.NoError(t, err)
	require.Contains(t, string(cdf), ">exclusive, seed 1<", "the legend names policy and seed, not \"run\"")
	require.Contains(t, string(cdf), ">trace demo<")
	require.Contains(t, string(cdf), "#999999", "Exclusive's grey")
}

// aegis plot --width/--font-scale draws a column-width figure in the
// format asked for and leaves the SVG beside it as it was.
func TestPlotSized(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := aegis("simulate", "--trace", "demo", "--policy", "aegis", "--out", dir)
	require.Equal(t, 0, code, errs)
	code, _, errs = aegis("plot", dir, "--figure", "jct-cdf")
	require.Equal(t, 0, code, errs)
	svg := filepath.Join(dir, "jct-cdf.svg")
	before, err := os.ReadFile(svg)
	require.NoError(t, err)
	code, out, errs := aegis("plot", dir, "--figure", "jct-cdf", "--format", "svg", "--width", "84mm", "--font-scale", "0.8")
	require.Equal(t, 0, code, errs)
	require.Equal(t, svg+"\n", out)
	after, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Contains(t, string(after), `width="238.11pt"`, "84 mm")
	require.NotEqual(t, before, after)
	code, out, errs = aegis("plot", dir, "--figure", "jct-cdf", "--format", "png", "--width", "3.3in")
	require.Equal(t, 0, code, errs)
	require.Equal(t, filepath.Join(dir, "jct-cdf.png")+"\n", out, "the SVG beside it is not redrawn")
	again, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Equal(t, after, again)
}

// The commands that draw figures share --width, --height and --font-scale
// (one definition, sizeFlags): each draws its figure at the size asked
// for and refuses a bad one alike, before doing any work.
func TestSizeFlagsEveryCommand(t *testing.T) {
	dir := t.TempDir()
	sims := []string{filepath.Join(dir, "exclusive"), filepath.Join(dir, "aegis")}
	for i, p := range []string{"exclusive", "aegis"} {
		code, _, errs := aegis("simulate", "--trace", "demo", "--policy", p, "--out", sims[i])
		require.Equal(t, 0, code, errs)
	}
	jobs, err := runfiles.ReadTable(filepath.Join(sims[1], "jobs.csv"))
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("job_id,submit_s,start_s,finish_s\n")
	for i := range jobs.Len() {
		fmt.Fprintf(&b, "%s,%s,%s,%s\n", jobs.String(i, "job_id"), jobs.String(i, "submit_s"), jobs.String(i, "start_s"), jobs.String(i, "finish_s"))
	}
	run := filepath.Join(dir, "run.csv")
	require.NoError(t, os.WriteFile(run, []byte(b.String()), 0o644))

	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		fig  string
	}{
		{"plot", []string{"plot", sims[1], "--figure", "jct-cdf"}, filepath.Join(sims[1], "jct-cdf.svg")},
		{"compare", []string{"compare", sims[0], sims[1], "--out", out}, filepath.Join(out, "compare-cdf.svg")},
		{"measured", []string{"measured", run, "--trace", "demo", "--policy", "aegis", "--seeds", "1", "--out", out}, filepath.Join(out, "running.svg")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := aegis(append(tc.args, "--format", "svg", "--width", "84mm", "--height", "2in", "--font-scale", "0.8")...)
			require.Equal(t, 0, code, errs)
			svg, err := os.ReadFile(tc.fig)
			require.NoError(t, err)
			require.Contains(t, string(svg), `width="238.11pt" height="144pt"`, "84 mm by 2 in")
			require.Contains(t, string(svg), "font-size:10.4px", "the title's 13 pt times 0.8")
			for flag, want := range map[string]string{
				"--width=3.3":    `--width: length "3.3": want a positive number with a unit`,
				"--height=-1cm":  `--height: length "-1cm"`,
				"--font-scale=0": "--font-scale 0: want a factor from 0.3 to 3",
			} {
				code, _, errs := aegis(append(tc.args, flag)...)
				require.Equal(t, 2, code, errs)
				require.Contains(t, errs, want)
			}
		})
	}
}

// A figure whose input a results folder left out (results/paper keeps no
// jobs.csv) is an error that says how to write the file: rerun the spec
// that run.json names, the quick run's flags, or the simulate.
func TestPlotMissingFileSaysHow(t *testing.T) {
	paper := t.TempDir()
	for _, f := range []string{"run.json", "cells.csv", "normalized.csv"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "results", "paper", "figure4", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(paper, f), b, 0o644))
	}
	quick, sim := filepath.Join(t.TempDir(), "q"), filepath.Join(t.TempDir(), "s")
	code, _, errs := aegis("run", "--trace", "demo", "--policy", "aegis", "--seeds", "1", "--out", quick)
	require.Equal(t, 0, code, errs)
	code, _, errs = aegis("simulate", "--trace", "demo", "--policy", "aegis", "--out", sim)
	require.Equal(t, 0, code, errs)
	for _, d := range []string{quick, sim} {
		require.NoError(t, os.Remove(filepath.Join(d, "jobs.csv")))
	}
	empty := t.TempDir()
	for _, tc := range []struct{ dir, want string }{
		{paper, paper + ": no jobs.csv; a folder of kept results may leave it out (results/paper does): rerun the spec to write it, aegis run experiments/figure4.yaml --out " + paper},
		{quick, quick + ": no jobs.csv; rerun the aegis run --trace ... --policy ... that made it (run.json's spec) with --out " + quick},
		{sim, sim + ": no jobs.csv; rerun the aegis simulate that made it (simulate.json) with --out " + sim},
		{empty, empty + ": no jobs.csv; is it a results directory"},
	} {
		code, _, errs := aegis("plot", tc.dir, "--figure", "jct-cdf", "--format", "png")
		require.Equal(t, 1, code, errs)
		require.Contains(t, errs, tc.want)
	}
}

func TestPlotErrors(t *testing.T) {
	empty := t.TempDir()
	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, "stability.csv"), []byte("window_s,signal\n10,smact\n"), 0o644))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no dir", []string{"plot"}, 2, "give at least one results directory"},
		{"sweep without a sweep", []string{"plot", empty, "--sweep", "hold"}, 1, "no cells.csv"},
		{"sweep of an unknown metric", []string{"plot", empty, "--sweep", "hold", "--y", "speed"}, 2, `--sweep hold: y: unknown metric "speed"`},
		{"bad format", []string{"plot", empty, "--format", "jpg"}, 2, `plot format "jpg"`},
		{"nothing to plot", []string{"plot", empty}, 1, "nothing to plot"},
		{"unknown figure", []string{"plot", empty, "--figure", "fig8"}, 1, `unknown figure "fig8"`},
		{"missing column", []string{"plot", bad}, 1, `stability.csv:1: missing column "wmae"`},
		{"telemetry without out", []string{"simulate", "--telemetry"}, 2, "--telemetry needs --out"},
		{"width without a unit", []string{"plot", empty, "--width", "3.3"}, 2, `--width: length "3.3": want a positive number with a unit`},
		{"font scale out of range", []string{"plot", empty, "--font-scale", "0"}, 2, "--font-scale 0: want a factor from 0.3 to 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := aegis(tc.args...)
			require.Equal(t, tc.code, code, errs)
			require.Contains(t, errs, tc.want)
		})
	}
}

// A spec run whose spec asks for no figure (Table 3) is no failure: aegis
// plot draws nothing there (it rewrites the page), says so naming what
// --figure can draw from its files, and goes on to the next directory.
func TestPlotSpecWithoutFigures(t *testing.T) {
	table3, table2 := t.TempDir(), t.TempDir()
	for dir, src := range map[string]string{table3: "table3", table2: "table2"} {
		for _, f := range []string{"run.json", "cells.csv", "normalized.csv"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "results", "paper", src, f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
		}
	}
	code, out, errs := aegis("plot", table3, table2)
	require.Equal(t, 0, code, errs)
	require.Equal(t, "aegis: "+table3+": spec table3 asks for no figures, so none was drawn; draw one with --figure NAME, one of: normalized, queue-exec, seeds-cdf, energy\n", errs)
	require.Equal(t, filepath.Join(table2, "seeds-cdf.svg")+"\n"+filepath.Join(table2, "energy.svg")+"\n", out, "the next directory is drawn")
	entries, err := os.ReadDir(table3)
	require.NoError(t, err)
	require.Len(t, entries, 4, "no figure written, only the page")
	require.FileExists(t, filepath.Join(table3, "README.md"), "the page is what the directory should hold")
	code, out, errs = aegis("plot", table3, "--figure", "normalized")
	require.Equal(t, 0, code, errs)
	require.Equal(t, filepath.Join(table3, "normalized.svg")+"\n", out)
}

// aegis plot takes several directories, each drawn into itself.
func TestPlotSeveralDirs(t *testing.T) {
	var dirs []string
	for _, p := range []string{"exclusive", "aegis", "lucid"} {
		dir := filepath.Join(t.TempDir(), p)
		code, _, errs := aegis("simulate", "--trace", "demo", "--policy", p, "--out", dir)
		require.Equal(t, 0, code, errs)
		dirs = append(dirs, dir)
	}
	code, out, errs := aegis(append([]string{"plot", "--figure", "jct-cdf"}, dirs...)...)
	require.Equal(t, 0, code, errs)
	var want string
	for _, d := range dirs {
		want += filepath.Join(d, "jct-cdf.svg") + "\n"
	}
	require.Equal(t, want, out)
}

// aegis plot redraws a spec's sweep figures (run.json) and draws --sweep
// ones on request.
func TestPlotSweep(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := aegis("run", filepath.Join("..", "..", "experiments", "examples", "tau1-sweep.yaml"), "--out", dir)
	require.Equal(t, 0, code, errs)
	require.NoError(t, os.Remove(filepath.Join(dir, "sweep-thresholds.1.svg")))
	code, out, errs := aegis("plot", dir, "--format", "png")
	require.Equal(t, 0, code, errs)
	require.Equal(t, filepath.Join(dir, "sweep-thresholds.1.png")+"\n", out, "the spec's sweep figure, nothing it did not ask for")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "![sweep-thresholds.1](sweep-thresholds.1.png)", "the page shows the figure drawn")
	code, out, errs = aegis("plot", dir)
	require.Equal(t, 0, code, errs)
	require.Equal(t, filepath.Join(dir, "sweep-thresholds.1.svg")+"\n"+filepath.Join(dir, "sweep-thresholds.1.png")+"\n", out,
		"the PNG beside the fresh SVG is redrawn, not left stale")
	readme, err = os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "![sweep-thresholds.1](sweep-thresholds.1.svg)")
	require.Contains(t, string(readme), "; also [sweep-thresholds.1.png](sweep-thresholds.1.png)", "the page lists exactly the figures present")
	require.NoError(t, os.Remove(filepath.Join(dir, "sweep-thresholds.1.png")))
	code, out, errs = aegis("plot", dir, "--sweep", "thresholds.1", "--y", "p95_jct_s")
	require.Equal(t, 0, code, errs)
	require.Equal(t, filepath.Join(dir, "sweep-thresholds.1.svg")+"\n", out, "only the asked-for figure")
	svg, err := os.ReadFile(filepath.Join(dir, "sweep-thresholds.1.svg"))
	require.NoError(t, err)
	require.Contains(t, string(svg), "p95 JCT (h)")
	code, out, errs = aegis("plot", dir, "--sweep", "thresholds.1", "--figure", "sweep-thresholds.1")
	require.Equal(t, 0, code, errs)
	require.Equal(t, filepath.Join(dir, "sweep-thresholds.1.svg")+"\n", out, "drawn once: the --sweep figure replaces the spec's of its name")
	code, out, errs = aegis("plot", dir, "--figure", "sweep-thresholds.1,seeds-cdf")
	require.Equal(t, 0, code, errs)
	require.Equal(t, filepath.Join(dir, "seeds-cdf.svg")+"\n"+filepath.Join(dir, "sweep-thresholds.1.svg")+"\n", out)
}

// An events.jsonl naming a GPU the run's telemetry.csv does not cover (GPU
// 999 on a 3-GPU server) is an error, not a timeline of 1000 lanes.
func TestPlotEventsBeyondTheServer(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := aegis("simulate", "--trace", "demo", "--policy", "exclusive", "--seed", "1", "--out", dir, "--telemetry")
	require.Equal(t, 0, code, errs)
	path := filepath.Join(dir, "events.jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), `"gpus":[1]`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), `"gpus":[1]`, `"gpus":[999]`, 1)), 0o644))
	code, _, errs = aegis("plot", dir, "--figure", "timeline")
	require.Equal(t, 1, code, errs)
	require.Regexp(t, `events.jsonl: job \d+ attempt 1 ran on GPU 999, but telemetry.csv covers GPUs 0-2: the two files are not of one run`, errs)
	require.NoFileExists(t, filepath.Join(dir, "timeline.svg"))
}

// A plot of an events.jsonl that starts an attempt on a GPU the run did not
// have (GPU 999 of simulate.json's 3) is refused, naming the line and the
// run's GPUs; it drew 1000 lanes and exited 0.
func TestPlotEventsOnGPUOutsideTheRun(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := aegis("simulate", "--trace", "demo", "--policy", "exclusive", "--server", "a100-40gb:3", "--seed", "1", "--out", dir)
	require.Equal(t, 0, code, errs)
	p := filepath.Join(dir, "events.jsonl")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(b), `"gpus":[0]`)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), `"gpus":[0]`, `"gpus":[999]`, 1)), 0o644))
	code, _, errs = aegis("plot", dir)
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "events.jsonl:")
	require.Contains(t, errs, "on GPU 999, but the run had GPUs 0-2 (simulate.json: server a100-40gb:3): the events are not this run's")
	require.NoFileExists(t, filepath.Join(dir, "timeline.svg"))
}

// TestPlotKeepsCommittedFigure: aegis plot --format png in a copy of
// results/paper/figure3 keeps the committed normalized.svg its page links
// (redrawn, the same bytes) and the page itself (results/paper's
// .gitignore names the PNG), and prints both paths.
func TestPlotKeepsCommittedFigure(t *testing.T) {
	root := filepath.Join(t.TempDir(), "paper")
	dir := filepath.Join(root, "figure3")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	src := filepath.Join("..", "..", "results", "paper")
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(to, b, 0o644))
	}
	copyFile(filepath.Join(src, ".gitignore"), filepath.Join(root, ".gitignore"))
	ents, err := os.ReadDir(filepath.Join(src, "figure3"))
	require.NoError(t, err)
	for _, e := range ents {
		if !e.IsDir() {
			copyFile(filepath.Join(src, "figure3", e.Name()), filepath.Join(dir, e.Name()))
		}
	}
	before := map[string]string{}
	for _, f := range []string{"normalized.svg", "README.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		before[f] = string(b)
	}
	for _, format := range []string{"png", "pdf"} {
		code, out, errs := aegis("plot", dir, "--format", format)
		require.Equal(t, 0, code, errs)
		require.Contains(t, out, filepath.Join(dir, "normalized."+format)+"\n")
		require.Contains(t, out, filepath.Join(dir, "normalized.svg")+"\n")
		require.FileExists(t, filepath.Join(dir, "normalized."+format))
		for f, want := range before {
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err, "%s is kept", f)
			require.Equal(t, want, string(b), f)
		}
	}
}

// A directory aegis measured --out wrote (results/paper/measured's) is no
// run's results: aegis plot says what it is and the aegis measured command,
// with the flags its measured.md records, that draws its figure.
func TestPlotMeasuredDir(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"measured.md", "summary.csv"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "results", "paper", "measured", "philly-aegis_magm_thresholded", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	jobs := "job,workload,submit_s,start_s,last_start_s,finish_s,span_s,queue_s,failed_attempts,ours_span_s_seed1,ours_failed_seed1,span_ratio_median\n" +
		"1,resnet,0,10,10,110,100,10,0,90,0,0.9\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.csv"), []byte(jobs), 0o644))
	code, _, errs := aegis("plot", dir, "--figure", "jct-cdf", "--format", "png")
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, dir+": an aegis measured --out directory")
	require.Contains(t, errs, "aegis measured job_metrics__aegis_magm_thresholded.csv --trace philly --server a100-40gb:3 --policy aegis "+
		"--set placement=mfm --set filter=pressure --seeds 1,2,3,4,5 --dcgm dcgm_run_distributions.csv --format png --out "+dir)
	_, err := plotDir(dir, "png", plots.Size{}, nil, nil)
	var me *measuredDirError
	require.ErrorAs(t, err, &me)

	// Without its report, the command has no flags to take from it.
	require.NoError(t, os.Remove(filepath.Join(dir, "measured.md")))
	code, _, errs = aegis("plot", dir)
	require.Equal(t, 1, code, errs)
	require.Contains(t, errs, "aegis measured RUN.csv --trace TRACE --format png --out "+dir)
}
