package results

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
		Columns: []Column{{Name: "Config"}, {Name: "hold"}, {Name: "Makespan", Keys: []string{"makespan"}, Digits: 2},
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
			if *update {
				require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), b.String(), path)
		}
	}
}
