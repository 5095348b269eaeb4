package experiments

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/stretchr/testify/require"
)

func TestDataName(t *testing.T) {
	shared := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(shared, "calibration", "aegis", "nway"), 0o755))
	t.Setenv("AEGIS_SHARED", shared)
	here, err := filepath.Abs(filepath.Join("testdata", "x.csv"))
	require.NoError(t, err)
	elsewhere := filepath.Join(t.TempDir(), "data", "x.csv")
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(shared, "calibration", "aegis", "nway"), "shared:calibration/aegis/nway"},
		{shared, "shared:."},
		{filepath.Join("a", "..", "b", "t.csv"), "b/t.csv"},
		{here, "testdata/x.csv"},
		{elsewhere, "x.csv"},
	} {
		require.Equal(t, tc.want, dataName(tc.path), tc.path)
	}
}

// absolutePaths lists the strings of run.json that are absolute paths,
// leaving out the spec as the user wrote it (spec, spec_text).
func absolutePaths(t *testing.T, runJSON string) []string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(runJSON), &m))
	delete(m, "spec")
	delete(m, "spec_text")
	var abs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			for _, w := range strings.Fields(v) {
				if filepath.IsAbs(w) {
					abs = append(abs, v)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(m)
	return abs
}

// A spec given by an absolute path, naming its trace by one, leaves no
// absolute path in run.json: the same run elsewhere writes the same file.
func TestRunJSONHasNoAbsolutePaths(t *testing.T) {
	dir := t.TempDir()
	f := keyFiles(t)
	f["s.yaml"] = strings.Replace(f["s.yaml"], "trace: t.csv", "trace: "+filepath.Join(dir, "t.csv"), 1)
	for n, b := range f {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644))
	}
	s, err := LoadPlan(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	_, err = RunPlan(context.Background(), s, RunOptions{Out: out})
	require.NoError(t, err)
	b := mustReadString(t, filepath.Join(out, rundir.RunFile))
	require.Empty(t, absolutePaths(t, b))
	require.Contains(t, b, `"spec_file": "s.yaml"`)
	require.Contains(t, b, `"source": "t.csv"`)
	require.Contains(t, b, `"commit": "`)
}
