package loop

import (
	"time"

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

// corrupting is a backend that wakes up every second and, from its tenth
// instant on, lists its done job 0 in the queue without any event about it.
type corrupting struct {
	v *policies.View
	n int
}

func (c *corrupting) Next() ([]policies.Event, error) {
	c.n++
	c.v.Now = time.Duration(c.n) * time.Second
	if c.n == 10 {
		c.v.Queue = append(c.v.Queue, 0)
	}
	if c.n > 1000 {
		return nil, nil
	}
	return []policies.Event{policies.Wakeup{T: c.v.Now}}, nil
}
func (c *corrupting) View() *policies.View        { return c.v }
func (c *corrupting) Apply(policies.Action) error { return nil }

type idle struct{}

func (idle) Name() string                              { return "idle" }
func (idle) Schedule(*policies.View) []policies.Action { return nil }

type discard struct{}

func (discard) Event(policies.Event)   {}
func (discard) Action(policies.Action) {}

// The loop checks only what changed at most decisions, but the whole view
// periodically: a queue corrupted without an event is still reported.
func TestCorruptQueueFound(t *testing.T) {
	v := &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
		Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Done}}}
	err := Run(&corrupting{v: v}, idle{}, discard{})
	require.ErrorContains(t, err, "queued job 0 is not pending")
	require.ErrorContains(t, err, "t=")
}
