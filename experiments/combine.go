package experiments

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
	"github.com/aegis-sched/aegis/results/stability"
	"github.com/aegis-sched/aegis/results/stats"
)

// NormalizedColumns are the metrics normalized.csv divides by the
// normalizing config's (same trace, seed and sweep point); CountColumns
// follow them as counts (summed over traces in the geomean rows).
var (
	NormalizedColumns = []string{rundir.MakespanS, rundir.MeanJCTS, rundir.P95JCTS, rundir.MeanQueueS, rundir.P95QueueS,
		rundir.MeanExecS, rundir.P95ExecS, "mean_norm_jct"}
	CountColumns = []string{"failed_attempts", "recovered_attempts"}
)

// EnergyColumn is normalized.csv's energy to solution over the normalizing
// config's, after NormalizedColumns (before CountColumns) when the cells
// metered energy (results.EnergyColumns).
const EnergyColumn = "energy_j"

// normColumns are the ratio columns of normalized.csv for data:
// NormalizedColumns, and EnergyColumn when the cells have it.
func normColumns(data []*cellData) []string {
	cols := slices.Clone(NormalizedColumns)
	if len(data) > 0 && slices.Contains(data[0].sumCol, EnergyColumn) {
		cols = append(cols, EnergyColumn)
	}
	return cols
}

// cellData is one cell's results as read back from its directory.
type cellData struct {
	cell   Cell
	labels []string
	sumCol []string
	sum    []string
	jobCol []string
	jobs   [][]string
}

func (d *cellData) metric(name string) float64 {
	i := slices.Index(d.sumCol, name)
	if i < 0 || i >= len(d.sum) {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(d.sum[i], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// union is a with b's columns that a lacks appended, in b's order.
func union(a, b []string) []string {
	for _, c := range b {
		if !slices.Contains(a, c) {
			a = append(a, c)
		}
	}
	return a
}

// isPrefix reports whether header a begins header b.
func isPrefix(a, b []string) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }

// project is row, of columns from, laid out as columns to ("" where from
// lacks one).
func project(row, from, to []string) []string {
	if slices.Equal(from, to) {
		return row
	}
	out := make([]string, len(to))
	for i, c := range to {
		if k := slices.Index(from, c); k >= 0 && k < len(row) {
			out[i] = row[k]
		}
	}
	return out
}

// Combine reads the cells of a spec run's directory back and writes the
// combined files: cells.csv, jobs.csv, normalized.csv (when the spec
// normalizes) and the table in Markdown, CSV and LaTeX (when it asks for
// one). It returns the paths written.
func Combine(dir string, m *Meta) ([]string, error) {
	out, err := m.Spec.plan().combine(dir, m)
	if err != nil {
		return nil, err
	}
	return writeAll(dir, out)
}

// combine reads a trace run's cells back and lays out its combined files.
func (*tracePlan) combine(dir string, m *Meta) (map[string][]byte, error) {
	byRefit, err := readCells(dir, m)
	if err != nil {
		return nil, err
	}
	data := byRefit[0] // the model as calibrated
	labelHead := append(slices.Clone(results.LabelColumns), sweepHeader(m)...)
	out := map[string][]byte{}
	// cells.csv and jobs.csv
	var cellsCSV, jobsCSV bytes.Buffer
	cw, jw := csv.NewWriter(&cellsCSV), csv.NewWriter(&jobsCSV)
	// A swept cluster of several GPU types adds jobs.csv's gpu_type: the
	// union of the cells' columns, empty where a cell has none.
	var sumCol, jobCol []string
	for _, d := range data {
		sumCol, jobCol = union(sumCol, d.sumCol), union(jobCol, d.jobCol)
	}
	if len(data) > 0 {
		cw.Write(append(slices.Clone(labelHead), sumCol...))
		jw.Write(append(slices.Clone(labelHead), jobCol...))
	}
	for _, d := range data {
		if !isPrefix(data[0].sumCol, d.sumCol) && !isPrefix(d.sumCol, data[0].sumCol) ||
			!isPrefix(data[0].jobCol, d.jobCol) && !isPrefix(d.jobCol, data[0].jobCol) {
			return nil, fmt.Errorf("cell %s: its summary.csv or jobs.csv header differs from cell %s's", d.cell.ID, data[0].cell.ID)
		}
		cw.Write(append(slices.Clone(d.labels), project(d.sum, d.sumCol, sumCol)...))
		for _, j := range d.jobs {
			jw.Write(append(slices.Clone(d.labels), project(j, d.jobCol, jobCol)...))
		}
	}
	cw.Flush()
	jw.Flush()
	out[rundir.Cells], out[rundir.Jobs] = cellsCSV.Bytes(), jobsCSV.Bytes()
	var norm []normRow
	if m.Spec.Normalize != "" {
		var err error
		if norm, err = normalize(m, data); err != nil {
			return nil, err
		}
		out[rundir.Normalized] = writeNormalized(labelHead, normColumns(data), norm, m.Spec.Normalize)
	}
	if m.Spec.Stability {
		var runs []stability.Run
		for _, d := range data {
			r, err := stability.ReadRun(filepath.Join(dir, "cells", d.cell.ID))
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
		pts, err := stability.Compute(stability.DefaultConfig(), runs...)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := stability.WriteCSV(&b, pts); err != nil {
			return nil, err
		}
		out[rundir.Stability] = b.Bytes()
	}
	if m.Spec.Table != "" {
		t, err := buildTable(m, data, norm)
		if err != nil {
			return nil, err
		}
		if len(byRefit) > 1 {
			if out["refits.csv"], err = modelSpread(m, t, byRefit); err != nil {
				return nil, err
			}
		}
		var md, tc, tex bytes.Buffer
		if err := t.WriteMarkdown(&md); err != nil {
			return nil, err
		}
		if err := t.WriteCSV(&tc); err != nil {
			return nil, err
		}
		if err := t.WriteLaTeX(&tex); err != nil {
			return nil, err
		}
		out["table.md"], out["table.csv"], out["table.tex"] = md.Bytes(), tc.Bytes(), tex.Bytes()
	}
	return out, nil
}

// writeAll writes files into dir, each atomically, in name order.
func writeAll(dir string, out map[string][]byte) ([]string, error) {
	var paths []string
	for _, name := range sortedKeys(out) {
		p := filepath.Join(dir, name)
		if err := writeFileAtomic(p, out[name]); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// readCells reads every cell back, grouped by ModelUncertainty refit
// (index 0: the model as calibrated), each group in the cells' order.
func readCells(dir string, m *Meta) ([][]*cellData, error) {
	n := 1
	if mu := m.Spec.ModelUncertainty; mu != nil {
		n += mu.Refits
	}
	by := make([][]*cellData, n)
	for _, c := range m.Cells {
		if c.Refit < 0 || c.Refit >= n {
			return nil, fmt.Errorf("cell %s: refit %d, but the spec has %d", c.ID, c.Refit, n-1)
		}
		d, err := readCell(dir, m, c)
		if err != nil {
			return nil, err
		}
		by[c.Refit] = append(by[c.Refit], d)
	}
	return by, nil
}

// modelSpread builds the table under each refit of byRefit (normalized to
// the normalizing config under the same refit) and sets on t's statistics
// the spread model uncertainty causes (results.Stat.Model: half the range
// of the mean over the calibrated model and the refits). It returns
// refits.csv: every model's table (model 0: the calibrated one) as
// table.csv lays it out, after a "model" column.
func modelSpread(m *Meta, t *results.Table, byRefit [][]*cellData) ([]byte, error) {
	ts := []*results.Table{t}
	for r, data := range byRefit[1:] {
		var norm []normRow
		if m.Spec.Normalize != "" {
			var err error
			if norm, err = normalize(m, data); err != nil {
				return nil, fmt.Errorf("refit %d: %w", r+1, err)
			}
		}
		u, err := buildTable(m, data, norm)
		if err != nil {
			return nil, err
		}
		if !sameRows(t, u) {
			return nil, fmt.Errorf("refit %d: the table's rows differ from the calibrated model's", r+1)
		}
		ts = append(ts, u)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	for r, u := range ts {
		var tb bytes.Buffer
		if err := u.WriteCSV(&tb); err != nil {
			return nil, err
		}
		recs, err := csv.NewReader(&tb).ReadAll()
		if err != nil {
			return nil, err
		}
		if r == 0 {
			w.Write(append([]string{"model"}, recs[0]...))
		}
		for _, rec := range recs[1:] {
			w.Write(append([]string{strconv.Itoa(r)}, rec...))
		}
	}
	w.Flush()
	for i, row := range t.Rows {
		for j := range row {
			for k := range row[j].Stats {
				var xs []float64
				for _, u := range ts {
					if st := u.Rows[i][j].Stats[k]; st.N > 0 {
						xs = append(xs, st.Mean)
					}
				}
				if len(xs) == len(ts) {
					row[j].Stats[k].Model, row[j].Stats[k].Models = (slices.Max(xs)-slices.Min(xs))/2, len(xs)
				}
			}
		}
	}
	switch {
	case m.Refits != nil && len(m.Refits.SteadySaturation) > 0 && len(m.Refits.DepthOverlap) > 0:
		t.Note += fmt.Sprintf(" ± m: model uncertainty, half the range of the mean over the calibrated model and %d bootstrap refits of its speed model, steady saturation u1 and depth term δ.", len(ts)-1)
	case m.Refits != nil && len(m.Refits.SteadySaturation) > 0:
		t.Note += fmt.Sprintf(" ± m: model uncertainty, half the range of the mean over the calibrated model and %d bootstrap refits of its speed model and steady saturation u1.", len(ts)-1)
	default:
		t.Note += fmt.Sprintf(" ± m: model uncertainty, half the range of the mean over the calibrated speed model and %d bootstrap refits of it.", len(ts)-1)
	}
	return b.Bytes(), w.Error()
}

// sameRows reports whether tables t and u have the same rows' labels and
// shape.
func sameRows(t, u *results.Table) bool {
	if len(t.Rows) != len(u.Rows) {
		return false
	}
	for i := range t.Rows {
		if len(t.Rows[i]) != len(u.Rows[i]) {
			return false
		}
		for j, c := range t.Rows[i] {
			if c.Text != u.Rows[i][j].Text || len(c.Stats) != len(u.Rows[i][j].Stats) {
				return false
			}
		}
	}
	return true
}

// readCell reads a cell's summary.csv and jobs.csv.
func readCell(dir string, m *Meta, c Cell) (*cellData, error) {
	cd := filepath.Join(dir, "cells", c.ID)
	if _, err := os.Stat(filepath.Join(cd, rundir.CellFile)); err != nil {
		return nil, fmt.Errorf("cell %s: not finished (no %s): run the spec again", c.ID, rundir.CellFile)
	}
	d := &cellData{cell: c, labels: cellLabels(m, c)}
	sum, err := readCSVFile(filepath.Join(cd, rundir.Summary))
	if err != nil {
		return nil, err
	}
	if len(sum) != 2 {
		return nil, fmt.Errorf("%s: want a header and one row", filepath.Join(cd, rundir.Summary))
	}
	d.sumCol, d.sum = sum[0], sum[1]
	jobs, err := readCSVFile(filepath.Join(cd, rundir.Jobs))
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s: empty", filepath.Join(cd, rundir.Jobs))
	}
	d.jobCol, d.jobs = jobs[0], jobs[1:]
	return d, nil
}

func readCSVFile(path string) ([][]string, error) {
	t, err := runfiles.ReadTable(path)
	if err != nil {
		return nil, err
	}
	return t.Records(), nil
}

// sweepHeader names the combined CSVs' sweep columns: per swept parameter
// its column, followed for a tuple parameter (Axis.Components) by one
// column per component, PARAM.1 … PARAM.K (e.g. thresholds.1 for τ1).
func sweepHeader(m *Meta) []string {
	var h []string
	for _, p := range m.Sweep {
		h = append(h, p)
		for k := range sweepComponents(m, p) {
			h = append(h, p+"."+strconv.Itoa(k+1))
		}
		switch p {
		case serverParam:
			h = append(h, serverGPUs, serverType)
		case clusterParam:
			h = append(h, clusterGPUs)
		}
	}
	return h
}

// The columns of a swept server's GPU count and GPU type, and of a swept
// cluster's GPU count.
const (
	serverGPUs  = serverParam + ".gpus"
	serverType  = serverParam + ".type"
	clusterGPUs = clusterParam + ".gpus"
)

// pointClusterGPUs is the number of GPUs of point pt's swept cluster, the
// sum of GPUS × SERVERS over its TYPE:GPUSxSERVERS groups ("" for a config
// that does not sweep); read from the value, as run.json's spec holds it.
func pointClusterGPUs(pt Point) string {
	for _, kv := range pt {
		if kv.Param != clusterParam {
			continue
		}
		total := 0
		for _, g := range strings.Split(kv.Value, ",") {
			gs, ns, _ := strings.Cut(g[strings.LastIndex(g, ":")+1:], "x")
			a, err1 := strconv.Atoi(strings.TrimSpace(gs))
			b, err2 := strconv.Atoi(strings.TrimSpace(ns))
			if err1 != nil || err2 != nil {
				return "" // checked when the spec was read
			}
			total += a * b
		}
		return strconv.Itoa(total)
	}
	return ""
}

// pointServerCols are the GPU count and type of point pt's swept server,
// the COUNT and TYPE of its TYPE:COUNT ("" for a config that does not
// sweep); read from the value, as run.json's spec holds it.
func pointServerCols(pt Point) (gpus, typ string) {
	for _, kv := range pt {
		if kv.Param == serverParam {
			i := strings.LastIndex(kv.Value, ":")
			return strings.TrimSpace(kv.Value[i+1:]), strings.TrimSpace(kv.Value[:max(i, 0)])
		}
	}
	return "", ""
}

// sweepComponents is the number of components of swept parameter p (0 for
// a plain value).
func sweepComponents(m *Meta, p string) int {
	for i := range m.Spec.Sweep {
		if m.Spec.Sweep[i].Param == p {
			return m.Spec.Sweep[i].Components()
		}
	}
	return 0
}

// cellLabels are a cell's label column values (results.LabelColumns, then
// sweepHeader's).
func cellLabels(m *Meta, c Cell) []string {
	l := []string{m.Spec.Name, c.Trace, c.Config, c.Policy, strconv.FormatUint(c.Seed, 10)}
	for _, p := range m.Sweep {
		v := ""
		for _, kv := range c.Point {
			if kv.Param == p {
				v = kv.Value
			}
		}
		l = append(l, v)
		n := sweepComponents(m, p)
		parts := strings.Split(v, ",")
		for k := range n {
			if v == "" || len(parts) != n {
				l = append(l, "") // the config does not sweep
				continue
			}
			l = append(l, strings.TrimSpace(parts[k]))
		}
		switch p {
		case serverParam:
			gpus, typ := pointServerCols(c.Point)
			l = append(l, gpus, typ)
		case clusterParam:
			l = append(l, pointClusterGPUs(c.Point))
		}
	}
	return l
}

// normRow is a row of normalized.csv.
type normRow struct {
	labels []string
	config string
	point  string
	seed   uint64
	ratio  []float64 // normColumns
	count  []float64 // CountColumns
}

// normalize divides each cell's metrics by the normalizing config's for the
// same trace, seed and (when the normalizing config sweeps) sweep point, then
// appends the geometric means over traces per config, sweep point and seed.
func normalize(m *Meta, data []*cellData) ([]normRow, error) {
	type key struct {
		trace, point string
		seed         uint64
	}
	base := map[key]*cellData{}
	baseSweeps := false
	for _, d := range data {
		if d.cell.Config == m.Spec.Normalize {
			base[key{d.cell.Trace, d.cell.Point.String(), d.cell.Seed}] = d
			baseSweeps = baseSweeps || len(d.cell.Point) > 0
		}
	}
	cols := normColumns(data)
	var rows []normRow
	type group struct {
		config, point string
		seed          uint64
	}
	var order []group
	geo := map[group][]normRow{}
	for _, d := range data {
		k := key{d.cell.Trace, "", d.cell.Seed}
		if baseSweeps {
			k.point = d.cell.Point.String()
		}
		b, ok := base[k]
		if !ok {
			return nil, fmt.Errorf("cell %s: no cell of the normalizing config %q for trace %s, seed %d%s", d.cell.ID, m.Spec.Normalize, k.trace, k.seed, pointNote(k.point))
		}
		r := normRow{labels: d.labels, config: d.cell.Config, point: d.cell.Point.String(), seed: d.cell.Seed}
		for _, c := range cols {
			r.ratio = append(r.ratio, ratio(d.metric(c), b.metric(c)))
		}
		for _, c := range CountColumns {
			r.count = append(r.count, d.metric(c))
		}
		rows = append(rows, r)
		g := group{r.config, r.point, r.seed}
		if _, seen := geo[g]; !seen {
			order = append(order, g)
		}
		geo[g] = append(geo[g], r)
	}
	for _, g := range order {
		rs := geo[g]
		r := normRow{labels: slices.Clone(rs[0].labels), config: g.config, point: g.point, seed: g.seed}
		r.labels[1] = rundir.GeoMean
		for k := range cols {
			vs := make([]float64, len(rs))
			for i, x := range rs {
				vs[i] = x.ratio[k]
			}
			r.ratio = append(r.ratio, stats.GeoMean(vs))
		}
		for k := range CountColumns {
			s := 0.0
			for _, x := range rs {
				s += x.count[k]
			}
			r.count = append(r.count, s)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func pointNote(p string) string {
	if p == "" {
		return ""
	}
	return ", sweep point " + p
}

// ratio is a/b, NaN when undefined.
func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// fmtNum formats a number for a combined CSV: shortest exact form at 6
// decimals, empty when undefined.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// writeNormalized writes normalized.csv: the labels, the ratios cols, the
// counts and, last, the label of the config every row is normalized to
// (rundir.NormalizedTo: base), so that readers need not guess it.
func writeNormalized(labelHead, cols []string, rows []normRow, base string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := append(slices.Clone(labelHead), cols...)
	w.Write(append(append(head, CountColumns...), rundir.NormalizedTo))
	for _, r := range rows {
		rec := slices.Clone(r.labels)
		for _, v := range r.ratio {
			rec = append(rec, fmtNum(v))
		}
		for _, v := range r.count {
			rec = append(rec, fmtNum(v))
		}
		w.Write(append(rec, base))
	}
	w.Flush()
	return b.Bytes()
}

// buildTable lays out the spec's table.
func buildTable(m *Meta, data []*cellData, norm []normRow) (*results.Table, error) {
	// The table shows each swept parameter's whole value.
	var sweepAt []int
	for k, h := range sweepHeader(m) {
		if slices.Contains(m.Sweep, h) {
			sweepAt = append(sweepAt, len(results.LabelColumns)+k)
		}
	}
	sweepCols := func() []results.Column {
		var cs []results.Column
		for _, p := range m.Sweep {
			cs = append(cs, results.Column{Name: p})
		}
		return cs
	}
	pointCells := func(labels []string) []results.Cell {
		var cs []results.Cell
		for _, i := range sweepAt {
			cs = append(cs, results.Cell{Text: labels[i]})
		}
		return cs
	}
	seeds := ""
	if len(m.Seeds) > 1 {
		seeds = fmt.Sprintf("; mean ± 95 %% CI (Student t) over %d seeds", len(m.Seeds))
	} else {
		seeds = fmt.Sprintf("; seed %d", m.Seeds[0])
	}
	title := m.Spec.Name
	if m.Spec.Description != "" {
		title = m.Spec.Description
	}
	switch m.Spec.Table {
	case TablePerTrace:
		return perTraceTable(m, data, title, seeds, sweepCols(), pointCells), nil
	case TableNormalized:
		return normalizedTable(m, norm, title, seeds, sweepCols(), pointCells), nil
	}
	return nil, fmt.Errorf("unknown table %q", m.Spec.Table)
}

// serverNote names a table's server: the spec's, or, when the spec sweeps
// it, the server column's.
func serverNote(m *Meta) string {
	for _, p := range []string{serverParam, clusterParam} {
		if slices.Contains(m.Sweep, p) {
			return "per row (column " + p + "; a config that does not sweep runs on " + m.Server.Spec + ")"
		}
	}
	return m.Server.Spec
}

// perTraceTable lays out a per-trace table of the cells' data: one row per
// trace, config and sweep point (sweep: the point's columns, point: its
// cells), the seeds' mean and CI of makespan and JCT in hours.
func perTraceTable(m *Meta, data []*cellData, title, seeds string, sweep []results.Column, point func([]string) []results.Cell) *results.Table {
	t := &results.Table{Title: title, Note: fmt.Sprintf("Server %s%s. Times in hours; bold: the lowest mean per trace and column.", serverNote(m), seeds)}
	t.Columns = append([]results.Column{{Name: "Trace"}, {Name: "Config"}}, sweep...)
	t.Group = []int{0} // the best per trace
	cols := []struct {
		name, key, metric string
		scale             float64
	}{{"Makespan (h)", "makespan_h", rundir.MakespanS, 3600}, {"Mean JCT (h)", "mean_jct_h", rundir.MeanJCTS, 3600}, {"p95 JCT (h)", "p95_jct_h", rundir.P95JCTS, 3600}}
	if m.Spec.Energy {
		cols = append(cols, struct {
			name, key, metric string
			scale             float64
		}{"Energy (kWh)", "energy_kwh", "energy_kwh", 1})
		t.Note += " Energy: the simulated GPUs' energy to solution (docs/energy.md)."
	}
	for _, c := range cols {
		// Hours with 2 decimals, as the paper prints Table 2.
		t.Columns = append(t.Columns, results.Column{Name: c.name, Keys: []string{c.key}, Digits: 2, MarkLow: true})
	}
	type key struct{ trace, config, point string }
	var order []key
	vals := map[key][][]float64{}
	labels := map[key][]string{}
	for _, d := range data {
		k := key{d.cell.Trace, d.cell.Config, d.cell.Point.String()}
		if _, ok := vals[k]; !ok {
			order = append(order, k)
			labels[k] = d.labels
		}
		var v []float64
		for _, c := range cols {
			v = append(v, d.metric(c.metric)/c.scale)
		}
		vals[k] = append(vals[k], v)
	}
	for _, k := range order {
		row := append([]results.Cell{{Text: k.trace}, {Text: k.config}}, point(labels[k])...)
		for c := range cols {
			var xs []float64
			for _, v := range vals[k] {
				xs = append(xs, v[c])
			}
			row = append(row, results.Cell{Stats: []results.Stat{results.StatOf(xs)}})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// normalizedTable lays out a normalized table of the geometric-mean rows of
// norm: one row per config (but the baseline) and sweep point, as
// perTraceTable.
func normalizedTable(m *Meta, norm []normRow, title, seeds string, sweep []results.Column, point func([]string) []results.Cell) *results.Table {
	var traceNames []string
	for _, tr := range m.Traces {
		traceNames = append(traceNames, tr.Name)
	}
	t := &results.Table{Title: title, Note: fmt.Sprintf("Server %s; GeoMean over traces %s of each metric normalized to %s; F/R = failed/recovered attempts summed over traces%s; bold: the lowest mean per column.",
		serverNote(m), strings.Join(traceNames, ", "), m.Spec.Normalize, seeds)}
	t.Columns = append([]results.Column{{Name: "Config"}}, sweep...)
	for _, c := range []struct{ name, key string }{{"Makespan", "makespan"}, {"JCT mean", "jct_mean"}, {"JCT p95", "jct_p95"},
		{"Queue mean", "queue_mean"}, {"Queue p95", "queue_p95"}, {"Exec mean", "exec_mean"}, {"Exec p95", "exec_p95"}} {
		// Ratios with 3 decimals, as the paper prints Tables 3–6 (CSV: 4).
		t.Columns = append(t.Columns, results.Column{Name: c.name, Keys: []string{c.key}, Digits: 3, CSVDigits: 4, MarkLow: true})
	}
	ratios := []int{0, 1, 2, 3, 4, 5, 6} // of normColumns
	if m.Spec.Energy {
		t.Columns = append(t.Columns, results.Column{Name: "Energy", Keys: []string{"energy"}, Digits: 3, CSVDigits: 4, MarkLow: true})
		t.Note += " Energy: the simulated GPUs' energy to solution (docs/energy.md)."
		ratios = append(ratios, len(NormalizedColumns)) // EnergyColumn
	}
	frDigits := 0
	if len(m.Seeds) > 1 {
		frDigits = 1
	}
	t.Columns = append(t.Columns, results.Column{Name: "F/R", Keys: []string{"failed", "recovered"}, Digits: frDigits, NoCI: true})
	type key struct{ config, point string }
	var order []key
	rows := map[key][]normRow{}
	for _, r := range norm {
		if r.labels[1] != rundir.GeoMean {
			continue
		}
		k := key{r.config, r.point}
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		rows[k] = append(rows[k], r)
	}
	for _, k := range order {
		if k.config == m.Spec.Normalize {
			continue // all ones by definition
		}
		rs := rows[k]
		row := append([]results.Cell{{Text: k.config}}, point(rs[0].labels)...)
		for _, c := range ratios {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, r.ratio[c])
			}
			row = append(row, results.Cell{Stats: []results.Stat{results.StatOf(xs)}})
		}
		var f, rc []float64
		for _, r := range rs {
			f, rc = append(f, r.count[0]), append(rc, r.count[1])
		}
		row = append(row, results.Cell{Stats: []results.Stat{results.StatOf(f), results.StatOf(rc)}})
		t.Rows = append(t.Rows, row)
	}
	return t
}
