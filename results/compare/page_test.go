package compare

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/results/page"
)

// The page of aegis compare --out: the sides, the compared directories
// linked (to their page when they have one), the deltas table with CIs and
// p-values, the overlaid CDFs, the files and each directory's provenance
// file's hash; every link resolves.
func TestWritePage(t *testing.T) {
	two := run{configs: []string{"AEGIS", "Lucid"}, seeds: seeds(3), value: base, job: baseJob}
	a := run{configs: []string{"AEGIS"}, seeds: seeds(3), value: base, job: baseJob}.write(t, "A")
	b := run{configs: []string{"AEGIS"}, seeds: seeds(3), value: func(c string, s int) float64 { return 1.1 * base(c, s) },
		job: func(c string, s, j int) float64 { return 1.1 * baseJob(c, s, j) }}.write(t, "B")
	prov := []byte(`{"spec": "x"}` + "\n")
	require.NoError(t, os.WriteFile(filepath.Join(a, "run.json"), prov, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(a, page.Name), []byte("# A\n"), 0o644))
	sum := sha256.Sum256(prov)
	tests := []struct {
		name string
		dirs []string
		want []string
		not  []string
	}{
		{"two directories", []string{a, b}, []string{
			"# aegis compare: B vs A\n",
			"Sides: A (the reference), then B.",
			"## Deltas\n\n### B vs A\n\n| Trace | Metric | n | A | B | Δ B | Δ % B | p B | test |",
			"| p | makespan (h) | 3 seeds | ",
			"| p | JCT / solo runtime, per job | 120 jobs | ",
			"Wilcoxon",
			"![compare-cdf](compare-cdf.svg)",
			"- [compare.csv](compare.csv): the table's values in CSV",
			"/A/README.md) | reference; aegis run, run.json sha256 `" + hex.EncodeToString(sum[:]) + "` |",
			"/B/) | side 2; no provenance file (run.json, simulate.json or exec.json) |",
			"| metrics | makespan_s, and the jobs' JCT / solo runtime |",
			"(`aegis compare DIR DIR --out` again rewrites it)",
		}, nil},
		{"one directory, its configurations", []string{two.write(t, "two")}, []string{
			"# aegis compare: Lucid vs AEGIS\n", "Sides: AEGIS (the reference), then Lucid.", "| its configurations are the sides; no provenance file",
		}, []string{"side 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Dirs(tc.dirs, []string{"makespan_s"})
			require.NoError(t, err)
			out := filepath.Join(t.TempDir(), "cmp")
			require.NoError(t, os.MkdirAll(out, 0o755))
			for _, f := range []string{"compare.md", "compare.csv", "compare.tex", "compare-cdf.svg"} {
				require.NoError(t, os.WriteFile(filepath.Join(out, f), []byte("x\n"), 0o644))
			}
			require.NoError(t, res.WritePage(out, tc.dirs, []string{"makespan_s"}))
			b, err := os.ReadFile(filepath.Join(out, page.Name))
			require.NoError(t, err)
			md := string(b)
			for _, w := range tc.want {
				require.Contains(t, md, w)
			}
			for _, w := range tc.not {
				require.NotContains(t, md, w)
			}
			require.Empty(t, page.Broken(out, b))
			n := 0
			for _, l := range page.Links(b) {
				if strings.HasPrefix(l, "..") {
					n++
				}
			}
			require.Equal(t, 2*len(tc.dirs), n, "each directory linked in the intro and the provenance")
		})
	}
}
