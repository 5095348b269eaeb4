// Package page writes the README.md page of a results directory: its title,
// its table (table.md, embedded as written), every figure present as a
// relative image link, links to its other files and its provenance, in
// Markdown that renders on any Git host. A page depends only on what it is
// given and on the directory's entries, never on the clock or the
// directory's path, so the same run gives the same bytes.
package page

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/aegis-sched/aegis/internal/atomicfile"
	"github.com/aegis-sched/aegis/results/rundir"
)

// Name is the page's file name.
const Name = "README.md"

// Page is what a page says beyond the directory's entries.
type Page struct {
	// Title is the page's heading.
	Title string
	// Intro holds paragraphs under the title.
	Intro []string
	// Provenance rows (what, value) are the page's last table.
	Provenance [][2]string
	// Notes are paragraphs after the provenance table.
	Notes []string
	// Rewritten says what writes the page again, after "do not edit";
	// "" says a rerun or aegis plot.
	Rewritten string
	// Spec, when set, is shown folded at the end as YAML.
	Spec string
	// Describe gives an entry's description in the file list ("" for
	// none); nil uses the built-in descriptions (Descriptions).
	Describe func(name string) string
}

// Descriptions describe the files aegis writes into results directories.
var Descriptions = map[string]string{
	rundir.Cells:        "one row per cell: its labels, swept values and summary metrics",
	rundir.Jobs:         "one row per job (per cell in a spec run)",
	rundir.Normalized:   "each metric divided by the normalizing config's, per trace, seed and sweep point, and the geometric mean over traces",
	"table.md":          "the table in Markdown (above)",
	"table.csv":         "the table's values in CSV",
	"table.tex":         "the table in LaTeX",
	"refits.csv":        "the table under every speed model: the calibrated one (model 0) and each bootstrap refit (model_uncertainty)",
	rundir.Thresholds:   "the threshold sweep's points over the stacking sequences",
	rundir.Stability:    "window stability per hold and window",
	rundir.RunFile:      "provenance: tool and build, the spec and its hash, traces, server, models, every cell's settings and key",
	rundir.Summary:      "the run's summary metrics",
	rundir.Deferrals:    "the policy's deferrals by reason",
	rundir.Events:       "every scheduling event, one JSON object a line",
	rundir.Telemetry:    "every GPU's 1 Hz telemetry sample and its power_w (what the energy meter charges for the second)",
	rundir.SimulateFile: "provenance: tool and build, trace, server, policy, parameters, truth settings and seed",
	"fidelity.md":       "the paper's printed values beside ours",
	"cells":             "each cell's outputs (cells/ID/: what aegis simulate --out writes, and cell.json)",
}

// figureCaptions say what aegis plot's figures show, by file name stem.
var figureCaptions = map[string]string{
	"normalized":  "makespan and mean JCT normalized to the baseline config, per trace and their geometric mean, p95 as diamonds (the paper's Figure 3)",
	"jct-cdf":     "per-job JCT / solo time and absolute JCT CDFs, per trace (Figure 4)",
	"queue-exec":  "queueing and execution time normalized to the baseline, per trace, p95 as diamonds (Figure 5)",
	"stability":   "window stability: each signal's weighted mean absolute error against the window length (Figure 6)",
	"thresholds":  "the pressure-threshold sweep: throughput gain, slowdown and deferrals against each threshold, the others at the default, knee and default marked (Figure 7)",
	"seeds-cdf":   "makespan and mean JCT over the seeds: means with 95 % CIs and a ring per seed (equal seeds one ring)",
	"timeline":    "one run's GPUs over time: the jobs on each, and with telemetry its memory and SM activity",
	"compare-cdf": "each side's per-job JCT / solo runtime CDF overlaid, a panel per trace (and configuration)",
}

// Caption says what the figure of file name stem (no extension) shows:
// aegis plot's figures by name, a sweep figure (sweep-X) by its axis; ""
// for another.
func Caption(stem string) string {
	if c, ok := figureCaptions[stem]; ok {
		return c
	}
	if x, ok := strings.CutPrefix(stem, "sweep-"); ok {
		return "metrics against the swept " + x + ", one line per trace and config with 95 % CI bands over the seeds"
	}
	return ""
}

// Render returns dir's page: p's title and intro, the table (table.md as
// written), the figures (SVG and PNG files, by name), the other entries
// (linked, with their descriptions), the provenance and the spec. Entries
// that a .gitignore in dir or its parent names (a plain name or glob
// matched against the entry's name) are left out, so that the page lists
// what is kept beside it; hidden entries and the page itself too.
func Render(dir string, p Page) ([]byte, error) {
	ents, err := entries(dir)
	if err != nil {
		return nil, err
	}
	describe := p.Describe
	if describe == nil {
		describe = func(n string) string { return Descriptions[n] }
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", oneLine(p.Title))
	fmt.Fprintf(&b, "Generated by aegis with this directory's files; do not edit (%s rewrites it).\n\n", cmp.Or(p.Rewritten, "a rerun or `aegis plot`"))
	for _, s := range p.Intro {
		b.WriteString(s + "\n\n")
	}
	var figs, files []entry
	for _, e := range ents {
		if !e.dir && isFigure(e.name) {
			figs = append(figs, e)
		} else {
			files = append(files, e)
		}
	}
	if slices.ContainsFunc(files, func(e entry) bool { return e.name == "table.md" && !e.dir }) {
		t, err := os.ReadFile(filepath.Join(dir, "table.md"))
		if err != nil {
			return nil, err
		}
		b.WriteString("## Table\n\n")
		b.Write(bytes.TrimRight(t, "\n"))
		b.WriteString("\n\n")
	}
	if len(figs) > 0 {
		b.WriteString("## Figures\n\n")
		writeFigures(&b, figs)
	}
	if len(files) > 0 {
		b.WriteString("## Files\n\n")
		for _, f := range files {
			name, target := f.name, Link(f.name)
			if f.dir {
				name, target = name+"/", target+"/"
			}
			fmt.Fprintf(&b, "- [%s](%s)", Text(name), target)
			if d := describe(f.name); d != "" {
				b.WriteString(": " + d)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	writeProvenance(&b, p)
	return b.Bytes(), nil
}

// writeProvenance writes the provenance table, the notes and the spec.
func writeProvenance(b *bytes.Buffer, p Page) {
	if len(p.Provenance) > 0 {
		b.WriteString("## Provenance\n\n| | |\n|---|---|\n")
		for _, r := range p.Provenance {
			fmt.Fprintf(b, "| %s | %s |\n", cell(r[0]), cell(r[1]))
		}
		b.WriteString("\n")
	}
	for _, s := range p.Notes {
		b.WriteString(s + "\n\n")
	}
	if p.Spec != "" {
		fence := "```"
		for strings.Contains(p.Spec, fence) {
			fence += "`"
		}
		fmt.Fprintf(b, "<details><summary>The spec</summary>\n\n%syaml\n%s\n%s\n\n</details>\n\n",
			fence, strings.TrimRight(p.Spec, "\n"), fence)
	}
	// One trailing newline.
	out := bytes.TrimRight(b.Bytes(), "\n")
	b.Truncate(len(out))
	b.WriteString("\n")
}

// Write renders dir's page (Render) into dir/README.md atomically: a
// hidden temporary file renamed over it, so that a reader (or a run
// directory's next executor) sees the old page or the new one, never part
// of one.
func Write(dir string, p Page) error {
	b, err := Render(dir, p)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, Name), b, atomicfile.Options{}); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// Link is the relative link target of a slash-separated path: each
// segment escaped, so that names with spaces or parentheses still link.
func Link(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// figureExts are the figure formats, in the order a page prefers to show
// one: a PDF is linked, not shown.
var figureExts = []string{".svg", ".png", ".pdf"}

// isFigure reports whether a file is a figure (SVG, PNG or PDF).
func isFigure(name string) bool {
	return slices.Contains(figureExts, strings.ToLower(path.Ext(name)))
}

// writeFigures shows each figure once, by name stem: its SVG, else its
// PNG, with its caption, and links the other formats present (a PDF only is
// linked).
func writeFigures(b *bytes.Buffer, figs []entry) {
	var stems []string
	byStem := map[string][]string{}
	for _, f := range figs {
		stem := strings.TrimSuffix(f.name, path.Ext(f.name))
		if _, ok := byStem[stem]; !ok {
			stems = append(stems, stem)
		}
		byStem[stem] = append(byStem[stem], f.name)
	}
	for _, stem := range stems {
		names := byStem[stem]
		slices.SortFunc(names, func(x, y string) int {
			return slices.Index(figureExts, strings.ToLower(path.Ext(x))) - slices.Index(figureExts, strings.ToLower(path.Ext(y)))
		})
		first, others := names[0], names[1:]
		c := Caption(stem)
		switch {
		case strings.EqualFold(path.Ext(first), ".pdf"):
			fmt.Fprintf(b, "[%s](%s)", Text(first), Link(first))
		case c == "" && len(others) == 0:
			fmt.Fprintf(b, "![%s](%s)\n\n", Text(stem), Link(first))
			continue
		default:
			fmt.Fprintf(b, "![%s](%s)\n\n`%s`", Text(stem), Link(first), first)
		}
		if c != "" {
			b.WriteString(": " + c)
		}
		if len(others) > 0 {
			var ls []string
			for _, o := range others {
				ls = append(ls, fmt.Sprintf("[%s](%s)", Text(o), Link(o)))
			}
			b.WriteString("; also " + strings.Join(ls, ", "))
		}
		b.WriteString("\n\n")
	}
}

type entry struct {
	name string
	dir  bool
}

// entries lists dir's entries the page shows, by name.
func entries(dir string) ([]entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	ign, err := ignored(dir)
	if err != nil {
		return nil, err
	}
	var out []entry
	for _, d := range des {
		n := d.Name()
		if n == Name || strings.HasPrefix(n, ".") || ign(n, d.IsDir()) {
			continue
		}
		out = append(out, entry{name: n, dir: d.IsDir()})
	}
	return out, nil
}

// ignored returns whether an entry of dir is named by a .gitignore in dir
// (a pattern with no slash but a leading or trailing one) or in dir's
// parent (a pattern with no slash but a trailing one). Negations and
// patterns with inner slashes are not understood and match nothing.
func ignored(dir string) (func(name string, isDir bool) bool, error) {
	dir = filepath.Clean(dir) // "out/run/"'s parent is out, not out/run
	var pats []string
	for i, f := range []string{filepath.Join(dir, ".gitignore"), filepath.Join(filepath.Dir(dir), ".gitignore")} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("page: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			l := strings.TrimSpace(sc.Text())
			if l == "" || l[0] == '#' || l[0] == '!' {
				continue
			}
			if strings.HasPrefix(l, "/") {
				if i > 0 { // anchored at the parent: names dir's siblings
					continue
				}
				l = l[1:]
			}
			pats = append(pats, l)
		}
	}
	return func(name string, isDir bool) bool {
		for _, p := range pats {
			p, dirOnly := strings.CutSuffix(p, "/")
			if strings.Contains(p, "/") || dirOnly && !isDir {
				continue
			}
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}, nil
}

// oneLine folds s onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell makes s safe in a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// Text escapes the Markdown link-text characters of s.
func Text(s string) string {
	r := strings.NewReplacer(`[`, `\[`, `]`, `\]`, `*`, `\*`, `_`, `\_`, "`", "\\`")
	return r.Replace(s)
}

// Broken returns the links of page md, which lies in dir, that are not
// relative or whose target does not exist.
func Broken(dir string, md []byte) []string {
	var out []string
	for _, l := range Links(md) {
		if filepath.IsAbs(l) || strings.Contains(l, ":") {
			out = append(out, l)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(l))); err != nil {
			out = append(out, l)
		}
	}
	return out
}

// linkRE matches a Markdown link or image target and an HTML src or href.
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)|(?:src|href)="([^"]+)"`)

// Links returns the targets of a page's links and images, unescaped, in
// order; a target that does not unescape is returned as written.
func Links(md []byte) []string {
	var out []string
	for _, m := range linkRE.FindAllSubmatch(md, -1) {
		t := string(m[1]) + string(m[2])
		if u, err := url.PathUnescape(t); err == nil {
			t = u
		}
		out = append(out, t)
	}
	return out
}
