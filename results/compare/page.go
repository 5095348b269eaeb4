package compare

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aegis-sched/aegis/internal/buildinfo"
	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/rundir"
)

// provenanceFiles are the files that say what made a results directory,
// by the command that writes them.
var provenanceFiles = []struct{ name, what string }{
	{rundir.RunFile, "aegis run"},
	{rundir.SimulateFile, "aegis simulate --out"},
	{rundir.ExecFile, "aegis exec"},
}

// descriptions describe the files aegis compare --out writes.
var descriptions = map[string]string{
	"compare.md":  "the table in Markdown (above)",
	"compare.csv": "the table's values in CSV",
	"compare.tex": "the table in LaTeX",
}

// WritePage writes the README.md page of out, the directory aegis compare
// --out wrote the comparison of dirs (by metrics; none: DefaultMetrics)
// into: the sides and the directories compared (linked relative to out),
// the deltas table, the overlaid CDFs, the files and the provenance (each
// directory's provenance file and its sha256).
func (res *Result) WritePage(out string, dirs, metrics []string) error {
	if len(metrics) == 0 {
		metrics = res.Metrics
	}
	p := page.Page{Title: "aegis compare: " + strings.Join(res.Sides[1:], ", ") + " vs " + res.Sides[0],
		Describe:  func(n string) string { return descriptions[n] },
		Rewritten: "`aegis compare " + strings.Repeat("DIR ", len(dirs)) + "--out` again"}
	var links []string
	for _, d := range dirs {
		l, err := dirLink(out, d)
		if err != nil {
			return err
		}
		links = append(links, l)
	}
	p.Intro = append(p.Intro, fmt.Sprintf("Sides: %s (the reference), then %s. Compared: %s. Runs pair by trace and seed, jobs by id; each other side's difference to the reference comes with its 95 %% CI and p-value (the table's note says which test).",
		res.Sides[0], strings.Join(res.Sides[1:], ", "), strings.Join(links, ", ")))
	var t bytes.Buffer
	if err := res.Table().WriteMarkdown(&t); err != nil {
		return err
	}
	p.Intro = append(p.Intro, "## Deltas", strings.TrimRight(t.String(), "\n"))
	in := buildinfo.Read()
	p.Provenance = [][2]string{{"aegis", fmt.Sprintf("%s %s, commit `%s`", in.Module, in.Version, cmp.Or(in.Commit, "unknown"))},
		{"Go", in.GoVersion}, {"metrics", strings.Join(metrics, ", ") + ", and the jobs' JCT / solo runtime"}}
	for i, d := range dirs {
		what := "reference"
		if i > 0 {
			what = fmt.Sprintf("side %d", i+1)
		}
		if len(dirs) == 1 {
			what = "its configurations are the sides"
		}
		prov, err := provenance(d)
		if err != nil {
			return err
		}
		p.Provenance = append(p.Provenance, [2]string{"directory " + links[i], what + "; " + prov})
	}
	p.Notes = append(p.Notes, "What each column and test means: docs/plots.md, Comparing runs.")
	return page.Write(out, p)
}

// dirLink is a Markdown link from out to directory d: to its page when it
// has one, else to the directory; d's path when there is no relative one.
func dirLink(out, d string) (string, error) {
	ao, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	ad, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(ao, ad)
	if err != nil {
		return "`" + d + "`", nil
	}
	rel = filepath.ToSlash(rel)
	target := rel + "/"
	if _, err := os.Stat(filepath.Join(d, page.Name)); err == nil {
		target = rel + "/" + page.Name
	}
	return fmt.Sprintf("[%s](%s)", page.Text(rel), page.Link(target)), nil
}

// provenance names what made directory d: its provenance file and that
// file's sha256.
func provenance(d string) (string, error) {
	for _, f := range provenanceFiles {
		b, err := os.ReadFile(filepath.Join(d, f.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("compare: %w", err)
		}
		h := sha256.Sum256(b)
		return fmt.Sprintf("%s, %s sha256 `%s`", f.what, f.name, hex.EncodeToString(h[:])), nil
	}
	return "no provenance file (run.json, simulate.json or exec.json)", nil
}
