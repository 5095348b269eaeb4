package assemble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// outputs runs the demo trace and returns its three output files, the
// event log piped when pipe.
func outputs(t testing.TB, policy string, params map[string]string, seed uint64, pipe ...bool) (jobs, summary, events []byte) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	var ev, jb, sm bytes.Buffer
	o, err := Simulate(context.Background(), Run{Trace: tr, Server: srv, Policy: policy, Params: params, Seed: seed,
		PipeOutputs: len(pipe) > 0 && pipe[0]}, &ev)
	require.NoError(t, err)
	require.NoError(t, results.WriteJobsCSV(&jb, o.Jobs))
	require.NoError(t, results.WriteSummaryCSV(&sm, o.Summary))
	return jb.Bytes(), sm.Bytes(), ev.Bytes()
}

func TestSameSeedSameBytes(t *testing.T) {
	type cfg struct {
		policy string
		params map[string]string
	}
	var cfgs []cfg
	for _, p := range registry.Builtin() {
		cfgs = append(cfgs, cfg{p, nil})
	}
	cfgs = append(cfgs, cfg{"aegis", map[string]string{"recovery": "ladder", "placement": "rr"}},
		cfg{"horus", map[string]string{"variant": "original"}},
		cfg{"lucid", map[string]string{"variant": "original", "lookahead": "3"}})
	for _, c := range cfgs {
		t.Run(fmt.Sprint(c.policy, c.params), func(t *testing.T) {
			j1, s1, e1 := outputs(t, c.policy, c.params, 7)
			prev := runtime.GOMAXPROCS(1)
			j2, s2, e2 := outputs(t, c.policy, c.params, 7)
			runtime.GOMAXPROCS(prev)
			_, _, e3 := outputs(t, c.policy, c.params, 7, true) // the piped event log's bytes are the log's
			require.Equal(t, string(e1), string(e3))
			require.Equal(t, string(j1), string(j2))
			require.Equal(t, string(s1), string(s2))
			require.Equal(t, string(e1), string(e2))
			require.NotEmpty(t, e1)
		})
	}
}

func TestSeedChangesStartupJitter(t *testing.T) {
	_, _, e1 := outputs(t, "exclusive", nil, 1)
	_, _, e2 := outputs(t, "exclusive", nil, 2)
	require.NotEqual(t, string(e1), string(e2))
}

// cancelAt is a policy that cancels the run's context at its n-th
// decision.
type cancelAt struct {
	policies.Policy
	n, calls int
	cancel   context.CancelFunc
}

func (c *cancelAt) Schedule(v *policies.View) []policies.Action {
	if c.calls++; c.calls == c.n {
		c.cancel()
	}
	return c.Policy.Schedule(v)
}

// A cancelled run stops at its next step with the context's error, named
// with the trace and policy: a long run can be interrupted, before it
// starts or at any decision.
func TestSimulateCancelled(t *testing.T) {
	log, err := traces.GenerateLike("venus", 5000, 1, 2)
	require.NoError(t, err)
	tr, err := traces.MapTrace(log.Name, log.Jobs, models.A100(), traces.Exact)
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:8")
	require.NoError(t, err)
	for _, c := range []struct {
		at   int
		pipe bool
	}{{0, false}, {1, false}, {100, false}, {1, true}, {100, true}} {
		at := c.at
		t.Run(fmt.Sprint("at decision ", at, " piped ", c.pipe), func(t *testing.T) {
			goroutines := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if at == 0 {
				cancel()
			}
			p := &cancelAt{n: at, cancel: cancel}
			wrap := func(in policies.Policy) policies.Policy { p.Policy = in; return p }
			r := Run{Trace: tr, Server: srv, Policy: "exclusive", Seed: 1, Wrap: wrap, PipeOutputs: c.pipe}
			if c.pipe {
				r.Jobs = io.Discard // rows piped too
			}
			o, err := Simulate(ctx, r, io.Discard)
			require.ErrorIs(t, err, context.Canceled)
			for end := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			require.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "the piped log's goroutine ends with the run")
			require.ErrorContains(t, err, "policy exclusive")
			require.Nil(t, o)
			require.Equal(t, at, p.calls, "no decision after the cancel")
		})
	}
}

// Piped outputs are the outputs: the event log and streamed jobs.csv of a
// queued 3,000-job run, with and without PipeOutputs.
func TestPipeOutputsSameBytes(t *testing.T) {
	log, err := traces.GenerateLike("venus", 3000, 1, 2)
	require.NoError(t, err)
	tr, err := traces.MapTrace(log.Name, log.Jobs, models.A100(), traces.Exact)
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:4")
	require.NoError(t, err)
	run := func(pipe bool) (jobs, events string, s results.Summary) {
		var jb, ev bytes.Buffer
		o, err := Simulate(context.Background(), Run{Trace: tr, Server: srv, Policy: "lucid", Seed: 1, Jobs: &jb, PipeOutputs: pipe}, &ev)
		require.NoError(t, err)
		return jb.String(), ev.String(), o.Summary
	}
	j1, e1, s1 := run(false)
	j2, e2, s2 := run(true)
	require.Equal(t, j1, j2)
	require.Equal(t, e1, e2)
	require.Equal(t, s1, s2)
	require.Contains(t, e1, `"event":"defer"`)
	require.Greater(t, strings.Count(j1, "\n"), 3000)
}

// Run.Check refuses what Simulate could not run, before it runs: bad
// parameters as *policies.ParamError of their scope, a policy a GPU type
// cannot serve, truth a GPU type cannot hold, a job the hardware cannot run.
// TestCombineReplacesTelemetry: Run.Combine is the combination the
// simulator samples with (a refit's u1): the GPU type's own gives the
// same telemetry as none, another u1 another telemetry.
func TestCombineReplacesTelemetry(t *testing.T) {
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	tel := func(c *models.TelemetryParams) string {
		var b bytes.Buffer
		_, err := Simulate(context.Background(), Run{Trace: tr, Server: srv, Policy: "aegis", Seed: 1, Telemetry: &b, Combine: c}, nil)
		require.NoError(t, err)
		return b.String()
	}
	own := models.DefaultTelemetry()
	other := own
	other.SteadySaturation = 2
	none := tel(nil)
	require.Equal(t, none, tel(&own))
	require.NotEqual(t, none, tel(&other))
}

func TestRunCheck(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	mixed, err := models.ParseCluster("a100-40gb:8x2,legacy-11gb:8x1")
	require.NoError(t, err)
	tr, err := traces.Load("demo")
	require.NoError(t, err)
	small := *tr
	small.Jobs = append([]traces.Job(nil), tr.Jobs...)
	small.Jobs[0].Workload = "nosuch"
	big := sim.Truth{ContextMiB: 20000}
	for _, tc := range []struct {
		name       string
		r          Run
		scope, key string // of the *policies.ParamError; "" for another error
		want       string
	}{
		{"fine", Run{Trace: tr, Server: srv, Policy: "aegis"}, "", "", ""},
		{"fine cluster", Run{Cluster: &mixed, Policy: "exclusive", Params: map[string]string{"dispatch": "firstfit"}}, "", "", ""},
		{"policy parameter", Run{Server: srv, Policy: "aegis", Params: map[string]string{"hold": "forever"}}, "policy aegis", "hold", `policy aegis: parameter hold="forever"`},
		{"filter", Run{Server: srv, Policy: "aegis", Params: map[string]string{"filter": "util:0"}}, "policy aegis", "filter", `want util:<pct> with pct in (0, 100]`},
		{"dispatcher parameter", Run{Cluster: &mixed, Policy: "exclusive", Params: map[string]string{"dispatch": "worst"}}, "cluster", "dispatch", `cluster: parameter dispatch="worst"`},
		{"policy on a type without pressure", Run{Cluster: &mixed, Policy: "aegis"}, "", "", "policy aegis on legacy-11gb:8: filter=pressure needs"},
		{"truth on a type", Run{Cluster: &mixed, Policy: "exclusive", Truth: &big}, "truth", "context_mib", "want at most the legacy-11gb GPU's 11264 MiB"},
		{"trace", Run{Trace: &small, Server: srv, Policy: "exclusive"}, "", "", `"nosuch" is not in the a100-40gb catalog`},
		{"combination", Run{Server: srv, Policy: "aegis", Combine: &models.TelemetryParams{SteadySaturation: -1}}, "", "", "telemetry combination: steady_saturation -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Check()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
			var pe *policies.ParamError
			require.Equal(t, tc.scope != "", errors.As(err, &pe), "a *policies.ParamError")
			if pe != nil {
				require.Equal(t, [2]string{tc.scope, tc.key}, [2]string{pe.Scope, pe.Key})
			}
		})
	}
}

// TestServerRecorder: the server column of a job's latest attempt, one
// server held as a number and several as their joined names, as the
// former string a job gave them.
func TestServerRecorder(t *testing.T) {
	d, err := registry.NewDispatcher("exclusive", nil, []int{2, 2, 2})
	require.NoError(t, err)
	r := newServerRecorder(d, 5)
	start := func(id policies.JobID, gpus ...int) {
		r.Event(policies.Event{Kind: policies.JobStarted, Job: id, GPUs: gpus})
	}
	start(0, 4, 5)
	start(1, 1, 2, 0)
	start(2, 1, 2)
	start(2, 3) // a later attempt on one server replaces the span
	start(3, 0)
	start(3, 0, 2) // and a span replaces one server
	start(9, 0)    // past the jobs: ignored
	r.Event(policies.Event{Kind: policies.JobFinished, Job: 4, GPUs: []int{0}})
	var got []string
	for id := range 5 {
		got = append(got, r.server(policies.JobID(id)))
	}
	require.Equal(t, []string{"2", "0+1+0", "1", "0+1", ""}, got)
	require.Len(t, r.span, 2)
}

// TestReleaseTraceChangesNothing: a run that lets go of its trace's jobs
// once the simulator has its own (Run.ReleaseTrace) empties the trace and
// writes the same bytes, on a server and on a cluster.
func TestReleaseTraceChangesNothing(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	cl, err := models.ParseCluster("a100-40gb:2x2")
	require.NoError(t, err)
	for _, c := range []struct {
		name, policy string
		cluster      *models.Cluster
	}{{"server", "aegis", nil}, {"server", "lucid", nil}, {"cluster", "exclusive", &cl}} {
		t.Run(c.name+"/"+c.policy, func(t *testing.T) {
			run := func(release bool) (jobs, events string, s results.Summary, tr *traces.Trace) {
				tr, err := traces.Load("demo")
				require.NoError(t, err)
				var jb, ev bytes.Buffer
				o, err := Simulate(context.Background(), Run{Trace: tr, Server: srv, Cluster: c.cluster, Policy: c.policy, Seed: 3,
					Jobs: &jb, PipeOutputs: true, ReleaseTrace: release}, &ev)
				require.NoError(t, err)
				return jb.String(), ev.String(), o.Summary, tr
			}
			j1, e1, s1, t1 := run(false)
			j2, e2, s2, t2 := run(true)
			require.Equal(t, j1, j2)
			require.Equal(t, e1, e2)
			require.Equal(t, s1, s2)
			require.NotNil(t, s1.Energy, "the energy meter's start is kept")
			require.NotEmpty(t, t1.Jobs)
			require.True(t, t2.Jobs == nil && t2.Lines == nil, "the trace's jobs released")
			require.Equal(t, t1.Name, t2.Name)
		})
	}
}

// TestSimRefusesWhatCheckRefuses: Simulate checks a trace on a server of
// one GPU type only when the simulator cannot be built, so sim.New must
// refuse every job check refuses; Simulate then returns check's error
// (the trace's file and line), on a server and on a cluster.
func TestSimRefusesWhatCheckRefuses(t *testing.T) {
	const one, two = "mnist_bs32_1gpu", "xlnet_base_cased_wiki_bs8_2gpu"
	cl, err := models.ParseCluster("a100-40gb:2x2")
	require.NoError(t, err)
	for _, srvName := range []string{"a100-40gb:3", "a100-40gb:1", "cluster"} {
		for _, tc := range []struct {
			name     string
			workload string
			gpus     int
		}{
			{"fine", one, 1}, {"unknown workload", "nosuch", 1}, {"twice its GPUs", one, 2}, {"a multiple", two, 4},
			{"not a multiple", two, 3}, {"fewer GPUs", two, 1}, {"wider than the server", one, 5}, {"its own GPUs", two, 2},
		} {
			t.Run(srvName+"/"+tc.name, func(t *testing.T) {
				tr, err := traces.Load("demo")
				require.NoError(t, err)
				tr.Jobs = append([]traces.Job(nil), tr.Jobs...)
				tr.Jobs[1].Workload, tr.Jobs[1].GPUs = tc.workload, tc.gpus
				r := Run{Trace: tr, Policy: "exclusive"}
				if srvName == "cluster" {
					r.Cluster = &cl
					r.Server = cl.Server()
				} else if r.Server, err = models.ParseServer(srvName); err != nil {
					require.NoError(t, err)
				}
				cat, err := models.CatalogFor(r.Server.Type)
				require.NoError(t, err)
				want := check(tr, r.Server, cat, r.Cluster != nil)
				_, err = Simulate(context.Background(), r, io.Discard)
				if want == nil {
					require.NoError(t, err)
					return
				}
				require.EqualError(t, err, want.Error())
			})
		}
	}
}
