package experiments

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An external policy (the Python example, copied beside the spec) in a
// spec: a sweep over its parameter and two seeds give the Go example's
// numbers cell for cell; shards merge to the whole run; a rerun reuses
// every cell, and one after the script or a module beside it changed
// reruns exactly the external policy's cells.
func TestSpecWithExternalPolicy(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found on PATH: a spec with the Python example policy is not tested here")
	}
	// The interpreter itself, not a launcher (a pyenv shim takes seconds
	// to start on a loaded machine).
	b, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err)
	py = strings.TrimSpace(string(b))
	dir := t.TempDir()
	for _, f := range []string{"aegis_policy.py", "bestfit.py"} {
		b, err := os.ReadFile(filepath.Join("..", "policies", "external", "python", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	s := loadSmall(t, `name: external
server: a100-40gb:2
traces:
  - like: philly
    jobs: 8
    seed: 1
seeds: [1, 2]
configs:
  - {label: Go, policy: bestfit}
  - {label: Python, policy: external, params: {command: "`+py+" "+filepath.Join(dir, "bestfit.py")+`"}}
sweep:
  - param: util_cap
    values: [80, 150]
table: per-trace
`)
	out := filepath.Join(t.TempDir(), "whole")
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: out})
	require.NoError(t, err)
	require.Equal(t, 8, rep.Ran)

	// The Python cells' numbers are the Go cells'.
	f, err := os.Open(filepath.Join(out, "cells.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	require.NoError(t, err)
	byConfig := map[string][]string{}
	for _, r := range rows[1:] {
		var label string
		var rest []string
		for i, h := range rows[0] {
			switch {
			case h == "config":
				label = r[i]
			case h == "cell" || h == "key" || h == "policy" || strings.HasSuffix(h, "dir"):
			default:
				rest = append(rest, h+"="+r[i])
			}
		}
		byConfig[label] = append(byConfig[label], strings.Join(rest, ","))
	}
	require.Len(t, byConfig["Go"], 4)
	require.Equal(t, byConfig["Go"], byConfig["Python"])

	root := t.TempDir()
	var parts []string
	for i := range 2 {
		p := filepath.Join(root, "part"+string(rune('0'+i)))
		_, err := RunPlan(context.Background(), s, RunOptions{Out: p, Shard: i, Shards: 2})
		require.NoError(t, err)
		parts = append(parts, p)
	}
	all := filepath.Join(root, "all")
	_, err = Merge(parts, all)
	require.NoError(t, err)
	require.Equal(t, files(t, out), files(t, all))

	rep, err = RunPlan(context.Background(), s, RunOptions{Out: out})
	require.NoError(t, err)
	require.Equal(t, 0, rep.Ran, "nothing changed: every cell reused")
	for _, f := range []string{"bestfit.py", "aegis_policy.py"} {
		fp, err := os.OpenFile(filepath.Join(dir, f), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fp.WriteString("# changed\n")
		require.NoError(t, err)
		require.NoError(t, fp.Close())
		rep, err = RunPlan(context.Background(), s, RunOptions{Out: out})
		require.NoError(t, err)
		require.Equal(t, 4, rep.Ran, "%s changed: the external policy's cells run again", f)
	}
}
