package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/traces"
)

// An aegis exec run directory's page says whether the run is complete
// (from summary.csv's job counts), what ran, its summary, figures, files
// (the executor's own described) and provenance; every link resolves.
func TestExecPage(t *testing.T) {
	const header = "makespan_s,mean_jct_s,jobs,finished,stopped\n"
	emu, err := models.ParseServer("a100-40gb:2")
	require.NoError(t, err)
	tr := &traces.Trace{Name: "tiny", Jobs: []traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1}}}
	real := map[string]string{"trace": "tiny", "policy": "aegis", "speedup": "1", "grace": "10s",
		"workloads": "w.yaml", "gpu_type": "a100-40gb", "telemetry": "nvml", "gpus": "0,1", "set": "hold=30s"}
	tests := []struct {
		name     string
		summary  string // "" for none
		srv      *models.Server
		tr       *traces.Trace
		settings map[string]string
		want     []string
		not      []string
	}{
		{"complete, emulated", header + "10.000,5.000,3,2,1\n", &emu, tr,
			map[string]string{"trace": "tiny", "policy": "aegis", "speedup": "400", "grace": "10s", "seed": "7", "truth": "startup_jitter=0"},
			[]string{"Complete: all 3 jobs ended (2 finished, 1 stopped).", "| makespan_s | 10.000 |", "on emulated a100-40gb:2 under policy aegis at speedup 400: `aegis fake-train`",
				"| GPU type a100-40gb | 2 emulated GPUs, 40960 MiB, catalog sha256 `", "| truth settings | `startup_jitter=0` |", "| seed | 7 |",
				"| trace | tiny, 1 jobs, sha256 `", "- [journal.jsonl](journal.jsonl): the executor's journal", "- [logs/](logs/): each attempt's",
				"- [exec.json](exec.json): provenance", "![jct-cdf](jct-cdf.svg)"},
			[]string{"Incomplete", "workloads"}},
		{"interrupted, real GPUs", header + "1.000,1.000,3,1,0\n", nil, tr, real,
			[]string{"**Incomplete**: 1 of 3 jobs ended (1 finished, 0 stopped)", "`aegis exec --resume DIR` continues it", "the workloads' commands (w.yaml) on real GPUs",
				"| parameters | `hold=30s` |", "| telemetry | nvml |", "| GPU indices | 0,1 |"},
			[]string{"Complete", "truth settings", "GPU type a100-40gb"}},
		{"no summary yet, live queue", "", nil, nil, map[string]string{"trace": "-", "policy": "lucid", "speedup": "1"},
			[]string{"**Incomplete**: no summary.csv yet", "| trace | job lines read from standard input during the run (a live queue) |"},
			[]string{"## Summary"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := mkdirWith(t, "journal.jsonl", "lock", "logs/job0.1.out", "attempts/job0.1.exit", "jobs.csv", "telemetry.csv", "jct-cdf.svg")
			if tc.summary != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.csv"), []byte(tc.summary), 0o644))
			}
			m, err := NewExecMeta(tc.tr, tc.settings["trace"], gpusOf(tc.srv), tc.srv, tc.settings)
			require.NoError(t, err)
			require.NoError(t, WriteExec(dir, m))
			b, err := os.ReadFile(filepath.Join(dir, page.Name))
			require.NoError(t, err)
			for _, w := range tc.want {
				require.Contains(t, string(b), w)
			}
			for _, w := range tc.not {
				require.NotContains(t, string(b), w)
			}
			require.Empty(t, page.Broken(dir, b))
			require.Len(t, page.Links(b), 8+min(len(tc.summary), 1), "every entry linked once")
			// aegis plot rewrites it from exec.json: the same bytes.
			require.NoError(t, os.Remove(filepath.Join(dir, page.Name)))
			require.NoError(t, WriteDirPage(dir))
			c, err := os.ReadFile(filepath.Join(dir, page.Name))
			require.NoError(t, err)
			require.Equal(t, string(b), string(c))
		})
	}
}

// A resume keeps the first run's trace and counts itself; a resume of a
// run whose first executor never ended knows the trace by name only.
func TestResumedExecMeta(t *testing.T) {
	tr := &traces.Trace{Name: "tiny", Jobs: []traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1}}}
	st := map[string]string{"trace": "tiny", "policy": "aegis", "speedup": "1"}
	dir := mkdirWith(t)
	m, err := ResumedExecMeta(dir, "emulated a100-40gb:2", nil, st)
	require.NoError(t, err)
	require.Empty(t, m.Trace.SHA256)
	require.Contains(t, execProvenance(m), [2]string{"trace", "tiny, content unknown (the run's first executor did not end)"})
	first, err := NewExecMeta(tr, "tiny", "emulated a100-40gb:2", nil, st)
	require.NoError(t, err)
	require.NoError(t, WriteExec(dir, first))
	for want := 1; want <= 2; want++ {
		m, err := ResumedExecMeta(dir, "emulated a100-40gb:2", nil, st)
		require.NoError(t, err)
		require.Equal(t, first.Trace, m.Trace)
		require.Equal(t, want, m.Resumes)
		require.NoError(t, WriteExec(dir, m))
	}
	// A directory without exec.json: a page from the journal's settings.
	old := mkdirWith(t, "journal.jsonl")
	require.NoError(t, WriteExecPage(old, "emulated a100-40gb:2", nil, st))
	md := mustReadString(t, filepath.Join(old, page.Name))
	require.Contains(t, md, "| aegis | not recorded: the run directory has no exec.json")
	require.Contains(t, md, "| trace | tiny, content not recorded |")
	require.NoFileExists(t, filepath.Join(old, rundir.ExecFile))
	require.NoError(t, os.WriteFile(filepath.Join(dir, rundir.ExecFile), []byte("{"), 0o644))
	_, err = ResumedExecMeta(dir, "x", nil, st)
	require.ErrorContains(t, err, rundir.ExecFile)
}

func gpusOf(srv *models.Server) string {
	if srv == nil {
		return "this machine's GPUs (nvml telemetry)"
	}
	return "emulated " + srv.String()
}

// mkdirWith makes a directory with the given entries (a path with a slash:
// its folders too).
func mkdirWith(t *testing.T, entries ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if !strings.HasSuffix(e, "/") {
			require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o644))
		}
	}
	return dir
}
