package experiments

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The spec tables print as the paper does: normalized ratios with 3
// decimals (their CI alike), hours with 2, and the lowest mean per column
// (per trace in a per-trace table) in bold; table.csv stays unmarked at
// 4 decimals.
func TestSpecTablePrecisionAndBest(t *testing.T) {
	for _, tc := range []struct {
		table string
		cell  string // a numeric cell of table.md
		rows  int    // rows of a group (a trace, or all)
		cols  []int  // the marked columns
	}{
		{TableNormalized, `(\*\*)?\d+\.\d{3}(\*\*)? ± \d+\.\d{3}`, 2, []int{2, 3, 4, 5, 6, 7, 8}},
		{TablePerTrace, `(\*\*)?\d+\.\d{2}(\*\*)? ± \d+\.\d{2}`, 3, []int{3, 4, 5}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			s := loadSmall(t, strings.Replace(smallSpec, "table: normalized", "table: "+tc.table, 1))
			dir := t.TempDir()
			_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
			require.NoError(t, err)
			md := mustReadString(t, filepath.Join(dir, "table.md"))
			cellRE := regexp.MustCompile(`^` + tc.cell + `$`)
			var body [][]string
			for _, l := range strings.Split(md, "\n") {
				if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| ---") || strings.HasPrefix(l, "| Trace") || strings.HasPrefix(l, "| Config") {
					continue
				}
				cs := strings.Split(l, "|")
				for j := range cs {
					cs[j] = strings.TrimSpace(cs[j])
				}
				body = append(body, cs[1:len(cs)-1])
			}
			require.NotEmpty(t, body)
			someMarked := false
			for start := 0; start < len(body); start += tc.rows {
				for _, j := range tc.cols {
					// The lowest printed mean is marked, unless the
					// group's means all print alike (results.Table).
					var means []float64
					lo := math.Inf(1)
					for _, r := range body[start : start+tc.rows] {
						require.Regexp(t, cellRE, r[j], md)
						m, err := strconv.ParseFloat(strings.Trim(strings.Fields(r[j])[0], "*"), 64)
						require.NoError(t, err)
						means, lo = append(means, m), min(lo, m)
					}
					alike := !slices.ContainsFunc(means, func(m float64) bool { return m != means[0] })
					for i, r := range body[start : start+tc.rows] {
						marked := strings.HasPrefix(r[j], "**")
						require.Equal(t, !alike && means[i] == lo, marked, "rows %d–%d, column %d, row %d\n%s", start, start+tc.rows, j, i, md)
						someMarked = someMarked || marked
					}
				}
			}
			require.True(t, someMarked, "no best marked anywhere: the test cannot tell marking from none\n%s", md)
			csv := mustReadString(t, filepath.Join(dir, "table.csv"))
			require.NotContains(t, csv, "*")
			require.Regexp(t, `\n[^\n]*,\d+\.\d{4},\d+\.\d{4},`, csv)
			tex, err := os.ReadFile(filepath.Join(dir, "table.tex"))
			require.NoError(t, err)
			require.Contains(t, string(tex), `\textbf{`)
		})
	}
}
