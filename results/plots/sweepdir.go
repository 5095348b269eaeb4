package plots

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// Sweep asks for a figure of metrics against a swept parameter (a spec's
// sweep_figures, aegis plot --sweep): per metric a panel, per trace ×
// configuration a line of the mean over seeds with its 95 % Student-t
// confidence band. See docs/plots.md.
type Sweep struct {
	// X is the swept column on the x axis: a swept parameter (hold,
	// truth.noise, model.nway_exponent, thresholds) or a tuple
	// parameter's component (thresholds.1 for τ1). Numbers and durations
	// make a numeric axis, other values categories.
	X string `yaml:"x" json:"x"`
	// XLabel labels the x axis (default: X).
	XLabel string `yaml:"xlabel" json:"xlabel,omitempty"`
	// Y are the metric columns, a panel each (default: makespan_s,
	// mean_jct_s).
	Y []string `yaml:"y" json:"y,omitempty"`
	// From is the file read: SweepCells (cells.csv, the default; times
	// shown in hours) or SweepNormalized (normalized.csv).
	From string `yaml:"from" json:"from,omitempty"`
	// Hold keeps only the rows whose swept columns have these values
	// (e.g. thresholds.2: 0.35); the rows of configurations that do not
	// sweep stay.
	Hold map[string]string `yaml:"hold" json:"hold,omitempty"`
	// Facet draws a row of panels per value of this swept column.
	Facet string `yaml:"facet" json:"facet,omitempty"`
	// Name is the file's name without extension (default: sweep-X).
	Name string `yaml:"name" json:"name,omitempty"`
	// Title replaces the figure's title.
	Title string `yaml:"title" json:"title,omitempty"`
}

// Where a sweep figure reads its rows.
const (
	SweepCells      = "cells"
	SweepNormalized = "normalized"
)

// DefaultSweepY are the metrics of a sweep figure that names none.
var DefaultSweepY = []string{rundir.MakespanS, rundir.MeanJCTS}

// FileName is the figure's file name without extension.
func (s Sweep) FileName() string {
	if s.Name != "" {
		return s.Name
	}
	return "sweep-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r) {
			return r
		}
		return '_'
	}, s.X)
}

// Metrics are the figure's y columns (Y, or DefaultSweepY).
func (s Sweep) Metrics() []string {
	if len(s.Y) == 0 {
		return DefaultSweepY
	}
	return s.Y
}

// Check checks what needs no data: X given, From known, metrics among the
// summary's columns, Facet not X.
func (s Sweep) Check() error {
	if s.X == "" {
		return fmt.Errorf("x: missing: name a swept parameter, e.g. hold or thresholds.1")
	}
	if s.From != "" && s.From != SweepCells && s.From != SweepNormalized {
		return fmt.Errorf("from: %q: want %s or %s", s.From, SweepCells, SweepNormalized)
	}
	for _, y := range s.Metrics() {
		if !slices.Contains(results.SummaryColumns, y) {
			return fmt.Errorf("y: unknown metric %q (have %s)", y, strings.Join(results.SummaryColumns, ", "))
		}
	}
	if s.Facet != "" && s.Facet == s.X {
		return fmt.Errorf("facet: %q is the x axis", s.Facet)
	}
	return nil
}

// DrawSweeps draws sweep figures from dir's cells.csv or normalized.csv
// into dir as NAME.FORMAT and returns the paths written.
func DrawSweeps(dir, format string, sweeps ...Sweep) ([]string, error) {
	return DrawSweepsSized(dir, format, Size{}, sweeps...)
}

// DrawSweepsSized is DrawSweeps drawing every figure at size s (Resize).
func DrawSweepsSized(dir, format string, s Size, sweeps ...Sweep) ([]string, error) {
	if err := CheckFormat(format); err != nil {
		return nil, err
	}
	d := &dirData{dir: dir, named: true}
	var out []string
	for _, sw := range sweeps {
		fig, err := d.sweep(sw)
		if err != nil {
			return out, fmt.Errorf("figure %s: %w", sw.FileName(), err)
		}
		if err := fig.Resize(s); err != nil {
			return out, fmt.Errorf("figure %s: %w", sw.FileName(), err)
		}
		paths, err := fig.Save(filepath.Join(dir, sw.FileName()+"."+format))
		out = append(out, paths...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// metricNames name summary columns in figures.
var metricNames = map[string]string{rundir.MakespanS: "makespan", rundir.MeanJCTS: "mean JCT", rundir.P95JCTS: "p95 JCT",
	rundir.MeanQueueS: "mean queueing time", rundir.P95QueueS: "p95 queueing time", rundir.MeanExecS: "mean execution time",
	rundir.P95ExecS: "p95 execution time", "mean_norm_jct": "mean JCT / solo runtime",
	"energy_j": "energy to solution (J)", "energy_kwh": "energy to solution (kWh)", "mean_gpu_power_w": "mean GPU power (W)",
	"energy_per_job_j": "energy per finished job (J)"}

// MetricName names a summary.csv column in figures and tables ("mean
// JCT" for mean_jct_s); columns it does not know with spaces for '_'.
func MetricName(c string) string {
	if n, ok := metricNames[c]; ok {
		return n
	}
	return strings.ReplaceAll(c, "_", " ")
}

// sweepRows is a sweep figure's table, its rows kept, and how they group.
type sweepRows struct {
	t      *runfiles.Table
	sw     Sweep
	sweep  []string // the table's swept columns
	rows   []int
	others []string // other swept columns that vary: part of a line's name
	st     *Styles
}

// sweep draws a sweep figure.
func (d *dirData) sweep(sw Sweep) (*Figure, error) {
	if err := sw.Check(); err != nil {
		return nil, err
	}
	file := rundir.Cells
	if sw.From == SweepNormalized {
		file = rundir.Normalized
	}
	t, err := d.table(file, append([]string{"trace", sw.X}, sw.Metrics()...)...)
	if err != nil {
		return nil, err
	}
	r := &sweepRows{t: t, sw: sw, sweep: SweepColumns(t, results.SummaryColumns), st: d.styles()}
	if err := r.selectRows(); err != nil {
		return nil, err
	}
	return r.figure()
}

// selectRows keeps the rows Hold allows and finds the other varying
// swept columns.
func (r *sweepRows) selectRows() error {
	named := append([]string{r.sw.X}, sortedKeys(r.sw.Hold)...)
	if r.sw.Facet != "" {
		named = append(named, r.sw.Facet)
	}
	for _, c := range named {
		if !slices.Contains(r.sweep, c) {
			return fmt.Errorf("%s: %q is not a swept column (have %s)", r.t.Name, c, strings.Join(r.sweep, ", "))
		}
	}
	// With one trace normalized.csv's GeoMean rows repeat it.
	var traces order
	for i := range r.t.Len() {
		if tr := r.t.String(i, "trace"); tr != rundir.GeoMean {
			traces.at(tr)
		}
	}
	oneTrace := len(traces.keys) == 1
rows:
	for i := range r.t.Len() {
		if oneTrace && r.t.String(i, "trace") == rundir.GeoMean {
			continue
		}
		for _, c := range sortedKeys(r.sw.Hold) {
			if v := r.t.String(i, c); v != "" && !sameValue(v, r.sw.Hold[c]) {
				continue rows
			}
		}
		r.rows = append(r.rows, i)
	}
	if len(r.rows) == 0 {
		return fmt.Errorf("%s: no row has the held values %v", r.t.Name, r.sw.Hold)
	}
	// A tuple's whole column and its components say the same: the axis
	// and facet use one of them, every other varying one names lines.
	used := map[string]bool{r.sw.X: true, r.sw.Facet: true}
	for c := range r.sw.Hold {
		used[c] = true
	}
	for _, c := range r.sweep {
		if used[c] || r.isTuple(c) || Component(c, r.sweep) && used[parentOf(c)] {
			continue // a tuple's components, when they vary, name the lines
		}
		if r.varies(c) {
			r.others = append(r.others, c)
		}
	}
	return nil
}

// isTuple reports whether column c has component columns.
func (r *sweepRows) isTuple(c string) bool {
	return slices.ContainsFunc(r.sweep, func(s string) bool { return parentOf(s) == c && s != c })
}

func parentOf(c string) string {
	p, _, _ := cutLast(c, ".")
	return p
}

// varies reports whether column c has two or more values among the rows.
func (r *sweepRows) varies(c string) bool {
	first := ""
	for _, i := range r.rows {
		v := r.t.String(i, c)
		if v == "" {
			continue
		}
		if first == "" {
			first = v
		} else if !sameValue(v, first) {
			return true
		}
	}
	return false
}

// sameValue compares two values as numbers when both are, else as text.
func sameValue(a, b string) bool {
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 == nil && err2 == nil {
		return x == y
	}
	return strings.TrimSpace(a) == strings.TrimSpace(b)
}

// lineName names row i's line by what varies among the rows: trace,
// configuration and the other swept columns.
func (r *sweepRows) lineName(i int, traceVaries, configVaries bool) string {
	var parts []string
	if traceVaries {
		parts = append(parts, traceName(r.t.String(i, "trace")))
	}
	cfg := cmp.Or(r.t.String(i, "config"), r.t.String(i, "policy"))
	if configVaries || !traceVaries {
		parts = append(parts, cfg)
	}
	for _, c := range r.others {
		if v := r.t.String(i, c); v != "" {
			parts = append(parts, c+"="+v)
		}
	}
	return strings.Join(parts, " · ")
}

// traceName names a trace in figures: GeoMean under the paper's name.
func traceName(tr string) string {
	if tr == rundir.GeoMean {
		return "GeoMean"
	}
	return tr
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sweepKey is one point of a sweep figure: facet row, line, x value (-1
// for a configuration that does not sweep) and metric.
type sweepKey struct{ facet, line, x, metric int }

// figure draws the panels under the figure's title.
func (r *sweepRows) figure() (*Figure, error) {
	grid, err := r.panels()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, col := range r.sw.Metrics() {
		names = append(names, MetricName(col))
	}
	title := cmp.Or(r.sw.Title, strings.Join(names, ", ")+" vs "+cmp.Or(r.sw.XLabel, paramName(r.sw.X))+
		" (mean, 95 % CI over seeds)")
	return SweepLines(r.st, title, grid)
}

// panels averages the rows per facet, line and x value over seeds: a row
// of panels per facet value, a panel per metric. When several
// configurations are drawn, each line takes its configuration's colour
// (as in the run's other figures), the lines of one configuration
// differing in marker and dash: by trace when several traces are drawn
// (the same trace the same line in every colour, one configuration or
// several), else in order.
func (r *sweepRows) panels() ([][]SweepPanel, error) {
	t, sw := r.t, r.sw
	traceVaries, configVaries := false, false
	for _, i := range r.rows {
		traceVaries = traceVaries || t.String(i, "trace") != t.String(r.rows[0], "trace")
		configVaries = configVaries || t.String(i, "config") != t.String(r.rows[0], "config") ||
			t.String(i, "policy") != t.String(r.rows[0], "policy")
	}
	var facets, lines, xs order
	for _, i := range r.rows {
		if v := t.String(i, sw.X); v != "" {
			xs.at(v)
		}
		if v := t.String(i, sw.Facet); sw.Facet != "" && v != "" {
			facets.at(v)
		}
	}
	if len(xs.keys) == 0 {
		return nil, fmt.Errorf("%s: no row has a value of %s", t.Name, sw.X)
	}
	if len(facets.keys) == 0 {
		facets.at("")
	}
	pos, unit, cats := axisValues(xs.keys)
	fpos, _, fcats := axisValues(facets.keys)
	if fcats == nil { // numeric facets in order
		slices.SortStableFunc(facets.keys, func(a, b string) int { return cmp.Compare(fpos[a], fpos[b]) })
	}
	vals := map[sweepKey][]float64{}
	style := map[string]string{}   // line name -> its configuration, when several are drawn
	variant := map[string]string{} // line name -> its trace, when several are drawn too
	for _, i := range r.rows {
		name := r.lineName(i, traceVaries, configVaries)
		l := lines.at(name)
		if traceVaries && len(r.others) == 0 {
			style[name] = cmp.Or(t.String(i, "config"), t.String(i, "policy"))
			variant[name] = traceName(t.String(i, "trace"))
		} else if configVaries {
			style[name] = cmp.Or(t.String(i, "config"), t.String(i, "policy"))
		}
		x := -1
		if v := t.String(i, sw.X); v != "" {
			x = xs.at(v)
		}
		for m, col := range sw.Metrics() {
			y, err := t.OptFloat(i, col)
			if err != nil {
				return nil, err
			}
			if sw.From != SweepNormalized && strings.HasSuffix(col, "_s") {
				y /= 3600
			}
			for f, fv := range facets.keys {
				if rv := t.String(i, sw.Facet); sw.Facet == "" || rv == "" || rv == fv {
					k := sweepKey{f, l, x, m}
					vals[k] = append(vals[k], y)
				}
			}
		}
	}
	xlabel := cmp.Or(sw.XLabel, paramName(sw.X)+unit)
	var grid [][]SweepPanel
	for f, fv := range facets.keys {
		var row []SweepPanel
		for m, col := range sw.Metrics() {
			sp := SweepPanel{Title: MetricName(col), XLabel: xlabel, YLabel: r.yLabel(col), Categories: cats}
			if sw.Facet != "" {
				sp.Title += ", " + sw.Facet + "=" + fv
			}
			for l, name := range lines.keys {
				b := bandOf(name, vals, sweepKey{f, l, 0, m}, xs.keys, pos)
				b.Style, b.Variant = style[name], variant[name]
				sp.Lines = append(sp.Lines, b)
			}
			row = append(row, sp)
		}
		grid = append(grid, row)
	}
	return grid, nil
}

// bandOf is line k.line's band in facet k.facet for metric k.metric: the
// mean and 95 % CI at every x value, by increasing x; a flat band when the
// line has no x value (its configuration does not sweep).
func bandOf(name string, vals map[sweepKey][]float64, k sweepKey, xs []string, pos map[string]float64) Band {
	b := Band{Name: name}
	k.x = -1
	if v, ok := vals[k]; ok {
		st := results.StatOf(v)
		b.Flat = true
		b.Mean, b.Lo, b.Hi = []float64{st.Mean}, []float64{st.Mean - st.CI95}, []float64{st.Mean + st.CI95}
		if st.N == 0 {
			b.Mean[0] = math.NaN()
		}
		return b
	}
	order := slices.Clone(xs)
	slices.SortStableFunc(order, func(a, c string) int { return cmp.Compare(pos[a], pos[c]) })
	for _, xv := range order {
		k.x = slices.Index(xs, xv)
		v, ok := vals[k]
		if !ok {
			continue
		}
		st := results.StatOf(v)
		if st.N == 0 {
			continue // an undefined value among the seeds
		}
		b.X = append(b.X, pos[xv])
		b.Mean, b.Lo, b.Hi = append(b.Mean, st.Mean), append(b.Lo, st.Mean-st.CI95), append(b.Hi, st.Mean+st.CI95)
	}
	return b
}

// yLabel labels metric col's axis: hours for times read from cells.csv,
// a ratio to the baseline's from normalized.csv.
func (r *sweepRows) yLabel(col string) string {
	switch {
	case r.sw.From == SweepNormalized && slices.Contains(results.SummaryColumns[:7], col):
		return MetricName(col) + " / " + baselineName(r.t) + "'s"
	case r.sw.From != SweepNormalized && strings.HasSuffix(col, "_s"):
		return MetricName(col) + " (h)"
	}
	return MetricName(col)
}

// paramName names a swept column on an axis: a pressure threshold by its
// signal ("τ1 (SMACT threshold)" for thresholds.1), anything else by its
// column.
func paramName(col string) string {
	for k, n := range tauNames {
		if col == fmt.Sprintf("thresholds.%d", k+1) {
			return n
		}
	}
	return col
}
