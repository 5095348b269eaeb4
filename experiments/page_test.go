package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/rundir"
)

// A spec run's page shows its table, every figure it drew and its files,
// with the provenance of run.json; it changes with the figures.
func TestRunPage(t *testing.T) {
	text := strings.Replace(smallSpec, "table: normalized\n", "table: normalized\nfigures: [normalized]\n"+
		"sweep_figures:\n  - {x: hold, from: normalized, y: [makespan_s]}\n", 1)
	s := loadSmall(t, text)
	dir := filepath.Join(t.TempDir(), "small")
	_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, page.Name))
	require.NoError(t, err)
	md := string(b)
	tests := []struct{ name, want string }{
		{"title", "# Small test\n"},
		{"what ran", "Spec `small`: 12 cells on a100-40gb:2; traces philly-8-s1, venus-8-s2; configs Exclusive, AEGIS; swept hold; seeds 1, 2. Normalized to Exclusive."},
		{"the table as written", "## Table\n\n" + mustReadString(t, filepath.Join(dir, "table.md"))},
		{"figures", "## Figures\n\n![normalized](normalized.svg)\n\n`normalized.svg`: makespan and mean JCT normalized to the baseline config, per trace and their geometric mean, p95 as diamonds (the paper's Figure 3)\n\n" +
			"![sweep-hold](sweep-hold.svg)\n\n`sweep-hold.svg`: metrics against the swept hold, one line per trace and config with 95 % CI bands over the seeds\n\n"},
		{"files", "- [cells.csv](cells.csv): one row per cell"},
		{"spec hash", "| spec | `small` from `small.yaml`, sha256 `" + s.Hash() + "` |"},
		{"generated traces", "| trace philly-8-s1 | generated: like philly, 8 jobs, seed 1, max 2 GPUs, 8 jobs, sha256 `"},
		{"swept", "| swept | hold |"},
		{"the spec", "```yaml\n" + text + "```\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { require.Contains(t, md, tc.want) })
	}
	var want []string
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() != page.Name {
			want = append(want, e.Name())
		}
	}
	got := page.Links(b)
	for i, l := range got {
		got[i] = strings.TrimSuffix(l, "/")
	}
	require.ElementsMatch(t, want, got, "every entry linked once")
	// Redrawn as PNG (aegis plot): the page lists the PNG, not the SVG.
	require.NoError(t, os.Rename(filepath.Join(dir, "normalized.svg"), filepath.Join(dir, "normalized.png")))
	require.NoError(t, WritePage(dir))
	b, err = os.ReadFile(filepath.Join(dir, page.Name))
	require.NoError(t, err)
	require.Contains(t, string(b), "![normalized](normalized.png)")
	require.NotContains(t, string(b), "normalized.svg")
}

// A run under model_uncertainty names its refit set on its page: the
// file, its content hash (of the file on disk, computed here) and N.
func TestRunPageRefits(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "models", "data", "refits_a100.yaml"))
	require.NoError(t, err)
	sum := sha256.Sum256(raw)
	tests := []struct {
		name, extra, want string
	}{
		{"two refits", "model_uncertainty: {refits: 2}\n",
			"| model refits (model_uncertainty) | `models/data/refits_a100.yaml` (sha256 `" + hex.EncodeToString(sum[:]) + "`, resampling seed 1): N = 2, refits 1–2; every cell also ran under each (their interference sha256: run.json) |"},
		{"none", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := loadSmall(t, smallSpec+tc.extra)
			dir := filepath.Join(t.TempDir(), "small")
			_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
			require.NoError(t, err)
			md := mustReadString(t, filepath.Join(dir, page.Name))
			if tc.want == "" {
				require.NotContains(t, md, "model refits")
				return
			}
			require.Contains(t, md, tc.want)
			m, err := ReadMeta(dir)
			require.NoError(t, err)
			m.Refits.FileSHA256 = "" // a run.json from before it was recorded
			require.Contains(t, string(mustRender(t, dir, m)), "(sha256 not recorded, resampling seed 1): N = 2")
		})
	}
}

func mustRender(t *testing.T, dir string, m *Meta) []byte {
	t.Helper()
	b, err := page.Render(dir, m.Page())
	require.NoError(t, err)
	return b
}

// A shard's directory gets a page naming it a shard.
func TestShardPage(t *testing.T) {
	s := loadSmall(t, smallSpec)
	dir := t.TempDir()
	_, err := RunPlan(context.Background(), s, RunOptions{Out: dir, Shard: 1, Shards: 2})
	require.NoError(t, err)
	md := mustReadString(t, filepath.Join(dir, page.Name))
	require.Contains(t, md, "This is shard 1/2 of the run")
	require.Equal(t, []string{"cells/", "run.json"}, page.Links([]byte(md)))
}

// TestPaperPagesCurrent renders the page of every results/paper run from
// its committed files and compares it with the committed README.md.
func TestPaperPagesCurrent(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "results", "paper", "*", rundir.RunFile))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, err := ReadMeta(dir)
			require.NoError(t, err)
			got, err := page.Render(dir, m.Page())
			require.NoError(t, err)
			want := mustReadString(t, filepath.Join(dir, page.Name))
			require.Equal(t, want, string(got), "results/paper is out of date: run make reproduce")
		})
	}
}

// TestPaperPageLinks follows every link of every page under results/paper:
// each is relative and its target exists in the repository.
func TestPaperPageLinks(t *testing.T) {
	root := filepath.Join("..", "results", "paper")
	n := 0
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != page.Name {
			return err
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		n += len(page.Links(b))
		require.Empty(t, page.Broken(filepath.Dir(p), b), "%s: links that are not relative or do not resolve", p)
		return nil
	}))
	require.Greater(t, n, 40, "the pages link their files")
}

// The index of a folder of runs links each run's page and spec file, shows
// its table or first figure, the reports present, and whether each spec
// still makes its run.
func TestIndex(t *testing.T) {
	shared := t.TempDir() // no calibration/: the shared data folder is absent
	stacking, err := filepath.Abs(filepath.Join("..", "results", "paper", "figure7", rundir.RunFile))
	require.NoError(t, err)
	fig7, err := filepath.Abs("figure7.yaml")
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	require.NoError(t, os.MkdirAll("specs", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("specs", "small.yaml"), []byte(smallSpec), 0o644))
	fig := strings.Replace(smallSpec, "name: small\ndescription: Small test", "name: fig\ndescription: A figure", 1)
	fig = strings.Replace(fig, "table: normalized\n", "figures: [normalized]\n", 1)
	require.NoError(t, os.WriteFile(filepath.Join("specs", "fig.yaml"), []byte(fig), 0o644))
	for _, n := range []string{"small", "fig"} {
		s, err := LoadPlan(filepath.Join("specs", n+".yaml"))
		require.NoError(t, err)
		_, err = RunPlan(context.Background(), s, RunOptions{Out: filepath.Join("out", n)})
		require.NoError(t, err)
	}
	require.NoError(t, WriteIndex("out"))
	first := mustReadString(t, filepath.Join("out", page.Name))
	tests := []struct {
		name    string
		change  func(t *testing.T)
		want    []string
		notWant []string
	}{
		{"runs, tables first", func(*testing.T) {}, []string{
			"| [small](small/README.md) | Small test | [specs/small.yaml](../specs/small.yaml) | 12 | 1, 2 |\n| [fig](fig/README.md) | A figure |",
			"## [Small test](small/README.md)\n\nSpec [specs/small.yaml](../specs/small.yaml); 12 cells on a100-40gb:2.\n\n| Config |",
			"[![normalized](fig/normalized.svg)](fig/README.md)",
		}, []string{"fidelity.md", "Out of date", "### "}},
		{"a report", func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join("out", "fidelity.md"), nil, 0o644))
		}, []string{"- [fidelity.md](fidelity.md): every value the AEGIS paper prints"}, nil},
		{"a changed spec", func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join("specs", "fig.yaml"), []byte(fig+"# edited\n"), 0o644))
		}, []string{"a100-40gb:2. **Out of date:** its spec changed since this run; rerun it.\n\n[![normalized]"}, nil},
		{"a spec that needs the shared data folder", func(t *testing.T) {
			t.Setenv("AEGIS_SHARED", shared)
			b, err := os.ReadFile(stacking)
			require.NoError(t, err)
			b = []byte(strings.Replace(string(b), `"spec_file": "experiments/figure7.yaml"`, `"spec_file": "specs/figure7.yaml"`, 1))
			require.NoError(t, os.MkdirAll(filepath.Join("out", "figure7"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join("out", "figure7", rundir.RunFile), b, 0o644))
			y, err := os.ReadFile(fig7)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join("specs", "figure7.yaml"), y, 0o644))
		}, []string{"600 cells on a100-40gb:1.\n"}, []string{"Not rerun"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.change(t)
			require.NoError(t, WriteIndex("out"))
			md, err := os.ReadFile(filepath.Join("out", page.Name))
			require.NoError(t, err)
			for _, w := range tc.want {
				require.Contains(t, string(md), w)
			}
			for _, w := range tc.notWant {
				require.NotContains(t, string(md), w)
			}
			require.Empty(t, page.Broken("out", md))
		})
	}
	require.NoError(t, os.RemoveAll(filepath.Join("out", "figure7")))
	require.NoError(t, os.Remove(filepath.Join("out", "fidelity.md")))
	require.NoError(t, os.WriteFile(filepath.Join("specs", "fig.yaml"), []byte(fig), 0o644))
	require.NoError(t, WriteIndex("out"))
	require.Equal(t, first, mustReadString(t, filepath.Join("out", page.Name)), "the same runs, the same bytes")
}

// TestPaperIndexCurrent renders results/paper's index from the repository
// root, as make reproduce does, and compares it with the committed one.
// The index does not depend on the shared data folder: with or without it
// the bytes are the same.
func TestPaperIndexCurrent(t *testing.T) {
	t.Chdir("..")
	want := mustReadString(t, filepath.Join("results", "paper", page.Name))
	got, err := RenderIndex(filepath.Join("results", "paper"))
	require.NoError(t, err)
	require.Equal(t, want, string(got), "results/paper/README.md is out of date: run make reproduce")
	t.Setenv("AEGIS_SHARED", t.TempDir()) // no calibration/: absent
	got, err = RenderIndex(filepath.Join("results", "paper"))
	require.NoError(t, err)
	require.Equal(t, want, string(got), "rendered without the shared data folder")
}
