package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// copyDir copies a testdata directory into a temporary one, so figures are
// drawn beside their data without touching testdata.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
	}
	return dst
}

func TestDrawDirGolden(t *testing.T) {
	dir := copyDir(t, "testdata/spec")
	paths, err := DrawDir(dir, "svg", FigNormalized)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "normalized.svg")}, paths)
	checkGolden(t, paths[0])
}

// checkGolden compares the file at path with its golden copy under
// testdata/golden (rewritten with -update) and returns its content.
func checkGolden(t *testing.T, path string) string {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	golden.File(t, filepath.Join("testdata", "golden", filepath.Base(path)), got)
	return string(got)
}

func TestDrawDirAllFigures(t *testing.T) {
	tests := []struct {
		name, src, format string
		want              []string
	}{
		{"spec dir svg", "testdata/spec", "svg", []string{"normalized.svg", "jct-cdf.svg", "queue-exec.svg", "stability.svg", "thresholds.svg", "seeds-cdf.svg"}},
		{"spec dir png", "testdata/spec", "png", []string{"normalized.png", "jct-cdf.png", "queue-exec.png", "stability.png", "thresholds.png", "seeds-cdf.png"}},
		{"spec dir pdf", "testdata/spec", "pdf", []string{"normalized.pdf", "jct-cdf.pdf", "queue-exec.pdf", "stability.pdf", "thresholds.pdf", "seeds-cdf.pdf"}},
		{"simulate dir", "testdata/run", "svg", []string{"jct-cdf.svg", "timeline.svg"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, tc.src)
			paths, err := DrawDir(dir, tc.format)
			require.NoError(t, err)
			var names []string
			for _, p := range paths {
				names = append(names, filepath.Base(p))
				st, err := os.Stat(p)
				require.NoError(t, err)
				require.Greater(t, st.Size(), int64(1000), p)
			}
			require.Equal(t, tc.want, names)
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range ents {
				require.False(t, strings.HasPrefix(e.Name(), "."), "temporary file %s left behind", e.Name())
			}
		})
	}
}

func TestDrawDirDeterministic(t *testing.T) {
	for _, format := range []string{"svg", "pdf"} {
		drawTwice(t, format)
	}
}

func drawTwice(t *testing.T, format string) {
	a, b := copyDir(t, "testdata/spec"), copyDir(t, "testdata/spec")
	pa, err := DrawDir(a, format)
	require.NoError(t, err)
	pb, err := DrawDir(b, format)
	require.NoError(t, err)
	require.Equal(t, len(pa), len(pb))
	for i := range pa {
		x, err := os.ReadFile(pa[i])
		require.NoError(t, err)
		y, err := os.ReadFile(pb[i])
		require.NoError(t, err)
		require.True(t, bytes.Equal(x, y), "%s differs between two draws", filepath.Base(pa[i]))
	}
}

// TestFigureContent checks what the figures show, through their SVG text.
func TestFigureContent(t *testing.T) {
	dir := copyDir(t, "testdata/spec")
	_, err := DrawDir(dir, "svg")
	require.NoError(t, err)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return string(b)
	}
	has := func(svg, s string) bool { return strings.Contains(svg, s) }
	norm := read("normalized.svg")
	for _, s := range []string{">GeoMean<", ">AEGIS hold=30s<", ">Lucid hold=30s<", ">p95 JCT<", ">philly<", ">saturn<"} {
		require.True(t, has(norm, s), "normalized.svg lacks %s", s)
	}
	// The normalizing config, as normalized.csv names it, is named in the
	// title and is the reference line, not a series of bars.
	require.True(t, has(norm, "makespan and JCT normalized to Exclusive<"))
	require.False(t, has(norm, ">Exclusive hold=30s<"), "the normalizing config drawn as a series")
	require.True(t, has(read("thresholds.svg"), ">knee τ=(0.65, 0.35, 0.50)<"))
	require.True(t, has(read("stability.svg"), ">AEGIS window (30 s)<"))
	// Exclusive has two seeds, AEGIS three: both appear in the seeds CDF.
	seeds := read("seeds-cdf.svg")
	require.True(t, has(seeds, ">Exclusive<"))
	require.True(t, has(seeds, ">makespan (h)<"))
}

// A wrapped title is balanced: as many lines as the greedy wrap needs,
// none wider than the width, and no word left alone on the last line (the
// seeds figure's "seeds)" once was).
func TestWrapBalanced(t *testing.T) {
	sty := text(13)
	title := "table2: makespan and mean JCT over seeds: mean, 95 % CI and one dot per seed (5 seeds)"
	w := sty.Width(strings.TrimSuffix(title, " seeds)")) + 0.5
	greedy := wrapAt(sty, title, w)
	require.Equal(t, "seeds)", greedy[len(greedy)-1], "the case: greedy leaves one word")
	got := strings.Split(wrap(sty, title, w), "\n")
	require.Len(t, got, len(greedy))
	require.Equal(t, title, strings.Join(got, " "))
	for _, l := range got {
		require.LessOrEqual(t, sty.Width(l), w, "%q", l)
	}
	require.Greater(t, sty.Width(got[1]), w/3, "balanced lines: %q", got)
	require.Equal(t, "short", wrap(sty, "short", w))
}

// Bar panels, whose x axis names groups, have horizontal grid lines only:
// a vertical one would run through a group's middle bar.
func TestBarsNoVerticalGrid(t *testing.T) {
	fig, err := NormalizedBars(nil, "t", Bars{Title: "makespan", Groups: []string{"philly", "venus"},
		Series: []BarSeries{{Name: "AEGIS", Values: []float64{0.7, 0.8}}}})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, fig.WriteTo(&b, "svg"))
	grid := regexp.MustCompile(`<path d="M([0-9.]+),([0-9.]+)L([0-9.]+),([0-9.]+)" style="fill:none;stroke:#808080`)
	lines := grid.FindAllStringSubmatch(b.String(), -1)
	require.NotEmpty(t, lines, "horizontal grid lines")
	for _, m := range lines {
		require.NotEqual(t, m[1], m[3], "a vertical grid line: %s", m[0])
	}
}

// Figure 7 follows the paper: gain, slowdown and deferrals against the
// thresholds (a column per threshold the sweep varies, a row per metric
// sharing its y range), not against each other; every point inside the
// axes' margins; no policy's colour for a metric and no transparency; and
// the points that share a threshold value a range bar, not a pile of
// half-transparent dots (the old figure's title counted 120 points where
// about 25 showed).
func TestThresholdsFigure(t *testing.T) {
	var pts []ThresholdPoint
	for _, t1 := range []float64{0.5, 0.65, 0.8} {
		for _, t2 := range []float64{0.35, 0.5} {
			pts = append(pts, ThresholdPoint{Tau: [3]float64{t1, t2, 0.5}, Gain: 1 + t1, MeanSlowdown: 1 + t1/2 + t2/10,
				MaxSlowdown: 1.5 + t1, Defers: 340 * (1 - t1), Default: t1 == 0.65 && t2 == 0.35, Knee: t1 == 0.65 && t2 == 0.5})
		}
	}
	fig, err := Thresholds("t", pts)
	require.NoError(t, err)
	require.Len(t, fig.Panels, 3, "gain, slowdown, deferrals")
	for r, row := range fig.Panels {
		require.Len(t, row, 2, "τ1 and τ2 vary, τ3 does not")
		require.Equal(t, "τ1 (SMACT threshold)", row[0].X.Label.Text)
		require.Equal(t, "τ2 (SMOCC threshold)", row[1].X.Label.Text)
		require.Equal(t, row[0].Y.Min, row[1].Y.Min, "row %d: one y range", r)
		require.Equal(t, row[0].Y.Max, row[1].Y.Max, "row %d: one y range", r)
		require.Less(t, row[0].X.Min, 0.5)
		require.Greater(t, row[0].X.Max, 0.8)
	}
	require.Less(t, fig.Panels[0][0].Y.Min, 1.5)
	require.Greater(t, fig.Panels[0][0].Y.Max, 1.8)
	require.Less(t, fig.Panels[2][0].Y.Min, 340*0.2)
	require.Greater(t, fig.Panels[2][0].Y.Max, 340*0.5)
	var b bytes.Buffer
	require.NoError(t, fig.WriteTo(&b, "svg"))
	svg := b.String()
	require.NotContains(t, svg, "opacity", "no transparency")
	for p, k := range policySlots {
		pr, pg, pb, _ := colorOf(k).RGBA()
		for _, c := range regexp.MustCompile(`#([0-9A-F]{6})`).FindAllStringSubmatch(svg, -1) {
			var r, g, bl uint32
			_, err := fmt.Sscanf(c[1], "%02X%02X%02X", &r, &g, &bl)
			require.NoError(t, err)
			if k == policySlots["exclusive"] && r == g && g == bl {
				continue // greys: the grid; Exclusive's is a dashed line of its own grey
			}
			near := absDiff(r, pr>>8)+absDiff(g, pg>>8)+absDiff(bl, pb>>8) < 24
			require.False(t, near, "colour %s is %s's", c[0], p)
		}
	}
	for _, s := range []string{">knee τ=(0.65, 0.50, 0.50)<", ">default τ=(0.65, 0.35, 0.50)<",
		">the other thresholds at the default τ=(0.65, 0.35, 0.50)<", ">range of gain, mean slowdown, deferrals over all 6 points with that τ<"} {
		require.Contains(t, svg, s)
	}
}

func absDiff(a, b uint32) uint32 { return max(a, b) - min(a, b) }

func TestDrawDirSkipsSingleSeed(t *testing.T) {
	dir := copyDir(t, "testdata/spec")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cells.csv"),
		[]byte("spec,trace,config,policy,seed,makespan_s,mean_jct_s\nd,philly,A,aegis,1,10,5\n"), 0o644))
	paths, err := DrawDir(dir, "svg")
	require.NoError(t, err)
	for _, p := range paths {
		require.NotEqual(t, "seeds-cdf.svg", filepath.Base(p))
	}
	// Named, it is drawn all the same.
	paths, err = DrawDir(dir, "svg", FigSeeds)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "seeds-cdf.svg")}, paths)
}

func TestDrawDirErrors(t *testing.T) {
	write := func(t *testing.T, name, content string) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		return dir
	}
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		format  string
		figures []string
		want    []string
	}{
		{"empty dir", func(t *testing.T) string { return t.TempDir() }, "svg", nil, []string{"nothing to plot"}},
		{"bad format", func(t *testing.T) string { return t.TempDir() }, "jpg", nil, []string{`plot format "jpg"`}},
		{"unknown figure", func(t *testing.T) string { return t.TempDir() }, "svg", []string{"fig9"}, []string{`unknown figure "fig9"`}},
		{"named figure without its file", func(t *testing.T) string { return t.TempDir() }, "svg", []string{FigStability}, []string{"no stability.csv"}},
		{"missing column", func(t *testing.T) string {
			return write(t, "normalized.csv", "spec,trace,config,seed,makespan_s,mean_jct_s\nd,philly,A,1,1,1\n")
		}, "svg", nil, []string{"normalized.csv:1", `missing column "p95_jct_s"`}},
		{"bad number", func(t *testing.T) string {
			return write(t, "stability.csv", "window_s,signal,wmae\n10,smact,0.1\n20,smact,lots\n")
		}, "svg", nil, []string{"stability.csv:3", "column wmae", `"lots"`}},
		{"ragged row", func(t *testing.T) string {
			return write(t, "thresholds.csv", "tau1,tau2,tau3,sequence,throughput_gain,mean_slowdown,max_slowdown,deferrals\n0.6,0.3\n")
		}, "svg", nil, []string{"thresholds.csv:2", "wrong number of fields"}},
		{"bad events", func(t *testing.T) string {
			return write(t, "events.jsonl", `{"t":0,"event":"started","job":0,"gpus":[0]}`+"\n"+`{"t":1,"event":"finished"}`+"\n")
		}, "svg", nil, []string{"events.jsonl:2", `missing key "job"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DrawDir(tc.dir(t), tc.format, tc.figures...)
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestPlotFunctionsRejectEmptyData(t *testing.T) {
	_, err := NormalizedBars(nil, "t")
	require.Error(t, err)
	_, err = NormalizedBars(nil, "t", Bars{Title: "x", Groups: []string{"a"}, Series: []BarSeries{{Name: "s", Values: []float64{1, 2}}}})
	require.ErrorContains(t, err, "2 values for 1 groups")
	_, err = CDFs(nil, "t", 2, CDF{Title: "empty", Series: []Dist{{Name: "a", Values: []float64{-1}}}, LogX: true})
	require.ErrorContains(t, err, "no data")
	_, err = Thresholds("t", nil)
	require.Error(t, err)
	_, err = GPUTimeline(nil, Timeline{})
	require.Error(t, err)
	_, err = Tradeoff(nil, "t", Scatter{Title: "none"})
	require.ErrorContains(t, err, "no points")
}

func TestTimelineData(t *testing.T) {
	d := &dirData{dir: "testdata/run"}
	tl, err := d.timelineData()
	require.NoError(t, err)
	require.Len(t, tl.Jobs, 2)
	// GPU 0: job 0 from 0 to 12, job 1's first attempt from 3 to its OOM at 8.
	require.Equal(t, []float64{0, 0, 3, 8, 12, 15}, tl.Jobs[0].X)
	require.Equal(t, []float64{0, 1, 2, 1, 0, 0}, tl.Jobs[0].Y)
	// GPU 1: the first attempt 3–8, the retry 9–14.
	require.Equal(t, []float64{0, 3, 8, 9, 14, 15}, tl.Jobs[1].X)
	require.Equal(t, []float64{0, 1, 0, 1, 0, 0}, tl.Jobs[1].Y)
	require.Len(t, tl.MemoryGiB, 2)
	require.InDelta(t, 4.0, tl.MemoryGiB[0].Y[6], 1e-9) // second 6: two jobs × 2048 MiB
	require.InDelta(t, 0.8, tl.SMACT[0].Y[6], 1e-9)
	fig, err := GPUTimeline(nil, tl)
	require.NoError(t, err)
	require.Len(t, fig.Panels, 3)
	var names []string
	for _, e := range fig.Legend {
		names = append(names, e.Name)
	}
	require.Equal(t, "GPU 0,GPU 1", strings.Join(names, ","))
}

// thinCDF keeps at most about 2/cdfResolution corners of any CDF, and the
// step line through them is off by less than cdfResolution of the range.
func TestThinCDF(t *testing.T) {
	for _, logX := range []bool{false, true} {
		xs := make([]float64, 20000)
		for i := range xs {
			xs[i] = math.Exp(float64(i%997)/100) + float64(i)/1e4 // a spread of values, some tied
		}
		all := cdfPoints(xs)
		pts := thinCDF(all, logX)
		require.LessOrEqual(t, len(pts), int(2/cdfResolution)+2, "logX %v", logX)
		require.Equal(t, all[0], pts[0])
		require.Equal(t, all[len(all)-1], pts[len(pts)-1])
		// The drawn CDF at each original corner's x: the y of the last
		// kept corner at or before it.
		k := 0
		for _, p := range all {
			for k+1 < len(pts) && pts[k+1].X <= p.X {
				k++
			}
			drawn := pts[k].Y
			if k+1 < len(pts) && pts[k+1].X == p.X {
				drawn = pts[k+1].Y
			}
			require.Less(t, math.Abs(drawn-p.Y), cdfResolution+1e-12, "at x=%g", p.X)
		}
	}
	few := cdfPoints([]float64{3, 1, 2})
	require.Equal(t, few, thinCDF(few, false), "a small CDF is drawn whole")
}

func TestCDFPoints(t *testing.T) {
	got := cdfPoints([]float64{3, 1, 2, 2})
	require.Equal(t, plotter.XYs{{X: 1, Y: 0}, {X: 1, Y: 0.25}, {X: 2, Y: 0.5}, {X: 2, Y: 0.75}, {X: 3, Y: 1}}, got)
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	require.Equal(t, []string{"1", "10", "100"}, labels(0.9, 300), "wide ranges: decades only")
	require.Equal(t, []string{"2", "5", "10"}, labels(1.2, 12), "narrow ranges: 1, 2, 5 × 10^k")
	require.Equal(t, []string{"1.3", "1.4"}, labels(1.3, 1.4), "no label inside: the ends")
	require.Empty(t, (logTicks{}).Ticks(0, 1))
}

// tickValues are the values of ticks (labelled only, or all) of tk on
// [lo, hi].
func tickValues(tk plot.Ticker, lo, hi float64, labelled bool) []float64 {
	var out []float64
	for _, t := range tk.Ticks(lo, hi) {
		if !labelled || t.Label != "" {
			out = append(out, t.Value)
		}
	}
	slices.Sort(out)
	return out
}

// An integer axis (GPU counts 2..4, 2..8) gets whole-number ticks only,
// labelled or not; a real-valued axis keeps its half steps.
func TestTrimTicks(t *testing.T) {
	whole := trimTicks{integer: true}
	for _, tc := range []struct {
		lo, hi float64
		want   []float64 // labelled
	}{
		{1.9, 4.1, []float64{2, 3, 4}},
		{1.7, 8.3, []float64{2, 3, 4, 5, 6, 7, 8}},
		{3.99, 4.01, []float64{4}},
		{-0.5, 120.5, []float64{0, 20, 40, 60, 80, 100, 120}},
		{0, 1e6, []float64{0, 2e5, 4e5, 6e5, 8e5, 1e6}},
	} {
		require.Equal(t, tc.want, tickValues(whole, tc.lo, tc.hi, true), "[%g, %g]", tc.lo, tc.hi)
		for _, v := range tickValues(whole, tc.lo, tc.hi, false) {
			require.Equal(t, math.Trunc(v), v, "[%g, %g]: a fractional tick", tc.lo, tc.hi)
		}
	}
	require.Equal(t, []float64{2, 2.5, 3, 3.5, 4}, tickValues(trimTicks{}, 1.9, 4.1, true), "real axes keep half steps")
	require.Contains(t, tickValues(whole, -0.5, 120.5, false), 10.0, "minor ticks where they are whole")
}

// A sweep panel whose x values are whole numbers (a GPU count) gets the
// integer ticker; one with a fractional x value keeps the real one.
func TestSweepIntegerAxis(t *testing.T) {
	band := func(xs ...float64) Band {
		return Band{Name: "AEGIS", X: xs, Mean: xs, Lo: xs, Hi: xs}
	}
	for _, tc := range []struct {
		xs   []float64
		want []float64
	}{
		{[]float64{2, 3, 4}, []float64{2, 3, 4}},
		{[]float64{2, 3, 4, 6, 8}, []float64{2, 3, 4, 5, 6, 7, 8}},
		{[]float64{2, 3.5, 4}, []float64{2, 2.5, 3, 3.5, 4}},
	} {
		p, err := sweepPlot(SweepPanel{Title: "makespan", Lines: []Band{band(tc.xs...)}}, newLegend(nil), nil)
		require.NoError(t, err)
		require.Equal(t, tc.want, tickValues(p.X.Tick.Marker, p.X.Min, p.X.Max, true), "x %v", tc.xs)
	}
}

// Without pressure telemetry (legacy GPUs) the timeline shows utilization.
func TestTimelineWithoutPressure(t *testing.T) {
	dir := copyDir(t, "testdata/run")
	in, err := os.ReadFile(filepath.Join(dir, "telemetry.csv"))
	require.NoError(t, err)
	var out []string
	for i, line := range strings.Split(strings.TrimSpace(string(in)), "\n") {
		f := strings.Split(line, ",")
		if i > 0 {
			f[2], f[3], f[4] = "0", "0", "0"
		}
		out = append(out, strings.Join(f, ","))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "telemetry.csv"), []byte(strings.Join(out, "\n")+"\n"), 0o644))
	tl, err := (&dirData{dir: dir}).timelineData()
	require.NoError(t, err)
	require.Empty(t, tl.SMACT)
	require.Len(t, tl.UtilPct, 2)
	require.InDelta(t, 90, tl.UtilPct[0].Y[6], 1e-9) // second 6: two jobs × 45 %
	withP, err := (&dirData{dir: "testdata/run"}).timelineData()
	require.NoError(t, err)
	require.Empty(t, withP.UtilPct)
	require.Len(t, withP.SMACT, 2)
}

func TestSeriesNames(t *testing.T) {
	in := "spec,trace,config,policy,seed,hold,window,makespan_s,extra,normalized_to\n" +
		"s,philly,Exclusive,exclusive,1,,,1,x,Exclusive\n" +
		"s,philly,AEGIS,aegis,1,30s,20,0.7,x,Exclusive\n" +
		"s,philly,,horus,1,,,0.9,x,Exclusive\n"
	tb, err := runfiles.ParseTable("normalized.csv", strings.NewReader(in))
	require.NoError(t, err)
	sweep := SweepColumns(tb, results.SummaryColumns)
	require.Equal(t, []string{"hold", "window"}, sweep, "sweep columns lie between seed and the first metric")
	var names []string
	for i := range tb.Len() {
		names = append(names, SeriesName(tb, i, sweep))
	}
	require.Equal(t, []string{"Exclusive", "AEGIS hold=30s window=20", "horus"}, names)
	require.Equal(t, "Exclusive", baselineName(tb))
	require.Equal(t, []bool{true, false, false}, []bool{isBaseline(tb, 0), isBaseline(tb, 1), isBaseline(tb, 2)})
	// The baseline is what normalized.csv says, never guessed from rows
	// that are all ones (AEGIS's here).
	in = "spec,trace,config,policy,seed,makespan_s,normalized_to\n" +
		"s,philly,AEGIS,aegis,1,1,Lucid\n" + "s,philly,Lucid,lucid,1,1,Lucid\n"
	tb, err = runfiles.ParseTable("normalized.csv", strings.NewReader(in))
	require.NoError(t, err)
	require.Equal(t, "Lucid", baselineName(tb))
	require.Equal(t, []bool{false, true}, []bool{isBaseline(tb, 0), isBaseline(tb, 1)})
	tb, err = runfiles.ParseTable("normalized.csv", strings.NewReader("spec,trace,config,policy,seed,makespan_s\ns,philly,AEGIS,aegis,1,1\n"))
	require.NoError(t, err)
	require.Equal(t, "the baseline", baselineName(tb), "a file written before normalized_to")
	require.False(t, isBaseline(tb, 0))

	// A tuple parameter's components (thresholds.1, ...) stay out of names.
	in = "spec,trace,config,policy,seed,thresholds,thresholds.1,thresholds.2,truth.noise,makespan_s\n" +
		"s,philly,AEGIS,aegis,1,\"0.5,0.35\",0.5,0.35,1,0.7\n"
	tb, err = runfiles.ParseTable("cells.csv", strings.NewReader(in))
	require.NoError(t, err)
	sweep = SweepColumns(tb, results.SummaryColumns)
	require.Equal(t, "AEGIS thresholds=0.5,0.35 truth.noise=1", SeriesName(tb, 0, sweep))
}

// BenchmarkDrawDir draws every figure of the test spec directory as SVG.
func BenchmarkDrawDir(b *testing.B) {
	for _, src := range []string{"testdata/spec", "testdata/run"} {
		b.Run(filepath.Base(src), func(b *testing.B) {
			dir := b.TempDir()
			ents, err := os.ReadDir(src)
			require.NoError(b, err)
			for _, e := range ents {
				data, err := os.ReadFile(filepath.Join(src, e.Name()))
				require.NoError(b, err)
				require.NoError(b, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
			}
			for b.Loop() {
				if _, err := DrawDir(dir, "svg"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStylesStable: a configuration label has one colour in every figure
// of a run, whether or not a figure leaves it out (Figure 3 draws its
// baseline as the line at 1), and the paper's labels have fixed colours
// across runs (compare, other specs).
func TestStylesStable(t *testing.T) {
	st := NewStyles("Exclusive", "Zeta", "AEGIS", "Yota")
	again := NewStyles("Yota", "AEGIS")
	require.Equal(t, st.Color("AEGIS"), again.Color("AEGIS"))
	require.Equal(t, colorOf(policySlots["horus"]), NewStyles("x", "y").Color("Horus"))
	seen := map[int]string{}
	for _, n := range []string{"Exclusive", "Zeta", "AEGIS", "Yota", "Lucid", "Horus", "Est-free"} {
		k := st.Slot(n)
		require.NotContains(t, seen, k, "%s shares slot %d with %s", n, k, seen[k])
		seen[k] = n
	}

	// Every figure of a run directory: the fill or stroke colour drawn
	// beside each legend name is the same in all of them.
	dir := copyDir(t, "testdata/spec")
	paths, err := DrawDir(dir, "svg")
	require.NoError(t, err)
	d := &dirData{dir: dir} // the run's styles, rebuilt from its cells.csv
	want := d.styles()
	for _, label := range []string{"AEGIS hold=30s", "Lucid hold=30s"} {
		hex := svgColor(want.Color(label))
		n := 0
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			svg := string(b)
			if !strings.Contains(svg, ">"+label+"<") {
				continue
			}
			n++
			require.Contains(t, svg, hex, "%s: %s not drawn in %s", filepath.Base(p), label, hex)
		}
		require.GreaterOrEqual(t, n, 2, "%s in fewer than two figures", label)
	}
	a, b := d.styles().Color("AEGIS hold=30s"), d.styles().Color("Lucid hold=30s")
	require.NotEqual(t, a, b)

	// A policy's colour whatever the label's case or what follows it
	// (aegis run --policy aegis,lucid labels configurations in lower case).
	for _, names := range [][]string{{"AEGIS", "Lucid", "Horus", "Exclusive"}, {"aegis", "lucid", "horus", "exclusive"},
		{"Aegis hold=30s", "LUCID · philly", "horus (venus)", "exclusive: s1"}} {
		st := NewStyles("zeta")
		for _, n := range names {
			require.Equal(t, colorOf(policySlots[policyOf(n)]), st.Color(n), n)
		}
		require.Equal(t, svgColor(palette[0]), svgColor(st.Color(names[0])), "%s: blue", names[0])
		require.Equal(t, svgColor(palette[1]), svgColor(st.Color(names[1])), "%s: orange", names[1])
	}
	// A configuration and its first series with swept values share a slot
	// (a sweep figure's line, a bar figure's bar), its other series not.
	for _, order := range [][]string{{"AEGIS hold=10s", "AEGIS hold=30s", "AEGIS"}, {"AEGIS", "AEGIS hold=10s", "AEGIS hold=30s"}} {
		st := NewStyles(order...)
		require.Equal(t, 0, st.Slot("AEGIS"), "%v", order)
		require.Equal(t, 0, st.Slot("AEGIS hold=10s"), "%v", order)
		require.NotEqual(t, 0, st.Slot("AEGIS hold=30s"), "%v", order)
	}
	require.NotEqual(t, NewStyles("AEGIS").Slot("AEGIS"), NewStyles("AEGIS").Slot("AEGIS Est-free"), "a variant is no swept value")
	require.Empty(t, policyOf("MU-NF"))
	require.Empty(t, policyOf("aegisx"))

	// Names of no policy never take a policy's colour, however many (an
	// 8-GPU timeline's GPU 5 was AEGIS blue, dashed): past the palette the
	// other colours come again with dashes.
	gpus := NewStyles()
	var dashed int
	for i := range 15 {
		n := fmt.Sprintf("GPU %d", i)
		for p, k := range policySlots {
			require.NotEqual(t, svgColor(colorOf(k)), svgColor(gpus.Color(n)), "%s in %s's colour", n, p)
		}
		if gpus.Dashes(n) != nil {
			dashed++
		}
	}
	require.Equal(t, 15-5, dashed, "five colours are no policy's: the other ten dashed")
}

// Every figure kind draws a policy in its colour, whatever the label's
// case: the bars, the CDFs, the seeds' bars, the energy bars and a sweep
// of a quick run (lower-case labels). (The compare overlay: compare's
// TestSimulateDirs; aegis measured's figure: measured's TestFigureStyles; Figure 7 draws no policy and none of their colours:
// TestThresholdsFigure; the timeline and Figure 6 draw GPUs and signals.)
func TestStylesEveryFigure(t *testing.T) {
	dir := t.TempDir()
	var cells, norm, jobs strings.Builder
	cells.WriteString("spec,trace,config,policy,seed,hold,makespan_s,mean_jct_s,energy_kwh\n")
	norm.WriteString("spec,trace,config,policy,seed,makespan_s,mean_jct_s,p95_jct_s,mean_queue_s,p95_queue_s,mean_exec_s,p95_exec_s,energy_j,normalized_to\n")
	jobs.WriteString("spec,trace,config,policy,seed,job_id,jct_s,solo_s\n")
	for _, tr := range []string{"philly", "venus"} {
		for k, cfg := range []string{"exclusive", "aegis", "lucid"} {
			for seed := 1; seed <= 2; seed++ {
				for _, hold := range []string{"10s", "30s"} {
					fmt.Fprintf(&cells, "q,%s,%s,%s,%d,%s,%d,%d,%d\n", tr, cfg, cfg, seed, hold, 3600+100*k+seed, 1800+50*k+seed, 7+k+seed)
				}
				r := 1 - 0.1*float64(k) - 0.01*float64(seed)
				if k == 0 {
					r = 1
				}
				fmt.Fprintf(&norm, "q,%s,%s,%s,%d,%g,%g,%g,%g,%g,%g,%g,%g,exclusive\n", tr, cfg, cfg, seed, r, r, r, r, r, r, r, r)
				for j := range 5 {
					fmt.Fprintf(&jobs, "q,%s,%s,%s,%d,%d,%d,100\n", tr, cfg, cfg, seed, j, 200+j*10*(k+1))
				}
			}
		}
	}
	for name, b := range map[string]string{"cells.csv": cells.String(), "normalized.csv": norm.String(), "jobs.csv": jobs.String()} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644))
	}
	paths, err := DrawDir(dir, "svg", FigNormalized, FigJCTCDF, FigQueueExec, FigSeeds, FigEnergy)
	require.NoError(t, err)
	sp, err := DrawSweeps(dir, "svg", Sweep{X: "hold", Y: []string{"makespan_s"}})
	require.NoError(t, err)
	for _, p := range append(paths, sp...) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		svg := string(b)
		for _, c := range []string{"aegis", "lucid"} {
			require.Regexp(t, ">"+c+"( hold=10s)?<", svg, "%s names %s", filepath.Base(p), c)
			require.Contains(t, svg, svgColor(colorOf(policySlots[c])), "%s draws %s in its colour", filepath.Base(p), c)
		}
	}
	norm3, err := os.ReadFile(filepath.Join(dir, "normalized.svg"))
	require.NoError(t, err)
	require.Contains(t, string(norm3), ">exclusive (= 1)<", "the line at 1 in the legend")
	require.Equal(t, 3*2*2*2, strings.Count(string(norm3), "stroke:#000000;stroke-width:0.9\""),
		"a CI whisker (a stem and two caps) per bar over two seeds: 2 panels × 2 configs × 2 traces")
}

// svgColor is how gonum's SVG canvas writes a colour.
func svgColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// Save draws the figure in the format its path names and redraws the same
// figure in the other formats present beside it, removing none.
func TestSaveKeepsOtherFormats(t *testing.T) {
	dir := copyDir(t, "testdata/spec")
	svg := filepath.Join(dir, "normalized.svg")
	_, err := DrawDir(dir, "svg", FigNormalized)
	require.NoError(t, err)
	want, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "normalized.pdf"), []byte("stale"), 0o644))
	paths, err := DrawDir(dir, "png", FigNormalized)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "normalized.png"), svg, filepath.Join(dir, "normalized.pdf")}, paths)
	got, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	pdf, err := os.ReadFile(filepath.Join(dir, "normalized.pdf"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(pdf), "%PDF-"), "the stale PDF is redrawn")
}

// A bar's seeds are one ring per distinct value: a deterministic
// config's five equal seeds one ring (they were a chain of five, before
// that a black cap), three different seeds three.
func TestSeedRingsDistinct(t *testing.T) {
	rings := func(points ...float64) int {
		fig, err := NormalizedBars(nil, "t", Bars{Title: "makespan", Groups: []string{"philly"},
			Series: []BarSeries{{Name: "Exclusive", Values: []float64{5}, Points: [][]float64{points}}}})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, fig.WriteTo(&b, "svg"))
		return strings.Count(b.String(), "A1.8,1.8") // a ring: two arcs of its radius
	}
	one := rings(5)
	require.Positive(t, one)
	require.Equal(t, one, rings(5, 5, 5, 5, 5), "equal seeds: one ring")
	require.Equal(t, one, rings(5, 5+1e-9, 5-1e-9), "seeds equal to the eye: one ring")
	require.Equal(t, 3*one, rings(4.5, 5, 5.5, 5))
}

// A figure resized for a paper's column: the width asked for, its panels
// on more rows when narrow, every text size scaled, and saved in its one
// format (the SVG beside it, which a page links, is left as it is).
func TestResize(t *testing.T) {
	bars := Bars{Title: "makespan", Groups: []string{"philly"}, Series: []BarSeries{{Name: "AEGIS", Values: []float64{0.7}}}}
	fig, err := NormalizedBars(nil, "t", bars, bars)
	require.NoError(t, err)
	require.Len(t, fig.Panels, 1)
	require.NoError(t, fig.Resize(Size{Width: 3.3 * vg.Inch, FontScale: 0.8}))
	require.Equal(t, 3.3*vg.Inch, fig.Width)
	require.Len(t, fig.Panels, 2, "one panel per row at 3.3 in")
	require.InDelta(t, 9*0.8, float64(fig.Panels[1][0].X.Tick.Label.Font.Size), 1e-9)
	require.InDelta(t, 11*0.8, float64(fig.Panels[0][0].Title.TextStyle.Font.Size), 1e-9)
	var b bytes.Buffer
	require.NoError(t, fig.WriteTo(&b, "svg"))
	require.Contains(t, b.String(), `width="237.6pt"`, "3.3 in")
	require.Contains(t, b.String(), "font-size:10.4px", "the title's 13 pt times 0.8")

	dir := t.TempDir()
	svg := filepath.Join(dir, "f.svg")
	require.NoError(t, os.WriteFile(svg, []byte("linked by a page"), 0o644))
	paths, err := fig.Save(filepath.Join(dir, "f.png"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "f.png")}, paths)
	got, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.Equal(t, "linked by a page", string(got))

	grid, err := Thresholds("t", []ThresholdPoint{{Tau: [3]float64{0.5, 0.3, 0.4}, Gain: 1.2, MeanSlowdown: 1.1},
		{Tau: [3]float64{0.6, 0.4, 0.5}, Gain: 1.3, MeanSlowdown: 1.2}})
	require.NoError(t, err)
	require.ErrorContains(t, grid.Resize(Size{Width: 3.3 * vg.Inch}), "3 panels a row need a width of 6.6in at font scale 1",
		"a grid keeps its rows and columns (Figure 7's metrics and thresholds): too narrow, it says so")
	require.NoError(t, grid.Resize(Size{Width: 4.5 * vg.Inch, FontScale: 0.6}))
	require.Len(t, grid.Panels, 3, "a grid keeps its rows and columns")
	require.Len(t, grid.Panels[0], 3)

	same, err := NormalizedBars(nil, "t", bars, bars)
	require.NoError(t, err)
	w := same.Width
	require.NoError(t, same.Resize(Size{}))
	require.Equal(t, w, same.Width, "no size asked for: as designed")
	require.Len(t, same.Panels[0], 2)
}

func TestParseLength(t *testing.T) {
	for in, want := range map[string]vg.Length{"3.3in": 3.3 * vg.Inch, "8.4cm": 8.4 * vg.Centimeter, "84 mm": 84 * vg.Millimeter, "240pt": 240} {
		got, err := ParseLength(in)
		require.NoError(t, err, in)
		require.InDelta(t, float64(want), float64(got), 1e-9, in)
	}
	for _, in := range []string{"3.3", "in", "-1in", "0cm", "3.3ft", "NaNin", "+Infin"} {
		_, err := ParseLength(in)
		require.ErrorContains(t, err, "want a positive number with a unit: in, cm, mm or pt", in)
	}
}
