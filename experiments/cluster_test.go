package experiments

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/traces"
)

// TestOneServerClusterIsTheServer: a cluster of one server runs exactly
// as that server (every output byte, but jobs.csv's server column), under
// every policy: the dispatcher adds routing, nothing else.
func TestOneServerClusterIsTheServer(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	c, err := models.ParseCluster("a100-40gb:3x1")
	require.NoError(t, err)
	for _, policy := range registry.Builtin() {
		t.Run(policy, func(t *testing.T) {
			var ev1, ev2 bytes.Buffer
			plain, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: c.Server(), Policy: policy, Seed: 2}, &ev1)
			require.NoError(t, err)
			cl, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: policy, Seed: 2}, &ev2)
			require.NoError(t, err)
			require.Equal(t, ev1.String(), ev2.String())
			require.Nil(t, plain.Servers)
			f1, err := plain.Files(ev1.Bytes())
			require.NoError(t, err)
			f2, err := cl.Files(ev2.Bytes())
			require.NoError(t, err)
			for name := range f1 {
				if name != "jobs.csv" {
					require.Equal(t, string(f1[name]), string(f2[name]), name)
				}
			}
			var cut []string
			for i, line := range strings.Split(strings.TrimSpace(string(f2["jobs.csv"])), "\n") {
				k := strings.LastIndex(line, ",")
				want := "0"
				if i == 0 {
					want = "server"
				}
				require.Equal(t, want, line[k+1:])
				cut = append(cut, line[:k])
			}
			require.Equal(t, strings.TrimSpace(string(f1["jobs.csv"])), strings.Join(cut, "\n"))
		})
	}
}

// TestClusterPlacement: on two servers of 4 GPUs, no job of at most 4 GPUs
// spans servers, an 8-GPU job on a 1-GPU workload runs on both whole
// servers (its profile per GPU, its trace length), and every job finishes.
func TestClusterPlacement(t *testing.T) {
	tr := &traces.Trace{Name: "t"}
	for i := range 12 {
		tr.Jobs = append(tr.Jobs, traces.Job{ID: strconv.Itoa(i), Submit: time.Duration(i) * time.Second,
			Workload: "resnet18_cifar100_bs128_20e_1gpu", GPUs: 1 + i%3})
	}
	tr.Jobs[2].GPUs = 4
	tr.Jobs = append(tr.Jobs, traces.Job{ID: "big", Submit: 20 * time.Second, Workload: "resnet18_cifar100_bs128_20e_1gpu", GPUs: 8, SoloS: 500})
	c, err := models.ParseCluster("a100-40gb:4x2")
	require.NoError(t, err)
	for _, policy := range registry.Builtin() {
		for _, dispatch := range []string{"bestfit", "firstfit", "leastloaded"} {
			o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: policy, Params: map[string]string{"dispatch": dispatch}, Seed: 1}, nil)
			require.NoError(t, err, "%s %s", policy, dispatch)
			require.Equal(t, len(tr.Jobs), o.Summary.Finished, "%s %s", policy, dispatch)
			for i, j := range tr.Jobs {
				if j.GPUs <= 4 {
					require.Contains(t, []string{"0", "1"}, o.Servers[i], "%s %s job %s", policy, dispatch, j.ID)
				}
			}
			big := o.Jobs[len(tr.Jobs)-1]
			require.Equal(t, "0+1", o.Servers[len(tr.Jobs)-1])
			require.InDelta(t, 500, big.SoloS, 1e-9)
			require.GreaterOrEqual(t, big.Exec, 500*time.Second)
		}
	}
}

func TestClusterErrors(t *testing.T) {
	c, err := models.ParseCluster("a100-40gb:4x2")
	require.NoError(t, err)
	one := func(w string, gpus int) *traces.Trace {
		return &traces.Trace{Name: "t.csv", Lines: []int{2}, Jobs: []traces.Job{{ID: "0", Workload: w, GPUs: gpus}}}
	}
	for _, tc := range []struct {
		name   string
		trace  *traces.Trace
		params map[string]string
		err    string
	}{
		{"unknown dispatch", one("mnist_bs32_1gpu", 1), map[string]string{"dispatch": "random"}, `"random"`},
		{"policy key still checked", one("mnist_bs32_1gpu", 1), map[string]string{"holdd": "1s"}, "holdd"},
		{"more GPUs than the cluster", one("mnist_bs32_1gpu", 16), nil, "num_gpus: 16 GPUs, but the cluster has 8"},
		{"not a multiple of the workload", one("gpt2_large_wiki_bs8_2gpu", 3), nil, "t.csv:2: job 0: column num_gpus: 3, but workload gpt2_large_wiki_bs8_2gpu needs 2 (a cluster run takes a multiple of it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tc.trace, Cluster: &c, Policy: "aegis", Params: tc.params, Seed: 1}, nil)
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// TestClusterSkipChangesNothing: skipping the servers whose view did not
// change (which needs the dispatcher to observe events) gives the same
// bytes as asking every server at every decision (a wrapper that hides
// Observe), on four servers under every policy, on a trace where the two
// coincide: it fails if a server whose view changed is skipped. (On a
// backlog they differ by design: a skipped server decides on its own
// ticks, not at other servers' events; docs/simulator.md, Clusters.)
func TestClusterSkipChangesNothing(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	c, err := models.ParseCluster("a100-40gb:1x4")
	require.NoError(t, err)
	type hide struct{ policies.Policy }
	for _, policy := range registry.Builtin() {
		var ev1, ev2 bytes.Buffer
		o1, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: policy, Seed: 3}, &ev1)
		require.NoError(t, err)
		o2, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: policy, Seed: 3,
			Wrap: func(p policies.Policy) policies.Policy { return hide{p} }}, &ev2)
		require.NoError(t, err)
		require.Equal(t, ev2.String(), ev1.String(), policy)
		f1, err := o1.Files(nil)
		require.NoError(t, err)
		f2, err := o2.Files(nil)
		require.NoError(t, err)
		require.Equal(t, f2, f1, policy)
	}
}

// TestClusterAegisSkipsExactly: on a saturated cluster with jobs of 1–8
// GPUs (a backlog, so that heads wait on windows that flip), AEGIS's
// horizons (foreseen windows, refined lazily) and the dispatcher's reuse of
// its routing after a mere wake-up change no output byte: the same files as
// deciding at every tick (skip=off, every verdict computed afresh) with
// every server asked and routed at every decision (Observe hidden).
func TestClusterAegisSkipsExactly(t *testing.T) {
	tr := clusterTrace(t, 50, 2)
	c, err := models.ParseCluster("a100-40gb:8x2")
	require.NoError(t, err)
	type hide struct{ policies.Policy }
	on, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: "aegis", Seed: 1}, nil)
	require.NoError(t, err)
	off, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Cluster: &c, Policy: "aegis", Seed: 1, Params: map[string]string{"skip": "off"},
		Wrap: func(p policies.Policy) policies.Policy { return hide{p} }}, nil)
	require.NoError(t, err)
	fOn, err := on.Files(nil)
	require.NoError(t, err)
	fOff, err := off.Files(nil)
	require.NoError(t, err)
	for name := range fOff {
		require.Equal(t, string(fOff[name]), string(fOn[name]), name)
	}
	// 15,580 events against 36,931 (2,690 against 136,604 before
	// models.DepthOverlapA100): on GPUs with more than 5 jobs the
	// readings now straddle the pressure rule, where no horizon can
	// foresee the verdict (docs/crowding.md, "A depth term").
	require.Less(t, 2*on.Events, off.Events, "skipping decides far less often")
}
