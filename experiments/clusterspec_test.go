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

const clusterSpec = `name: c
cluster: a100-40gb:4x2,h200-141gb:8x1
traces:
  - trace: demo
  - like: venus
    jobs: 40
    seed: 2
    max_gpus: 8
seeds: [1]
configs:
  - label: Exclusive
    policy: exclusive
  - label: AEGIS
    policy: aegis
    params: {dispatch: leastloaded}
normalize: Exclusive
table: per-trace
`

// TestClusterSpec: a spec's cluster runs every cell on it (the dispatcher's
// parameters among a config's params, each GPU type's own interference
// model), maps generated traces of more GPUs per job than the catalog's
// workloads for clusters, and is shown in run.json.
func TestClusterSpec(t *testing.T) {
	s, err := ParsePlan([]byte(clusterSpec), "c.yaml")
	require.NoError(t, err)
	require.NotNil(t, s.cluster)
	require.Equal(t, "a100-40gb:4x2,h200-141gb:8x1", s.cluster.String())
	big := 0
	for _, j := range s.p.(*tracePlan).trs[1].Jobs {
		require.Positive(t, j.SoloS, "a trace for clusters: its durations as solo_s")
		big = max(big, j.GPUs)
	}
	require.Greater(t, big, 2)
	cells := s.Cells()
	r, err := s.p.(*tracePlan).cellRun(cells[1].config, cells[1].Point)
	require.NoError(t, err)
	require.Equal(t, s.cluster, r.Cluster)
	require.Nil(t, r.Interference, "each GPU type's own model")
	require.Equal(t, map[string]string{"dispatch": "leastloaded"}, r.Params)

	dir := t.TempDir()
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	require.Equal(t, rep.Cells, rep.Ran)
	var m struct {
		Server ServerInfo `json:"server"`
	}
	require.NoError(t, json.Unmarshal([]byte(mustReadString(t, filepath.Join(dir, rundir.RunFile))), &m))
	require.Equal(t, "a100-40gb:4x2,h200-141gb:8x1", m.Server.Spec)
	require.NotNil(t, m.Server.Cluster)
	require.Equal(t, []ClusterGroup{{"a100-40gb", 4, 2}, {"h200-141gb", 8, 1}}, m.Server.Cluster.Groups)
	require.Len(t, m.Server.Cluster.Types, 2)
	require.Equal(t, 143771.0, m.Server.Cluster.Types[1].MemoryMiB)
	jobs := mustReadString(t, filepath.Join(dir, "cells", cells[1].ID, "jobs.csv"))
	require.Contains(t, strings.SplitN(jobs, "\n", 2)[0], ",server,gpu_type")

	// The same cluster of one type: no gpu_type column, the type's model.
	one, err := ParsePlan([]byte(strings.Replace(clusterSpec, "a100-40gb:4x2,h200-141gb:8x1", "a100-40gb:8x2", 1)), "c.yaml")
	require.NoError(t, err)
	r, err = one.p.(*tracePlan).cellRun(cells[1].config, cells[1].Point)
	require.NoError(t, err)
	require.NotNil(t, r.Interference)
	require.NotEqual(t, mustKey(t, s, cells[1]), mustKey(t, one, cells[1]), "the cluster is part of a cell's key")

	// The dispatcher's parameters can be swept, for every policy.
	sw, err := ParsePlan([]byte(strings.Replace(clusterSpec, "normalize: Exclusive\n", "sweep:\n  - param: dispatch\n    values: [firstfit, bestfit]\n", 1)), "c.yaml")
	require.NoError(t, err)
	cells = sw.Cells()
	require.Len(t, cells, 2*2*2)
	r, err = sw.p.(*tracePlan).cellRun(cells[0].config, cells[0].Point)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"dispatch": "firstfit"}, r.Params)
	_, err = ParseSpec([]byte(strings.Replace(clusterSpec, "normalize: Exclusive\n", "sweep:\n  - param: dispatch\n    values: [firstfit, worst]\n", 1)), "c.yaml")
	require.ErrorContains(t, err, `c.yaml:17: sweep[0]: config "Exclusive" (configs[0]): cluster: parameter dispatch="worst"`)
}

// TestExampleSpecs: every example spec (experiments/examples) validates
// and runs, reduced.
func TestExampleSpecs(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("examples", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			s, err := LoadPlan(p)
			require.NoError(t, err)
			require.Equal(t, strings.TrimSuffix(filepath.Base(p), ".yaml"), s.Name)
			reduced(s, 6, 2)
			rep, err := RunPlan(context.Background(), s, RunOptions{Out: t.TempDir()})
			require.NoError(t, err)
			require.Equal(t, rep.Cells, rep.Ran)
		})
	}
}

// Every kind of bad cluster spec gives an error naming the file, the line
// and the key at fault.
func TestBadClusterSpecs(t *testing.T) {
	dir := t.TempDir()
	aTrace := filepath.Join(dir, "legacy.csv")
	require.NoError(t, os.WriteFile(aTrace, []byte("submit_offset_s,workload_id,num_gpus\n0,gpt2_large_wiki_bs8_2gpu,2\n"), 0o644))
	repl := func(old, new string) string {
		require.Contains(t, clusterSpec, old)
		return strings.Replace(clusterSpec, old, new, 1)
	}
	for _, tc := range []struct{ name, spec, want string }{
		{"server and cluster", repl("name: c\n", "name: c\nserver: a100-40gb:3\n"), "c.yaml:3: cluster: give server (TYPE:COUNT) or cluster (TYPE:GPUSxSERVERS,...), not both"},
		{"bad group", repl("h200-141gb:8x1", "h200-141gb:8"), `c.yaml:2: cluster: cluster group "h200-141gb:8": size "8": want GPUSxSERVERS`},
		{"bad type", repl("h200-141gb:8x1", "h200:8x1"), `c.yaml:2: cluster: cluster group "h200:8x1": GPU type: unknown GPU type "h200"`},
		{"missing GPU type file", repl("h200-141gb:8x1", "nope.yaml:8x1"), `c.yaml:2: cluster: cluster group "nope.yaml:8x1": GPU type:`},
		{"not a cluster", repl("cluster: a100-40gb:4x2,h200-141gb:8x1", "cluster: [a100-40gb]"), "c.yaml:2: cluster:"},
		{"neither", repl("cluster: a100-40gb:4x2,h200-141gb:8x1\n", ""), "c.yaml:1: server: missing: want TYPE:COUNT, e.g. a100-40gb:3 (or cluster: TYPE:GPUSxSERVERS"},
		{"bad dispatch", repl("{dispatch: leastloaded}", "{dispatch: random}"), `c.yaml:15: configs[1].params: cluster: parameter dispatch="random"`},
		{"pressure filter on a type without DCGM", repl("h200-141gb:8x1", "legacy-11gb:8x1"), "configs[1].params: policy aegis on legacy-11gb:8: filter=pressure needs SMACT/SMOCC/DRAMA telemetry"},
		{"trace larger than the type having it", strings.Replace(repl("  - trace: demo\n", "  - trace: "+aTrace+"\n"), "a100-40gb:4x2,h200-141gb:8x1", "legacy-11gb:4x2,h200-141gb:1x1", 1),
			"c.yaml:4: traces[0].trace: " + aTrace + ":2: job 0: column num_gpus: 2 GPUs, but the cluster has at most 1 GPUs of one type whose catalog has workload gpt2_large_wiki_bs8_2gpu"},
		{"context larger than a type's GPU", strings.Replace(repl("params: {dispatch: leastloaded}", "params: {dispatch: leastloaded, filter: mem-only}\n    truth: {context_mib: 20000}"), "h200-141gb:8x1", "legacy-11gb:8x1", 1),
			`c.yaml:16: configs[1].truth: truth: parameter context_mib="20000": want at most the legacy-11gb GPU's 11264 MiB`},
		{"max_gpus beyond the catalog on a server", strings.Replace(repl("cluster: a100-40gb:4x2,h200-141gb:8x1", "server: a100-40gb:8"), "{dispatch: leastloaded}", "{}", 1),
			"c.yaml:8: traces[1].max_gpus: 8: map: job 4 needs 4 GPUs, but the catalog has no 4-GPU workload (8 such jobs); such a trace runs on a cluster (cluster: TYPE:GPUSxSERVERS instead of server:)"},
		{"stacking on a cluster", "name: s\ncluster: a100-40gb:1x1\nseeds: [1]\nstacking: {data: nowhere}\n", "c.yaml:2: cluster: a stacking spec runs on one GPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec), "c.yaml")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
