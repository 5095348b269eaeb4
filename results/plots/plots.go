// Package plots draws the paper's figures and per-run diagnostics as SVG,
// PNG or PDF files with gonum.org/v1/plot: each plot function takes plain data (the
// types of this package) and returns a Figure, and DrawDir reads the CSV
// files of a results directory by column name and draws every figure they
// allow. SVG and PDF output are byte-identical for the same data.
package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"

	"github.com/aegis-sched/aegis/results"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats lists the output formats: SVG (the default), PNG and PDF.
var Formats = []string{"svg", "png", "pdf"}

// CheckFormat returns an error unless format is one of Formats.
func CheckFormat(format string) error {
	if slices.Contains(Formats, format) {
		return nil
	}
	return fmt.Errorf("plot format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Figure is a drawable figure: plots laid out in a grid of rows and
// columns, with an optional title over the whole figure.
type Figure struct {
	Title  string
	Panels [][]*plot.Plot // rows of panels; a nil panel leaves its tile empty
	// Legend is shown once, under the title, for all panels.
	Legend []LegendEntry
	// Width and Height of the whole figure.
	Width, Height vg.Length
	// FontScale scales the figure's title and legend text (0: 1); Resize
	// scales the panels' text with it.
	FontScale float64
	// resized marks a figure drawn at a size asked for (Resize): Save
	// then writes its one format only.
	resized bool
}

// Size is the size a figure is drawn at instead of its own (aegis plot
// --width, --height, --font-scale): for a paper's column width, e.g.
// Width 3.3 in with FontScale 0.8.
type Size struct {
	// Width of the whole figure; 0 keeps the figure's own.
	Width vg.Length
	// Height of the whole figure; 0 keeps the figure's aspect ratio.
	Height vg.Length
	// FontScale multiplies every text size (0 or 1: as designed).
	FontScale float64
}

// IsZero reports whether s asks for nothing: figures as designed.
func (s Size) IsZero() bool {
	return s.Width == 0 && s.Height == 0 && (s.FontScale == 0 || s.FontScale == 1)
}

// ParseLength parses a length with its unit: "3.3in", "8.4cm", "84mm"
// or "240pt".
func ParseLength(s string) (vg.Length, error) {
	units := []struct {
		suffix string
		unit   vg.Length
	}{{"in", vg.Inch}, {"cm", vg.Centimeter}, {"mm", vg.Millimeter}, {"pt", vg.Points(1)}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(strings.TrimSpace(s), u.suffix); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				break
			}
			return vg.Length(v) * u.unit, nil
		}
	}
	return 0, fmt.Errorf("length %q: want a positive number with a unit: in, cm, mm or pt (e.g. 3.3in)", s)
}

// Resize draws f at size s: its width and height (the height scaled with
// the width unless given) and every text size times s.FontScale. A
// resized figure is saved in its one format (Save). A grid of several
// rows too wide for the width (panels narrower than 2.2 in × the scale)
// is an error that says the width it needs.
func (f *Figure) Resize(s Size) error {
	if s.IsZero() {
		return nil
	}
	f.resized = true
	k := s.FontScale
	if k == 0 {
		k = 1
	}
	rows, cols := f.grid()
	if need := vg.Length(cols) * minPanelWidth * vg.Length(k); rows > 1 && s.Width > 0 && s.Width < need {
		return fmt.Errorf("%d panels a row need a width of %.1fin at font scale %g: give a larger width or a smaller font scale", cols, need/vg.Inch, k)
	}
	panelW, panelH := f.Width/vg.Length(max(cols, 1)), (f.Height-f.chrome(f.Width))/vg.Length(max(rows, 1))
	f.FontScale = k
	switch {
	case s.Width > 0 && s.Height > 0:
		f.reflow(s.Width, k)
		f.Width, f.Height = s.Width, s.Height
	case s.Width > 0:
		// The panels keep their shape (fewer per row when narrow) under
		// the title and legend as they wrap at the new width and scale.
		f.reflow(s.Width, k)
		rows, cols = f.grid()
		w := s.Width / vg.Length(max(cols, 1))
		f.Width, f.Height = s.Width, f.chrome(s.Width)+vg.Length(rows)*panelH*w/panelW
	case s.Height > 0:
		f.Width, f.Height = f.Width*s.Height/f.Height, s.Height
	}
	if k == 1 {
		return nil
	}
	for _, row := range f.Panels {
		for _, p := range row {
			if p == nil {
				continue
			}
			for _, size := range []*vg.Length{&p.Title.TextStyle.Font.Size, &p.X.Label.TextStyle.Font.Size, &p.Y.Label.TextStyle.Font.Size,
				&p.X.Tick.Label.Font.Size, &p.Y.Tick.Label.Font.Size, &p.Legend.TextStyle.Font.Size} {
				*size *= vg.Length(k)
			}
		}
	}
	return nil
}

// minPanelWidth is the narrowest a panel is drawn at text scale 1 when a
// figure is resized: narrower, its panels go on more rows.
const minPanelWidth = 2.2 * vg.Inch

// grid is the number of rows and columns of f's panels.
func (f *Figure) grid() (rows, cols int) {
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	return len(f.Panels), cols
}

// reflow lays a figure of one row of panels out in as many columns as
// width holds at text scale k (one at least), in reading order. A grid of
// several rows keeps its layout: its rows and columns mean something
// (Figure 7's metrics and thresholds; the y label on the first column).
func (f *Figure) reflow(width vg.Length, k float64) {
	rows, cols := f.grid()
	if rows != 1 {
		return
	}
	n := max(1, min(cols, int(width/(minPanelWidth*vg.Length(k)))))
	if n == cols {
		return
	}
	var all []*plot.Plot
	for _, r := range f.Panels {
		all = append(all, r...)
	}
	f.Panels = nil
	for len(all) > 0 {
		m := min(n, len(all))
		f.Panels, all = append(f.Panels, all[:m]), all[m:]
	}
}

// fontScale is f's text scale (1 unless Resize set one).
func (f *Figure) fontScale() vg.Length {
	if f.FontScale > 0 {
		return vg.Length(f.FontScale)
	}
	return 1
}

// pngDPI is the resolution of PNG output.
const pngDPI = 144

// pdfDefaults makes PDF output byte-identical for the same figure: fpdf
// stamps the wall clock as the document's dates and writes its catalogs in
// map order unless its package defaults say otherwise (vgpdf gives no
// access to the document's own settings).
var pdfDefaults sync.Once

// WriteTo draws the figure in a format (svg, png or pdf) to w.
func (f *Figure) WriteTo(w io.Writer, format string) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(f.Width, f.Height)
	case "png":
		ic := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(pngDPI),
			vgimg.UseBackgroundColor(color.White))
		c = vgimg.PngCanvas{Canvas: ic}
	case "pdf":
		pdfDefaults.Do(func() {
			fpdf.SetDefaultCatalogSort(true)
			fpdf.SetDefaultCreationDate(time.Unix(0, 0).UTC())
			fpdf.SetDefaultModificationDate(time.Unix(0, 0).UTC())
		})
		c = vgpdf.New(f.Width, f.Height)
	}
	f.draw(draw.New(c))
	_, err := c.WriteTo(w)
	return err
}

// Save writes the figure to path, in the format its extension names, and
// returns the paths written. The file appears whole or not at all (written
// beside it, then renamed). The same figure already there in another format
// (path with another of Formats' extensions) is drawn again too, so no
// stale copy stays beside the new one and none is removed: a page may link
// it (results/paper's pages link the SVG). A resized figure (Resize) is
// written in its one format: the others beside it keep their own size.
func (f *Figure) Save(path string) ([]string, error) {
	if err := f.save(path); err != nil {
		return nil, err
	}
	paths := []string{path}
	if f.resized {
		return paths, nil
	}
	ext := filepath.Ext(path)
	for _, other := range Formats {
		if "."+other == strings.ToLower(ext) {
			continue
		}
		p := strings.TrimSuffix(path, ext) + "." + other
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := f.save(p); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func (f *Figure) save(path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	var b bytes.Buffer
	if err := f.WriteTo(&b, format); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return results.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

func (f *Figure) draw(dc draw.Canvas) {
	if f.Title != "" {
		sty := text(13 * f.fontScale())
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		t := wrap(sty, f.Title, dc.Max.X-dc.Min.X-16)
		dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - 4}, t)
		dc.Max.Y -= sty.Height(t) + 10
	}
	if len(f.Legend) > 0 {
		dc.Max.Y -= drawLegend(dc, f.Legend, f.fontScale()) + 4
	}
	rows := len(f.Panels)
	cols := 0
	for _, r := range f.Panels {
		cols = max(cols, len(r))
	}
	if rows == 0 || cols == 0 {
		return
	}
	grid := make([][]*plot.Plot, rows)
	for i, r := range f.Panels {
		grid[i] = make([]*plot.Plot, cols)
		copy(grid[i], r)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
}

// wrap breaks s into lines no wider than w at spaces (a longer word
// stays whole on its own line), so a title fits its figure, and balances
// them: the narrowest width that needs no more lines, so no word is left
// alone on the last line.
func wrap(sty draw.TextStyle, s string, w vg.Length) string {
	lines := wrapAt(sty, s, w)
	n := len(lines)
	if n < 2 {
		return strings.Join(lines, "\n")
	}
	lo, hi := w/vg.Length(n), w
	for range 24 {
		mid := (lo + hi) / 2
		if len(wrapAt(sty, s, mid)) > n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return strings.Join(wrapAt(sty, s, hi), "\n")
}

// wrapAt breaks s into lines no wider than w at spaces, greedily.
func wrapAt(sty draw.TextStyle, s string, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && sty.Width(line+" "+word) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		line = strings.TrimSpace(line + " " + word)
	}
	return append(lines, line)
}

// valueGrid is a grid of horizontal lines only, for panels whose x axis
// names groups or categories: a vertical line there would run through
// the middle of a group's bars.
func valueGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	return g
}

// text is a text style of the default font at a size in points.
func text(size vg.Length) draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, size),
		Handler: plot.DefaultTextHandler}
}

// newPlot is a panel with the package's styling: title and axis labels,
// a light grid drawn by the caller's choice, legend top left.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = 10
	p.Y.Label.TextStyle.Font.Size = 10
	p.X.Tick.Label.Font.Size = 9
	p.Y.Tick.Label.Font.Size = 9
	p.Legend.TextStyle.Font.Size = 9
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.YOffs = -2
	p.Legend.XOffs = 2
	p.Legend.ThumbnailWidth = vg.Points(14)
	p.X.Tick.Marker = trimTicks{}
	p.Y.Tick.Marker = trimTicks{}
	return p
}

// trimTicks label about six round values (1, 2, 2.5 or 5 × 10^k apart;
// gonum's default aims at three) with the fewest digits ("12.5", not
// "12.50"), with an unlabelled minor tick between labels. An integer
// axis (a GPU count, a window in seconds) gets whole-number ticks only:
// steps of at least 1 and no minor tick between 2 and 3.
type trimTicks struct{ integer bool }

// tickTarget is the number of labelled ticks trimTicks aims at.
const tickTarget = 6

// Ticks implements plot.Ticker.
func (t trimTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
	}
	step := t.step(lo, hi)
	minor := !t.integer || isWhole(step/2)
	var ts []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v := k * step
		if v == 0 { // no "-0" label
			v = 0
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
		if m := v + step/2; minor && m <= hi {
			ts = append(ts, plot.Tick{Value: m})
		}
	}
	if m := math.Ceil(lo/step-1e-9)*step - step/2; minor && m >= lo {
		ts = append(ts, plot.Tick{Value: m})
	}
	return ts
}

// step is the round step whose label count is closest to tickTarget (a
// whole number on an integer axis).
func (t trimTicks) step(lo, hi float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/tickTarget)))
	step, best := 1.0, math.Inf(1)
	if !t.integer {
		step = mag
	}
	for _, m := range []float64{0.5, 1, 2, 2.5, 5, 10} {
		s := m * mag
		if t.integer && (s < 1 || !isWhole(s)) {
			continue
		}
		n := math.Floor(hi/s) - math.Ceil(lo/s) + 1
		if d := math.Abs(n - tickTarget); d < best {
			step, best = s, d
		}
	}
	return step
}

// isWhole reports whether x is a whole number.
func isWhole(x float64) bool { return finite(x) && x == math.Trunc(x) }

// palette is the Okabe–Ito colour-blind-safe palette.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x99, 0x99, 0x99, 0xff}, // grey
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

// colorOf is the i-th series colour.
func colorOf(i int) color.Color { return palette[i%len(palette)] }

// dashes varies line dashes once the palette repeats.
func dashes(i int) []vg.Length {
	switch (i / len(palette)) % 3 {
	case 1:
		return []vg.Length{vg.Points(5), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(1.5), vg.Points(2)}
	}
	return nil
}

// shapes are the series markers, one per style slot (repeating).
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, diamond{}, draw.RingGlyph{}, draw.BoxGlyph{}}

// policySlots are the style slots of the paper's policies, the same in
// every figure and every run: AEGIS blue, Lucid orange, Horus green,
// Exclusive (the baseline) grey. A series takes its policy's slot by the
// first word of its name in any case ("AEGIS", "aegis", "AEGIS hold=30s",
// "AEGIS Est-free"); a name whose slot another name of the run already
// holds (AEGIS and AEGIS Est-free in one run) gets a free one.
var policySlots = map[string]int{"aegis": 0, "est-free": 0, "lucid": 1, "horus": 2, "exclusive": 6}

// policyOf is the policy a series name starts with, in lower case ("" for
// a name that names none of policySlots).
func policyOf(name string) string {
	f := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == ' ' || r == ',' || r == ':' || r == '·' || r == '(' })
	if len(f) == 0 {
		return ""
	}
	if _, ok := policySlots[f[0]]; ok {
		return f[0]
	}
	return ""
}

// Styles gives each series name (a configuration label) one colour, marker
// and dash pattern: the paper's policies their fixed slots (policySlots),
// any other name the next free slot in order of first use. Figures drawn
// with the same Styles (every figure of a run, see DrawDir) show a name
// alike. A nil *Styles gives each figure its own.
//
// A configuration's label ("AEGIS") and the first of its series with swept
// values ("AEGIS hold=10s") share a slot, whichever comes first: a sweep
// figure draws the configuration's lines in the colour its first series
// has in the run's bar figures (the policy's), and no figure shows both.
type Styles struct {
	slot map[string]int
	used map[int]bool
	cfg  map[string]int  // a configuration's slot: its label's or its first series'
	took map[string]bool // a series with swept values took the configuration's slot
}

// NewStyles returns Styles that give names their slots in this order.
func NewStyles(names ...string) *Styles {
	s := &Styles{slot: map[string]int{}, used: map[int]bool{}, cfg: map[string]int{}, took: map[string]bool{}}
	for _, n := range names {
		s.Slot(n)
	}
	return s
}

// configOf is the configuration of a series name: the name without its
// trailing swept values ("AEGIS" of "AEGIS hold=30s window=20").
func configOf(name string) string {
	f := strings.Fields(name)
	for len(f) > 1 && strings.Contains(f[len(f)-1], "=") {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// Slot is name's style slot.
func (s *Styles) Slot(name string) int {
	if k, ok := s.slot[name]; ok {
		return k
	}
	c := configOf(name)
	k, ok := s.cfg[c]
	switch {
	case ok && c == name:
	case ok && !s.took[c]:
		s.took[c] = true
	default:
		k = s.free(name)
		if _, ok := s.cfg[c]; !ok {
			s.cfg[c], s.took[c] = k, c != name
		}
	}
	s.slot[name], s.used[k] = k, true
	return k
}

// free is the slot a new name takes: its policy's if free, else the first
// free slot whose colour is no policy's (once the palette is used up, the
// other colours again with dashes: a GPU, signal or variant never takes a
// policy's colour).
func (s *Styles) free(name string) int {
	k, ok := policySlots[policyOf(name)]
	if ok && !s.used[k] {
		return k
	}
	policy := slices.Collect(maps.Values(policySlots))
	k = 0
	for s.used[k] || slices.Contains(policy, k%len(palette)) {
		k++
	}
	return k
}

// Color is name's colour.
func (s *Styles) Color(name string) color.Color { return colorOf(s.Slot(name)) }

// Marker is name's marker.
func (s *Styles) Marker(name string) draw.GlyphDrawer { return shapes[s.Slot(name)%len(shapes)] }

// Dashes is name's line dash pattern (solid until the palette repeats).
func (s *Styles) Dashes(name string) []vg.Length { return dashes(s.Slot(name)) }

// orNew is s, or fresh Styles when s is nil.
func (s *Styles) orNew() *Styles {
	if s == nil {
		return NewStyles()
	}
	return s
}

// finite reports whether x is a finite number.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// diamond is a filled diamond glyph with a black outline.
type diamond struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (diamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius * 1.3
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)})
	c.Stroke(p)
}

// star is a filled five-pointed star glyph with a black outline.
type star struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (star) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	var p vg.Path
	for i := range 10 {
		r := sty.Radius * 1.8
		if i%2 == 1 {
			r *= 0.45
		}
		a := math.Pi/2 + float64(i)*math.Pi/5
		q := vg.Point{X: pt.X + r*vg.Length(math.Cos(a)), Y: pt.Y + r*vg.Length(math.Sin(a))}
		if i == 0 {
			p.Move(q)
		} else {
			p.Line(q)
		}
	}
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)})
	c.Stroke(p)
}

// LegendEntry is one entry of a figure's shared legend: a name and the
// plotters (lines, bars, glyphs) whose thumbnails show it.
type LegendEntry struct {
	Name   string
	Thumbs []plot.Thumbnailer
}

// legend collects a figure's entries once per name, in order, and styles
// its series.
type legend struct {
	entries []LegendEntry
	st      *Styles
}

func newLegend(st *Styles) *legend { return &legend{st: st.orNew()} }

func (l *legend) add(name string, thumbs ...plot.Thumbnailer) {
	for _, e := range l.entries {
		if e.Name == name {
			return
		}
	}
	l.entries = append(l.entries, LegendEntry{Name: name, Thumbs: thumbs})
}

// drawLegend draws entries in centred rows at the top of dc, its text
// scaled by k, and returns the height used.
func drawLegend(dc draw.Canvas, entries []LegendEntry, k vg.Length) vg.Length {
	sty, rows, rowW, rowH := legendRows(entries, dc.Max.X-dc.Min.X, k)
	thumbW, gap, sep := vg.Points(16), vg.Points(4), vg.Points(14)
	width := func(e LegendEntry) vg.Length { return thumbW + gap + sty.Width(e.Name) }
	for i, r := range rows {
		y := dc.Max.Y - rowH*vg.Length(i) - rowH/2
		x := (dc.Min.X+dc.Max.X)/2 - rowW[i]/2
		for _, e := range r {
			tc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - rowH/2 + 2}, Max: vg.Point{X: x + thumbW, Y: y + rowH/2 - 2}}}
			for _, t := range e.Thumbs {
				t.Thumbnail(&tc)
			}
			dc.FillText(sty, vg.Point{X: x + thumbW + gap, Y: y}, e.Name)
			x += width(e) + sep
		}
	}
	return rowH * vg.Length(len(rows))
}

// legendRows lays entries out in rows no wider than a figure of width w
// holds at text scale k: the text style, the rows, their widths and the
// height of one.
func legendRows(entries []LegendEntry, w, k vg.Length) (sty draw.TextStyle, rows [][]LegendEntry, rowW []vg.Length, rowH vg.Length) {
	sty = text(10 * k)
	sty.YAlign = draw.YCenter
	thumbW, gap, sep := vg.Points(16), vg.Points(4), vg.Points(14)
	rowH = sty.Height("Mg") + 4
	avail := w - 20
	for _, e := range entries {
		ew := thumbW + gap + sty.Width(e.Name)
		if n := len(rows); n > 0 && rowW[n-1]+sep+ew <= avail {
			rows[n-1] = append(rows[n-1], e)
			rowW[n-1] += sep + ew
			continue
		}
		rows = append(rows, []LegendEntry{e})
		rowW = append(rowW, ew)
	}
	return sty, rows, rowW, rowH
}

// chrome is the height the title and legend take in a figure of width w.
func (f *Figure) chrome(w vg.Length) vg.Length {
	var h vg.Length
	if f.Title != "" {
		sty := text(13 * f.fontScale())
		h += sty.Height(wrap(sty, f.Title, w-16)) + 10
	}
	if len(f.Legend) > 0 {
		_, rows, _, rowH := legendRows(f.Legend, w, f.fontScale())
		h += rowH*vg.Length(len(rows)) + 4
	}
	return h
}
