package bestfit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// view builds a View of 40960 MiB GPUs: running[g] lists the (peak MiB,
// util %) of the jobs running on GPU g; queued are the pending jobs' (peak,
// util, GPUs), in order.
func view(running [][][2]float64, queued ...[3]float64) *policies.View {
	v := &policies.View{}
	for g, js := range running {
		v.GPUs = append(v.GPUs, policies.GPU{Index: g, CapacityMiB: 40960})
		for _, pu := range js {
			id := policies.JobID(len(v.Jobs))
			v.Jobs = append(v.Jobs, policies.Job{ID: id, GPUs: 1, State: policies.Running, On: []int{g},
				Profile: policies.Profile{PeakMiB: pu[0], UtilPct: pu[1]}})
			v.GPUs[g].Jobs = append(v.GPUs[g].Jobs, id)
		}
	}
	var q []policies.JobID
	for _, x := range queued {
		id := policies.JobID(len(v.Jobs))
		v.Jobs = append(v.Jobs, policies.Job{ID: id, GPUs: int(x[2]), State: policies.Pending,
			Profile: policies.Profile{PeakMiB: x[0], UtilPct: x[1]}})
		q = append(q, id)
	}
	v.Queue = policies.ListOf(q...)
	return v
}

func place(job policies.JobID, gpus ...int) policies.Action {
	return policies.Action{Kind: policies.Place, Job: job, GPUs: gpus}
}

func deferral(job policies.JobID, g int, reason string) policies.Action {
	return policies.Action{Kind: policies.Defer, Job: job, GPU: g, Reason: reason}
}

// Each rule of the policy on a hand-built View: the tightest GPU wins, the
// memory guard and the utilization cap refuse, a blocked head blocks the
// queue, a GPU given in the decision counts what it was given, and a
// multi-GPU job takes the tightest GPUs in index order.
func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v      *policies.View
		params map[string]string
		want   []policies.Action
	}{
		{"tightest fit over idle and looser GPUs",
			view([][][2]float64{{{10000, 30}}, {{30000, 30}}, {}}, [3]float64{8000, 30, 1}), nil,
			[]policies.Action{place(2, 1)}},
		{"memory guard: 30500 + 10000 + 512 > 40960",
			view([][][2]float64{{{30500, 10}}}, [3]float64{10000, 10, 1}), nil,
			[]policies.Action{deferral(1, 0, "memory")}},
		{"a smaller guard admits it",
			view([][][2]float64{{{30500, 10}}}, [3]float64{10000, 10, 1}), map[string]string{"guard_mib": "0"},
			[]policies.Action{place(1, 0)}},
		{"utilization cap",
			view([][][2]float64{{{1000, 60}}}, [3]float64{1000, 50, 1}), map[string]string{"util_cap": "100"},
			[]policies.Action{deferral(1, 0, "utilization")}},
		{"strict FIFO: a blocked head blocks the small job behind it",
			view([][][2]float64{{{30000, 10}}}, [3]float64{20000, 10, 1}, [3]float64{1000, 10, 1}), nil,
			[]policies.Action{deferral(1, 0, "memory")}},
		{"a GPU given in this decision counts its new job",
			view([][][2]float64{{}}, [3]float64{30000, 10, 1}, [3]float64{20000, 10, 1}), nil,
			[]policies.Action{place(0, 0), deferral(1, 0, "memory")}},
		{"two GPUs: the two tightest, in index order",
			view([][][2]float64{{{20000, 10}}, {}, {{30000, 10}}}, [3]float64{5000, 10, 2}), nil,
			[]policies.Action{place(2, 0, 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.params)
			require.NoError(t, err)
			require.Equal(t, tc.want, p.Schedule(tc.v))
		})
	}
}

// A failed job is stopped unless it failed with OOM while sharing; then it
// runs again on an idle GPU only.
func TestFailures(t *testing.T) {
	v := view([][][2]float64{{{1000, 10}}, {}}, [3]float64{1000, 10, 1}, [3]float64{1000, 10, 1}, [3]float64{1000, 10, 1})
	v.Jobs[1].LastFailure, v.Jobs[1].FailedShared = policies.OOM, true
	v.Jobs[2].LastFailure = policies.OOM
	v.Jobs[3].LastFailure, v.Jobs[3].FailedShared = policies.OtherFailure, true
	p, err := New(nil)
	require.NoError(t, err)
	require.Equal(t, []policies.Action{
		place(1, 1),
		{Kind: policies.Stop, Job: 2, Reason: "failed alone: oom"},
		{Kind: policies.Stop, Job: 3, Reason: "failed alone: other"},
	}, p.Schedule(v))

	v.GPUs[1].Jobs = []policies.JobID{0} // no idle GPU left: the retry waits
	v.GPUs[0].Jobs = nil
	v.GPUs[0].Jobs = []policies.JobID{0}
	v.Jobs[2].LastFailure, v.Jobs[3].LastFailure = policies.NoFailure, policies.NoFailure
	require.Equal(t, []policies.Action{deferral(1, 0, "exclusive"), deferral(1, 1, "exclusive")}, p.Schedule(v))
}

func TestParams(t *testing.T) {
	_, err := New(map[string]string{"util_cap": "0"})
	require.ErrorContains(t, err, "util_cap")
	_, err = New(map[string]string{"utilcap": "50"})
	require.ErrorContains(t, err, `unknown parameter "utilcap"`)
}
