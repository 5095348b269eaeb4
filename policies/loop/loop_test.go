package loop

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// consistent is a view with job 0 running on GPU 1 and job 1 queued.
func consistent() *policies.View {
	return &policies.View{
		GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}, {Index: 1, CapacityMiB: 100, UsedMiB: 50, Jobs: []policies.JobID{0}}},
		Jobs: []policies.Job{
			{ID: 0, GPUs: 1, State: policies.Running, On: []int{1}},
			{ID: 1, GPUs: 1, State: policies.Pending},
		},
		Queue: []policies.JobID{1},
	}
}

func TestCheck(t *testing.T) {
	require.NoError(t, Check(consistent()))
	for _, tc := range []struct {
		name   string
		mutate func(v *policies.View)
		err    string
	}{
		{"memory over capacity", func(v *policies.View) { v.GPUs[1].UsedMiB = 101 }, "measured memory"},
		{"negative memory", func(v *policies.View) { v.GPUs[0].UsedMiB = -1 }, "measured memory"},
		{"GPU lists a pending job", func(v *policies.View) { v.GPUs[0].Jobs = []policies.JobID{1} }, "GPU 0 lists job 1"},
		{"job runs on an unlisting GPU", func(v *policies.View) { v.Jobs[0].On = []int{1, 0}; v.Jobs[0].GPUs = 2 }, "does not list it"},
		{"wrong GPU count", func(v *policies.View) { v.Jobs[0].GPUs = 2 }, "needs 2"},
		{"queued job not pending", func(v *policies.View) { v.Queue = append(v.Queue, 0) }, "queued job 0"},
		{"failed list without failure", func(v *policies.View) { v.Failed = []policies.JobID{1} }, "failed-list job 1"},
		{"bad index", func(v *policies.View) { v.GPUs[1].Index = 7 }, "reports index 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := consistent()
			tc.mutate(v)
			require.ErrorContains(t, Check(v), tc.err)
		})
	}
}
