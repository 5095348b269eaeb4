package experiments

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/buildinfo"
)

// keyFiles are the inputs of keySpec's one cell: a user GPU type with its
// own catalog and interference model, a trace file and the spec.
func keyFiles(t *testing.T) map[string]string {
	t.Helper()
	var cat []string
	for _, l := range strings.Split(mustReadString(t, filepath.Join("..", "models", "data", "catalog_a100.csv")), "\n") {
		if strings.HasPrefix(l, "workload,") || strings.HasPrefix(l, "dlrm_criteo_bs32768_1gpu,") ||
			strings.HasPrefix(l, "efficientnet_cifar100_bs128_20e_1gpu,") {
			cat = append(cat, l)
		}
	}
	require.Len(t, cat, 3)
	return map[string]string{
		"cat.csv": strings.Join(cat, "\n") + "\n",
		"g.yaml":  "name: mygpu\nmemory_mib: 40536\npressure: true\ncatalog: cat.csv\ninterference: m.yaml\n",
		"m.yaml":  mustReadString(t, filepath.Join("..", "models", "data", "interference_a100.yaml")),
		"t.csv": "submit_offset_s,workload_id,num_gpus\n0,dlrm_criteo_bs32768_1gpu,1\n10,efficientnet_cifar100_bs128_20e_1gpu,1\n" +
			"20,dlrm_criteo_bs32768_1gpu,1\n",
		"s.yaml": `# a spec of one cell
name: keys
description: one cell
server: g.yaml:1
traces: [{trace: t.csv}]
seeds: [1]
configs:
  - label: A
    policy: aegis
    params: {hold: 10s}
    truth: {startup_jitter: 0.1}
`,
	}
}

// TestCellKeys changes each input of a cell in turn and sees the cell run
// again, and changes what is not an input and sees it reused.
func TestCellKeys(t *testing.T) {
	edit := func(file, old, new string) func(map[string]string) {
		return func(f map[string]string) {
			require.Contains(t, f[file], old)
			f[file] = strings.Replace(f[file], old, new, 1)
		}
	}
	for _, tc := range []struct {
		name     string
		change   func(map[string]string)
		build    string // "" keeps the first run's
		ran      int    // cells run the second time
		skipped  int
		newBytes bool // the rerun's cells.csv differs
	}{
		{name: "catalog solo_s doubled", change: edit("cat.csv", ",1471.7,", ",2943.4,"), ran: 1, newBytes: true},
		{name: "GPU type memory", change: edit("g.yaml", "40536", "11000"), ran: 1},
		{name: "GPU type interference model", change: edit("m.yaml", "capacity: 1.2", "capacity: 1.1"), ran: 1},
		{name: "trace content", change: edit("t.csv", "\n20,", "\n25,"), ran: 1, newBytes: true},
		{name: "policy", change: edit("s.yaml", "policy: aegis\n    params: {hold: 10s}", "policy: exclusive"), ran: 1},
		{name: "policy parameter", change: edit("s.yaml", "hold: 10s", "hold: 20s"), ran: 1},
		{name: "truth setting", change: edit("s.yaml", "startup_jitter: 0.1", "startup_jitter: 0.2"), ran: 1, newBytes: true},
		{name: "config's interference model", change: edit("s.yaml", "    truth:", "    model: m2.yaml\n    truth:"), ran: 1},
		{name: "N-way exponent", change: edit("s.yaml", "    truth:", "    nway_exponent: 2\n    truth:"), ran: 1},
		{name: "GPU count", change: edit("s.yaml", "g.yaml:1", "g.yaml:2"), ran: 1, newBytes: true},
		{name: "cluster", change: edit("s.yaml", "server: g.yaml:1", "cluster: g.yaml:1x1"), ran: 1},
		{name: "telemetry", change: edit("s.yaml", "seeds:", "telemetry: true\nseeds:"), ran: 1},
		{name: "build", build: "another build", ran: 1},
		{name: "seed", change: edit("s.yaml", "seeds: [1]", "seeds: [2]"), ran: 1},
		// Not inputs of the cell: reused.
		{name: "comment", change: edit("s.yaml", "# a spec of one cell", "# edited"), skipped: 1},
		{name: "description", change: edit("s.yaml", "description: one cell", "description: reworded"), skipped: 1},
		{name: "name", change: edit("s.yaml", "name: keys", "name: renamed"), skipped: 1},
		{name: "GPU type file moved", change: func(f map[string]string) {
			f["sub/g.yaml"] = strings.NewReplacer("cat.csv", "../cat.csv", "m.yaml", "../m.yaml").Replace(f["g.yaml"])
			edit("s.yaml", "server: g.yaml:1", "server: sub/g.yaml:1")(f)
		}, skipped: 1},
		{name: "a seed added runs only its cell", change: edit("s.yaml", "seeds: [1]", "seeds: [1, 2]"), ran: 1, skipped: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := keyFiles(t)
			f["m2.yaml"] = strings.Replace(f["m.yaml"], "nway_exponent: 1.3", "nway_exponent: 1", 1)
			write := func() *Plan {
				for n, b := range f {
					require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644))
				}
				s, err := LoadPlan(filepath.Join(dir, "s.yaml"))
				require.NoError(t, err)
				return s
			}
			out := filepath.Join(dir, "out")
			rep, err := RunPlan(context.Background(), write(), RunOptions{Out: out, Build: "one build"})
			require.NoError(t, err)
			require.Equal(t, 1, rep.Ran)
			before := mustReadString(t, filepath.Join(out, "cells.csv"))
			if tc.change != nil {
				tc.change(f)
			}
			build := cmp.Or(tc.build, "one build")
			rep, err = RunPlan(context.Background(), write(), RunOptions{Out: out, Build: build})
			require.NoError(t, err)
			require.Equal(t, tc.ran, rep.Ran, "cells run again")
			require.Equal(t, tc.skipped, rep.Skipped, "cells reused")
			after := mustReadString(t, filepath.Join(out, "cells.csv"))
			if tc.newBytes {
				require.NotEqual(t, before[strings.Index(before, "\n"):], after[strings.Index(after, "\n"):])
			}
		})
	}
}

// mustKey is cell c's key in a run of s by this test binary.
func mustKey(t *testing.T, s *Plan, c Cell) string {
	t.Helper()
	k, err := s.keyInputs("test")
	require.NoError(t, err)
	key, err := s.cellKey(k, c)
	require.NoError(t, err)
	return key
}

// TestExecutableHashIsContentID: an unstamped build (this test binary) is
// identified by its Go build ID's content part, read from a few kB of the
// file, not by hashing the whole file; and a file without one by its bytes.
func TestExecutableHashIsContentID(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	id, ok := buildinfo.ContentID(self)
	require.True(t, ok)
	got := hashExecutable()
	require.Equal(t, hashBytes([]byte(contentIDText+id)), got)
	require.NotEqual(t, hashFile(self), got)
	require.Len(t, got, 64)

	p := filepath.Join(t.TempDir(), "script")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	require.Equal(t, hashBytes([]byte("#!/bin/sh\n")), hashFile(p))
	require.Empty(t, hashFile(filepath.Join(t.TempDir(), "missing")))
}
