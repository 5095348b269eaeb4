package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Band is one line of a sweep panel: the mean of a metric over seeds at
// each X, with its 95 % confidence interval [Lo, Hi] drawn as a band. A
// Flat band is a configuration that does not sweep: one value (X empty),
// drawn dashed across the panel.
//
// Style, when set, names the band's colour (a configuration label): bands
// of one Style share its colour and differ in marker and dash pattern, in
// order of first appearance (solid, dotted, dash-dotted, …). Variant, when
// set with Style (a trace), picks the marker and dash instead, the same
// for every band of that Variant, and the legend then names each Style by
// its colour and each Variant by its line.
type Band struct {
	Name         string
	Style        string
	Variant      string
	X            []float64
	Mean, Lo, Hi []float64
	Flat         bool
}

// SweepPanel is one panel of a sweep figure. Categories, when set, name
// the X positions 0, 1, … of a parameter that is not a number.
type SweepPanel struct {
	Title, XLabel, YLabel string
	Lines                 []Band
	Categories            []string
}

// SweepLines draws sweep panels in a grid, rows of panels (a row per
// facet value, a column per metric): one line with markers and a shaded
// 95 % confidence band per Band, one style per name across the panels
// (one colour per Style, see Band).
func SweepLines(st *Styles, title string, rows [][]SweepPanel) (*Figure, error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, errors.New("plots: no sweep panels")
	}
	lg := newLegend(st)
	vs := variants(rows)
	factorLegend(lg, rows, vs)
	var grid [][]*plot.Plot
	cols := 0
	for _, r := range rows {
		var row []*plot.Plot
		for _, sp := range r {
			p, err := sweepPlot(sp, lg, vs)
			if err != nil {
				return nil, err
			}
			row = append(row, p)
		}
		cols = max(cols, len(row))
		grid = append(grid, row)
	}
	return &Figure{Title: title, Panels: grid, Legend: lg.entries, Width: vg.Length(max(cols, 1)) * 4.4 * vg.Inch,
		Height: vg.Length(len(grid))*3.2*vg.Inch + 0.4*vg.Inch}, nil
}

// variants numbers each band name among the names of its Style, in order
// of first appearance over the panels (0 for a band without a Style), and
// each Variant ("variant:" and its name) among the Variants.
func variants(rows [][]SweepPanel) map[string]int {
	vs, next := map[string]int{}, map[string]int{}
	for _, r := range rows {
		for _, sp := range r {
			for _, b := range sp.Lines {
				if _, ok := vs[b.Name]; !ok && b.Style != "" {
					vs[b.Name] = next[b.Style]
					next[b.Style]++
				}
				if k := "variant:" + b.Variant; b.Variant != "" && b.Style != "" {
					if _, ok := vs[k]; !ok {
						vs[k] = next["variant:"]
						next["variant:"]++
					}
				}
			}
		}
	}
	return vs
}

// factorLegend adds the legend entries of bands with a Style and a
// Variant: each Style once, a solid line of its colour, then each Variant
// once, a black line of its marker and dashes (one entry per Style ×
// Variant would say the same many times).
func factorLegend(lg *legend, rows [][]SweepPanel, vs map[string]int) {
	var styles, vars order
	for _, r := range rows {
		for _, sp := range r {
			for _, b := range sp.Lines {
				if b.Style != "" && b.Variant != "" {
					styles.at(b.Style)
					vars.at(b.Variant)
				}
			}
		}
	}
	for _, st := range styles.keys {
		l := &plotter.Line{LineStyle: draw.LineStyle{Color: lg.st.Color(st), Width: vg.Points(1.5)}}
		lg.add(st, l)
	}
	for _, v := range vars.keys {
		_, g, d := bandStyle(lg.st, Band{Style: "-", Variant: v}, vs)
		l := &plotter.Line{LineStyle: draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: d}}
		sc := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Shape: g, Radius: vg.Points(2.5), Color: color.Black}}
		lg.add(v, l, sc)
	}
}

// variantDashes are the dash patterns of a Style's second, third, …
// band (the first is solid; a flat band is dashed).
var variantDashes = [][]vg.Length{{vg.Points(1.5), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1.5), vg.Points(2)}, {vg.Points(8), vg.Points(3)}}

// bandStyle is band b's colour, marker and line dashes.
func bandStyle(st *Styles, b Band, vs map[string]int) (color.Color, draw.GlyphDrawer, []vg.Length) {
	if b.Style == "" {
		return st.Color(b.Name), st.Marker(b.Name), nil
	}
	if b.Variant != "" {
		v := vs["variant:"+b.Variant]
		var d []vg.Length
		if v > 0 {
			d = variantDashes[(v-1)%len(variantDashes)]
		}
		return st.Color(b.Style), shapes[v%len(shapes)], d
	}
	v := vs[b.Name]
	var d []vg.Length
	if v > 0 {
		d = variantDashes[(v-1)%len(variantDashes)]
	}
	return st.Color(b.Style), shapes[(st.Slot(b.Style)+v)%len(shapes)], d
}

func sweepPlot(sp SweepPanel, lg *legend, vs map[string]int) (*plot.Plot, error) {
	p := newPlot(sp.Title, sp.XLabel, sp.YLabel)
	if len(sp.Categories) > 0 {
		p.Add(valueGrid())
	} else {
		p.Add(plotter.NewGrid())
	}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, b := range sp.Lines {
		for k, x := range b.X {
			if finite(x) && finite(b.Mean[k]) {
				xlo, xhi = min(xlo, x), max(xhi, x)
			}
		}
		for _, v := range slices.Concat(b.Mean, b.Lo, b.Hi) {
			if finite(v) {
				ylo, yhi = min(ylo, v), max(yhi, v)
			}
		}
	}
	if !finite(ylo) {
		return nil, fmt.Errorf("plots: sweep panel %q has no data", sp.Title)
	}
	if !finite(xlo) { // only configurations that do not sweep
		xlo, xhi = 0, 1
	}
	n := 0
	for _, b := range sp.Lines {
		c, g, d := bandStyle(lg.st, b, vs)
		added, err := addBand(p, b, lineStyle{c, g, d}, xlo, xhi)
		if err != nil {
			return nil, err
		}
		if added != nil {
			if b.Style == "" || b.Variant == "" { // else factorLegend's
				lg.add(b.Name, added...)
			}
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("plots: sweep panel %q has no data", sp.Title)
	}
	dx, dy := max(xhi-xlo, 1e-9), max(yhi-ylo, 1e-3*math.Abs(yhi), 1e-9)
	p.X.Min, p.X.Max = xlo-0.05*dx, xhi+0.05*dx
	p.Y.Min, p.Y.Max = ylo-0.08*dy, yhi+0.08*dy
	if wholeXs(sp.Lines) {
		p.X.Tick.Marker = trimTicks{integer: true}
	}
	if len(sp.Categories) > 0 {
		p.NominalX(categoryLabels(sp.Categories)...)
		p.X.Min, p.X.Max = -0.3, float64(len(sp.Categories))-0.7
	}
	return p, nil
}

// categoryLabels are categories as x tick labels: one longer than 16
// characters is broken after its commas (a cluster
// "a100-40gb:8x1,h200-141gb:8x1" on two lines), so neighbours stay apart.
func categoryLabels(cats []string) []string {
	out := make([]string, len(cats))
	for i, c := range cats {
		out[i] = c
		if len(c) > 16 {
			out[i] = strings.ReplaceAll(c, ",", ",\n")
		}
	}
	return out
}

// wholeXs reports whether every x of the lines that sweep is a whole
// number (GPU counts, seconds): such an axis gets whole-number ticks.
func wholeXs(lines []Band) bool {
	n := 0
	for _, b := range lines {
		for _, x := range b.X {
			if finite(x) && !isWhole(x) {
				return false
			}
			n++
		}
	}
	return n > 0
}

// lineStyle is a band's colour, marker and dash pattern (nil: solid).
type lineStyle struct {
	c      color.Color
	g      draw.GlyphDrawer
	dashes []vg.Length
}

// addBand adds band b to p in style ls (a flat band spans [xlo, xhi],
// dashed) and returns the plotters its legend entry shows, nil when it
// has no point.
func addBand(p *plot.Plot, b Band, ls lineStyle, xlo, xhi float64) ([]plot.Thumbnailer, error) {
	c := ls.c
	var mean, lo, hi plotter.XYs
	xs := b.X
	if b.Flat {
		if len(b.Mean) == 0 {
			return nil, nil
		}
		xs = []float64{xlo, xhi}
		b.Mean, b.Lo, b.Hi = repeat2(b.Mean[0]), repeat2(b.Lo[0]), repeat2(b.Hi[0])
	}
	for k, x := range xs {
		if k >= len(b.Mean) || !finite(x) || !finite(b.Mean[k]) {
			continue
		}
		mean = append(mean, plotter.XY{X: x, Y: b.Mean[k]})
		if finite(b.Lo[k]) && finite(b.Hi[k]) {
			lo, hi = append(lo, plotter.XY{X: x, Y: b.Lo[k]}), append(hi, plotter.XY{X: x, Y: b.Hi[k]})
		}
	}
	if len(mean) == 0 {
		return nil, nil
	}
	if len(lo) > 1 {
		ring := append(slices.Clone(lo), reversed(hi)...)
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, err
		}
		r, gr, bl, _ := c.RGBA()
		band.Color = color.NRGBA{uint8(r >> 8), uint8(gr >> 8), uint8(bl >> 8), 0x38}
		band.LineStyle.Width = 0
		p.Add(band)
	}
	l, err := plotter.NewLine(mean)
	if err != nil {
		return nil, err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1.5), ls.dashes
	if b.Flat {
		if b.Variant == "" { // a Variant's own dashes tell it apart
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l)
		return []plot.Thumbnailer{l}, nil
	}
	sc, err := plotter.NewScatter(mean)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = draw.GlyphStyle{Shape: ls.g, Radius: vg.Points(2.5), Color: c}
	p.Add(l, sc)
	return []plot.Thumbnailer{l, sc}, nil
}

func repeat2(v float64) []float64 { return []float64{v, v} }

func reversed(xy plotter.XYs) plotter.XYs {
	out := slices.Clone(xy)
	slices.Reverse(out)
	return out
}

// axisValues maps a parameter's values (in order of first appearance) to
// x positions: numbers as they are, durations (10s, 1m) in seconds, and
// anything else as categories 0, 1, … (returned, sorted as given).
func axisValues(vals []string) (pos map[string]float64, unit string, cats []string) {
	pos = map[string]float64{}
	if parseAll(vals, pos, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }) {
		return pos, "", nil
	}
	if parseAll(vals, pos, parseSeconds) {
		return pos, " (s)", nil
	}
	for i, v := range vals {
		pos[v] = float64(i)
	}
	return pos, "", vals
}

func parseAll(vals []string, pos map[string]float64, parse func(string) (float64, error)) bool {
	clear(pos)
	for _, v := range vals {
		x, err := parse(strings.TrimSpace(v))
		if err != nil || !finite(x) {
			clear(pos)
			return false
		}
		pos[v] = x
	}
	return true
}

// parseSeconds reads a Go duration ("10s", "1m30s") in seconds.
func parseSeconds(s string) (float64, error) {
	d, err := time.ParseDuration(s)
	return d.Seconds(), err
}
