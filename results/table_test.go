package results

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
)

func TestStatOf(t *testing.T) {
	require.Equal(t, Stat{}, StatOf(nil))
	require.Equal(t, Stat{Mean: 2, N: 1}, StatOf([]float64{2}))
	require.Equal(t, Stat{}, StatOf([]float64{1, math.NaN()}))
	// Two samples: t(0.975, 1) = 12.706; sd = √2·0.5; half-width = t·sd/√2.
	s := StatOf([]float64{1, 2})
	require.InDelta(t, 1.5, s.Mean, 1e-12)
	require.InDelta(t, 12.7062047*0.5, s.CI95, 1e-6)
	// Five samples 1..5: sd = 1.5811, t(0.975, 4) = 2.7764.
	s = StatOf([]float64{1, 2, 3, 4, 5})
	require.InDelta(t, 2.7764451*1.5811388/math.Sqrt(5), s.CI95, 1e-6)
	require.Equal(t, 5, s.N)
}

// goldenTable has labels needing escapes, a pair column, an undefined
// value and several samples.
func goldenTable(seeds int) *Table {
	st := func(xs ...float64) Stat {
		if seeds == 1 {
			xs = xs[:1]
		}
		return StatOf(xs)
	}
	return &Table{
		Title: "Memory input (τ1 sweep) & 50% more",
		Note:  "GeoMean over philly, saturn_x; F/R summed.",
		Columns: []Column{{Name: "Config"}, {Name: "hold"}, {Name: "Makespan", Keys: []string{"makespan"}, Digits: 3, CSVDigits: 4, MarkLow: true},
			{Name: "F/R", Keys: []string{"failed", "recovered"}, NoCI: true}},
		Rows: [][]Cell{
			{{Text: "Exclusive"}, {Text: ""}, {Stats: []Stat{st(1, 1, 1)}}, {Stats: []Stat{st(0, 0, 0), st(0, 0, 0)}}},
			{{Text: "AEGIS | MFM"}, {Text: "30s"}, {Stats: []Stat{st(0.78, 0.8, 0.79)}}, {Stats: []Stat{st(3, 4, 2), st(3, 4, 2)}}},
			{{Text: "MU_NF"}, {Text: "10s"}, {Stats: []Stat{{}}}, {Stats: []Stat{st(1, 1, 1), st(0, 1, 0)}}},
		},
	}
}

func TestTableGolden(t *testing.T) {
	for _, seeds := range []int{1, 3} {
		for _, f := range []struct {
			ext   string
			write func(*Table, *bytes.Buffer) error
		}{
			{"md", func(t *Table, b *bytes.Buffer) error { return t.WriteMarkdown(b) }},
			{"csv", func(t *Table, b *bytes.Buffer) error { return t.WriteCSV(b) }},
			{"tex", func(t *Table, b *bytes.Buffer) error { return t.WriteLaTeX(b) }},
		} {
			var b bytes.Buffer
			require.NoError(t, f.write(goldenTable(seeds), &b))
			path := filepath.Join("testdata", "table_seeds"+string(rune('0'+seeds))+"."+f.ext)
			golden.File(t, path, b.Bytes())
		}
	}
}

// mdCells returns the cells of the Markdown table's body rows.
func mdCells(t *testing.T, tb *Table) [][]string {
	var b bytes.Buffer
	require.NoError(t, tb.WriteMarkdown(&b))
	var rows [][]string
	for i, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if i < 2 {
			continue // heading and alignment
		}
		cs := strings.Split(l, "|")
		for j := range cs {
			cs[j] = strings.TrimSpace(cs[j])
		}
		rows = append(rows, cs[1:len(cs)-1])
	}
	return rows
}

// TestTableBest checks which values print in bold: the lowest as printed
// per group, ties alike, none where all print the same, never an
// undefined one.
func TestTableBest(t *testing.T) {
	one := func(x float64) Stat { return Stat{Mean: x, N: 1} }
	nan := Stat{Mean: math.NaN(), N: 1}
	for _, tc := range []struct {
		name   string
		digits int
		group  []int
		groups []string // per row; empty: ""
		vals   []Stat
		want   []string
	}{
		{"lowest", 3, nil, nil, []Stat{one(0.7), one(0.6704), one(0.9)}, []string{"0.700", "**0.670**", "0.900"}},
		{"tie", 3, nil, nil, []Stat{one(0.67), one(0.8), one(0.67)}, []string{"**0.670**", "0.800", "**0.670**"}},
		{"tie as printed", 3, nil, nil, []Stat{one(0.6704), one(0.6701), one(0.7)}, []string{"**0.670**", "**0.670**", "0.700"}},
		{"apart with more digits", 4, nil, nil, []Stat{one(0.6704), one(0.6701), one(0.7)}, []string{"0.6704", "**0.6701**", "0.7000"}},
		{"all equal", 3, nil, nil, []Stat{one(0.5), one(0.5), one(0.5)}, []string{"0.500", "0.500", "0.500"}},
		{"single row", 3, nil, nil, []Stat{one(0.5)}, []string{"0.500"}},
		{"undefined and NaN", 3, nil, nil, []Stat{{}, one(0.9), nan, one(0.8)}, []string{"", "0.900", "NaN", "**0.800**"}},
		{"one defined", 3, nil, nil, []Stat{{}, one(0.9)}, []string{"", "0.900"}},
		{"per group", 2, []int{1}, []string{"a", "a", "b", "b"}, []Stat{one(1), one(2), one(4), one(3)}, []string{"**1.00**", "2.00", "4.00", "**3.00**"}},
		{"group of one", 2, []int{1}, []string{"a", "a", "b"}, []Stat{one(1), one(2), one(0.5)}, []string{"**1.00**", "2.00", "0.50"}},
		{"one group", 2, nil, []string{"a", "a", "b"}, []Stat{one(1), one(2), one(0.5)}, []string{"1.00", "2.00", "**0.50**"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := &Table{Columns: []Column{{Name: "Config"}, {Name: "Trace"}, {Name: "Makespan", Keys: []string{"m"}, Digits: tc.digits, MarkLow: true},
				{Name: "Other", Keys: []string{"o"}, Digits: tc.digits}}, Group: tc.group}
			for i, v := range tc.vals {
				g := ""
				if tc.groups != nil {
					g = tc.groups[i]
				}
				tb.Rows = append(tb.Rows, []Cell{{Text: fmt.Sprint("c", i)}, {Text: g}, {Stats: []Stat{v}}, {Stats: []Stat{v}}})
			}
			var got, other []string
			for _, r := range mdCells(t, tb) {
				got = append(got, r[2])
				other = append(other, r[3])
			}
			require.Equal(t, tc.want, got)
			for i, o := range other {
				require.Equal(t, strings.Trim(tc.want[i], "*"), o, "a column without MarkLow marks nothing")
			}
		})
	}
}

// TestTablePrecision checks the decimals of each format and that only
// Markdown and LaTeX carry the mark: a normalized table's row as the paper
// prints it (3 decimals, CI alike), its CSV at CSVDigits.
func TestTablePrecision(t *testing.T) {
	tb := &Table{Columns: []Column{{Name: "Config"}, {Name: "Makespan", Keys: []string{"makespan"}, Digits: 3, CSVDigits: 4, MarkLow: true},
		{Name: "F/R", Keys: []string{"failed", "recovered"}, Digits: 1, NoCI: true}}}
	for _, xs := range [][]float64{{0.66, 0.67, 0.68}, {0.7, 0.71, 0.72}} {
		tb.Rows = append(tb.Rows, []Cell{{Text: "x"}, {Stats: []Stat{StatOf(xs)}}, {Stats: []Stat{StatOf(xs), StatOf(xs)}}})
	}
	ci := strconv.FormatFloat(StatOf([]float64{0.66, 0.67, 0.68}).CI95, 'f', 3, 64)
	csvCI := strconv.FormatFloat(StatOf([]float64{0.66, 0.67, 0.68}).CI95, 'f', 4, 64)
	var md, tex, csv bytes.Buffer
	require.NoError(t, tb.WriteMarkdown(&md))
	require.NoError(t, tb.WriteLaTeX(&tex))
	require.NoError(t, tb.WriteCSV(&csv))
	require.Contains(t, md.String(), "| x | **0.670** ± "+ci+" | 0.7/0.7 |\n")
	require.Contains(t, md.String(), "| x | 0.710 ± "+ci+" | 0.7/0.7 |\n")
	require.Contains(t, tex.String(), `x & \textbf{0.670} $\pm$ `+ci+` & 0.7/0.7 \\`)
	require.Equal(t, "Config,makespan,makespan_ci95,failed,recovered\nx,0.6700,"+csvCI+",0.670,0.670\nx,0.7100,"+csvCI+",0.710,0.710\n", csv.String())
}

// TestTableModelSpread: a statistic's model-uncertainty spread adds a
// KEY_model column after KEY_ci95 (not for NoCI columns) and "± m" in
// Markdown and LaTeX; a table without one has neither.
func TestTableModelSpread(t *testing.T) {
	tb := &Table{
		Columns: []Column{{Name: "Config"}, {Name: "Makespan", Keys: []string{"makespan"}, Digits: 2},
			{Name: "F/R", Keys: []string{"failed", "recovered"}, NoCI: true}},
		Rows: [][]Cell{
			{{Text: "A"}, {Stats: []Stat{{Mean: 0.8, CI95: 0.01, N: 3, Model: 0.05, Models: 21}}}, {Stats: []Stat{{Mean: 2, N: 3}, {Mean: 1, N: 3}}}},
			{{Text: "B"}, {Stats: []Stat{{Mean: 0.7, CI95: 0.02, N: 3}}}, {Stats: []Stat{{Mean: 0, N: 3}, {Mean: 0, N: 3}}}},
		},
	}
	var csv, md, tex bytes.Buffer
	require.NoError(t, tb.WriteCSV(&csv))
	require.Equal(t, "Config,makespan,makespan_ci95,makespan_model,failed,recovered\n"+
		"A,0.8000,0.0100,0.0500,2.00,1.00\nB,0.7000,0.0200,,0.00,0.00\n", csv.String())
	require.NoError(t, tb.WriteMarkdown(&md))
	require.Contains(t, md.String(), "0.80 ± 0.01 ± m 0.05")
	require.NoError(t, tb.WriteLaTeX(&tex))
	require.Contains(t, tex.String(), `0.80 $\pm$ 0.01 $\pm$ m 0.05`)
	tb.Rows[0][1].Stats[0].Models = 0
	csv.Reset()
	require.NoError(t, tb.WriteCSV(&csv))
	require.NotContains(t, csv.String(), "_model")
}

// Every character LaTeX reads as markup, or its default font prints as
// another glyph, is escaped in labels, headers, captions and notes.
func TestTexEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"AEGIS | MFM", `AEGIS \textbar{} MFM`},
		{"A & B", `A \& B`},
		{"50%", `50\%`},
		{"mu_nf", `mu\_nf`},
		{"#1", `\#1`},
		{"$5", `\$5`},
		{`a\b`, `a\textbackslash{}b`},
		{"{x}", `\{x\}`},
		{"~^", `\textasciitilde{}\textasciicircum{}`},
		{"<10 >5", `\textless{}10 \textgreater{}5`},
		{"τ1 ± ρ", `$\tau$1 $\pm$ $\rho$`},
		{"plain text", "plain text"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			require.Equal(t, tc.want, texEscape(tc.in))
			tb := &Table{Title: tc.in, Columns: []Column{{Name: tc.in}}, Rows: [][]Cell{{{Text: tc.in}}}, Note: tc.in}
			var b strings.Builder
			require.NoError(t, tb.WriteLaTeX(&b))
			require.Equal(t, 4, strings.Count(b.String(), tc.want), "caption, header, cell and note escaped:\n%s", b.String())
		})
	}
}
