package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// Withdraw puts a job back in the queue whatever the model made of its
// attempt (the emulator's mirror of a process that ended otherwise): a
// running attempt leaves its GPU, a finished job is pending again, and
// either is placed again and runs its whole solo time from its new launch;
// a pending job stays as it is, and an unknown one is an error.
func TestWithdraw(t *testing.T) {
	const w, solo = "resnet18_cifar100_bs128_20e_1gpu", 600 * time.Second
	tests := []struct {
		name  string
		after time.Duration // when the first attempt is withdrawn (after its launch at 0)
		state policies.State
	}{
		{"running", 100 * time.Second, policies.Running},
		{"finished", solo + 10*time.Second, policies.Done},
		{"pending", -1, policies.Pending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100(), Truth: exact(), Seed: 1},
				[]traces.Job{{ID: "a", Workload: w, GPUs: 1, SoloS: solo.Seconds()}})
			require.NoError(t, err)
			_, err = s.AdvanceTo(0)
			require.NoError(t, err)
			if tt.after >= 0 {
				require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
				_, err = s.AdvanceTo(tt.after)
				require.NoError(t, err)
			}
			require.Equal(t, tt.state, s.View().Jobs[0].State)
			require.NoError(t, s.Withdraw(0))
			v := s.View()
			require.Equal(t, policies.Pending, v.Jobs[0].State)
			require.Equal(t, 1, v.Queue.Len(), "the job is queued once")
			require.Empty(t, v.GPUs[0].Jobs, "nothing is left on its GPU")
			require.Empty(t, v.Jobs[0].On)
			again := s.Now()
			require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{1}}))
			var end time.Duration
			for end == 0 {
				evs, err := s.AdvanceTo(s.Now() + time.Minute)
				require.NoError(t, err)
				for _, e := range evs {
					require.NotEqual(t, policies.JobFailed, e.Kind, "a withdrawn attempt counts no failure")
					if e.Kind == policies.JobFinished {
						end = e.T
					}
				}
			}
			require.Equal(t, again+solo, end, "the new attempt runs its solo time from its launch")
			require.Zero(t, s.View().Jobs[0].OOMs)
		})
	}
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact(), Seed: 1}, nil)
	require.NoError(t, err)
	require.EqualError(t, s.Withdraw(3), "sim: withdraw job 3: no such job")
}
