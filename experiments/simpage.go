package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
	"github.com/aegis-sched/aegis/traces"
)

// NewSimulateMeta describes run r (trace given as source, truth settings
// as given) for simulate.json.
func NewSimulateMeta(r assemble.Run, source string, truth map[string]string) (*rundir.SimulateMeta, error) {
	ti, err := traceInfoOf(r.Trace, source)
	if err != nil {
		return nil, err
	}
	m := &rundir.SimulateMeta{Tool: ToolInfo(), Trace: ti,
		Server: r.Server.String(), Policy: r.Policy, Params: r.Params, Truth: truth, Seed: r.Seed}
	m.Tool.Build = buildID()
	gpus := map[string]int{}
	types := []models.GPUType{r.Server.Type}
	gpus[r.Server.Type.Name] = r.Server.GPUs
	if c := r.Cluster; c != nil {
		m.Server, types = c.String(), c.Types
		clear(gpus)
		for i, n := range c.Servers {
			gpus[c.Types[c.ServerType[i]].Name] += n
		}
	}
	for _, t := range types {
		tc, err := typeContentOf(t)
		if err != nil {
			return nil, err
		}
		m.Types = append(m.Types, rundir.ClusterType{Type: t.Name, GPUs: gpus[t.Name], MemoryMiB: t.MemoryMiB, Pressure: t.Pressure,
			Catalog: tc.Catalog, Interference: tc.Interference})
	}
	return m, nil
}

// traceInfoOf identifies trace t, read from source (a file or a built-in
// trace's name).
func traceInfoOf(t *traces.Trace, source string) (rundir.TraceInfo, error) {
	th, err := traceHash(t)
	if err != nil {
		return rundir.TraceInfo{}, err
	}
	ti := rundir.TraceInfo{Name: t.Name, Source: dataName(source), Jobs: len(t.Jobs), SHA256: th}
	if _, err := os.Stat(source); err != nil { // a built-in trace's name
		ti.Source = source
	} else if t.Name == source { // a file's trace is named by its path
		ti.Name = ti.Source
	}
	return ti, nil
}

// WriteSimulate writes m as dir's simulate.json and the page.
func WriteSimulate(dir string, m *rundir.SimulateMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.SimulateFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return writeSimulatePage(dir, m)
}

// WriteDirPage writes the README.md page of a results directory: a spec
// run's (run.json, WritePage), an aegis simulate --out one's
// (simulate.json) or an aegis exec run directory's (exec.json); a
// directory with none of them gets none.
func WriteDirPage(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err == nil {
		return WritePage(dir)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ExecFile)); err == nil {
		m, err := rundir.ReadExec(dir)
		if err != nil {
			return err
		}
		return writeExecPage(dir, m)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SimulateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var m rundir.SimulateMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, rundir.SimulateFile), err)
	}
	return writeSimulatePage(dir, &m)
}

// writeSimulatePage writes the page of a simulate directory: its summary
// (summary.csv, one row per metric), figures, files and provenance.
func writeSimulatePage(dir string, m *rundir.SimulateMeta) error {
	p := page.Page{Title: fmt.Sprintf("aegis simulate: trace %s under %s, seed %d", m.Trace.Name, m.Policy, m.Seed)}
	p.Intro = append(p.Intro, fmt.Sprintf("Trace %s (%d jobs) on %s under policy %s, seed %d. `aegis plot DIR` draws the figures; `aegis compare DIR OTHER` sets another run beside it.",
		m.Trace.Name, m.Trace.Jobs, m.Server, m.Policy, m.Seed))
	sum, err := summaryTable(filepath.Join(dir, rundir.Summary))
	if err != nil {
		return err
	}
	p.Intro = append(p.Intro, sum...)
	p.Provenance = [][2]string{
		{"aegis", m.Tool.Line()},
		{"Go", m.Tool.GoVersion},
		{"trace", fmt.Sprintf("%s, %d jobs, sha256 `%s`", m.Trace.Source, m.Trace.Jobs, m.Trace.SHA256)},
		{"server", m.Server},
	}
	for _, t := range m.Types {
		p.Provenance = append(p.Provenance, [2]string{"GPU type " + t.Type, fmt.Sprintf("%d GPUs, %.0f MiB, catalog sha256 `%s`, interference sha256 `%s`",
			t.GPUs, t.MemoryMiB, t.Catalog, t.Interference)})
	}
	p.Provenance = append(p.Provenance, [2]string{"policy", m.Policy},
		[2]string{"parameters", settings(m.Params)}, [2]string{"truth settings", settings(m.Truth)},
		[2]string{"seed", fmt.Sprint(m.Seed)})
	return page.Write(dir, p)
}

// summaryTable renders summary.csv (a header and one row) as a Markdown
// table of metric and value; none when there is no summary.csv.
func summaryTable(path string) ([]string, error) {
	recs, err := readRow(path)
	if recs == nil || err != nil {
		return nil, err
	}
	var t strings.Builder
	t.WriteString("| metric | value |\n| --- | ---: |")
	for i, k := range recs[0] {
		fmt.Fprintf(&t, "\n| %s | %s |", k, recs[1][i])
	}
	return []string{"## Summary", t.String()}, nil
}

// readRow reads a CSV file of a header and one row of as many fields;
// nil when there is no such file.
func readRow(path string) ([][]string, error) {
	t, err := runfiles.ReadTable(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs := t.Records()
	if len(recs) != 2 || len(recs[0]) != len(recs[1]) {
		return nil, fmt.Errorf("%s: want a header and one row of as many fields", path)
	}
	return recs, nil
}

// settings lists key=value settings by key, or "defaults".
func settings(kv map[string]string) string {
	if len(kv) == 0 {
		return "defaults (`aegis policies` lists them)"
	}
	var out []string
	for _, k := range sortedKeys(kv) {
		out = append(out, "`"+k+"="+kv[k]+"`")
	}
	return strings.Join(out, ", ")
}

// DirGPUs is how many GPUs the run in dir had, from its simulate.json
// (server TYPE:COUNT) or exec.json (emulated TYPE:COUNT, or the --gpus
// list), and the file and value that say so; 0 when dir says not (a
// cluster, a spec run, all of a machine's GPUs, no such file).
func DirGPUs(dir string) (n int, from string) {
	if b, err := os.ReadFile(filepath.Join(dir, rundir.SimulateFile)); err == nil {
		var m rundir.SimulateMeta
		if json.Unmarshal(b, &m) == nil {
			if srv, err := models.ParseServer(m.Server); err == nil {
				return srv.GPUs, rundir.SimulateFile + ": server " + m.Server
			}
		}
		return 0, ""
	}
	m, err := rundir.ReadExec(dir)
	if err != nil {
		return 0, ""
	}
	if e := m.Settings["emulate"]; e != "" {
		if srv, err := models.ParseServer(e); err == nil {
			return srv.GPUs, rundir.ExecFile + ": emulated " + e
		}
	}
	if g := m.Settings["gpus"]; g != "" {
		return strings.Count(g, ",") + 1, rundir.ExecFile + ": GPUs " + g
	}
	return 0, ""
}
