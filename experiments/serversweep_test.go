package experiments

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/stretchr/testify/require"
)

// The example server sweep runs each point on its server: cells of one
// config and seed differ by server in their key and their results, the
// CSVs carry the server and its GPU count, and the figure has the GPU
// count on its x axis.
func TestServerSweepExample(t *testing.T) {
	s, err := LoadPlan(filepath.Join("examples", "server-sweep.yaml"))
	require.NoError(t, err)
	cells := s.Cells()
	require.Len(t, cells, 2*5*3)
	dir := t.TempDir()
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	require.Contains(t, rep.Files, filepath.Join(dir, "sweep-server.gpus.svg"))
	svg, err := os.ReadFile(filepath.Join(dir, "sweep-server.gpus.svg"))
	require.NoError(t, err)
	for _, want := range []string{"GPUs in the server", "makespan (h)", ">Exclusive<", ">AEGIS<"} {
		require.Contains(t, string(svg), want)
	}
	require.NotContains(t, string(svg), "server=a100", "the server's column names no lines beside its GPU count")
	require.NotContains(t, string(svg), ">2.5</text>", "a GPU count axis has whole-number ticks only")
	require.NotContains(t, string(svg), ">3.5</text>", "a GPU count axis has whole-number ticks only")

	m, err := ReadMeta(dir)
	require.NoError(t, err)
	keys := map[string]string{}
	for _, c := range m.Cells {
		require.NotContains(t, keys, c.Key, "cell %s has the key of %s", c.ID, keys[c.Key])
		keys[c.Key] = c.ID
	}
	_, err = os.Stat(filepath.Join(dir, "cells", "philly.AEGIS.server=a100-40gb_4.s2", rundir.CellFile))
	require.NoError(t, err, "cell directories are named by value")

	recs := readCSV(t, filepath.Join(dir, "cells.csv"))
	require.Equal(t, []string{"server", "server.gpus", "server.type", "makespan_s"}, recs[0][5:9])
	makespan := map[string]string{} // config, seed, gpus -> makespan
	for _, r := range recs[1:] {
		require.Equal(t, r[5], "a100-40gb:"+r[6])
		require.Equal(t, "a100-40gb", r[7])
		makespan[r[2]+"/"+r[4]+"/"+r[6]] = r[8]
	}
	require.Len(t, makespan, 30)
	for _, cfg := range []string{"Exclusive", "AEGIS"} {
		require.NotEqual(t, makespan[cfg+"/1/2"], makespan[cfg+"/1/3"], cfg)
		require.NotEqual(t, makespan[cfg+"/1/3"], makespan[cfg+"/1/4"], cfg)
	}
}

// The GPU type as a sweep axis (types of one catalog): a cell on an H200
// has its own key and, for AEGIS, which collocates more in 141 GiB, its
// own results; Exclusive, which never shares a GPU, runs alike on both.
// The figures put the GPU count (whole-number ticks) and the GPU type
// (categories) on x, each line in its configuration's colour.
func TestGPUTypeSweepExample(t *testing.T) {
	dir, rep := runExample(t, "gpu-type-sweep.yaml")
	md, err := os.ReadFile(filepath.Join(dir, "table.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "Server per row (column server; a config that does not sweep runs on a100-40gb:3)")
	_, err = os.Stat(filepath.Join(dir, "cells", "philly.AEGIS.server=h200-141gb_4.s1", rundir.CellFile))
	require.NoError(t, err, "cell directories are named by value")
	recs := readCSV(t, filepath.Join(dir, "cells.csv"))
	require.Equal(t, []string{"server", "server.gpus", "server.type", "makespan_s"}, recs[0][5:9])
	makespan := map[string]string{} // config/seed/server -> makespan
	for _, r := range recs[1:] {
		require.Equal(t, r[5], r[7]+":"+r[6])
		makespan[r[2]+"/"+r[4]+"/"+r[5]] = r[8]
	}
	require.Len(t, makespan, 2*4*3)
	require.Equal(t, makespan["Exclusive/1/a100-40gb:2"], makespan["Exclusive/1/h200-141gb:2"])
	require.NotEqual(t, makespan["AEGIS/1/a100-40gb:2"], makespan["AEGIS/1/h200-141gb:2"])
	for _, f := range []string{"sweep-server.gpus.svg", "sweep-server.type.svg"} {
		require.Contains(t, rep.Files, filepath.Join(dir, f))
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep-server.type.svg"))
	require.NoError(t, err)
	for _, want := range []string{">a100-40gb</text>", ">h200-141gb</text>", ">AEGIS · server.gpus=4</text>", "GPU type"} {
		require.Contains(t, string(b), want)
	}
	b, err = os.ReadFile(filepath.Join(dir, "sweep-server.gpus.svg"))
	require.NoError(t, err)
	require.Contains(t, string(b), ">AEGIS · server.type=h200-141gb</text>")
	require.NotContains(t, string(b), ">2.5</text>")
	require.NotContains(t, string(b), ">3.5</text>")
}

// runExample runs an example spec into a temporary directory, which it
// returns with the report, and checks that no two cells share a key.
func runExample(t *testing.T, name string) (string, *Report) {
	t.Helper()
	s, err := LoadPlan(filepath.Join("examples", name))
	require.NoError(t, err)
	dir := t.TempDir()
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	m, err := ReadMeta(dir)
	require.NoError(t, err)
	keys := map[string]bool{}
	for _, c := range m.Cells {
		require.False(t, keys[c.Key], "cell %s repeats a key", c.ID)
		keys[c.Key] = true
	}
	return dir, rep
}

// runSmallSweep runs smallSpec with axis instead of its hold sweep into a
// temporary directory, which it returns.
func runSmallSweep(t *testing.T, axis string) string {
	t.Helper()
	s := loadSmall(t, strings.Replace(smallSpec, "  - param: hold\n    values: [10s, 30s]\n", axis, 1))
	dir := t.TempDir()
	_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	return dir
}

// readCSV reads a CSV file whole.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return recs
}

// A server sweep's columns are in every combined CSV; a config that does
// not sweep leaves them empty, and the normalizing config's cell is the
// same spec-server run at every point.
func TestServerSweepColumns(t *testing.T) {
	dir := runSmallSweep(t, "  - param: server\n    values: [a100-40gb:2, a100-40gb:3]\n")
	for _, name := range []string{"cells.csv", "jobs.csv", "normalized.csv"} {
		recs := readCSV(t, filepath.Join(dir, name))
		require.Equal(t, []string{"server", "server.gpus", "server.type"}, recs[0][5:8], name)
		got := map[string]bool{}
		for _, r := range recs[1:] {
			got[r[2]+" "+r[5]+" "+r[6]+" "+r[7]] = true
		}
		require.True(t, got["AEGIS a100-40gb:3 3 a100-40gb"], name)
		require.True(t, got["AEGIS a100-40gb:2 2 a100-40gb"], name)
		if name != "normalized.csv" {
			require.True(t, got["Exclusive   "], name)
		}
	}
}

// A server sweep's values are checked where they are given.
func TestServerSweepErrors(t *testing.T) {
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"not a server", "values: [a100-40gb:2, a100-40gb:x]", `:20: sweep[0].values[1]: server "a100-40gb:x": GPU count "x"`},
		{"another catalog", "values: [a100-40gb:2, legacy-11gb:8]", `:20: sweep[0].values[1]: server "legacy-11gb:8": GPU type legacy-11gb has another workload catalog than the spec's server's a100-40gb, onto which the traces are mapped`},
		{"product", "product: [[a100-40gb:2]]", `:20: sweep[0].product: list the servers as values`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := strings.Replace(smallSpec, "  - param: hold\n    values: [10s, 30s]\n",
				"  - param: server\n    "+tc.spec+"\n", 1)
			p := filepath.Join(t.TempDir(), "small.yaml")
			require.NoError(t, os.WriteFile(p, []byte(spec), 0o644))
			_, err := LoadSpec(p)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// A trace job wider than a swept server (the built-in philly trace has
	// 2-GPU jobs).
	b, err := os.ReadFile(filepath.Join("examples", "server-sweep.yaml"))
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "server-sweep.yaml")
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "[a100-40gb:2,", "[a100-40gb:1,", 1)), 0o644))
	_, err = LoadSpec(p)
	require.ErrorContains(t, err, `server-sweep.yaml:17: sweep[0].values[0]: server "a100-40gb:1": trace "philly" (traces[0]): philly:43: job 41: column num_gpus: 2 GPUs, but the server a100-40gb:1 has 1`)
}

// A cluster spec sweeps its cluster: each cell runs on its point's
// cluster (in its key), jobs.csv gains gpu_type where a cluster is mixed
// (empty for the cells of one-type clusters), and the figure has the
// clusters on x as categories, a long one broken after its comma.
func TestClusterSweepExample(t *testing.T) {
	dir, _ := runExample(t, "cluster-sweep.yaml")
	_, err := os.Stat(filepath.Join(dir, "cells", "venus-300-s1.AEGIS.cluster=a100-40gb_8x1,h200-141gb_8x1.s1", rundir.CellFile))
	require.NoError(t, err, "cell directories are named by value")
	recs := readCSV(t, filepath.Join(dir, "cells.csv"))
	require.Equal(t, []string{"cluster", "cluster.gpus", "makespan_s"}, recs[0][5:8])
	makespan := map[string]string{} // config/seed/cluster -> makespan
	for _, r := range recs[1:] {
		require.Equal(t, "16", r[6])
		makespan[r[2]+"/"+r[4]+"/"+r[5]] = r[7]
	}
	require.Len(t, makespan, 2*3*3)
	require.Equal(t, makespan["Exclusive/1/a100-40gb:8x2"], makespan["Exclusive/1/h200-141gb:8x2"], "Exclusive never shares a GPU")
	require.NotEqual(t, makespan["AEGIS/1/a100-40gb:8x2"], makespan["AEGIS/1/h200-141gb:8x2"])
	jobs := readCSV(t, filepath.Join(dir, "jobs.csv"))
	typ := slices.Index(jobs[0], "gpu_type")
	require.Positive(t, typ, "the mixed cluster's gpu_type column")
	types := map[string]map[string]bool{} // cluster -> gpu_type values
	for _, r := range jobs[1:] {
		if types[r[5]] == nil {
			types[r[5]] = map[string]bool{}
		}
		types[r[5]][r[typ]] = true
	}
	require.Equal(t, map[string]bool{"": true}, types["a100-40gb:8x2"])
	require.True(t, types["a100-40gb:8x1,h200-141gb:8x1"]["h200-141gb"])
	require.True(t, types["a100-40gb:8x1,h200-141gb:8x1"]["a100-40gb"])
	svg, err := os.ReadFile(filepath.Join(dir, "sweep-cluster.svg"))
	require.NoError(t, err)
	for _, want := range []string{">a100-40gb:8x2</text>", ">a100-40gb:8x1,</text>", ">h200-141gb:8x1</text>", ">AEGIS</text>"} {
		require.Contains(t, string(svg), want)
	}
}

// A cluster sweep's values are checked where they are given, and each
// sweep goes with its kind of spec.
func TestClusterSweepErrors(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("examples", "cluster-sweep.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct{ name, old, new, want string }{
		{"not a cluster", "a100-40gb:8x2, \"a100", "a100-40gb:8, \"a100", `:19: sweep[0].values[0]: cluster group "a100-40gb:8": size "8"`},
		{"another catalog", "h200-141gb:8x2]", "legacy-11gb:8x2]", `:19: sweep[0].values[2]: cluster "legacy-11gb:8x2": GPU type legacy-11gb has another workload catalog than the spec's server's a100-40gb`},
		{"a job wider than the cluster", "values: [a100-40gb:8x2,", "values: [a100-40gb:2x2,", `:19: sweep[0].values[0]: cluster "a100-40gb:2x2": trace "venus-300-s1" (traces[0]): venus-300-s1: job 1: column num_gpus: 8 GPUs, but the cluster has 4`},
		{"server sweep on a cluster", "param: cluster ", "param: server ", `:18: sweep[0].param: a cluster spec sweeps its cluster: param: cluster`},
		{"cluster sweep on a server", "cluster: a100-40gb:8x2\ntraces:\n  - {like: venus, jobs: 300, seed: 1, max_gpus: 8}", "server: a100-40gb:8\ntraces:\n  - {trace: philly}",
			`:18: sweep[0].param: only a cluster spec (cluster: instead of server:) sweeps the cluster`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, string(b), tc.old)
			p := filepath.Join(t.TempDir(), "cluster-sweep.yaml")
			require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), tc.old, tc.new, 1)), 0o644))
			_, err := LoadSpec(p)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
