package plots

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Bars is one panel of grouped bars (Figure 3): for each group (a trace,
// then GeoMean) one bar per series (a configuration), with an optional
// marker per bar drawn as a diamond (e.g. the p95 JCT over the mean JCT
// bar).
type Bars struct {
	Title, YLabel string
	Groups        []string
	Series        []BarSeries
	// Ref draws a dashed horizontal line at this value (1 for values
	// normalized to a configuration); 0 draws none. RefName, when set,
	// names it in the legend.
	Ref     float64
	RefName string
	// MarkerName labels the markers in the legend.
	MarkerName string
}

// BarSeries is one configuration's bars: Values[i] is its bar in group i,
// Markers[i] its marker there (NaN, or a short slice, for none). A NaN value
// leaves a gap. Lo[i]..Hi[i], when given, is drawn as an error bar (a 95 %
// confidence interval) and Points[i] as hollow rings (one per seed, one for equal values).
type BarSeries struct {
	Name            string
	Values, Markers []float64
	Lo, Hi          []float64
	Points          [][]float64
}

// NormalizedBars draws bar panels side by side (Figure 3: normalized
// makespan and JCT per trace with GeoMean bars and p95 diamonds).
func NormalizedBars(st *Styles, title string, panels ...Bars) (*Figure, error) {
	if len(panels) == 0 {
		return nil, errors.New("plots: no bar panels")
	}
	var row []*plot.Plot
	lg := newLegend(st)
	for _, b := range panels {
		p, err := barPlot(b, lg)
		if err != nil {
			return nil, err
		}
		row = append(row, p)
	}
	w := vg.Length(len(panels)) * max(3.2*vg.Inch, vg.Length(len(panels[0].Groups)*len(panels[0].Series))*0.28*vg.Inch)
	return &Figure{Title: title, Panels: [][]*plot.Plot{row}, Legend: lg.entries, Width: w, Height: 3.6 * vg.Inch}, nil
}

func barPlot(b Bars, lg *legend) (*plot.Plot, error) {
	if len(b.Groups) == 0 || len(b.Series) == 0 {
		return nil, fmt.Errorf("plots: bar panel %q has no data", b.Title)
	}
	for _, s := range b.Series {
		if len(s.Values) != len(b.Groups) {
			return nil, fmt.Errorf("plots: bar panel %q: series %q has %d values for %d groups", b.Title, s.Name, len(s.Values), len(b.Groups))
		}
	}
	p := newPlot(b.Title, "", b.YLabel)
	g := &groupedBars{Bars: b, st: lg.st}
	p.Add(valueGrid())
	p.Add(g)
	if b.Ref != 0 {
		ref := plotter.NewFunction(func(float64) float64 { return b.Ref })
		ref.LineStyle = refStyle
		p.Add(ref)
	}
	for _, s := range b.Series {
		lg.add(s.Name, barThumb{lg.st.Color(s.Name)})
	}
	if b.Ref != 0 && b.RefName != "" {
		lg.add(b.RefName, refThumb{})
	}
	hasMarkers := false
	for _, s := range b.Series {
		for _, m := range s.Markers {
			hasMarkers = hasMarkers || finite(m)
		}
	}
	if hasMarkers && b.MarkerName != "" {
		lg.add(b.MarkerName, glyphThumb{draw.GlyphStyle{Shape: diamond{}, Radius: vg.Points(3), Color: color.White}})
	}
	p.NominalX(b.Groups...)
	_, _, _, ymax := g.DataRange()
	p.Y.Min, p.Y.Max = 0, ymax*1.05
	p.X.Padding = 0
	return p, nil
}

// groupedBars draws Bars in data coordinates: group i spans i±0.4, its
// bars side by side, markers on the bars' centres.
type groupedBars struct {
	Bars
	st *Styles
}

const groupWidth = 0.8

func (g *groupedBars) barX(i, j int) (lo, hi float64) {
	w := groupWidth / float64(len(g.Series))
	lo = float64(i) - groupWidth/2 + float64(j)*w
	return lo, lo + w
}

// Plot implements plot.Plotter.
func (g *groupedBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	outline := draw.LineStyle{Color: color.Gray{0x33}, Width: vg.Points(0.5)}
	for j, s := range g.Series {
		for i, v := range s.Values {
			if !finite(v) {
				continue
			}
			lo, hi := g.barX(i, j)
			pts := []vg.Point{{X: trX(lo), Y: trY(0)}, {X: trX(lo), Y: trY(v)}, {X: trX(hi), Y: trY(v)}, {X: trX(hi), Y: trY(0)}}
			poly := c.ClipPolygonY(pts)
			c.FillPolygon(g.st.Color(s.Name), poly)
			c.StrokeLines(outline, c.ClipLinesY(append(pts, pts[0]))...)
		}
	}
	for j, s := range g.Series {
		g.plotSpread(c, trX, trY, j, s)
		for i, m := range s.Markers {
			if i >= len(s.Values) || !finite(m) {
				continue
			}
			lo, hi := g.barX(i, j)
			pt := vg.Point{X: trX((lo + hi) / 2), Y: trY(m)}
			if c.Contains(pt) {
				c.DrawGlyph(draw.GlyphStyle{Shape: diamond{}, Radius: vg.Points(3), Color: color.White}, pt)
			}
		}
	}
}

// plotSpread draws series j's error bars and per-seed rings.
func (g *groupedBars) plotSpread(c draw.Canvas, trX, trY func(float64) vg.Length, j int, s BarSeries) {
	ln := draw.LineStyle{Color: color.Black, Width: vg.Points(0.9)}
	// Hollow rings spread across the bar, one per value the axis tells
	// apart: the equal values of a deterministic config's seeds are one
	// ring, not a chain of rings (or, drawn on one spot, a black cap).
	dot := draw.GlyphStyle{Shape: draw.RingGlyph{}, Radius: vg.Points(1.8), Color: color.Black}
	for i := range s.Values {
		lo, hi := g.barX(i, j)
		x, w := trX((lo+hi)/2), (trX(hi)-trX(lo))/4
		if i < len(s.Lo) && i < len(s.Hi) && finite(s.Lo[i]) && finite(s.Hi[i]) {
			y0, y1 := trY(s.Lo[i]), trY(s.Hi[i])
			c.StrokeLines(ln, c.ClipLinesY([]vg.Point{{X: x, Y: y0}, {X: x, Y: y1}},
				[]vg.Point{{X: x - w, Y: y0}, {X: x + w, Y: y0}}, []vg.Point{{X: x - w, Y: y1}, {X: x + w, Y: y1}})...)
		}
		if i >= len(s.Points) {
			continue
		}
		// One ring per height the eye tells apart: values closer than a
		// ring's radius on the axis are one ring.
		var ys []vg.Length
		for _, v := range s.Points[i] {
			if !finite(v) {
				continue
			}
			y := trY(v)
			if !slices.ContainsFunc(ys, func(o vg.Length) bool { return math.Abs(float64(o-y)) < float64(dot.Radius) }) {
				ys = append(ys, y)
			}
		}
		for k, y := range ys {
			// Spread the rings across the bar so near values stay apart.
			off := 0.0
			if len(ys) > 1 {
				off = (float64(k)/float64(len(ys)-1) - 0.5) * 2.8 * float64(w)
			}
			if pt := (vg.Point{X: x + vg.Length(off), Y: y}); c.Contains(pt) {
				c.DrawGlyph(dot, pt)
			}
		}
	}
}

// DataRange implements plot.DataRanger.
func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = -0.5, float64(len(g.Groups))-0.5
	for _, s := range g.Series {
		vals := slices.Concat(s.Values, s.Markers, s.Lo, s.Hi)
		for _, p := range s.Points {
			vals = append(vals, p...)
		}
		for _, v := range vals {
			if finite(v) {
				ymax = max(ymax, v)
				ymin = min(ymin, v)
			}
		}
	}
	if g.Ref != 0 {
		ymax = max(ymax, g.Ref)
	}
	return
}

// refStyle is the dashed reference line's (the line at 1).
var refStyle = draw.LineStyle{Color: color.Gray{0x55}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}

// refThumb shows the reference line in a legend.
type refThumb struct{}

// Thumbnail implements plot.Thumbnailer.
func (refThumb) Thumbnail(c *draw.Canvas) {
	y := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(refStyle, c.Min.X, y, c.Max.X, y)
}

type barThumb struct{ c color.Color }

// Thumbnail implements plot.Thumbnailer.
func (t barThumb) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(t.c, pts)
}

type glyphThumb struct{ sty draw.GlyphStyle }

// Thumbnail implements plot.Thumbnailer.
func (t glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(t.sty, c.Center()) }

// Dist is a named sample of values whose distribution a CDF shows.
type Dist struct {
	Name   string
	Values []float64
}

// CDF is one panel of empirical CDFs.
type CDF struct {
	Title, XLabel string
	// YLabel names what the fraction counts ("fraction of jobs ≤ x");
	// "fraction ≤ x" when empty.
	YLabel string
	// LogX puts the x axis on a log scale (values ≤ 0 are then left out).
	LogX   bool
	Series []Dist
}

// CDFs draws CDF panels in a grid of up to cols columns (Figure 4: per-job
// JCT / solo time per trace on a log axis; makespan and JCT across seeds).
func CDFs(st *Styles, title string, cols int, panels ...CDF) (*Figure, error) {
	if len(panels) == 0 {
		return nil, errors.New("plots: no CDF panels")
	}
	cols = max(1, min(cols, len(panels)))
	var grid [][]*plot.Plot
	lg := newLegend(st)
	for k, c := range panels {
		p, err := cdfPlot(c, lg)
		if err != nil {
			return nil, err
		}
		if k%cols == 0 {
			grid = append(grid, nil)
		}
		grid[len(grid)-1] = append(grid[len(grid)-1], p)
	}
	return &Figure{Title: title, Panels: grid, Legend: lg.entries, Width: vg.Length(cols) * 3.6 * vg.Inch,
		Height: vg.Length(len(grid))*3*vg.Inch + 0.3*vg.Inch}, nil
}

func cdfPlot(c CDF, lg *legend) (*plot.Plot, error) {
	yl := c.YLabel
	if yl == "" {
		yl = "fraction ≤ x"
	}
	p := newPlot(c.Title, c.XLabel, yl)
	p.Add(plotter.NewGrid())
	p.Y.Min, p.Y.Max = 0, 1
	n := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		var xs []float64
		for _, v := range s.Values {
			if finite(v) && (!c.LogX || v > 0) {
				xs = append(xs, v)
			}
		}
		if len(xs) == 0 {
			continue
		}
		pts := thinCDF(cdfPoints(xs), c.LogX)
		lo, hi = min(lo, pts[0].X), max(hi, pts[len(pts)-1].X)
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		// Horizontal then vertical: the CDF stays at k/n until the next value.
		l.StepStyle = plotter.PostStep
		// One colour per name across the figure's panels.
		l.Color = lg.st.Color(s.Name)
		l.Width = vg.Points(1.5)
		l.Dashes = lg.st.Dashes(s.Name)
		p.Add(l)
		lg.add(s.Name, l)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("plots: CDF panel %q has no data", c.Title)
	}
	// A margin so lines at the extremes stay visible.
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		r := math.Pow(hi/lo, 0.03)
		if hi/lo < 2 { // a narrow range: show a little context
			r = 1.25
		}
		p.X.Min, p.X.Max = lo/r, hi*r
	} else {
		d := max(hi-lo, 1e-3*math.Abs(hi), 1e-9)
		p.X.Min, p.X.Max = lo-0.04*d, hi+0.04*d
	}
	return p, nil
}

// cdfPoints returns the corners of the empirical CDF of xs (not empty):
// (min, 0), then (x_k, k/n) for the sorted values, to be joined
// horizontally then vertically (plotter.PostStep).
func cdfPoints(xs []float64) plotter.XYs {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	pts := make(plotter.XYs, 0, len(xs)+1)
	pts = append(pts, plotter.XY{X: xs[0], Y: 0})
	for k, x := range xs {
		pts = append(pts, plotter.XY{X: x, Y: float64(k+1) / float64(len(xs))})
	}
	return pts
}

// cdfResolution is the finest step of a drawn CDF, as a fraction of its
// x range and of the y axis: 1/1000, finer than the pixels of a panel
// (about 500 × 400 at 144 dpi).
const cdfResolution = 1e-3

// thinCDF keeps the corners of a CDF that a figure can show: a corner is
// dropped unless x (its logarithm on a log axis) or y has moved on by
// cdfResolution of the range since the last one kept (the first and last
// always kept), so the step line drawn through the kept ones is off by
// less than that anywhere. At most about 2/cdfResolution corners stay,
// whatever the jobs (Figure 4 of 16 × 20,000 jobs was a 17.6 MB SVG).
func thinCDF(pts plotter.XYs, logX bool) plotter.XYs {
	if len(pts) <= 2 {
		return pts
	}
	x := func(v float64) float64 {
		if logX {
			return math.Log(v)
		}
		return v
	}
	dx := (x(pts[len(pts)-1].X) - x(pts[0].X)) * cdfResolution
	out := plotter.XYs{pts[0]}
	for k := 1; k < len(pts)-1; k++ {
		last := out[len(out)-1]
		if x(pts[k].X)-x(last.X) >= dx && dx > 0 || pts[k].Y-last.Y >= cdfResolution {
			out = append(out, pts[k])
		}
	}
	return append(out, pts[len(pts)-1])
}

// Point is a labelled point.
type Point struct {
	Label string
	X, Y  float64
}

// Scatter is one panel of labelled points, one colour and legend entry per
// label; RefX/RefY draw dashed reference lines (0: none).
type Scatter struct {
	Title, XLabel, YLabel string
	Points                []Point
	RefX, RefY            float64
}

// Tradeoff draws scatter panels side by side (Figure 5: normalized
// queueing against execution time, means and p95).
func Tradeoff(st *Styles, title string, panels ...Scatter) (*Figure, error) {
	if len(panels) == 0 {
		return nil, errors.New("plots: no scatter panels")
	}
	var row []*plot.Plot
	lg := newLegend(st)
	for _, s := range panels {
		if len(s.Points) == 0 {
			return nil, fmt.Errorf("plots: scatter panel %q has no points", s.Title)
		}
		p := newPlot(s.Title, s.XLabel, s.YLabel)
		p.Add(plotter.NewGrid())
		xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, pt := range s.Points {
			if !finite(pt.X) || !finite(pt.Y) {
				continue
			}
			sc, err := plotter.NewScatter(plotter.XYs{{X: pt.X, Y: pt.Y}})
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Shape: lg.st.Marker(pt.Label), Radius: vg.Points(4), Color: lg.st.Color(pt.Label)}
			p.Add(sc)
			lg.add(pt.Label, sc)
			xmin, xmax, ymin, ymax = min(xmin, pt.X), max(xmax, pt.X), min(ymin, pt.Y), max(ymax, pt.Y)
		}
		if s.RefX != 0 {
			xmin, xmax = min(xmin, s.RefX), max(xmax, s.RefX)
		}
		if s.RefY != 0 {
			ymin, ymax = min(ymin, s.RefY), max(ymax, s.RefY)
		}
		dx, dy := max(xmax-xmin, 0.05), max(ymax-ymin, 0.05)
		p.X.Min, p.X.Max = xmin-0.1*dx, xmax+0.1*dx
		p.Y.Min, p.Y.Max = ymin-0.1*dy, ymax+0.1*dy
		if s.RefX != 0 {
			p.Add(vline(s.RefX, p.Y.Min, p.Y.Max))
		}
		if s.RefY != 0 {
			p.Add(hline(s.RefY, p.X.Min, p.X.Max))
		}
		row = append(row, p)
	}
	return &Figure{Title: title, Panels: [][]*plot.Plot{row}, Legend: lg.entries, Width: vg.Length(len(panels)) * 3.8 * vg.Inch,
		Height: 3.6 * vg.Inch}, nil
}

func refLine(pts plotter.XYs) *plotter.Line {
	l, _ := plotter.NewLine(pts) // two finite points: cannot fail
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	l.Color = color.Gray{0x55}
	return l
}

func vline(x, y0, y1 float64) *plotter.Line {
	return refLine(plotter.XYs{{X: x, Y: y0}, {X: x, Y: y1}})
}
func hline(y, x0, x1 float64) *plotter.Line {
	return refLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
}

// Series is a named line of (X[i], Y[i]) points, in the style of its
// name. Style, when set, draws it in the colour of the name Style instead
// (a seed of a policy in the policy's colour), its Variant-th dashes
// (0 solid, then variantDashes') telling it from the other series of that
// Style. Reference draws it as what the other series are set beside (a
// run measured on a testbed): black and thicker, the colour of no policy.
type Series struct {
	Name      string
	X, Y      []float64
	Style     string
	Variant   int
	Reference bool
}

// marker is series s's marker.
func (s Series) marker(st *Styles) draw.GlyphDrawer {
	switch {
	case s.Reference:
		return draw.CrossGlyph{}
	case s.Style != "":
		return shapes[(st.Slot(s.Style)+s.Variant)%len(shapes)]
	}
	return st.Marker(s.Name)
}

// refSeriesStyle is a Reference series' line.
var refSeriesStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(2)}

// lineStyle is series s's line at width w.
func (s Series) lineStyle(st *Styles, w vg.Length) draw.LineStyle {
	switch {
	case s.Reference:
		return refSeriesStyle
	case s.Style != "":
		var d []vg.Length
		if s.Variant > 0 {
			d = variantDashes[(s.Variant-1)%len(variantDashes)]
		}
		return draw.LineStyle{Color: st.Color(s.Style), Width: w, Dashes: d}
	}
	return draw.LineStyle{Color: st.Color(s.Name), Width: w, Dashes: st.Dashes(s.Name)}
}

// Lines is one panel of lines with markers (Figure 6: the window scores'
// weighted mean absolute error against window length, one line per
// signal). VLine draws a dashed vertical line there (0: none), named
// VLineName in the legend. Steps draws each series as a step function
// (Y[i] holds from X[i] to X[i+1]) without markers, e.g. jobs running at
// once over time.
type Lines struct {
	Title, XLabel, YLabel string
	Series                []Series
	VLine                 float64
	VLineName             string
	LogY                  bool
	Steps                 bool
}

// LinePanels draws line panels side by side.
func LinePanels(st *Styles, title string, panels ...Lines) (*Figure, error) {
	if len(panels) == 0 {
		return nil, errors.New("plots: no line panels")
	}
	var row []*plot.Plot
	lg := newLegend(st)
	for _, ln := range panels {
		p, err := linePlot(ln, lg)
		if err != nil {
			return nil, err
		}
		row = append(row, p)
	}
	return &Figure{Title: title, Panels: [][]*plot.Plot{row}, Legend: lg.entries, Width: vg.Length(len(panels)) * 5 * vg.Inch,
		Height: 3.6 * vg.Inch}, nil
}

func linePlot(ln Lines, lg *legend) (*plot.Plot, error) {
	p := newPlot(ln.Title, ln.XLabel, ln.YLabel)
	p.Add(plotter.NewGrid())
	ymax, n := 0.0, 0
	for _, s := range ln.Series {
		var pts plotter.XYs
		for k := range min(len(s.X), len(s.Y)) {
			if finite(s.X[k]) && finite(s.Y[k]) && (!ln.LogY || s.Y[k] > 0) {
				pts = append(pts, plotter.XY{X: s.X[k], Y: s.Y[k]})
				ymax = max(ymax, s.Y[k])
			}
		}
		if len(pts) == 0 {
			continue
		}
		if ln.Steps {
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			l.StepStyle = plotter.PostStep
			l.LineStyle = s.lineStyle(lg.st, vg.Points(1.2))
			p.Add(l)
			lg.add(s.Name, l)
			n++
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		l.LineStyle = s.lineStyle(lg.st, vg.Points(1.5))
		sc.GlyphStyle = draw.GlyphStyle{Shape: s.marker(lg.st), Radius: vg.Points(2.5), Color: l.Color}
		p.Add(l, sc)
		lg.add(s.Name, l, sc)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("plots: line panel %q has no data", ln.Title)
	}
	if ln.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	} else {
		p.Y.Min = 0
		p.Y.Max = ymax * 1.08
	}
	if ln.VLine != 0 {
		l := vline(ln.VLine, p.Y.Min, p.Y.Max)
		p.Add(l)
		if ln.VLineName != "" {
			lg.add(ln.VLineName, l)
		}
	}
	return p, nil
}

// ThresholdPoint is one point of a pressure-threshold sweep (Figure 7),
// averaged over the stacking sequences.
type ThresholdPoint struct {
	Tau                                     [3]float64 // τ1 (SMACT), τ2 (SMOCC), τ3 (DRAMA)
	Gain, MeanSlowdown, MaxSlowdown, Defers float64
	Knee                                    bool // the sweep's knee
	Default                                 bool // the policy's default thresholds
}

// tauNames are the pressure thresholds' axis labels.
var tauNames = [3]string{"τ1 (SMACT threshold)", "τ2 (SMOCC threshold)", "τ3 (DRAMA threshold)"}

// Thresholds draws Figure 7 as the paper describes it: throughput gain,
// slowdown and collocation deferrals against the thresholds. A column per
// threshold τk that the sweep varies, a row per metric: the line is the
// slice through the anchor point (the policy's default thresholds, else
// the knee) with the other thresholds held at the anchor's values, and at
// every τk value a bar spans what all the sweep's points with that τk
// show, so every point counts without piling up. The knee and the default
// are marked in every column, once each in the legend. Every element is
// black (metrics are told apart by panel, marker and dash, so no policy's
// colour means a metric) but the knee, vermillion.
func Thresholds(title string, pts []ThresholdPoint) (*Figure, error) {
	s := tauSweep{lg: newLegend(nil)}
	for _, p := range pts {
		if finite(p.Gain) && finite(p.MeanSlowdown) {
			s.pts = append(s.pts, p)
		}
	}
	if len(s.pts) == 0 {
		return nil, errors.New("plots: no threshold point has a finite gain and slowdown")
	}
	s.anchor = s.pts[0]
	for _, p := range s.pts {
		if p.Knee {
			s.anchor = p
		}
	}
	for _, p := range s.pts {
		if p.Default {
			s.anchor = p
		}
	}
	var cols []int
	for k := range 3 {
		seen := map[float64]bool{}
		for _, p := range s.pts {
			seen[p.Tau[k]] = true
		}
		if len(seen) > 1 {
			cols = append(cols, k)
		}
	}
	if len(cols) == 0 {
		cols = []int{0}
	}
	dashed := []vg.Length{vg.Points(4), vg.Points(2)}
	rows := []struct {
		ylabel string
		ms     []tauMetric
	}{
		{"gain (Σ solo / makespan)", []tauMetric{{"", func(p ThresholdPoint) float64 { return p.Gain }, nil, draw.CircleGlyph{}}}},
		{"slowdown (× solo time)", []tauMetric{{"", func(p ThresholdPoint) float64 { return p.MeanSlowdown }, nil, draw.CircleGlyph{}},
			{"max slowdown, ", func(p ThresholdPoint) float64 { return p.MaxSlowdown }, dashed, draw.TriangleGlyph{}}}},
		{"deferrals", []tauMetric{{"", func(p ThresholdPoint) float64 { return p.Defers }, nil, draw.CircleGlyph{}}}},
	}
	var grid [][]*plot.Plot
	for _, r := range rows {
		var row []*plot.Plot
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, k := range cols {
			p, l, h := s.panel(k, r.ms)
			if k == cols[0] {
				p.Y.Label.Text = r.ylabel
			}
			row, lo, hi = append(row, p), min(lo, l), max(hi, h)
		}
		// One y range per metric row, with a margin so the extremes stay
		// clear of the axes; each column's x range with one too.
		d := max(hi-lo, 1e-3)
		for _, p := range row {
			p.Y.Min, p.Y.Max = lo-0.06*d, hi+0.06*d
		}
		grid = append(grid, row)
	}
	for i, k := range cols {
		x0, x1 := math.Inf(1), math.Inf(-1)
		for _, q := range s.pts {
			x0, x1 = min(x0, q.Tau[k]), max(x1, q.Tau[k])
		}
		d := max(x1-x0, 0.1)
		for _, row := range grid {
			row[i].X.Min, row[i].X.Max = x0-0.06*d, x1+0.06*d
		}
	}
	w := vg.Length(len(cols))*2.3*vg.Inch + 0.6*vg.Inch
	return &Figure{Title: title, Panels: grid, Legend: s.lg.entries, Width: max(w, 5*vg.Inch), Height: 3*2.3*vg.Inch + 1.4*vg.Inch}, nil
}

// tauSweep is Figure 7's data: the points with a finite gain and
// slowdown, the anchor the lines go through, the shared legend.
type tauSweep struct {
	pts    []ThresholdPoint
	anchor ThresholdPoint
	lg     *legend
}

// tauMetric is a metric of Figure 7: its legend prefix, value, line
// dashes and marker.
type tauMetric struct {
	prefix string
	at     func(ThresholdPoint) float64
	dash   []vg.Length
	shape  draw.GlyphDrawer
}

func tauLabel(p ThresholdPoint) string {
	return fmt.Sprintf("τ=(%.2f, %.2f, %.2f)", p.Tau[0], p.Tau[1], p.Tau[2])
}

// held names where the lines hold the other thresholds.
func (s *tauSweep) held() string {
	switch {
	case s.anchor.Default:
		return "the default " + tauLabel(s.anchor)
	case s.anchor.Knee:
		return "the knee " + tauLabel(s.anchor)
	}
	return tauLabel(s.anchor)
}

// panel draws metrics ms (the first one's range bars and marks) against
// τk and returns the panel and the lowest and highest value drawn.
func (s *tauSweep) panel(k int, ms []tauMetric) (p *plot.Plot, lo, hi float64) {
	p = newPlot("", tauNames[k], "")
	p.Add(plotter.NewGrid())
	lo, hi = math.Inf(1), math.Inf(-1)
	// Per τk value, the range over every point with that value.
	var bars rangeBars
	byTau := map[float64]int{}
	ranged := false // a point off the slice: the slice does not show all
	for _, q := range s.pts {
		ranged = ranged || !sameBut(q.Tau, s.anchor.Tau, k)
		v := ms[0].at(q)
		if !finite(v) {
			continue
		}
		i, seen := byTau[q.Tau[k]]
		if !seen {
			i, byTau[q.Tau[k]] = len(bars), len(bars)
			bars = append(bars, rangeBar{x: q.Tau[k], lo: v, hi: v})
		}
		bars[i].lo, bars[i].hi = min(bars[i].lo, v), max(bars[i].hi, v)
		lo, hi = min(lo, v), max(hi, v)
	}
	if ranged {
		p.Add(bars)
	}
	for _, m := range ms {
		var slice plotter.XYs
		for _, q := range s.pts {
			if v := m.at(q); finite(v) && sameBut(q.Tau, s.anchor.Tau, k) {
				slice = append(slice, plotter.XY{X: q.Tau[k], Y: v})
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		if len(slice) == 0 {
			continue
		}
		slices.SortStableFunc(slice, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, sc, _ := plotter.NewLinePoints(slice) // finite points: cannot fail
		l.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.2), Dashes: m.dash}
		sc.GlyphStyle = draw.GlyphStyle{Shape: m.shape, Radius: vg.Points(2.5), Color: color.Black}
		p.Add(l, sc)
		s.lg.add(m.prefix+"the other thresholds at "+s.held(), l, sc)
	}
	if ranged {
		s.lg.add(fmt.Sprintf("range of gain, mean slowdown, deferrals over all %d points with that τ", len(s.pts)), bars)
	}
	for _, q := range s.pts {
		v := ms[0].at(q)
		if !finite(v) {
			continue
		}
		for _, mk := range []struct {
			on   bool
			sty  draw.GlyphStyle
			name string
		}{{q.Default, draw.GlyphStyle{Shape: diamond{}, Radius: vg.Points(3.5), Color: color.Black}, "default"},
			{q.Knee, draw.GlyphStyle{Shape: star{}, Radius: vg.Points(3.5), Color: colorOf(5)}, "knee"}} {
			if mk.on {
				sc, _ := plotter.NewScatter(plotter.XYs{{X: q.Tau[k], Y: v}})
				sc.GlyphStyle = mk.sty
				p.Add(sc)
				s.lg.add(mk.name+" "+tauLabel(q), sc)
			}
		}
	}
	return p, lo, hi
}

// sameBut reports whether a and b agree on every threshold but the k-th.
func sameBut(a, b [3]float64, k int) bool {
	for j := range 3 {
		if j != k && a[j] != b[j] {
			return false
		}
	}
	return true
}

// rangeBar is a vertical bar from lo to hi at x.
type rangeBar struct{ x, lo, hi float64 }

// rangeBars draws thin black vertical bars with caps (Figure 7's range of
// a metric over the points that share a threshold value), a ring where
// the range is one value.
type rangeBars []rangeBar

var rangeStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}

// Plot implements plot.Plotter.
func (rb rangeBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	w := vg.Points(3)
	for _, b := range rb {
		x, y0, y1 := trX(b.x), trY(b.lo), trY(b.hi)
		if pt := (vg.Point{X: x, Y: y0}); b.lo == b.hi && c.Contains(pt) {
			c.DrawGlyph(draw.GlyphStyle{Shape: draw.RingGlyph{}, Radius: w, Color: color.Black}, pt)
			continue
		}
		c.StrokeLines(rangeStyle, c.ClipLinesXY([]vg.Point{{X: x, Y: y0}, {X: x, Y: y1}},
			[]vg.Point{{X: x - w, Y: y0}, {X: x + w, Y: y0}}, []vg.Point{{X: x - w, Y: y1}, {X: x + w, Y: y1}})...)
	}
}

// DataRange implements plot.DataRanger.
func (rb rangeBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin, xmax, ymax = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, b := range rb {
		xmin, xmax, ymin, ymax = min(xmin, b.x), max(xmax, b.x), min(ymin, b.lo), max(ymax, b.hi)
	}
	return
}

// Thumbnail implements plot.Thumbnailer.
func (rangeBars) Thumbnail(c *draw.Canvas) {
	x, w := (c.Min.X+c.Max.X)/2, vg.Points(3)
	c.StrokeLines(rangeStyle, []vg.Point{{X: x, Y: c.Min.Y}, {X: x, Y: c.Max.Y}},
		[]vg.Point{{X: x - w, Y: c.Min.Y}, {X: x + w, Y: c.Min.Y}}, []vg.Point{{X: x - w, Y: c.Max.Y}, {X: x + w, Y: c.Max.Y}})
}

// Timeline is one run's GPUs over time: per GPU the number of jobs on it,
// and, when the run has telemetry, its used memory and SMACT or
// utilization. X values are seconds; the figure shows hours.
type Timeline struct {
	Title     string
	Jobs      []Series // one per GPU: jobs on it (a step function)
	MemoryGiB []Series // one per GPU; may be empty
	SMACT     []Series // one per GPU; may be empty
	UtilPct   []Series // one per GPU, utilization in percent; may be empty
}

// GPUTimeline draws a Timeline as stacked panels sharing the time axis.
func GPUTimeline(st *Styles, t Timeline) (*Figure, error) {
	if len(t.Jobs) == 0 {
		return nil, errors.New("plots: timeline without GPUs")
	}
	var grid [][]*plot.Plot
	lg := newLegend(st)
	type panel struct {
		title, ylabel string
		series        []Series
		step          bool
	}
	xmax := 0.0
	for _, set := range [][]Series{t.Jobs, t.MemoryGiB, t.SMACT, t.UtilPct} {
		for _, s := range set {
			for _, x := range s.X {
				xmax = max(xmax, x/3600)
			}
		}
	}
	for _, pn := range []panel{{"jobs per GPU", "jobs on the GPU", t.Jobs, true},
		{"used memory per GPU", "used memory (GiB)", t.MemoryGiB, false},
		{"SM activity per GPU", "SMACT (fraction)", t.SMACT, false},
		{"utilization per GPU", "utilization (%)", t.UtilPct, false}} {
		if len(pn.series) == 0 {
			continue
		}
		p := newPlot(pn.title, "time (h)", pn.ylabel)
		p.Add(plotter.NewGrid())
		ymax := 0.0
		for _, s := range pn.series {
			pts := make(plotter.XYs, 0, len(s.X))
			for k := range min(len(s.X), len(s.Y)) {
				if finite(s.X[k]) && finite(s.Y[k]) {
					pts = append(pts, plotter.XY{X: s.X[k] / 3600, Y: s.Y[k]})
					ymax = max(ymax, s.Y[k])
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			if pn.step {
				l.StepStyle = plotter.PostStep
			}
			l.Color, l.Width, l.Dashes = lg.st.Color(s.Name), vg.Points(1), lg.st.Dashes(s.Name)
			p.Add(l)
			lg.add(s.Name, l)
		}
		p.X.Min, p.X.Max = 0, xmax
		p.Y.Min = 0
		p.Y.Max = max(ymax, 1e-9) * 1.06
		if pn.step {
			p.Y.Tick.Marker = intTicks{}
		}
		grid = append(grid, []*plot.Plot{p})
	}
	return &Figure{Title: t.Title, Panels: grid, Legend: lg.entries, Width: 8 * vg.Inch, Height: vg.Length(len(grid))*2.4*vg.Inch + 0.3*vg.Inch}, nil
}

// intTicks marks whole numbers only.
type intTicks struct{}

// Ticks implements plot.Ticker.
func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	step := max(1, math.Ceil((hi-lo)/6))
	var t []plot.Tick
	for v := math.Ceil(lo); v <= hi; v += step {
		t = append(t, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f", v)})
	}
	return t
}

// logTicks marks a log axis: labelled 1, 2 and 5 × 10^k when the axis spans
// under two decades (10^k only above), minor ticks at the other integers
// × 10^k, and the ends labelled when no label falls inside.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	label := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	fine := math.Log10(hi/lo) < 2
	var ts []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1.0; m <= 9; m++ {
			v := m * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (fine && (m == 2 || m == 5)) {
				t.Label = label(v)
				labelled++
			}
			ts = append(ts, t)
		}
	}
	if labelled == 0 {
		ts = append(ts, plot.Tick{Value: lo, Label: label(lo)}, plot.Tick{Value: hi, Label: label(hi)})
	}
	return ts
}
