package results

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Stat is a metric over repetitions (seeds): the mean, the half-width of
// its 95 % confidence interval (Student t with N−1 degrees of freedom; 0
// for one sample) and the number of samples. A Stat with N 0 is undefined
// (e.g. a ratio to zero) and prints empty.
type Stat struct {
	Mean, CI95 float64
	N          int
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
	Name   string
	Keys   []string // CSV names, one per Stat; empty for a label column
	Digits int
	NoCI   bool // show the mean only (e.g. counts)
}

// Table is a results table laid out like the paper's, written as Markdown,
// CSV or LaTeX. With more than one sample per statistic, Markdown and LaTeX
// show "mean ± CI" and CSV adds a KEY_ci95 column after each KEY.
type Table struct {
	Title   string
	Note    string // a line under the table (Markdown, LaTeX caption)
	Columns []Column
	Rows    [][]Cell
}

// repeated reports whether any statistic has more than one sample.
func (t *Table) repeated() bool {
	for _, r := range t.Rows {
		for _, c := range r {
			for _, s := range c.Stats {
				if s.N > 1 {
					return true
				}
			}
		}
	}
	return false
}

func (s Stat) format(digits int, ci bool, pm string) string {
	if s.N == 0 {
		return ""
	}
	v := strconv.FormatFloat(s.Mean, 'f', digits, 64)
	if ci && s.N > 1 {
		v += pm + strconv.FormatFloat(s.CI95, 'f', digits, 64)
	}
	return v
}

func (c Cell) format(col Column, ci bool, pm string) string {
	if len(c.Stats) == 0 {
		return c.Text
	}
	parts := make([]string, len(c.Stats))
	for i, s := range c.Stats {
		parts[i] = s.format(col.Digits, ci && !col.NoCI, pm)
	}
	return strings.Join(parts, "/")
}

// WriteMarkdown writes the table as a Markdown (GitHub) table under a
// "### Title" heading.
func (t *Table) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if t.Title != "" {
		fmt.Fprintf(bw, "### %s\n\n", t.Title)
	}
	ci := t.repeated()
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
	for _, r := range t.Rows {
		cells := make([]string, len(t.Columns))
		for i, c := range r {
			cells[i] = mdEscape(c.format(t.Columns[i], ci, " ± "))
		}
		row(cells)
	}
	if t.Note != "" {
		fmt.Fprintf(bw, "\n%s\n", t.Note)
	}
	return bw.Flush()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteCSV writes the table as CSV: one column per label column and per
// statistic (Keys), with a KEY_ci95 column after each when any statistic
// has several samples. Numbers carry two more decimals than the other
// formats show.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	ci := t.repeated()
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
				rec = append(rec, s.format(col.Digits+2, false, ""))
				if ci && !col.NoCI {
					v := ""
					if s.N > 1 {
						v = strconv.FormatFloat(s.CI95, 'f', col.Digits+2, 64)
					}
					rec = append(rec, v)
				}
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteLaTeX writes the table as a LaTeX table (booktabs rules) with the
// title as caption.
func (t *Table) WriteLaTeX(w io.Writer) error {
	bw := bufio.NewWriter(w)
	ci := t.repeated()
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
	for _, r := range t.Rows {
		cells := make([]string, len(t.Columns))
		for i, c := range r {
			cells[i] = texEscape(c.format(t.Columns[i], ci, "\x00"))
			cells[i] = strings.ReplaceAll(cells[i], "\x00", " $\\pm$ ")
		}
		bw.WriteString(strings.Join(cells, " & ") + " \\\\\n")
	}
	bw.WriteString("\\bottomrule\n\\end{tabular}\n")
	if t.Note != "" {
		fmt.Fprintf(bw, "\\par\\smallskip{\\footnotesize %s}\n", texEscape(t.Note))
	}
	bw.WriteString("\\end{table}\n")
	return bw.Flush()
}

var texReplacer = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`,
	"_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	"±", `$\pm$`, "τ", `$\tau$`, "ρ", `$\rho$`, "×", `$\times$`, "→", `$\to$`)

func texEscape(s string) string { return texReplacer.Replace(s) }
