package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/traces"
)

// clusterTrace generates a Venus-like trace with jobs of up to 8 GPUs, as
// `aegis trace gen --like venus --jobs n --seed seed --max-gpus 8` draws
// them, made runnable by the per-GPU profile rule: 1- and 2-GPU jobs get
// catalog workloads by nearest quantile (traces.MapWorkloads); 4- and 8-GPU
// jobs, which have no catalog workload, get a 1-GPU workload by the same
// rule among their own durations, repeated per GPU, with their generated
// duration as solo_s.
func clusterTrace(b testing.TB, n int, seed uint64) *traces.Trace {
	log, err := traces.GenerateLike("venus", n, seed, 8)
	require.NoError(b, err)
	small := make([]traces.LogJob, len(log.Jobs))
	for i, j := range log.Jobs {
		small[i] = j
		if j.GPUs > 2 {
			small[i].GPUs = 1
		}
	}
	// MapWorkloads ranks each GPU count's jobs apart, so the big jobs mapped
	// as 1-GPU ones share quantiles with the 1-GPU jobs: a deliberate
	// simplification, their lengths come from solo_s anyway.
	wl, err := traces.MapWorkloads(small, models.A100())
	require.NoError(b, err)
	tr := &traces.Trace{Name: log.Name, Jobs: make([]traces.Job, len(log.Jobs))}
	for i, j := range log.Jobs {
		tr.Jobs[i] = traces.Job{ID: j.ID, Submit: j.Submit, Workload: wl[i], GPUs: j.GPUs}
		if j.GPUs > 2 {
			tr.Jobs[i].SoloS = j.Duration.Seconds()
		}
	}
	return tr
}

// BenchmarkCluster simulates a 25,000-job Venus-like trace (jobs of 1–8
// GPUs) on 16 servers of 8 A100s under each policy, best-fit dispatch.
func BenchmarkCluster(b *testing.B) {
	tr := clusterTrace(b, 25000, 1)
	c, err := models.ParseCluster("a100-40gb:8x16")
	require.NoError(b, err)
	for _, policy := range []string{"exclusive", "aegis", "lucid", "horus"} {
		b.Run(policy, func(b *testing.B) {
			benchCluster(b, tr, &c, policy)
		})
	}
}

// BenchmarkClusterSmall is BenchmarkCluster's AEGIS case reduced for
// profiling: a 2,000-job Venus-like trace on 4 servers of 8 A100s, as
// with a backlog of months like the full run, in about 20 s, not minutes.
func BenchmarkClusterSmall(b *testing.B) {
	tr := clusterTrace(b, 2000, 1)
	c, err := models.ParseCluster("a100-40gb:8x4")
	require.NoError(b, err)
	benchCluster(b, tr, &c, "aegis")
}

// benchCluster simulates tr on cluster c under policy (benchSim).
func benchCluster(b *testing.B, tr *traces.Trace, c *models.Cluster, policy string) {
	benchSim(b, assemble.Run{Trace: tr, Cluster: c, Policy: policy, Params: map[string]string{}, Seed: 1})
}
