package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/policies/exclusive"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

func mixed() []traces.Job {
	ws := []string{"resnet18_cifar100_bs128_20e_1gpu", "mobilenet_cifar100_bs128_20e_1gpu", "mnist_bs32_1gpu",
		"xlnet_base_cased_wiki_bs8_2gpu", "resnet18_cifar100_bs64_20e_1gpu", "mnist_bs32_1gpu"}
	var specs []traces.Job
	for i, w := range ws {
		g := 1
		if i == 3 {
			g = 2
		}
		specs = append(specs, traces.Job{ID: w, Workload: w, GPUs: g, Submit: sec * 7 * time.Duration(i)})
	}
	return specs
}

// vandal decides like its policy and then scribbles over the view it was
// given: the backend must not notice.
type vandal struct{ policies.Policy }

func (p vandal) Observe(e policies.Event) {
	if o, ok := p.Policy.(policies.Observer); ok {
		o.Observe(e)
	}
}

func (p vandal) Schedule(v *policies.View) []policies.Action {
	acts := p.Policy.Schedule(v)
	for i := range v.Jobs {
		v.Jobs[i].State = policies.Done
		for k := range v.Jobs[i].On {
			v.Jobs[i].On[k] = 99
		}
	}
	for g := range v.GPUs {
		v.GPUs[g].UsedMiB = -5
		for k := range v.GPUs[g].Jobs {
			v.GPUs[g].Jobs[k] = 1000
		}
	}
	// The queue is read-only (a policies.JobList); a policy can only
	// replace its view's list.
	q := v.Queue.AppendTo(nil)
	for k := range q {
		q[k] = 0
	}
	v.Queue = policies.ListOf(q...)
	return acts
}

func simRun(t *testing.T, p policies.Policy, wrap func(*sim.Sim) loop.Backend) ([]results.Job, []policies.Event) {
	t.Helper()
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100(), Truth: sim.DefaultTruth(), Seed: 3}, mixed())
	require.NoError(t, err)
	rec := &events{}
	col := results.NewCollector(s.Jobs(), rec)
	var b loop.Backend = s
	if wrap != nil {
		b = wrap(s)
	}
	require.NoError(t, loop.Run(context.Background(), b, p, col))
	return col.Jobs(), rec.evs
}

func newAegis(t *testing.T) policies.Policy {
	p, err := aegis.New(nil)
	require.NoError(t, err)
	return p
}

// A policy that writes into its view corrupts only its own snapshot.
func TestPolicyCannotCorruptBackend(t *testing.T) {
	want, _ := simRun(t, newAegis(t), nil)
	got, _ := simRun(t, vandal{newAegis(t)}, nil)
	require.Equal(t, want, got)
}

// flaky fails the first placement of job 0: a placement error is an event,
// not the end of the run.
type flaky struct {
	*sim.Sim
	failed bool
}

func (f *flaky) Apply(a policies.Action) error {
	if a.Kind == policies.Place && a.Job == 0 && !f.failed {
		f.failed = true
		return &loop.PlaceError{T: f.Now(), Job: a.Job, GPUs: a.GPUs, Err: errors.New("GPU vanished")}
	}
	return f.Sim.Apply(a)
}

func TestPlaceErrorIsAnEvent(t *testing.T) {
	jobs, evs := simRun(t, newAegis(t), func(s *sim.Sim) loop.Backend { return &flaky{Sim: s} })
	require.Contains(t, evs, policies.Event{Kind: policies.PlaceFailed, T: 0, Job: 0, GPUs: []int{0}, Reason: "GPU vanished"})
	for _, j := range jobs {
		require.Equal(t, policies.Done, j.State, j.Name)
	}
}

func TestRunCancelled(t *testing.T) {
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100(), Truth: sim.DefaultTruth()}, mixed())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = loop.Run(ctx, s, newAegis(t), results.NewCollector(s.Jobs()))
	require.ErrorIs(t, err, context.Canceled)
}

// Jobs may be added while a run goes on (a live queue): each arrives at its
// submit time or now, whichever is later, and AdvanceTo drives the truth to a
// given time.
func TestLiveQueueAddAndAdvanceTo(t *testing.T) {
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact()}, nil)
	require.NoError(t, err)
	evs, err := s.AdvanceTo(10 * sec)
	require.NoError(t, err)
	require.Empty(t, evs)
	require.Equal(t, 10*sec, s.Now())
	id, err := s.Add(traces.Job{ID: "late", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 2 * sec})
	require.NoError(t, err)
	require.Equal(t, policies.JobID(0), id)
	_, err = s.Add(traces.Job{ID: "bad", Workload: "nope", GPUs: 1})
	require.ErrorContains(t, err, "nope")
	evs, err = s.AdvanceTo(10 * sec)
	require.NoError(t, err)
	require.Equal(t, []policies.Event{{Kind: policies.JobArrived, T: 10 * sec, Job: 0}}, evs)
	require.Equal(t, 10*sec, s.View().Jobs[0].Submit)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	d := solo(t, "mnist_bs32_1gpu")
	evs, err = s.AdvanceTo(10*sec + d - sec)
	require.NoError(t, err)
	require.Len(t, evs, 2) // started, active
	require.Positive(t, s.MemMiB(0, 0))
	evs, err = s.AdvanceTo(10*sec + d)
	require.NoError(t, err)
	require.Equal(t, []policies.Event{{Kind: policies.JobFinished, T: 10*sec + d, Job: 0, Attempt: 1}}, evs)
	require.Zero(t, s.MemMiB(0, 0))
}

// mirror decides like its policy after checking that the view it was given
// (the loop's snapshot) shows every GPU as the simulator's own view does:
// the simulator reports every GPU it changes (loop.ChangeReporter), so
// the loop, which compares and copies only those and a few others in turn,
// misses none.
type mirror struct {
	policies.Policy
	t         *testing.T
	s         *sim.Sim
	decisions int
}

func (p *mirror) Observe(e policies.Event) {
	if o, ok := p.Policy.(policies.Observer); ok {
		o.Observe(e)
	}
}

func (p *mirror) Wants(e policies.Event) bool {
	sel, ok := p.Policy.(policies.Selective)
	return !ok || sel.Wants(e)
}

func (p *mirror) Schedule(v *policies.View) []policies.Action {
	p.decisions++
	require.Equal(p.t, p.s.View().GPUs, v.GPUs, "at t=%v", v.Now)
	return p.Policy.Schedule(v)
}

func TestChangedGPUsReported(t *testing.T) {
	log, err := traces.GenerateLike("venus", 1500, 2, 2)
	require.NoError(t, err)
	tr, err := traces.MapTrace(log.Name, log.Jobs, models.A100(), traces.Exact)
	require.NoError(t, err)
	for i := range tr.Jobs { // a queue on 48 GPUs
		tr.Jobs[i].Submit /= 40
	}
	for _, name := range []string{"exclusive", "aegis"} {
		t.Run(name, func(t *testing.T) {
			s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:48"), Catalog: models.A100(), Truth: sim.DefaultTruth(), Seed: 3}, tr.Jobs)
			require.NoError(t, err)
			var p policies.Policy = &exclusive.Policy{}
			if name == "aegis" {
				p = newAegis(t)
			}
			m := &mirror{Policy: p, t: t, s: s}
			col := results.NewCollector(s.Jobs())
			require.NoError(t, loop.Run(context.Background(), s, m, col))
			require.Greater(t, m.decisions, 1000)
			waited := 0
			for _, j := range col.Jobs() {
				if j.Start-j.Submit > time.Minute {
					waited++
				}
			}
			require.Greater(t, waited, 100, "jobs that queued")
		})
	}
}
