package sim_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/exclusive"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// TestEnergy meters one job alone on a 2-GPU server: both GPUs idle but
// the job's while it is active, which draws idle + busy + the memory term
// at its peak. Each part of the model moves the energy by its own share
// (a test that fails when a term is dropped), and the board limit caps it.
func TestEnergy(t *testing.T) {
	const w = "resnet18_cifar100_bs128_20e_1gpu"
	specs := []traces.Job{{ID: "a", Workload: w, GPUs: 1, Submit: 5 * sec}}
	prof, ok := models.A100().Get(w)
	require.True(t, ok)
	peakGiB := prof.PeakMiB() / 1024
	energy := func(pm *models.PowerModel) (float64, float64, float64) {
		s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100(), Truth: exact(), Seed: 1, Power: pm}, specs)
		require.NoError(t, err)
		rec := &events{}
		col := results.NewCollector(s.Jobs(), rec)
		require.NoError(t, loop.Run(context.Background(), s, &exclusive.Policy{}, col))
		var active float64
		for _, e := range rec.evs {
			if e.Kind == policies.JobActive {
				active = e.T.Seconds()
			}
		}
		end := col.Jobs()[0].Finish
		e, ok := s.Energy(5*sec, end)
		require.True(t, ok)
		return e, end.Seconds() - 5, end.Seconds() - active
	}
	pm := &models.PowerModel{IdleW: 50, BusyW: 100, MemWPerGiB: 2, BoardW: 400}
	e, span, busy := energy(pm)
	require.Greater(t, busy, 0.0)
	require.InDelta(t, 2*50*span+(100+2*peakGiB)*busy, e, 1e-6)
	noMem := *pm
	noMem.MemWPerGiB = 0
	e2, _, _ := energy(&noMem)
	require.InDelta(t, 2*peakGiB*busy, e-e2, 1e-6, "the memory term")
	capped := *pm
	capped.BoardW = 120
	e3, _, _ := energy(&capped)
	require.InDelta(t, 2*50*span+70*busy, e3, 1e-6, "the board limit")
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100(), Truth: exact(), Seed: 1}, specs)
	require.NoError(t, err)
	_, ok = s.Energy(0, 0)
	require.False(t, ok, "no power model, no energy")
}

// TestPowerAt reads a GPU's power at a time as the meter draws it: idle
// before the job and on the GPU without it, idle + busy + the memory term
// at its peak while it is active; none without a power model.
func TestPowerAt(t *testing.T) {
	const w = "resnet18_cifar100_bs128_20e_1gpu"
	prof, ok := models.A100().Get(w)
	require.True(t, ok)
	pm := &models.PowerModel{IdleW: 50, BusyW: 100, MemWPerGiB: 2, BoardW: 400}
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100(), Truth: exact(), Seed: 1, Power: pm},
		[]traces.Job{{ID: "a", Workload: w, GPUs: 1, Submit: 5 * sec}})
	require.NoError(t, err)
	_, err = s.AdvanceTo(5 * sec)
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	for !s.View().Jobs[0].Active {
		_, err = s.AdvanceTo(s.Now() + sec)
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		g    int
		at   time.Duration
		want float64
	}{{0, 2 * sec, 50}, {0, s.Now(), 150 + 2*prof.PeakMiB()/1024}, {1, s.Now(), 50}} {
		p, ok := s.PowerAt(tc.g, tc.at)
		require.True(t, ok)
		require.InDelta(t, tc.want, p, 1e-9, "GPU %d at %v", tc.g, tc.at)
	}
	s, err = sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact(), Seed: 1}, nil)
	require.NoError(t, err)
	_, ok = s.PowerAt(0, 0)
	require.False(t, ok, "no power model, no power")
}

// TestSecondPower checks the power given with each telemetry sample
// (Config.Samples): a second's power is what the GPU's energy meter
// charges for it, so a GPU's powers over its seconds sum to its metered
// energy up to the end of the last one, a second without a change draws
// the power in force (PowerAt), and a GPU type without a power model gives
// none (NaN). The demo trace under Exclusive changes GPUs mid-second; with
// the default truth (noise, memory ramp) and exactly.
func TestSecondPower(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	specs := make([]traces.Job, len(tr.Jobs))
	for i, j := range tr.Jobs {
		specs[i] = traces.Job{ID: j.ID, Workload: j.Workload, GPUs: j.GPUs, Submit: j.Submit}
	}
	pm := models.A100Power()
	for _, tc := range []struct {
		name  string
		truth sim.Truth
		power *models.PowerModel
	}{
		{"default truth", sim.DefaultTruth(), pm},
		{"exact", exact(), pm},
		{"no power model", sim.DefaultTruth(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const gpus = 3
			var got [gpus][]float64
			s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:3"), Catalog: models.A100(), Interference: models.DefaultInterference(),
				Truth: tc.truth, Seed: 3, Power: tc.power,
				Samples: func(g int, k int64, _ policies.Sample, w float64) {
					require.Len(t, got[g], int(k), "GPU %d: seconds in order", g)
					got[g] = append(got[g], w)
				}}, specs)
			require.NoError(t, err)
			col := results.NewCollector(s.Jobs())
			require.NoError(t, loop.Run(context.Background(), s, &exclusive.Policy{}, col))
			mid := 0 // seconds that a change of the GPU's jobs splits
			for g := range gpus {
				require.NotEmpty(t, got[g])
				end := time.Duration(len(got[g])) * sec
				e, ok := s.GPUEnergyTo(g, end)
				require.Equal(t, tc.power != nil, ok)
				if tc.power == nil {
					for k, w := range got[g] {
						require.True(t, math.IsNaN(w), "GPU %d second %d: %v without a power model", g, k, w)
					}
					continue
				}
				var sum float64
				for k, w := range got[g] {
					require.GreaterOrEqual(t, w, pm.IdleW, "GPU %d second %d", g, k)
					require.LessOrEqual(t, w, pm.BoardW, "GPU %d second %d", g, k)
					at, ok := s.PowerAt(g, time.Duration(k)*sec)
					require.True(t, ok)
					if math.Abs(at-w) > 1e-9 {
						mid++
					}
					sum += w
				}
				require.InDelta(t, e, sum, 1e-9*e, "GPU %d: powers summed vs metered energy", g)
				require.Equal(t, pm.IdleW, got[g][0], "GPU %d idles at second 0", g)
			}
			if tc.power != nil {
				require.Greater(t, mid, 10, "seconds split by a change")
			}
		})
	}
}
