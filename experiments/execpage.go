package experiments

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/traces"
)

// NewExecMeta describes a run started on trace tr (nil: a live queue)
// read from source, on the GPUs gpus describes (emulated: srv, else nil),
// with the journaled settings.
func NewExecMeta(tr *traces.Trace, source, gpus string, srv *models.Server, settings map[string]string) (*rundir.ExecMeta, error) {
	m := &rundir.ExecMeta{Tool: ToolInfo(), GPUs: gpus, Emulated: srv != nil, Settings: settings,
		Trace: rundir.TraceInfo{Name: source, Source: source}}
	m.Tool.Build = buildID()
	if tr != nil {
		var err error
		if m.Trace, err = traceInfoOf(tr, source); err != nil {
			return nil, err
		}
	}
	if srv != nil {
		tc, err := typeContentOf(srv.Type)
		if err != nil {
			return nil, err
		}
		m.Types = []rundir.ClusterType{{Type: srv.Type.Name, GPUs: srv.GPUs, MemoryMiB: srv.Type.MemoryMiB, Pressure: srv.Type.Pressure,
			Catalog: tc.Catalog, Interference: tc.Interference}}
	}
	return m, nil
}

// ResumedExecMeta is the exec.json of a run that dir's earlier executor
// started, for the resume that ends it now: the earlier exec.json's trace
// with one more resume and this build, or, when the earlier executor
// never ended (kill -9), fresh (NewExecMeta without the trace's content).
func ResumedExecMeta(dir, gpus string, srv *models.Server, settings map[string]string) (*rundir.ExecMeta, error) {
	now, err := NewExecMeta(nil, settings["trace"], gpus, srv, settings)
	if err != nil {
		return nil, err
	}
	old, err := rundir.ReadExec(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return now, nil
	}
	if err != nil {
		return nil, err
	}
	now.Trace, now.Resumes = old.Trace, old.Resumes+1
	return now, nil
}

// WriteExecPage writes the page of an aegis exec run directory that has no
// exec.json (made before aegis exec wrote one) from its journal's
// settings: the build that ran it and the trace's content are unknown, and
// no exec.json is written, since this build did not run it.
func WriteExecPage(dir, gpus string, srv *models.Server, settings map[string]string) error {
	m, err := NewExecMeta(nil, settings["trace"], gpus, srv, settings)
	if err != nil {
		return err
	}
	m.Tool = rundir.Tool{}
	return writeExecPage(dir, m)
}

// WriteExec writes m as dir's exec.json and the page, each atomically (a
// run directory is also the run's resume state: a reader never sees half a
// file).
func WriteExec(dir string, m *rundir.ExecMeta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	err = results.WriteFile(filepath.Join(dir, rundir.ExecFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	return writeExecPage(dir, m)
}

// execDescriptions describe the files only a run directory holds.
var execDescriptions = map[string]string{
	"journal.jsonl": "the executor's journal: every event and action, fsync'd before it takes effect; `aegis exec --resume` replays it",
	"lock":          "the run directory's lock: the process id of the executor that last held it",
	"logs":          "each attempt's standard output and error (jobN.A.out, jobN.A.err)",
	"attempts":      "each attempt's exit status, written by the attempt shim",
	rundir.ExecFile: "provenance: tool and build, trace, GPUs, the run's settings and its resumes",
}

// writeExecPage writes the page of a run directory: whether the run is
// complete, what ran, its summary, figures, files and provenance.
func writeExecPage(dir string, m *rundir.ExecMeta) error {
	st := m.Settings
	p := page.Page{Title: fmt.Sprintf("aegis exec: trace %s under %s on %s", m.Trace.Name, st["policy"], m.GPUs),
		Rewritten: "the end of an `aegis exec --resume`, or `aegis plot`,",
		Describe: func(n string) string {
			if d, ok := execDescriptions[n]; ok {
				return d
			}
			return page.Descriptions[n]
		}}
	status, err := execStatus(filepath.Join(dir, rundir.Summary))
	if err != nil {
		return err
	}
	procs := "the workloads' commands (" + cmp.Or(st["workloads"], "?") + ") on real GPUs"
	if m.Emulated {
		procs = "`aegis fake-train` processes on GPUs the simulator's truth models"
	}
	p.Intro = append(p.Intro, status, fmt.Sprintf("Trace %s replayed by the executor on %s under policy %s at speedup %s: %s, scheduled by the policy code the simulator runs.",
		m.Trace.Name, m.GPUs, st["policy"], st["speedup"], procs))
	sum, err := summaryTable(filepath.Join(dir, rundir.Summary))
	if err != nil {
		return err
	}
	p.Intro = append(p.Intro, sum...)
	p.Provenance = execProvenance(m)
	p.Notes = append(p.Notes, "`aegis exec --resume DIR` continues an interrupted run with the journaled settings (and rewrites this page); `aegis plot DIR` draws the figures; `aegis compare DIR OTHER` sets another run (an `aegis simulate --out` of the same trace, say) beside it. See docs/executor.md.")
	return page.Write(dir, p)
}

// execStatus is the page's first paragraph: complete or not, from
// summary.csv's job counts (none yet: the run has not ended once).
func execStatus(path string) (string, error) {
	recs, err := readRow(path)
	if err != nil {
		return "", err
	}
	if recs == nil {
		return "**Incomplete**: no summary.csv yet (the run has not ended once); `aegis exec --resume DIR` continues it.", nil
	}
	n := map[string]int{}
	for _, k := range []string{"jobs", "finished", "stopped"} {
		i := slices.Index(recs[0], k)
		if i < 0 {
			return "", fmt.Errorf("%s: no column %s", path, k)
		}
		if n[k], err = strconv.Atoi(recs[1][i]); err != nil {
			return "", fmt.Errorf("%s: %s: %w", path, k, err)
		}
	}
	if done := n["finished"] + n["stopped"]; done < n["jobs"] {
		return fmt.Sprintf("**Incomplete**: %d of %d jobs ended (%d finished, %d stopped) when the run stopped (interrupted, or its directory failed); the tables and figures are of the run so far. `aegis exec --resume DIR` continues it and rewrites this page.",
			done, n["jobs"], n["finished"], n["stopped"]), nil
	}
	return fmt.Sprintf("Complete: all %d jobs ended (%d finished, %d stopped).", n["jobs"], n["finished"], n["stopped"]), nil
}

// execProvenance lists what made the run.
func execProvenance(m *rundir.ExecMeta) [][2]string {
	st := m.Settings
	tr := fmt.Sprintf("%s, %d jobs, sha256 `%s`", m.Trace.Source, m.Trace.Jobs, m.Trace.SHA256)
	switch {
	case st["trace"] == "-":
		tr = "job lines read from standard input during the run (a live queue)"
	case m.Trace.SHA256 == "" && m.Tool == (rundir.Tool{}):
		tr = m.Trace.Source + ", content not recorded"
	case m.Trace.SHA256 == "":
		tr = m.Trace.Source + ", content unknown (the run's first executor did not end)"
	}
	rows := [][2]string{{"aegis", m.Tool.Line() + " (the build that last ended the run)"}, {"Go", m.Tool.GoVersion}}
	if m.Tool == (rundir.Tool{}) {
		rows = [][2]string{{"aegis", "not recorded: the run directory has no exec.json (this page is from its journal's settings)"}}
	}
	rows = append(rows, [2]string{"trace", tr}, [2]string{"GPUs", m.GPUs})
	for _, t := range m.Types {
		rows = append(rows, [2]string{"GPU type " + t.Type, fmt.Sprintf("%d emulated GPUs, %.0f MiB, catalog sha256 `%s`, interference sha256 `%s`",
			t.GPUs, t.MemoryMiB, t.Catalog, t.Interference)})
	}
	rows = append(rows, [2]string{"policy", st["policy"]}, [2]string{"parameters", settings(lines(st["set"]))})
	if m.Emulated {
		rows = append(rows, [2]string{"truth settings", settings(lines(st["truth"]))}, [2]string{"seed", st["seed"]})
	} else {
		rows = append(rows, [2]string{"workloads", st["workloads"]}, [2]string{"GPU type (catalog)", st["gpu_type"]},
			[2]string{"telemetry", st["telemetry"]}, [2]string{"GPU indices", cmp.Or(st["gpus"], "all")},
			[2]string{"MPS pipe directory", cmp.Or(st["mps_pipe_dir"], "none")})
	}
	return append(rows, [2]string{"speedup", st["speedup"]}, [2]string{"grace", st["grace"]},
		[2]string{"resumes", strconv.Itoa(m.Resumes)})
}

// lines turns journaled key=value lines into a map.
func lines(s string) map[string]string {
	kv := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			kv[k] = v
		}
	}
	return kv
}
