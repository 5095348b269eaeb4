package experiments

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// smallType writes a user GPU type of 16 GiB without a catalog of its own
// (so it runs the A100 catalog) and returns its file.
func smallType(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "small.yaml")
	require.NoError(t, os.WriteFile(p, []byte("name: small-16gb\nmemory_mib: 16384\npressure: true\n"), 0o644))
	return p
}

// TestMixedClusterRouting: on clusters of two GPU types every job runs on
// servers of a type whose catalog has its workload and whose memory holds
// its profiled peak, a job larger than a server on whole servers of one
// type, under every policy and dispatch strategy.
func TestMixedClusterRouting(t *testing.T) {
	const (
		big    = "vgg16_imagenet_bs128_1gpu"            // 21,668 MiB: not on 16 GiB
		small  = "resnet18_cifar100_bs128_20e_1gpu"     // in the A100 catalog only
		common = "efficientnet_cifar100_bs128_20e_1gpu" // in the A100 and legacy catalogs
		a100   = "bert_base_wiki_bs32_1gpu"             // in the A100 catalog only
	)
	job := func(i int, w string, gpus int) traces.Job {
		return traces.Job{ID: strconv.Itoa(i), Submit: time.Duration(i) * time.Second, Workload: w, GPUs: gpus}
	}
	for _, tc := range []struct {
		name    string
		cluster string
		jobs    []traces.Job
		// where[i]: the servers job i may end on (any of them).
		where  [][]string
		params map[string]string
	}{
		{name: "only the bigger type holds it", cluster: "SMALL:1x2,a100-40gb:1x2",
			jobs:  []traces.Job{job(0, big, 1), job(1, small, 1), job(2, big, 1), job(3, small, 1), job(4, big, 1), job(5, small, 1)},
			where: [][]string{{"2", "3"}, {"0", "1", "2", "3"}, {"2", "3"}, {"0", "1", "2", "3"}, {"2", "3"}, {"0", "1", "2", "3"}}},
		{name: "only one type's catalog has it", cluster: "legacy-11gb:1x2,a100-40gb:1x2",
			jobs:   []traces.Job{job(0, a100, 1), job(1, common, 1), job(2, a100, 1), job(3, common, 1), job(4, a100, 1)},
			where:  [][]string{{"2", "3"}, {"0", "1", "2", "3"}, {"2", "3"}, {"0", "1", "2", "3"}, {"2", "3"}},
			params: map[string]string{"filter": "mem-only"}},
		{name: "a big job takes whole servers of one type", cluster: "legacy-11gb:2x2,a100-40gb:2x2",
			jobs:   []traces.Job{job(0, a100, 4), job(1, common, 4), job(2, common, 2), job(3, a100, 3)},
			where:  [][]string{{"2+3"}, {"0+1", "2+3"}, {"0", "1", "2", "3"}, {"2+3"}},
			params: map[string]string{"filter": "mem-only"}},
		{name: "a type with too few GPUs is skipped", cluster: "legacy-11gb:2x1,a100-40gb:2x2",
			jobs:   []traces.Job{job(0, common, 4), job(1, common, 1)},
			where:  [][]string{{"1+2"}, {"0", "1", "2"}},
			params: map[string]string{"filter": "mem-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := models.ParseCluster(strings.ReplaceAll(tc.cluster, "SMALL", smallType(t)))
			require.NoError(t, err)
			require.True(t, c.Mixed())
			tr := &traces.Trace{Name: "t", Jobs: tc.jobs}
			for _, policy := range registry.Builtin() {
				for _, dispatch := range []string{"bestfit", "firstfit", "leastloaded"} {
					params := map[string]string{"dispatch": dispatch}
					if policy == "aegis" {
						for k, v := range tc.params {
							params[k] = v
						}
					}
					o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: policy, Params: params, Seed: 1}, nil)
					require.NoError(t, err, "%s %s", policy, dispatch)
					require.Equal(t, len(tr.Jobs), o.Summary.Finished, "%s %s", policy, dispatch)
					for i := range tr.Jobs {
						require.Contains(t, tc.where[i], o.Servers[i], "%s %s job %d", policy, dispatch, i)
						s, err := strconv.Atoi(strings.Split(o.Servers[i], "+")[0])
						require.NoError(t, err)
						require.Equal(t, c.Types[c.ServerType[s]].Name, o.GPUTypes[i])
					}
				}
			}
		})
	}
}

// TestMixedClusterSoloTimes: a job runs its workload as its GPU type's
// catalog says (a legacy GPU is slower than an A100), at the speed of its
// GPU's class there (the legacy server's GPU 0: factor f), and its results
// are normalized by the shortest solo time of the types it may run on.
func TestMixedClusterSoloTimes(t *testing.T) {
	const w = "efficientnet_cifar100_bs128_20e_1gpu"
	legacy, ok := models.Legacy11GB().Get(w)
	require.True(t, ok)
	a100, ok := models.A100().Get(w)
	require.True(t, ok)
	require.Greater(t, legacy.SoloS, a100.SoloS)
	c, err := models.ParseCluster("legacy-11gb:1x1,a100-40gb:1x1")
	require.NoError(t, err)
	tr := &traces.Trace{Name: "t", Jobs: []traces.Job{{ID: "0", Workload: w, GPUs: 1}, {ID: "1", Workload: w, GPUs: 1},
		{ID: "2", Workload: w, GPUs: 1, SoloS: 100, Submit: 2000 * time.Second}}}
	truth := sim.DefaultTruth()
	truth.StartupJitter = 0
	o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: "exclusive", Params: map[string]string{"dispatch": "firstfit"}, Seed: 1, Truth: &truth}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"0", "1", "0"}, o.Servers)
	require.Equal(t, []string{"legacy-11gb", "a100-40gb", "legacy-11gb"}, o.GPUTypes)
	f := models.LegacySpeeds().Factor(legacy, 0)
	require.NotEqual(t, 1.0, f)
	up := models.Startup(w).Seconds() // the startup is not stretched
	require.InDelta(t, up+(legacy.SoloS-up)*f, o.Jobs[0].Exec.Seconds(), 1e-6, "the active time stretched by f")
	require.InDelta(t, a100.SoloS, o.Jobs[1].Exec.Seconds(), 1e-6)
	require.InDelta(t, up+(100-up)*f, o.Jobs[2].Exec.Seconds(), 1e-6, "the trace's solo_s on every type, at its GPU's speed")
	for i, want := range []float64{a100.SoloS, a100.SoloS, 100} {
		require.InDelta(t, want, o.Jobs[i].SoloS, 1e-9)
	}
	files, err := o.Files(nil)
	require.NoError(t, err)
	head, _, _ := strings.Cut(string(files["jobs.csv"]), "\n")
	require.True(t, strings.HasSuffix(head, ",server,gpu_type"), head)
}

// TestMixedClusterSameBytes: a run on two GPU types gives the same bytes
// every time, and streams the jobs.csv it writes at the end.
func TestMixedClusterSameBytes(t *testing.T) {
	tr, err := traces.Load("venus")
	require.NoError(t, err)
	c, err := models.ParseCluster("a100-40gb:2x1,h200-141gb:2x1")
	require.NoError(t, err)
	var first map[string][]byte
	for range 2 {
		var ev bytes.Buffer
		o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: "aegis", Seed: 4}, &ev)
		require.NoError(t, err)
		f, err := o.Files(ev.Bytes())
		require.NoError(t, err)
		if first == nil {
			first = f
			continue
		}
		require.Equal(t, first, f)
	}
	// Streamed, jobs.csv is the same with its server and gpu_type columns.
	var jobs bytes.Buffer
	_, err = assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: "aegis", Seed: 4, Jobs: &jobs}, nil)
	require.NoError(t, err)
	require.Equal(t, string(first["jobs.csv"]), jobs.String())
	require.Contains(t, jobs.String(), ",server,gpu_type\n")
}

func TestMixedClusterErrors(t *testing.T) {
	one := func(w string, gpus int) *traces.Trace {
		return &traces.Trace{Name: "t.csv", Lines: []int{2}, Jobs: []traces.Job{{ID: "0", Workload: w, GPUs: gpus}}}
	}
	for _, tc := range []struct {
		name, cluster string
		trace         *traces.Trace
		policy        string
		err           string
	}{
		{"in no type's catalog", "legacy-11gb:1x1,a100-40gb:1x1", one("nope", 1), "exclusive",
			`t.csv:2: job 0: column workload_id: "nope" is in the catalog of none of the cluster's GPU types (legacy-11gb, a100-40gb`},
		{"more GPUs than the types having it", "legacy-11gb:2x2,a100-40gb:2x1", one("bert_base_wiki_bs32_1gpu", 4), "exclusive",
			"t.csv:2: job 0: column num_gpus: 4 GPUs, but the cluster has at most 2 GPUs of one type whose catalog has workload bert_base_wiki_bs32_1gpu"},
		{"not a multiple of the workload", "legacy-11gb:2x2,a100-40gb:2x2", one("gpt2_large_wiki_bs8_2gpu", 3), "exclusive",
			"t.csv:2: job 0: column num_gpus: 3, but workload gpt2_large_wiki_bs8_2gpu needs 2"},
		{"pressure filter on a type without DCGM", "a100-40gb:1x1,legacy-11gb:1x1", one("efficientnet_cifar100_bs128_20e_1gpu", 1), "aegis",
			"filter=pressure needs SMACT/SMOCC/DRAMA telemetry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := models.ParseCluster(tc.cluster)
			require.NoError(t, err)
			_, err = assemble.Simulate(context.Background(), assemble.Run{Trace: tc.trace, Cluster: &c, Policy: tc.policy, Seed: 1}, nil)
			require.ErrorContains(t, err, tc.err)
		})
	}
}
