package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// mixedServer returns a server of one A100 (GPU 0) and one legacy GPU (GPU 1).
func mixedServer(t *testing.T, specs []traces.Job) *sim.Sim {
	t.Helper()
	a100, err := models.LookupGPU("a100-40gb")
	require.NoError(t, err)
	legacy, err := models.LookupGPU("legacy-11gb")
	require.NoError(t, err)
	s, err := sim.New(sim.Config{Server: models.Server{Type: a100, GPUs: 2}, Truth: exact(), Seed: 1,
		Types:  []sim.TypeTruth{{Type: a100, Catalog: models.A100()}, {Type: legacy, Catalog: models.Legacy11GB()}},
		TypeOf: []int{0, 1}}, specs)
	require.NoError(t, err)
	return s
}

// TestMixedServerTruth: on a server of two GPU types each GPU has its
// type's capacity and telemetry (no pressure indicators on the legacy
// GPU), a job may run on the types whose catalog has it and whose memory
// holds it, and runs its workload there as that type's catalog says.
func TestMixedServerTruth(t *testing.T) {
	const common = "efficientnet_cifar100_bs128_20e_1gpu"
	s := mixedServer(t, []traces.Job{
		{ID: "a", Workload: common, GPUs: 1},
		{ID: "b", Workload: common, GPUs: 1},
		{ID: "bert", Workload: "bert_base_wiki_bs32_1gpu", GPUs: 1},
	})
	require.Equal(t, []uint8{3, 3, 1}, []uint8{s.TypeMask(0), s.TypeMask(1), s.TypeMask(2)})
	_, ok := s.ProfileOnType(2, 1)
	require.False(t, ok, "the legacy catalog lacks bert")
	pa, ok := s.ProfileOnType(0, 0)
	require.True(t, ok)
	pl, ok := s.ProfileOnType(0, 1)
	require.True(t, ok)
	require.Greater(t, pl.SoloS, pa.SoloS)

	v := s.View()
	require.Equal(t, []float64{40960, 11264}, []float64{v.GPUs[0].CapacityMiB, v.GPUs[1].CapacityMiB})
	require.False(t, v.Pressure, "not every GPU has pressure indicators")
	_, err := s.Next() // the arrivals
	require.NoError(t, err)
	require.Equal(t, pa.SoloS, s.View().Jobs[1].SoloS, "until it runs: the shortest solo time of its types")
	require.ErrorContains(t, s.Apply(policies.Action{Kind: policies.Place, Job: 2, GPUs: []int{1}}), "the legacy-11gb catalog does not run workload bert_base_wiki_bs32_1gpu")
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 1, GPUs: []int{1}}))
	require.Equal(t, pl.SoloS, s.View().Jobs[1].SoloS, "running on legacy: the legacy profile")
	_, err = s.AdvanceTo(100 * sec) // both active, neither done
	require.NoError(t, err)
	tel := s.View().Telemetry
	x0, x1 := tel.Samples(nil, 0, 1), tel.Samples(nil, 1, 1)
	require.Len(t, x0, 1)
	require.Len(t, x1, 1)
	require.Positive(t, x0[0].SMACT)
	require.Zero(t, x1[0].SMACT, "legacy: no pressure indicators")
	require.Positive(t, x1[0].UtilPct)
	finish := finishTimes(t, s, 2)
	require.InDelta(t, pa.SoloS, finish[0], 1e-6)
	require.InDelta(t, pl.SoloS, finish[1], 1e-6)
}

// finishTimes advances s until n jobs have finished and returns when each
// finished, in seconds.
func finishTimes(t *testing.T, s *sim.Sim, n int) map[policies.JobID]float64 {
	t.Helper()
	finish := map[policies.JobID]float64{}
	for len(finish) < n {
		evs, err := s.Next()
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		for _, e := range evs {
			if e.Kind == policies.JobFinished {
				finish[e.Job] = e.T.Seconds()
			}
		}
	}
	return finish
}

// halfSpeed is an interference model under which every job runs at half
// speed.
type halfSpeed struct{}

func (halfSpeed) Rate(models.Profile, []models.Profile) float64 { return 0.5 }

// TestMixedServerInterferencePerType: each GPU type's interference model
// times the jobs on its GPUs.
func TestMixedServerInterferencePerType(t *testing.T) {
	a100, err := models.LookupGPU("a100-40gb")
	require.NoError(t, err)
	h200, err := models.LookupGPU("h200-141gb")
	require.NoError(t, err)
	const w = "resnet18_cifar100_bs128_20e_1gpu"
	s, err := sim.New(sim.Config{Server: models.Server{Type: a100, GPUs: 2}, Truth: exact(), Seed: 1,
		Types:  []sim.TypeTruth{{Type: a100, Catalog: models.A100()}, {Type: h200, Catalog: models.A100(), Interference: halfSpeed{}}},
		TypeOf: []int{0, 1}}, []traces.Job{{ID: "a", Workload: w, GPUs: 1}, {ID: "h", Workload: w, GPUs: 1}})
	require.NoError(t, err)
	require.Equal(t, []float64{40960, 143771}, []float64{s.View().GPUs[0].CapacityMiB, s.View().GPUs[1].CapacityMiB})
	require.True(t, s.View().Pressure)
	_, err = s.Next()
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 1, GPUs: []int{1}}))
	finish := finishTimes(t, s, 2)
	soloS := solo(t, w).Seconds()
	startup := models.Startup(w).Seconds()
	require.InDelta(t, soloS, finish[0], 1e-6)
	require.InDelta(t, startup+2*(soloS-startup), finish[1], 1e-6)
}

// TestMixedServerMemoryPerType: a job whose peak only the larger type
// holds may run only there (TypeMask), and placed on the smaller type
// anyway it fails with OOM there.
func TestMixedServerMemoryPerType(t *testing.T) {
	a100, err := models.LookupGPU("a100-40gb")
	require.NoError(t, err)
	small := models.GPUType{Name: "small-16gb", MemoryMiB: 16384, Pressure: true}
	const big = "vgg16_imagenet_bs128_1gpu"
	w, ok := models.A100().Get(big)
	require.True(t, ok)
	require.Greater(t, w.PeakMiB(), small.MemoryMiB)
	s, err := sim.New(sim.Config{Server: models.Server{Type: small, GPUs: 2}, Truth: exact(), Seed: 1,
		Types:  []sim.TypeTruth{{Type: small, Catalog: models.A100()}, {Type: a100, Catalog: models.A100()}},
		TypeOf: []int{0, 1}}, []traces.Job{{ID: "big", Workload: big, GPUs: 1}})
	require.NoError(t, err)
	require.Equal(t, uint8(2), s.TypeMask(0), "only the A100 holds it")
	_, err = s.Next()
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	for {
		evs, err := s.Next()
		require.NoError(t, err)
		require.NotEmpty(t, evs, "it fails before the run ends")
		for _, e := range evs {
			if e.Kind == policies.JobFailed {
				require.Equal(t, policies.OOM, e.Failure)
				require.Equal(t, 0, e.GPU)
				return
			}
			require.NotEqual(t, policies.JobFinished, e.Kind, "a 21 GiB job cannot finish on 16 GiB")
		}
	}
}
