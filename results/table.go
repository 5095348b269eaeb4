package results

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Stat is a metric over repetitions (seeds): the mean, the half-width of
// its 95 % confidence interval (Student t with N−1 degrees of freedom; 0
// for one sample) and the number of samples. A Stat with N 0 is undefined
// (e.g. a ratio to zero) and prints empty.
//
// Model and Models, when a run measured it, are the spread model
// uncertainty causes: half the range (max − min) of the mean over Models
// models (the calibrated one and its bootstrap refits); Models 0 when not
// measured.
type Stat struct {
	Mean, CI95 float64
	N          int
	Model      float64
	Models     int
}

// StatOf summarizes samples; NaN samples make the Stat undefined.
func StatOf(xs []float64) Stat {
	n := len(xs)
	if n == 0 {
		return Stat{}
	}
	var sum float64
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Stat{}
		}
		sum += x
	}
	mean := sum / float64(n)
	if n == 1 {
		return Stat{Mean: mean, N: 1}
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return Stat{Mean: mean, CI95: t * sd / math.Sqrt(float64(n)), N: n}
}

// Cell is one entry of a Table: a label (Text) or one or more statistics
// (shown joined by "/", e.g. failed/recovered attempts).
type Cell struct {
	Text  string
	Stats []Stat
}

// Column is a column of a Table: its heading, and for a numeric column the
// CSV column names of its statistics and the decimals shown.
type Column struct {
	Name      string
	Keys      []string // CSV names, one per Stat; empty for a label column
	Digits    int      // decimals of Markdown and LaTeX (mean and CI)
	CSVDigits int      // decimals of CSV; 0: Digits+2
	NoCI      bool     // show the mean only (e.g. counts)
	// MarkLow marks the best value, the lowest (a cost: a time, a
	// normalized time), in bold in Markdown and LaTeX; see Table.Group.
	// The column holds one statistic per cell.
	MarkLow bool
}

// csvDigits returns the decimals of the column in CSV.
func (c Column) csvDigits() int {
	if c.CSVDigits > 0 {
		return c.CSVDigits
	}
	return c.Digits + 2
}

// Table is a results table laid out like the paper's, written as Markdown,
// CSV or LaTeX. With more than one sample per statistic, Markdown and LaTeX
// show "mean ± CI" and CSV adds a KEY_ci95 column after each KEY.
//
// In a MarkLow column, Markdown and LaTeX print the best mean in bold in
// each group of rows (the rows with the same labels in the Group columns;
// all rows when Group is empty). Means are compared as printed (rounded to
// the column's Digits), so ties print, and are marked, alike; a group
// whose defined means all print the same (one row, or all equal) marks
// none, and an undefined value (empty) is never marked. CSV marks nothing.
type Table struct {
	Title   string
	Note    string // a line under the table (Markdown, LaTeX caption)
	Columns []Column
	Rows    [][]Cell
	Group   []int // label columns grouping the rows for marking the best
}

// repeated reports whether any statistic has more than one sample.
func (t *Table) repeated() bool { return t.anyStat(func(s Stat) bool { return s.N > 1 }) }

// modelled reports whether any statistic has a model-uncertainty spread.
func (t *Table) modelled() bool { return t.anyStat(func(s Stat) bool { return s.Models > 1 }) }

// anyStat reports whether f holds for any statistic of the table.
func (t *Table) anyStat(f func(Stat) bool) bool {
	for _, r := range t.Rows {
		for _, c := range r {
			if slices.ContainsFunc(c.Stats, f) {
				return true
			}
		}
	}
	return false
}

// best returns, per row and column, whether the cell's mean is marked as
// the best of its group (see Table).
func (t *Table) best() [][]bool {
	marks := make([][]bool, len(t.Rows))
	for i := range marks {
		marks[i] = make([]bool, len(t.Columns))
	}
	groups := map[string][]int{}
	for i, r := range t.Rows {
		var k strings.Builder
		for _, j := range t.Group {
			if j < len(r) {
				k.WriteString(r[j].Text)
			}
			k.WriteByte(0)
		}
		groups[k.String()] = append(groups[k.String()], i)
	}
	for j, col := range t.Columns {
		if !col.MarkLow {
			continue
		}
		for _, rows := range groups {
			shown := map[int]float64{}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, i := range rows {
				if x, ok := t.printed(i, j); ok {
					shown[i], lo, hi = x, min(lo, x), max(hi, x)
				}
			}
			for i, x := range shown {
				marks[i][j] = x == lo && lo < hi
			}
		}
	}
	return marks
}

// printed returns the mean of cell (i, j) as Markdown and LaTeX print it,
// and false when it is undefined.
func (t *Table) printed(i, j int) (float64, bool) {
	if j >= len(t.Rows[i]) || len(t.Rows[i][j].Stats) == 0 {
		return 0, false
	}
	s := t.Rows[i][j].Stats[0]
	if s.N == 0 || math.IsNaN(s.Mean) || math.IsInf(s.Mean, 0) {
		return 0, false
	}
	x, err := strconv.ParseFloat(strconv.FormatFloat(s.Mean, 'f', t.Columns[j].Digits, 64), 64)
	return x, err == nil
}

// markup is how a text format writes cells.
type markup struct {
	pm     string              // between a mean and its CI
	bold   string              // the format of a marked mean
	escape func(string) string // of a label
}

var (
	mdMarkup  = markup{pm: " ± ", bold: "**%s**", escape: mdEscape}
	texMarkup = markup{pm: ` $\pm$ `, bold: `\textbf{%s}`, escape: texEscape}
)

// format prints s with digits decimals: the mean (in the format bold when
// that is not empty), then with ci pm and the CI and, where measured, pm,
// "m " and the model-uncertainty spread.
func (s Stat) format(digits int, ci bool, pm, bold string) string {
	if s.N == 0 {
		return ""
	}
	v := strconv.FormatFloat(s.Mean, 'f', digits, 64)
	if bold != "" {
		v = fmt.Sprintf(bold, v)
	}
	if ci && s.N > 1 {
		v += pm + strconv.FormatFloat(s.CI95, 'f', digits, 64)
	}
	if ci && s.Models > 1 {
		v += pm + "m " + strconv.FormatFloat(s.Model, 'f', digits, 64)
	}
	return v
}

// cells returns row i's cells in markup m: ci shows CIs, marks the best
// values (Table.best).
func (t *Table) cells(i int, ci bool, marks [][]bool, m markup) []string {
	out := make([]string, len(t.Columns))
	for j, c := range t.Rows[i] {
		if len(c.Stats) == 0 {
			out[j] = m.escape(c.Text)
			continue
		}
		col := t.Columns[j]
		parts := make([]string, len(c.Stats))
		for k, s := range c.Stats {
			bold := ""
			if k == 0 && marks[i][j] {
				bold = m.bold
			}
			parts[k] = s.format(col.Digits, ci && !col.NoCI, m.pm, bold)
		}
		out[j] = strings.Join(parts, "/")
	}
	return out
}

// WriteMarkdown writes the table as a Markdown (GitHub) table under a
// "### Title" heading.
func (t *Table) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if t.Title != "" {
		fmt.Fprintf(bw, "### %s\n\n", t.Title)
	}
	ci, marks := t.repeated() || t.modelled(), t.best()
	row := func(cells []string) {
		bw.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	head, align := make([]string, len(t.Columns)), make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i], align[i] = mdEscape(c.Name), "---"
		if len(c.Keys) > 0 {
			align[i] = "---:"
		}
	}
	row(head)
	row(align)
	for i := range t.Rows {
		row(t.cells(i, ci, marks, mdMarkup))
	}
	if t.Note != "" {
		fmt.Fprintf(bw, "\n%s\n", t.Note)
	}
	return bw.Flush()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteCSV writes the table as CSV: one column per label column and per
// statistic (Keys), with a KEY_ci95 column after each when any statistic
// has several samples and then a KEY_model column (Stat.Model) when any
// has a model-uncertainty spread. Numbers carry the column's CSVDigits
// decimals (by default two more than the other formats show) and no marks.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	ci, model := t.repeated(), t.modelled()
	var head []string
	for _, c := range t.Columns {
		if len(c.Keys) == 0 {
			head = append(head, c.Name)
			continue
		}
		for _, k := range c.Keys {
			head = append(head, k)
			if ci && !c.NoCI {
				head = append(head, k+"_ci95")
			}
			if model && !c.NoCI {
				head = append(head, k+"_model")
			}
		}
	}
	cw.Write(head)
	for _, r := range t.Rows {
		var rec []string
		for i, c := range r {
			col := t.Columns[i]
			if len(col.Keys) == 0 {
				rec = append(rec, c.Text)
				continue
			}
			for k := range col.Keys {
				var s Stat
				if k < len(c.Stats) {
					s = c.Stats[k]
				}
				rec = append(rec, s.format(col.csvDigits(), false, "", ""))
				if ci && !col.NoCI {
					rec = append(rec, optNum(s.N > 1, s.CI95, col.csvDigits()))
				}
				if model && !col.NoCI {
					rec = append(rec, optNum(s.Models > 1, s.Model, col.csvDigits()))
				}
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// optNum formats v with digits decimals when ok, else "".
func optNum(ok bool, v float64, digits int) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// WriteLaTeX writes the table as a LaTeX table (booktabs rules) with the
// title as caption.
func (t *Table) WriteLaTeX(w io.Writer) error {
	bw := bufio.NewWriter(w)
	ci, marks := t.repeated() || t.modelled(), t.best()
	spec := ""
	for _, c := range t.Columns {
		if len(c.Keys) > 0 {
			spec += "r"
		} else {
			spec += "l"
		}
	}
	bw.WriteString("\\begin{table}\n\\centering\n")
	if t.Title != "" {
		fmt.Fprintf(bw, "\\caption{%s}\n", texEscape(t.Title))
	}
	fmt.Fprintf(bw, "\\begin{tabular}{%s}\n\\toprule\n", spec)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = texEscape(c.Name)
	}
	bw.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for i := range t.Rows {
		bw.WriteString(strings.Join(t.cells(i, ci, marks, texMarkup), " & ") + " \\\\\n")
	}
	bw.WriteString("\\bottomrule\n\\end{tabular}\n")
	if t.Note != "" {
		fmt.Fprintf(bw, "\\par\\smallskip{\\footnotesize %s}\n", texEscape(t.Note))
	}
	bw.WriteString("\\end{table}\n")
	return bw.Flush()
}

// texReplacer escapes LaTeX's special characters in text: those that
// change its meaning (\ & % $ # _ { } ~ ^) and those its default font
// (OT1) prints as other glyphs (| < > as an em dash and inverted ! and ?).
var texReplacer = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`,
	"_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	"|", `\textbar{}`, "<", `\textless{}`, ">", `\textgreater{}`,
	"±", `$\pm$`, "τ", `$\tau$`, "ρ", `$\rho$`, "×", `$\times$`, "→", `$\to$`)

// texEscape makes s LaTeX text that prints as s.
func texEscape(s string) string { return texReplacer.Replace(s) }
