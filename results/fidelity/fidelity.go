// Package fidelity sets a results directory of the paper's tables (make
// reproduce's results/paper) beside the values the AEGIS paper prints: every
// published cell with ours (mean ± 95 % CI over seeds) and the error, the
// median |error| per table, and whether the paper's conclusions hold, with
// the measured cause where they do not; a one-line verdict on top and the
// largest gaps explained. The published values are a report target only;
// they are read at report time and never fitted to.
package fidelity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/aegis-sched/aegis/internal/csvhead"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// Metrics are the published columns compared, in the paper's order.
var Metrics = []string{"makespan", "jct_mean", "jct_p95", "queue_mean", "queue_p95", "exec_mean", "exec_p95"}

// counts are the published F/R columns, shown but left out of the errors'
// medians (the paper prints them per table, not per seed).
var counts = []string{"failed", "recovered"}

// Tables are the paper's tables the report covers; Table 2 is in hours per
// trace, Tables 3–6 GeoMeans normalized to Exclusive.
var Tables = []int{2, 3, 4, 5, 6}

// table2Cols maps Table 2's column names in table.csv to Metrics.
var table2Cols = map[string]string{"makespan_h": "makespan", "mean_jct_h": "jct_mean", "p95_jct_h": "jct_p95"}

// Key names one printed row: a table, a config and (Table 2 only) a trace.
type Key struct {
	Table         int
	Config, Trace string
}

// Stat is one value: its mean over seeds, the half-width of its 95 % CI
// and, when the run measured it, the spread model uncertainty causes (the
// half-range over the refit models; NaN when not measured).
type Stat struct {
	Mean, CI95, Model float64
}

// Values holds a side's rows: metric name to value per key.
type Values map[Key]map[string]Stat

// get returns the mean of one metric.
func (v Values) get(k Key, m string) (float64, bool) {
	s, ok := v[k][m]
	return s.Mean, ok && !math.IsNaN(s.Mean)
}

// ReadPublished reads published_tables.csv (table, config, trace, then the
// metrics; empty cells are values the paper does not print).
func ReadPublished(r io.Reader, name string) (Values, error) {
	tb, err := runfiles.ParseTable(name, r)
	if err != nil {
		return nil, err
	}
	rows := tb.Records()
	col := header(rows[0])
	for _, c := range []string{"table", "config", "trace"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s:1: no %q column", name, c)
		}
	}
	v := Values{}
	for i, row := range rows[1:] {
		t, err := strconv.Atoi(row[col["table"]])
		if err != nil {
			return nil, fmt.Errorf("%s: table: %w", tb.Where(i), err)
		}
		k := Key{Table: t, Config: row[col["config"]]}
		if t == 2 {
			k.Trace = row[col["trace"]]
		}
		m := map[string]Stat{}
		for _, c := range append(slices.Clone(Metrics), counts...) {
			j, ok := col[c]
			if !ok || row[j] == "" {
				continue
			}
			x, err := strconv.ParseFloat(row[j], 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", name, i+2, c, err)
			}
			m[c] = Stat{Mean: x, CI95: math.NaN(), Model: math.NaN()}
		}
		v[k] = m
	}
	return v, nil
}

// header maps the names of a header read by readCSV or runfiles (which
// refuse a column named twice) to their columns.
func header(h []string) map[string]int {
	col, _ := csvhead.Index(h)
	return col
}

// Ours reads dir's tableN/table.csv for the Tables present and the number
// of seeds each ran (the distinct seeds of its cells.csv). A table not run
// is absent from both.
func Ours(dir string) (Values, map[int]int, error) {
	v, seeds := Values{}, map[int]int{}
	for _, t := range Tables {
		d := filepath.Join(dir, fmt.Sprintf("table%d", t))
		rows, err := readCSV(filepath.Join(d, "table.csv"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if err := addRows(v, t, rows); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(d, "table.csv"), err)
		}
		cells, err := readCSV(filepath.Join(d, rundir.Cells))
		if err != nil {
			return nil, nil, err
		}
		seeds[t] = distinct(cells, "seed")
		if t != 2 {
			if err := countCIs(v, t, cells); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", filepath.Join(d, rundir.Cells), err)
			}
		}
	}
	return v, seeds, nil
}

// countColumns are cells.csv's columns of the attempt counts.
var countColumns = map[string]string{"failed": "failed_attempts", "recovered": "recovered_attempts"}

// countCIs gives table t's attempt counts (a configuration's attempts over
// the traces, mean over the seeds) their 95 % CI over the seeds, from the
// cells: per seed the sum over the traces.
func countCIs(v Values, t int, cells [][]string) error {
	if len(cells) == 0 {
		return nil
	}
	col := header(cells[0])
	for _, c := range []string{"config", "seed"} {
		if _, ok := col[c]; !ok {
			return nil // not a cells table this report reads counts from
		}
	}
	for name, cc := range countColumns {
		j, ok := col[cc]
		if !ok {
			continue
		}
		per := map[string]map[string]float64{} // config -> seed -> sum over traces
		for i, row := range cells[1:] {
			if len(row) != len(cells[0]) {
				return fmt.Errorf("line %d: %d fields, want %d", i+2, len(row), len(cells[0]))
			}
			x, err := num(row, j)
			if err != nil {
				return fmt.Errorf("line %d: %s: %w", i+2, cc, err)
			}
			cfg := row[col["config"]]
			if per[cfg] == nil {
				per[cfg] = map[string]float64{}
			}
			per[cfg][row[col["seed"]]] += x
		}
		for k, m := range v {
			s, ok := m[name]
			if k.Table != t || !ok || per[k.Config] == nil {
				continue
			}
			var xs []float64
			for _, x := range per[k.Config] {
				xs = append(xs, x)
			}
			slices.Sort(xs)
			s.CI95 = ci95(xs)
			m[name] = s
		}
	}
	return nil
}

// ci95 is the half-width of the 95 % CI of the mean of xs (Student's t);
// NaN for fewer than two values.
func ci95(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return math.NaN()
	}
	var sum, ss float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return t * math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
}

// RefitsFile is a table's values under every speed model a run with
// model_uncertainty ran (model 0 the calibrated one, then each refit).
const RefitsFile = "refits.csv"

// Refits reads dir's tableN/refits.csv for the Tables present: per table
// the Values under each model, in the models' order. A table without the
// file (run without model_uncertainty) is absent.
func Refits(dir string) (map[int][]Values, error) {
	out := map[int][]Values{}
	for _, t := range Tables {
		path := filepath.Join(dir, fmt.Sprintf("table%d", t), RefitsFile)
		rows, err := readCSV(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		j, ok := header(rows[0])["model"]
		if !ok {
			return nil, fmt.Errorf("%s:1: no \"model\" column", path)
		}
		byModel := [][][]string{}
		for i, row := range rows[1:] {
			m, err := strconv.Atoi(row[j])
			switch {
			case err != nil || m < 0 || m > len(byModel):
				return nil, fmt.Errorf("%s:%d: model %q: want the models numbered 0, 1, ... in order", path, i+2, row[j])
			case m == len(byModel):
				byModel = append(byModel, [][]string{rows[0]})
			}
			byModel[m] = append(byModel[m], row)
		}
		for _, rs := range byModel {
			v := Values{}
			if err := addRows(v, t, rs); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			out[t] = append(out[t], v)
		}
	}
	return out, nil
}

// RefitsTelemetry reports, per table of dir run with model_uncertainty,
// whether its refits varied the telemetry's steady saturation u1 and its
// depth term δ besides the speed model (run.json's
// model_refits.steady_saturation and depth_overlap, written since the
// refits carry them); a table without run.json or refits is absent.
func RefitsTelemetry(dir string) (u1, delta map[int]bool, err error) {
	u1, delta = map[int]bool{}, map[int]bool{}
	for _, t := range Tables {
		path := filepath.Join(dir, fmt.Sprintf("table%d", t), rundir.RunFile)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		var m struct {
			Refits *struct {
				SteadySaturation []float64 `json:"steady_saturation"`
				DepthOverlap     []float64 `json:"depth_overlap"`
			} `json:"model_refits"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if m.Refits != nil {
			u1[t] = len(m.Refits.SteadySaturation) > 0
			delta[t] = len(m.Refits.DepthOverlap) > 0
		}
	}
	return u1, delta, nil
}

// readCSV reads the CSV file at path as runfiles reads every table: its
// header, then its rows.
func readCSV(path string) ([][]string, error) {
	t, err := runfiles.ReadTable(path)
	if err != nil {
		return nil, err
	}
	return t.Records(), nil
}

func distinct(rows [][]string, name string) int {
	j, ok := header(rows[0])[name]
	if !ok {
		return 0
	}
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		seen[r[j]] = true
	}
	return len(seen)
}

// addRows adds table t's rows of a table.csv: Table 2 by Trace and Config
// in hours, the others by Config; each metric with its _ci95 and, when
// present, its _model spread.
func addRows(v Values, t int, rows [][]string) error {
	col := header(rows[0])
	for i, row := range rows[1:] {
		k := Key{Table: t, Config: row[col["Config"]]}
		if t == 2 {
			k.Trace = row[col["Trace"]]
		}
		m := map[string]Stat{}
		for c, j := range col {
			name := c
			if t == 2 {
				name = table2Cols[c]
			}
			if !slices.Contains(Metrics, name) && !slices.Contains(counts, name) {
				continue
			}
			s := Stat{CI95: math.NaN(), Model: math.NaN()}
			var err error
			if s.Mean, err = num(row, j); err == nil {
				s.CI95, err = opt(row, col, c+"_ci95")
			}
			if err == nil {
				s.Model, err = opt(row, col, c+"_model")
			}
			if err != nil {
				return fmt.Errorf("line %d: %s: %w", i+2, c, err)
			}
			m[name] = s
		}
		v[k] = m
	}
	return nil
}

func num(row []string, j int) (float64, error) {
	return strconv.ParseFloat(strings.TrimSpace(row[j]), 64)
}

// opt reads an optional column: NaN when the table has none.
func opt(row []string, col map[string]int, name string) (float64, error) {
	j, ok := col[name]
	if !ok || row[j] == "" {
		return math.NaN(), nil
	}
	return num(row, j)
}
