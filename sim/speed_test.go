package sim_test

import (
	"context"
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

// TestSpeedClasses: a job on a GPU of a speed class runs its active time
// stretched by its workload's factor there (or the utilization slope's),
// a job on any other GPU at its profiled speed; Slots place the classes in
// each server of a cluster.
func TestSpeedClasses(t *testing.T) {
	const w = "resnet18_cifar100_bs128_20e_1gpu"
	speeds := &models.Speeds{Classes: []models.SpeedClass{{Name: "slow", GPUs: []int{1}, Factors: map[string]float64{w: 2.5}}}}
	for _, tc := range []struct {
		name   string
		speeds *models.Speeds
		slots  []int
		want   []float64 // stretch of the active time per GPU
	}{
		{"no classes", nil, nil, []float64{1, 1, 1, 1}},
		{"GPU 1 slow", speeds, nil, []float64{1, 2.5, 1, 1}},
		{"slot 1 of two servers", speeds, []int{0, 1, 0, 1}, []float64{1, 2.5, 1, 2.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs := make([]traces.Job, 4)
			for i := range specs {
				specs[i] = traces.Job{ID: string(rune('a' + i)), Workload: w, GPUs: 1}
			}
			s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:4"), Catalog: models.A100(), Truth: exact(), Seed: 1,
				Speeds: tc.speeds, Slots: tc.slots}, specs)
			require.NoError(t, err)
			rec := &placements{}
			col := results.NewCollector(s.Jobs(), rec)
			require.NoError(t, loop.Run(context.Background(), s, &exclusive.Policy{}, col))
			active := map[policies.JobID]time.Duration{}
			for _, ev := range rec.evs {
				if ev.Kind == policies.JobActive {
					active[ev.Job] = ev.T
				}
			}
			for i, j := range col.Jobs() {
				require.Equal(t, []int{i}, rec.on[policies.JobID(i)], "exclusive: lowest GPU first")
				a := active[policies.JobID(i)]
				stretch := (j.Finish - a).Seconds() / (solo(t, w) - a).Seconds()
				require.InDelta(t, tc.want[i], stretch, 1e-6, "GPU %d", i)
			}
		})
	}
	_, err := sim.New(sim.Config{Server: server(t, "a100-40gb:4"), Catalog: models.A100(), Slots: []int{0, 1}}, nil)
	require.ErrorContains(t, err, "4 GPUs but the slots of 2")
}

// placements records events and where each job was placed.
type placements struct {
	events
	on map[policies.JobID][]int
}

func (p *placements) Action(a policies.Action) {
	if a.Kind == policies.Place {
		if p.on == nil {
			p.on = map[policies.JobID][]int{}
		}
		p.on[a.Job] = a.GPUs
	}
}
