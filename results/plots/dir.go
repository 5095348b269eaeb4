package plots

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// Figure names DrawDir knows, each drawn into NAME.svg (or .png), and the
// files each needs.
const (
	FigNormalized = "normalized" // Figure 3, from normalized.csv
	FigJCTCDF     = "jct-cdf"    // Figure 4, from jobs.csv
	FigQueueExec  = "queue-exec" // Figure 5, from normalized.csv
	FigStability  = "stability"  // Figure 6, from stability.csv
	FigThresholds = "thresholds" // Figure 7, from thresholds.csv
	FigSeeds      = "seeds-cdf"  // makespan and mean JCT across seeds, from cells.csv
	FigTimeline   = "timeline"   // one run's GPUs over time, from events.jsonl [+ telemetry.csv]
)

// FigureNames lists the figures DrawDir can draw, in drawing order.
var FigureNames = []string{FigNormalized, FigJCTCDF, FigQueueExec, FigStability, FigThresholds, FigSeeds, FigTimeline, FigEnergy}

// figureFile is the file each figure needs.
var figureFile = map[string]string{
	FigNormalized: rundir.Normalized, FigJCTCDF: rundir.Jobs, FigQueueExec: rundir.Normalized,
	FigStability: rundir.Stability, FigThresholds: rundir.Thresholds, FigSeeds: rundir.Cells,
	FigTimeline: rundir.Events, FigEnergy: rundir.Cells,
}

// FigureFile is the file of a results directory that figure name is drawn
// from ("" for an unknown name).
func FigureFile(name string) string { return figureFile[name] }

// DrawDir draws figures from the files in dir into dir as NAME.FORMAT
// (format "svg" or "png") and returns the paths written, in FigureNames
// order. It reads the files of a spec results directory (normalized.csv,
// jobs.csv, cells.csv, stability.csv, thresholds.csv; see contracts) and of
// an `aegis simulate --out` directory (jobs.csv, events.jsonl, optional
// telemetry.csv) by column name, tolerating extra columns.
//
// With no figure names it draws every figure whose file is present, and
// leaves out the seeds CDF when no cell has more than one seed; it is an
// error when none can be drawn. Named figures are all drawn (a seeds CDF
// of one seed is a step at that value) and their files must be there. A
// bad file is an error naming the file, line and column.
func DrawDir(dir, format string, figures ...string) ([]string, error) {
	return DrawDirSized(dir, format, Size{}, figures...)
}

// DrawDirSized is DrawDir drawing every figure at size s (Resize): each
// in the one format asked for.
func DrawDirSized(dir, format string, s Size, figures ...string) ([]string, error) {
	if err := CheckFormat(format); err != nil {
		return nil, err
	}
	named := len(figures) > 0
	for _, f := range figures {
		if !slices.Contains(FigureNames, f) {
			return nil, fmt.Errorf("unknown figure %q (have %s)", f, strings.Join(FigureNames, ", "))
		}
	}
	if !named {
		figures = Available(dir)
		if len(figures) == 0 {
			return nil, fmt.Errorf("%s: nothing to plot: none of normalized.csv, jobs.csv, cells.csv, stability.csv, thresholds.csv, events.jsonl", dir)
		}
	}
	d := &dirData{dir: dir, named: named}
	var out []string
	for _, name := range FigureNames {
		if !slices.Contains(figures, name) {
			continue
		}
		fig, err := d.figure(name)
		if errors.Is(err, errSkip) && !named {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("figure %s: %w", name, err)
		}
		if err := fig.Resize(s); err != nil {
			return out, fmt.Errorf("figure %s: %w", name, err)
		}
		paths, err := fig.Save(filepath.Join(dir, name+"."+format))
		out = append(out, paths...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Available lists the figures whose files dir holds, in FigureNames
// order: those DrawDir may draw there.
func Available(dir string) []string {
	var figs []string
	for _, f := range FigureNames {
		if _, err := os.Stat(filepath.Join(dir, figureFile[f])); err == nil {
			figs = append(figs, f)
		}
	}
	return figs
}

// ReadSimRun reads dir's simulate.json: the zero value when it has none
// or it does not parse (the figures then name the folder).
func ReadSimRun(dir string) rundir.SimulateMeta {
	m, err := rundir.ReadSimulate(dir)
	if err != nil {
		return rundir.SimulateMeta{}
	}
	return *m
}

// run reads the directory's simulate.json once (ReadSimRun).
func (d *dirData) run() rundir.SimulateMeta {
	if d.sim == nil {
		r := ReadSimRun(d.dir)
		d.sim = &r
	}
	return *d.sim
}

// runName names a one-run directory's run in titles: "aegis on philly,
// seed 1, a100-40gb:3" from its simulate.json, else the folder's name.
func (d *dirData) runName() string {
	r := d.run()
	if r.Policy == "" {
		return filepath.Base(filepath.Clean(d.dir))
	}
	return fmt.Sprintf("%s on %s, seed %d, %s", r.Policy, cmp.Or(r.Trace.Name, "its trace"), r.Seed, cmp.Or(r.Server, "its server"))
}

// seriesName is SeriesName, a row of a one-run directory (no config or
// policy column) named by its policy and seed from simulate.json.
func (d *dirData) seriesName(t *runfiles.Table, i int, sweep []string) string {
	n := SeriesName(t, i, sweep)
	if r := d.run(); n == "run" && r.Policy != "" {
		return fmt.Sprintf("%s, seed %d", r.Policy, r.Seed)
	}
	return n
}

// MissingError is a figure's input file absent from a results directory
// (a folder of kept results may leave jobs.csv out: results/paper's
// .gitignore does). The command line says how to write it.
type MissingError struct {
	Dir, File string
}

func (e *MissingError) Error() string { return e.Dir + ": no " + e.File }

// errSkip marks a figure that the files allow but that would show nothing.
var errSkip = errors.New("nothing to show")

// dirData reads a directory's files once each.
type dirData struct {
	dir    string
	named  bool // the caller named the figures
	tables map[string]*runfiles.Table
	st     *Styles
	sim    *rundir.SimulateMeta // simulate.json's, read once (run)
}

// styles are the run's series styles, shared by all its figures: names in
// order of first appearance in cells.csv (else normalized.csv, jobs.csv),
// so a configuration looks the same in every figure, whether or not a
// figure leaves it out (Figure 3 draws its baseline as the line at 1).
func (d *dirData) styles() *Styles {
	if d.st != nil {
		return d.st
	}
	d.st = NewStyles()
	for _, f := range []struct {
		name  string
		first []string
	}{
		{rundir.Cells, results.SummaryColumns}, {rundir.Normalized, results.SummaryColumns}, {rundir.Jobs, results.JobColumns}} {
		if _, err := os.Stat(filepath.Join(d.dir, f.name)); err != nil {
			continue
		}
		t, err := d.table(f.name)
		if err != nil {
			return d.st // the figure reading it reports the error
		}
		sweep := SweepColumns(t, f.first)
		for i := range t.Len() {
			d.st.Slot(SeriesName(t, i, sweep))
		}
		break
	}
	return d.st
}

func (d *dirData) table(name string, required ...string) (*runfiles.Table, error) {
	if t, ok := d.tables[name]; ok {
		for _, c := range required {
			if !t.Has(c) {
				return nil, fmt.Errorf("%s:1: missing column %q (have %s)", t.Name, c, strings.Join(t.Header, ","))
			}
		}
		return t, nil
	}
	t, err := runfiles.ReadTable(filepath.Join(d.dir, name), required...)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &MissingError{Dir: d.dir, File: name}
		}
		return nil, err
	}
	if d.tables == nil {
		d.tables = map[string]*runfiles.Table{}
	}
	d.tables[name] = t
	return t, nil
}

func (d *dirData) figure(name string) (*Figure, error) {
	switch name {
	case FigNormalized:
		return d.normalized()
	case FigJCTCDF:
		return d.jctCDF()
	case FigQueueExec:
		return d.queueExec()
	case FigStability:
		return d.stability()
	case FigThresholds:
		return d.thresholds()
	case FigSeeds:
		return d.seeds()
	case FigTimeline:
		return d.timeline()
	case FigEnergy:
		return d.energy()
	}
	return nil, fmt.Errorf("unknown figure %q", name)
}

// SweepColumns are a combined CSV's swept columns: those between the label
// columns and the first of the metric columns that follow them (per the
// result-file contract), a tuple's component columns included.
func SweepColumns(t *runfiles.Table, firstMetric []string) []string {
	start := slices.Index(t.Header, "seed")
	if start < 0 {
		return nil
	}
	var cols []string
	for _, h := range t.Header[start+1:] {
		if slices.Contains(firstMetric, h) || slices.Contains(results.LabelColumns, h) {
			break
		}
		cols = append(cols, h)
	}
	return cols
}

// Component reports whether swept column c is a component of a swept
// parameter's column (PARAM.K beside a PARAM column: K a number for a
// tuple's, e.g. thresholds.1, or a name, e.g. server.gpus).
func Component(c string, sweep []string) bool {
	p, _, ok := cutLast(c, ".")
	return ok && slices.Contains(sweep, p)
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// SeriesName names row i's configuration: its config label (or policy),
// plus the swept parameters' values (those it has; a tuple parameter's
// whole value, not its components).
func SeriesName(t *runfiles.Table, i int, sweep []string) string {
	name := t.String(i, "config")
	if name == "" {
		name = t.String(i, "policy")
	}
	for _, c := range sweep {
		if Component(c, sweep) {
			continue
		}
		if v := t.String(i, c); v != "" { // empty: the config does not sweep
			name = strings.TrimSpace(name + " " + c + "=" + v)
		}
	}
	if name == "" {
		name = "run"
	}
	return name
}

// order keeps keys in order of first appearance.
type order struct {
	keys []string
	idx  map[string]int
}

func (o *order) at(k string) int {
	if i, ok := o.idx[k]; ok {
		return i
	}
	if o.idx == nil {
		o.idx = map[string]int{}
	}
	o.idx[k] = len(o.keys)
	o.keys = append(o.keys, k)
	return o.idx[k]
}

// mean accumulates means per (series, group).
type means map[[2]int]*[2]float64

func (m means) add(s, g int, v float64) {
	if !finite(v) {
		return
	}
	a := m[[2]int{s, g}]
	if a == nil {
		a = &[2]float64{}
		m[[2]int{s, g}] = a
	}
	a[0] += v
	a[1]++
}

func (m means) get(s, g int) float64 {
	if a := m[[2]int{s, g}]; a != nil {
		return a[0] / a[1]
	}
	return math.NaN()
}

// normalized draws Figure 3 from normalized.csv: makespan and mean JCT
// (with p95 JCT diamonds) per trace and GeoMean, averaged over seeds. The
// normalizing configuration (all ratios 1) is the dashed line at 1.
func (d *dirData) normalized() (*Figure, error) {
	return d.normBars("makespan and JCT normalized to ",
		barPanel{"makespan", "makespan", rundir.MakespanS, "", ""},
		barPanel{"job completion time", "JCT", rundir.MeanJCTS, rundir.P95JCTS, "p95 JCT"})
}

// queueExec draws Figure 5 as the paper does, from normalized.csv: per
// trace and GeoMean the mean queueing and execution times as bars with
// their p95 as diamonds, averaged over seeds.
func (d *dirData) queueExec() (*Figure, error) {
	return d.normBars("queueing and execution time normalized to ",
		barPanel{"mean queueing time", "queueing time", rundir.MeanQueueS, rundir.P95QueueS, "p95"},
		barPanel{"mean execution time", "execution time", rundir.MeanExecS, rundir.P95ExecS, "p95"})
}

// barPanel is one panel of normBars: its title, what its y axis holds,
// the bars' column, the diamonds' column (none when empty) and their
// legend name.
type barPanel struct{ title, what, bar, marker, markerName string }

// normBars draws bar panels from normalized.csv: per trace (GeoMean last)
// one bar per configuration of the mean over seeds with its 95 % CI as a
// whisker (with two seeds or more), the normalizing configuration left
// out as the dashed line at 1, named in the legend.
func (d *dirData) normBars(title string, panels ...barPanel) (*Figure, error) {
	need := []string{"trace"}
	for _, p := range panels {
		need = append(need, p.bar)
		if p.marker != "" {
			need = append(need, p.marker)
		}
	}
	t, err := d.table(rundir.Normalized, need...)
	if err != nil {
		return nil, err
	}
	sweep := SweepColumns(t, results.SummaryColumns)
	var traces, series order
	m := means{}
	seeds := map[[2]int][]float64{} // the values over seeds, for the CIs
	isBase := map[int]bool{}        // the normalizing configuration's series
	for i := range t.Len() {
		g := traces.at(t.String(i, "trace"))
		s := series.at(SeriesName(t, i, sweep))
		isBase[s] = isBaseline(t, i)
		for k, c := range need[1:] {
			v, err := t.OptFloat(i, c)
			if err != nil {
				return nil, err
			}
			m.add(s, g*len(need)+k, v)
			if finite(v) {
				key := [2]int{s, g*len(need) + k}
				seeds[key] = append(seeds[key], v)
			}
		}
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("%s: no rows", t.Name)
	}
	// GeoMean last, under the paper's name.
	groups := slices.Clone(traces.keys)
	gi := make([]int, len(groups))
	for i := range gi {
		gi[i] = i
	}
	if k := slices.Index(groups, rundir.GeoMean); k >= 0 {
		groups = append(slices.Delete(groups, k, k+1), "GeoMean")
		gi = append(slices.Delete(gi, k, k+1), k)
	}
	base := baselineName(t)
	var bars []Bars
	for _, p := range panels {
		b := Bars{Title: p.title, YLabel: p.what + " / " + base + "'s", Groups: groups, Ref: 1, RefName: base + " (= 1)",
			MarkerName: p.markerName}
		for s, name := range series.keys {
			if isBase[s] && len(series.keys) > 1 {
				continue // the normalizing configuration: the line at 1
			}
			bs := BarSeries{Name: name}
			for _, g := range gi {
				k := g*len(need) + slices.Index(need[1:], p.bar)
				bs.Values = append(bs.Values, m.get(s, k))
				lo, hi := math.NaN(), math.NaN()
				if st := results.StatOf(seeds[[2]int{s, k}]); st.N > 1 {
					lo, hi = st.Mean-st.CI95, st.Mean+st.CI95
				}
				bs.Lo, bs.Hi = append(bs.Lo, lo), append(bs.Hi, hi)
				if p.marker != "" {
					bs.Markers = append(bs.Markers, m.get(s, g*len(need)+slices.Index(need[1:], p.marker)))
				}
			}
			b.Series = append(b.Series, bs)
		}
		bars = append(bars, b)
	}
	return NormalizedBars(d.styles(), title+base, bars...)
}

// baselineName names the configuration normalized.csv's rows are
// normalized to, as its normalized_to column says ("the baseline" for a
// file written before it said).
func baselineName(t *runfiles.Table) string {
	if t.Len() == 0 {
		return "the baseline"
	}
	return cmp.Or(t.String(0, rundir.NormalizedTo), "the baseline")
}

// isBaseline reports whether row i of normalized.csv is of the
// configuration its rows are normalized to.
func isBaseline(t *runfiles.Table, i int) bool {
	base := t.String(i, rundir.NormalizedTo)
	return base != "" && t.String(i, "config") == base
}

// jctCDF draws Figure 4 from jobs.csv: per-job JCT / solo time CDFs, one
// panel per trace and one line per configuration, seeds pooled, and below
// them the absolute JCT's CDFs when the file has jct_s.
func (d *dirData) jctCDF() (*Figure, error) {
	t, err := d.table(rundir.Jobs)
	if err != nil {
		return nil, err
	}
	useNorm, hasJCT := t.Has("norm_jct"), t.Has("jct_s")
	if !useNorm && !(hasJCT && t.Has("solo_s")) {
		return nil, fmt.Errorf("%s:1: missing column \"norm_jct\" (or jct_s and solo_s) (have %s)", t.Name, strings.Join(t.Header, ","))
	}
	sweep := SweepColumns(t, results.JobColumns)
	var traces, series order
	vals := map[[3]int][]float64{} // trace, series, 0 normalized / 1 absolute (h)
	for i := range t.Len() {
		var v, jct float64
		if hasJCT {
			jct, err = t.OptFloat(i, "jct_s")
		}
		if err == nil && useNorm {
			v, err = t.OptFloat(i, "norm_jct")
		} else if err == nil {
			var solo float64
			solo, err = t.Float(i, "solo_s")
			v = jct / solo
		}
		if err != nil {
			return nil, err
		}
		g := traces.at(cmp.Or(t.String(i, "trace"), d.run().Trace.Name))
		s := series.at(d.seriesName(t, i, sweep))
		for k, x := range []float64{v, jct / 3600} {
			if finite(x) && (k == 0 || hasJCT) {
				vals[[3]int{g, s, k}] = append(vals[[3]int{g, s, k}], x)
			}
		}
	}
	var panels []CDF
	for k, xl := range []string{"JCT / solo runtime (log scale)", "JCT (h, log scale)"} {
		for g, tr := range traces.keys {
			title := "trace " + tr
			if tr == "" {
				title = "all jobs"
			}
			if k == 1 {
				title += ": absolute JCT"
			}
			c := CDF{Title: title, XLabel: xl, YLabel: "fraction of jobs ≤ x", LogX: true}
			for s, name := range series.keys {
				if v := vals[[3]int{g, s, k}]; len(v) > 0 {
					c.Series = append(c.Series, Dist{Name: name, Values: v})
				}
			}
			if len(c.Series) > 0 {
				panels = append(panels, c)
			}
		}
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("%s: no finished job: %w", t.Name, errSkip)
	}
	cols := max(min(len(traces.keys), 3), 2)
	return CDFs(d.styles(), "per-job JCT: normalized to the solo runtime (slowdown) and absolute", cols, panels...)
}

// seeds draws makespan and mean JCT across seeds from cells.csv: per
// trace one bar per configuration at the mean over seeds, its 95 %
// confidence interval and one dot per seed (a CDF over a handful of seeds
// says less).
func (d *dirData) seeds() (*Figure, error) {
	t, err := d.table(rundir.Cells, "trace", "seed", rundir.MakespanS, rundir.MeanJCTS)
	if err != nil {
		return nil, err
	}
	sweep := SweepColumns(t, results.SummaryColumns)
	var traces, series order
	vals := map[[3]int][]float64{}
	most := 0
	for i := range t.Len() {
		g := traces.at(t.String(i, "trace"))
		s := series.at(SeriesName(t, i, sweep))
		for k, c := range []string{rundir.MakespanS, rundir.MeanJCTS} {
			v, err := t.OptFloat(i, c)
			if err != nil {
				return nil, err
			}
			if finite(v) {
				key := [3]int{g, s, k}
				vals[key] = append(vals[key], v/3600)
				most = max(most, len(vals[key]))
			}
		}
	}
	if most < 2 && !d.named {
		return nil, fmt.Errorf("%s: every cell has one seed: %w", t.Name, errSkip)
	}
	var panels []Bars
	for k, metric := range []string{"makespan", "mean JCT"} {
		b := Bars{Title: metric, YLabel: metric + " (h)", Groups: traces.keys}
		for s, name := range series.keys {
			bs := BarSeries{Name: name}
			for g := range traces.keys {
				v := vals[[3]int{g, s, k}]
				st := results.StatOf(v)
				mean := st.Mean
				if st.N == 0 {
					mean = math.NaN()
				}
				bs.Values = append(bs.Values, mean)
				bs.Lo, bs.Hi = append(bs.Lo, mean-st.CI95), append(bs.Hi, mean+st.CI95)
				bs.Points = append(bs.Points, v)
			}
			b.Series = append(b.Series, bs)
		}
		panels = append(panels, b)
	}
	return NormalizedBars(d.styles(), fmt.Sprintf("makespan and mean JCT over %d seeds: mean, 95 %% CI, a ring per seed (equal seeds one ring)", most), panels...)
}

// stability draws Figure 6 from stability.csv: the weighted mean absolute
// error of each signal's window score against window length.
func (d *dirData) stability() (*Figure, error) {
	t, err := d.table(rundir.Stability, "window_s", "signal", "wmae")
	if err != nil {
		return nil, err
	}
	var signals, windows order
	m := means{}
	for i := range t.Len() {
		w, err := t.Float(i, "window_s")
		if err != nil {
			return nil, err
		}
		v, err := t.OptFloat(i, "wmae")
		if err != nil {
			return nil, err
		}
		m.add(signals.at(t.String(i, "signal")), windows.at(strconv.FormatFloat(w, 'g', -1, 64)), v)
	}
	if len(signals.keys) == 0 {
		return nil, fmt.Errorf("%s: no rows", t.Name)
	}
	ln := Lines{Title: "window score error vs a 200 s anchored reference", XLabel: "window length (s)",
		YLabel: "weighted mean absolute error of the score", VLine: 30, VLineName: "AEGIS window (30 s)"}
	for s, name := range signals.keys {
		sr := Series{Name: signalName(name)}
		for w, ws := range windows.keys {
			x, _ := strconv.ParseFloat(ws, 64)
			sr.X = append(sr.X, x)
			sr.Y = append(sr.Y, m.get(s, w))
		}
		ln.Series = append(ln.Series, sr)
	}
	return LinePanels(d.styles(), "stability of the activity-anchored window", ln)
}

// signalName names a telemetry signal of stability.csv as the paper does
// (SMACT, SMOCC, DRAMA); another as it is.
func signalName(s string) string {
	switch strings.ToLower(s) {
	case "smact", "smocc", "drama":
		return strings.ToUpper(s)
	}
	return s
}

// thresholds draws Figure 7 from thresholds.csv, averaging each threshold
// point over its sequences (or using rows whose sequence is "all" or
// "mean" when the file has them).
func (d *dirData) thresholds() (*Figure, error) {
	cols := []string{"tau1", "tau2", "tau3", "throughput_gain", "mean_slowdown", "max_slowdown", "deferrals"}
	t, err := d.table(rundir.Thresholds, cols...)
	if err != nil {
		return nil, err
	}
	aggregate := func(i int) bool {
		s := strings.ToLower(t.String(i, "sequence"))
		return s == "all" || s == "mean"
	}
	hasAgg := false
	for i := range t.Len() {
		hasAgg = hasAgg || aggregate(i)
	}
	var keys order
	m := means{}
	knee := map[int]bool{}
	taus := map[int][3]float64{}
	for i := range t.Len() {
		if hasAgg && !aggregate(i) {
			continue
		}
		var v [7]float64
		for k, c := range cols {
			if k < 3 {
				v[k], err = t.Float(i, c)
			} else {
				v[k], err = t.OptFloat(i, c)
			}
			if err != nil {
				return nil, err
			}
		}
		p := keys.at(fmt.Sprint(v[0], v[1], v[2]))
		taus[p] = [3]float64{v[0], v[1], v[2]}
		for k := 3; k < 7; k++ {
			m.add(p, k, v[k])
		}
		switch strings.ToLower(strings.TrimSpace(t.String(i, "knee"))) {
		case "1", "true", "yes", "knee", "*":
			knee[p] = true
		}
	}
	var pts []ThresholdPoint
	def := aegis.DefaultConfig().Thresholds
	for p := range keys.keys {
		pts = append(pts, ThresholdPoint{Tau: taus[p], Gain: m.get(p, 3), MeanSlowdown: m.get(p, 4),
			MaxSlowdown: m.get(p, 5), Defers: m.get(p, 6), Knee: knee[p], Default: taus[p] == def})
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s: no rows", t.Name)
	}
	return Thresholds(fmt.Sprintf("pressure-threshold sweep: throughput gain, slowdown and collocation deferrals against the SMACT, SMOCC and DRAMA thresholds (τ1, τ2, τ3) above which AEGIS defers collocation; %d threshold points, each the mean over the stacking sequences", len(pts)), pts)
}

// timelineBins bounds the points per telemetry line.
const timelineBins = 1500

// timeline draws one run's GPUs over time from events.jsonl, with memory
// and SMACT from telemetry.csv when the directory has it.
func (d *dirData) timeline() (*Figure, error) {
	tl, err := d.timelineData()
	if err != nil {
		return nil, err
	}
	return GPUTimeline(nil, tl)
}

// timelineData reads the timeline's data: jobs per GPU as a step function
// (ends before starts at the same instant), telemetry binned.
func (d *dirData) timelineData() (Timeline, error) {
	path := filepath.Join(d.dir, rundir.Events)
	evs, err := runfiles.ReadEvents(path)
	if err != nil {
		return Timeline{}, err
	}
	atts, err := runfiles.Attempts(path, evs)
	if err != nil {
		return Timeline{}, err
	}
	var tel *runfiles.Telemetry
	if _, err := os.Stat(filepath.Join(d.dir, rundir.Telemetry)); err == nil {
		if tel, err = runfiles.ReadTelemetry(filepath.Join(d.dir, rundir.Telemetry)); err != nil {
			return Timeline{}, err
		}
	}
	end, gpus := 0.0, 0
	for _, e := range evs {
		end = max(end, e.T)
	}
	for _, a := range atts {
		for _, g := range a.GPUs {
			gpus = max(gpus, g+1)
		}
	}
	if tel != nil {
		if gpus > tel.GPUs() {
			for _, a := range atts {
				if g := slices.Max(a.GPUs); g >= tel.GPUs() {
					return Timeline{}, fmt.Errorf("%s: job %d attempt %d ran on GPU %d, but telemetry.csv covers GPUs 0-%d: the two files are not of one run", path, a.Job, a.Attempt, g, tel.GPUs()-1)
				}
			}
		}
		gpus = tel.GPUs()
		for _, s := range tel.S {
			end = max(end, float64(len(s)))
		}
	}
	if gpus == 0 {
		return Timeline{}, fmt.Errorf("%s: no job started: %w", path, errSkip)
	}
	tl := Timeline{Title: "GPUs over time: " + d.runName()}
	for g := range gpus {
		type step struct {
			t float64
			d int
		}
		var steps []step
		for _, a := range atts {
			if slices.Contains(a.GPUs, g) {
				e := a.End
				if e < 0 {
					e = end
				}
				steps = append(steps, step{a.Start, 1}, step{e, -1})
			}
		}
		slices.SortStableFunc(steps, func(a, b step) int {
			if a.t != b.t {
				return cmp.Compare(a.t, b.t)
			}
			return a.d - b.d // ends before starts at the same instant
		})
		s := Series{Name: fmt.Sprintf("GPU %d", g), X: []float64{0}, Y: []float64{0}}
		n := 0
		for _, st := range steps {
			n += st.d
			s.X, s.Y = append(s.X, st.t), append(s.Y, float64(n))
		}
		s.X, s.Y = append(s.X, end), append(s.Y, float64(n))
		tl.Jobs = append(tl.Jobs, s)
		if tel != nil && g < tel.GPUs() {
			mem, smact, util := binned(tel.S[g], end)
			mem.Name, smact.Name, util.Name = s.Name, s.Name, s.Name
			tl.MemoryGiB = append(tl.MemoryGiB, mem)
			tl.SMACT = append(tl.SMACT, smact)
			tl.UtilPct = append(tl.UtilPct, util)
		}
	}
	// Without pressure telemetry (a GPU type without DCGM) SMACT is 0
	// throughout: show utilization instead.
	pressure := false
	for _, s := range tl.SMACT {
		for _, y := range s.Y {
			pressure = pressure || y > 0
		}
	}
	if pressure {
		tl.UtilPct = nil
	} else {
		tl.SMACT = nil
	}
	return tl, nil
}

// binned averages a GPU's samples over bins so a line has at most
// timelineBins points; X is each bin's middle second. Memory is in GiB.
func binned(s []policies.Sample, end float64) (mem, smact, util Series) {
	n := max(len(s), int(end))
	bin := max(1, (n+timelineBins-1)/timelineBins)
	for lo := 0; lo < len(s); lo += bin {
		hi := min(lo+bin, len(s))
		var m, a, u float64
		for _, x := range s[lo:hi] {
			m += x.UsedMiB
			a += x.SMACT
			u += x.UtilPct
		}
		k := float64(hi - lo)
		x := float64(lo+hi-1) / 2
		mem.X, mem.Y = append(mem.X, x), append(mem.Y, m/k/1024)
		smact.X, smact.Y = append(smact.X, x), append(smact.Y, a/k)
		util.X, util.Y = append(util.X, x), append(util.Y, u/k)
	}
	return mem, smact, util
}
