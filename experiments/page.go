package experiments

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/results/page"
)

// WritePage writes the README.md page of a spec run's directory dir from
// its run.json and the files present (results/page): the spec's title,
// table and figures, links to the files and the provenance. aegis run,
// aegis merge and aegis plot call it whenever they write dir.
func WritePage(dir string) error {
	m, err := ReadMeta(dir)
	if err != nil {
		return err
	}
	return page.Write(dir, m.Page())
}

// Page is the page of the run m describes.
func (m *Meta) Page() page.Page {
	s := m.Spec
	p := page.Page{Title: cmp.Or(s.Description, s.Name), Spec: m.SpecText}
	p.Intro = append(p.Intro, m.summary())
	if m.Shard != "" {
		p.Intro = append(p.Intro, "This is shard "+m.Shard+" of the run: its cells and run.json only; `aegis merge` combines the shards into the tables and figures.")
	}
	src := "`" + m.SpecFile + "`"
	if m.SpecFile == "" || strings.Contains(m.SpecFile, " ") { // a quick run's "command line"
		src = "the " + cmp.Or(m.SpecFile, "unnamed") + " (`aegis run --trace ... --policy ...`)"
	}
	p.Provenance = [][2]string{
		{"spec", fmt.Sprintf("`%s` from %s, sha256 `%s`", s.Name, src, m.SpecHash)},
		{"aegis", m.Tool.Line()},
		{"Go", m.Tool.GoVersion},
		{"server", m.serverLine()},
	}
	for _, t := range m.Traces {
		p.Provenance = append(p.Provenance, [2]string{"trace " + t.Name, fmt.Sprintf("%s, %d jobs, sha256 `%s`", t.Source, t.Jobs, t.SHA256)})
	}
	p.Provenance = append(p.Provenance, m.modelRows()...)
	if r := m.Refits; r != nil {
		p.Provenance = append(p.Provenance, [2]string{"model refits (model_uncertainty)", r.line()})
	}
	p.Provenance = append(p.Provenance, [2]string{"seeds", joinSeeds(m.Seeds)})
	if len(m.Sweep) > 0 {
		p.Provenance = append(p.Provenance, [2]string{"swept", strings.Join(m.Sweep, ", ")})
	}
	p.Provenance = append(p.Provenance, [2]string{"cells", strconv.Itoa(len(m.Cells)) + " (each one's settings and key: run.json)"})
	bulk := "`cells/` (each cell's outputs) and `jobs.csv` (every job's row)"
	if s.Stacking != nil {
		bulk = "`cells/` (each cell's outputs)"
	}
	p.Notes = append(p.Notes, "`aegis run SPEC --out DIR` reruns it, reusing every cell whose key is unchanged; it also writes "+bulk+
		", which a folder of kept results may leave out (.gitignore). `aegis plot DIR` redraws the figures.")
	return p
}

// summary is the page's first paragraph: what ran.
func (m *Meta) summary() string {
	s := m.Spec
	var what []string
	for _, t := range m.Traces {
		what = append(what, t.Name)
	}
	kind := "traces"
	if s.Stacking != nil {
		kind = "stacking sequences"
	}
	out := fmt.Sprintf("Spec `%s`: %d cells on %s; %s %s", s.Name, len(m.Cells), cmp.Or(m.Server.Spec, "the server"), kind, strings.Join(what, ", "))
	if len(s.Configs) > 0 {
		var labels []string
		for _, c := range s.Configs {
			labels = append(labels, c.Label)
		}
		out += "; configs " + strings.Join(labels, ", ")
	}
	if len(m.Sweep) > 0 {
		out += "; swept " + strings.Join(m.Sweep, ", ")
	}
	out += "; seeds " + joinSeeds(m.Seeds) + "."
	if s.Normalize != "" {
		out += " Normalized to " + s.Normalize + "."
	}
	return out
}

// serverLine describes the simulated server or cluster.
func (m *Meta) serverLine() string {
	v := m.Server
	tel := "utilization telemetry only"
	if v.Pressure {
		tel = "pressure telemetry"
	}
	out := fmt.Sprintf("%s: %d × %s (%.0f MiB, %s), catalog sha256 `%s`, interference sha256 `%s`",
		v.Spec, v.GPUs, v.Type, v.MemoryMiB, tel, v.Catalog, v.Interference)
	if c := v.Cluster; c != nil {
		var g []string
		for _, x := range c.Groups {
			g = append(g, fmt.Sprintf("%d × %d %s", x.Servers, x.GPUs, x.Type))
		}
		out = fmt.Sprintf("cluster %s: %d servers (%s), first type's catalog sha256 `%s`", v.Spec, c.Servers, strings.Join(g, ", "), v.Catalog)
	}
	return out
}

// modelRows describe the configs' models: one row when every config uses
// the same ones.
func (m *Meta) modelRows() [][2]string {
	line := func(mi ModelInfo) string {
		s := fmt.Sprintf("interference `%s`, catalog `%s`", mi.Interference, mi.Catalog)
		if mi.File != "" {
			s = fmt.Sprintf("file %s (sha256 `%s`), ", mi.File, mi.FileSHA256) + s
		}
		return s
	}
	same := len(m.Models) > 0
	for _, mi := range m.Models {
		same = same && line(mi) == line(m.Models[0])
	}
	if same && len(m.Models) > 1 {
		return [][2]string{{"models (every config)", line(m.Models[0])}}
	}
	var rows [][2]string
	for _, mi := range m.Models {
		rows = append(rows, [2]string{"models of " + mi.Config, line(mi)})
	}
	return rows
}

// line describes the refit set on a page: which file, its content hash,
// how many refits ran.
func (r *RefitInfo) line() string {
	h := "sha256 not recorded"
	if r.FileSHA256 != "" {
		h = "sha256 `" + r.FileSHA256 + "`"
	}
	n := len(r.Models)
	return fmt.Sprintf("`%s` (%s, resampling seed %d): N = %d, refits 1–%d; every cell also ran under each (their interference sha256: run.json)",
		r.Source, h, r.Seed, n, n)
}

// joinSeeds lists seeds, runs of consecutive ones as ranges (1–5).
func joinSeeds(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, fmt.Sprintf("%d–%d", seeds[i], seeds[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.FormatUint(seeds[k], 10))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
