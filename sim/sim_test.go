package sim_test

import (
	"context"
	"fmt"
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

const sec = time.Second

func server(t *testing.T, s string) models.Server {
	t.Helper()
	srv, err := models.ParseServer(s)
	require.NoError(t, err)
	return srv
}

// exact returns truth settings without startup jitter or noise, so a job
// alone finishes exactly its solo time after launch.
func exact() sim.Truth {
	tr := sim.DefaultTruth()
	tr.StartupJitter, tr.Noise = 0, 0
	return tr
}

func run(t *testing.T, srv string, truth sim.Truth, p policies.Policy, specs []traces.Job) ([]results.Job, *sim.Sim, []policies.Event) {
	t.Helper()
	s, err := sim.New(sim.Config{Server: server(t, srv), Catalog: models.A100(), Truth: truth, Seed: 1}, specs)
	require.NoError(t, err)
	rec := &events{}
	col := results.NewCollector(s.Jobs(), rec)
	require.NoError(t, loop.Run(context.Background(), s, p, col))
	return col.Jobs(), s, rec.evs
}

type events struct{ evs []policies.Event }

func (e *events) Event(ev policies.Event) { e.evs = append(e.evs, ev) }
func (e *events) Action(policies.Action)  {}

func solo(t *testing.T, id string) time.Duration {
	w, ok := models.A100().Get(id)
	require.True(t, ok)
	return time.Duration(w.SoloS * float64(time.Second))
}

func near(t *testing.T, want, got time.Duration, msg string) {
	t.Helper()
	require.InDelta(t, want.Seconds(), got.Seconds(), 1e-6, msg)
}

// Four one-GPU jobs on three GPUs: three start at once, the fourth takes
// the first GPU to free up.
func TestExclusiveFourJobsThreeGPUs(t *testing.T) {
	const a, b, c, d = "mnist_bs32_1gpu", "resnet18_cifar100_bs128_20e_1gpu", "mobilenet_cifar100_bs128_20e_1gpu", "resnet18_cifar100_bs64_20e_1gpu"
	specs := []traces.Job{
		{ID: "a", Workload: a, GPUs: 1, Submit: 0},
		{ID: "b", Workload: b, GPUs: 1, Submit: 0},
		{ID: "c", Workload: c, GPUs: 1, Submit: 10 * sec},
		{ID: "d", Workload: d, GPUs: 1, Submit: 20 * sec},
	}
	jobs, _, _ := run(t, "a100-40gb:3", exact(), &exclusive.Policy{}, specs)
	// a: 0..140.45, b: 0..128.09, c: 10..208.4 (GPU 2); d waits for b's GPU 1.
	near(t, solo(t, a), jobs[0].Finish, "a")
	near(t, solo(t, b), jobs[1].Finish, "b")
	near(t, 10*sec+solo(t, c), jobs[2].Finish, "c")
	near(t, solo(t, b), jobs[3].Start, "d starts when b frees GPU 1")
	near(t, solo(t, b)+solo(t, d), jobs[3].Finish, "d")
	near(t, solo(t, b)+solo(t, d)-20*sec, jobs[3].JCT(), "d JCT")
	near(t, solo(t, b)-20*sec, jobs[3].Queue(), "d queue")
	s := results.Summarize(jobs, nil)
	require.InDelta(t, (solo(t, b) + solo(t, d)).Seconds(), s.MakespanS, 1e-6)
	require.Zero(t, s.FailedAttempts)
}

// A two-GPU job at the head waits until two GPUs are idle; the job behind it
// waits too (head-of-line blocking) although one GPU is free.
func TestExclusiveTwoGPUJobWaitsForTwoIdle(t *testing.T) {
	const long, short, two, one = "resnet50_imagenet_bs32_1gpu", "mnist_bs32_1gpu", "xlnet_base_cased_wiki_bs8_2gpu", "resnet18_cifar100_bs128_20e_1gpu"
	specs := []traces.Job{
		{ID: "long", Workload: long, GPUs: 1},
		{ID: "short", Workload: short, GPUs: 1},
		{ID: "two", Workload: two, GPUs: 2, Submit: 1 * sec},
		{ID: "one", Workload: one, GPUs: 1, Submit: 2 * sec},
	}
	jobs, _, _ := run(t, "a100-40gb:2", exact(), &exclusive.Policy{}, specs)
	near(t, solo(t, long), jobs[2].Start, "2-GPU job starts when both are idle")
	near(t, solo(t, long)+solo(t, two), jobs[3].Start, "1-GPU job waits behind the head")
}

// A job with its own length (the trace's solo_s) runs its workload's
// profile for that many solo seconds; the policy and the results see that
// length as its solo time. A job without one keeps the workload's.
func TestPerJobSoloS(t *testing.T) {
	const w = "resnet18_cifar100_bs128_20e_1gpu"
	specs := []traces.Job{
		{ID: "short", Workload: w, GPUs: 1, SoloS: 45},
		{ID: "long", Workload: w, GPUs: 1, SoloS: 1000},
		{ID: "catalog", Workload: w, GPUs: 1},
	}
	jobs, s, _ := run(t, "a100-40gb:3", exact(), &exclusive.Policy{}, specs)
	near(t, 45*sec, jobs[0].Finish, "short")
	near(t, 1000*sec, jobs[1].Finish, "long")
	near(t, solo(t, w), jobs[2].Finish, "catalog")
	require.Equal(t, 45.0, s.Jobs()[0].SoloS, "the policy sees the job's length")
	require.Equal(t, solo(t, w).Seconds(), s.Jobs()[2].SoloS)
	require.Equal(t, 1000.0, jobs[1].SoloS, "results normalize by the job's length")
	require.InDelta(t, 1.0, jobs[1].NormJCT(), 1e-9)
}

// Submitted gives what Job lists of a job as submitted (a collector's row
// is made from it), before the run and after it, for jobs with and
// without their own length, on more than one GPU and submitted late.
func TestSubmittedIsJob(t *testing.T) {
	specs := []traces.Job{
		{ID: "own", Workload: "resnet18_cifar100_bs128_20e_1gpu", GPUs: 1, SoloS: 45, Submit: 3 * sec},
		{ID: "pair", Workload: "xlnet_base_cased_wiki_bs8_2gpu", GPUs: 2, Submit: 7 * sec},
		{ID: "catalog", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 11 * sec},
	}
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:3"), Catalog: models.A100(), Truth: exact(), Seed: 1}, specs)
	require.NoError(t, err)
	same := func() {
		for i := range specs {
			j := s.Job(i)
			name, workload, gpus, soloS, submit := s.Submitted(i)
			require.Equal(t, []any{j.Name, j.Workload, j.GPUs, j.SoloS, j.Submit}, []any{name, workload, gpus, soloS, submit}, specs[i].ID)
		}
	}
	same()
	require.NoError(t, loop.Run(context.Background(), s, &exclusive.Policy{}, results.NewCollector(s.Jobs())))
	same()
}

// TestRunPastMaxTimeIsAnError: twelve jobs of 1e9 solo seconds (each
// valid) on one GPU would run 380 years, past what int64 nanoseconds hold:
// the run stops with an error naming the limit instead of overflowing.
func TestRunPastMaxTimeIsAnError(t *testing.T) {
	specs := make([]traces.Job, 12)
	for i := range specs {
		specs[i] = traces.Job{ID: fmt.Sprint(i), Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 1e9}
	}
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact(), Seed: 1}, specs)
	require.NoError(t, err)
	err = loop.Run(context.Background(), s, &exclusive.Policy{}, results.NewCollector(s.Jobs(), &events{}))
	require.ErrorContains(t, err, "would finish after 250 years of simulated time, the simulator's limit (it counts int64 nanoseconds)")
}

func TestNewRejectsImpossibleJobs(t *testing.T) {
	for name, spec := range map[string]traces.Job{
		"negative solo_s":  {ID: "x", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: -1},
		"NaN solo_s":       {ID: "x", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: math.NaN()},
		"infinite solo_s":  {ID: "x", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: math.Inf(1)},
		"unknown workload": {ID: "x", Workload: "nope", GPUs: 1},
		"gpu mismatch":     {ID: "x", Workload: "mnist_bs32_1gpu", GPUs: 2},
		"too many gpus":    {ID: "x", Workload: "xlnet_base_cased_wiki_bs8_2gpu", GPUs: 2},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100()}, []traces.Job{spec})
			require.Error(t, err)
			require.Contains(t, err.Error(), "job x")
		})
	}
}

// script places jobs on fixed GPUs as soon as they are pending.
type script map[policies.JobID][]int

func (script) Name() string { return "script" }
func (s script) Schedule(v *policies.View) []policies.Action {
	var acts []policies.Action
	for _, id := range v.Queue.All() {
		if g, ok := s[id]; ok && v.Job(id).Attempts == 0 {
			acts = append(acts, policies.Action{Kind: policies.Place, Job: id, GPUs: g})
		} else if ok {
			acts = append(acts, policies.Action{Kind: policies.Stop, Job: id, Reason: "script"})
		}
	}
	return acts
}

// Two memory-heavy jobs on one 40 GB GPU: the later one fails with OOM while
// its memory ramps; its partner keeps running and finishes normally.
func TestOOMWhenCollocationExceedsMemory(t *testing.T) {
	const big = "vgg16_imagenet_bs128_1gpu" // 21668 MiB peak
	tr := exact()
	specs := []traces.Job{{ID: "a", Workload: big, GPUs: 1}, {ID: "b", Workload: big, GPUs: 1, Submit: 5 * sec}}
	jobs, _, evs := run(t, "a100-40gb:1", tr, script{0: {0}, 1: {0}}, specs)
	require.Equal(t, policies.Done, jobs[0].State)
	require.Equal(t, 1, jobs[1].Failed)
	var failed policies.Event
	for _, e := range evs {
		if e.Kind == policies.JobFailed {
			failed = e
		}
	}
	require.Equal(t, policies.OOM, failed.Failure)
	require.Equal(t, policies.JobID(1), failed.Job)
	// b becomes active at 5+9 s with a 500 MiB context and ramps to 21668 MiB
	// over 15 s; a holds 21668 MiB: the total crosses 40960 MiB when b holds
	// 19292 MiB, i.e. (19292-500)/(21668-500)·15 s after activity.
	frac := (19292.0 - 500) / (21668 - 500)
	want := 14*sec + time.Duration(frac*15*float64(time.Second))
	require.InDelta(t, want.Seconds(), failed.T.Seconds(), 1e-6)
	near(t, failed.T-5*sec, jobs[1].Exec, "the failed attempt's time counts as execution")
}

// Jobs whose peaks together exceed the GPU by a hair still run out of
// memory once the later one has ramped up; exactly at the capacity they fit
// (the search for the crossing is skipped only with room for rounding).
func TestOOMAtTheCapacity(t *testing.T) {
	const big = "vgg16_imagenet_bs128_1gpu"
	w, ok := models.A100().Get(big)
	require.True(t, ok)
	peaks := 2 * w.PeakMiB()
	for _, tc := range []struct {
		capacity float64
		oom      bool
	}{{peaks * (1 - 1e-12), true}, {peaks, false}} {
		srv := server(t, "a100-40gb:1")
		srv.Type.MemoryMiB = tc.capacity
		s, err := sim.New(sim.Config{Server: srv, Catalog: models.A100(), Truth: exact(), Seed: 1},
			[]traces.Job{{ID: "a", Workload: big, GPUs: 1}, {ID: "b", Workload: big, GPUs: 1, Submit: 5 * sec}})
		require.NoError(t, err)
		col := results.NewCollector(s.Jobs())
		require.NoError(t, loop.Run(context.Background(), s, script{0: {0}, 1: {0}}, col))
		require.Equal(t, tc.oom, col.Jobs()[1].Failed == 1, "capacity %v MiB, peaks %v MiB", tc.capacity, peaks)
	}
}

func TestNoOOMWhenCollocationFits(t *testing.T) {
	const mid = "resnet50_imagenet_bs64_1gpu" // 7118 MiB
	specs := []traces.Job{{ID: "a", Workload: mid, GPUs: 1}, {ID: "b", Workload: mid, GPUs: 1}, {ID: "c", Workload: mid, GPUs: 1}}
	jobs, _, _ := run(t, "a100-40gb:1", exact(), script{0: {0}, 1: {0}, 2: {0}}, specs)
	for _, j := range jobs {
		require.Equal(t, policies.Done, j.State)
		require.Zero(t, j.Failed)
	}
}

// Memory ramps linearly from the context to the peak over Ramp after first
// activity, as measured by the view at 1 Hz.
func TestMemoryRamp(t *testing.T) {
	const id = "resnet50_imagenet_bs128_1gpu" // 13238 MiB, startup 9 s
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact()},
		[]traces.Job{{ID: "a", Workload: id, GPUs: 1}})
	require.NoError(t, err)
	_, err = s.Next() // arrival
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	_, err = s.Next() // started
	require.NoError(t, err)
	require.Zero(t, s.View().GPUs[0].UsedMiB, "no memory before first activity")
	for _, at := range []time.Duration{9, 14, 24, 40} {
		require.NoError(t, s.Apply(policies.Action{Kind: policies.Wake, At: at * sec}))
	}
	want := map[time.Duration]float64{9: 500, 14: 500 + (13238-500)/3.0, 24: 13238, 40: 13238}
	// While it ramps the measurement may change at the next second; from
	// the first whole second with the ramp done (9 + 15 s) on, never.
	until := map[time.Duration]time.Duration{9: 10 * sec, 14: 15 * sec, 24: math.MaxInt64, 40: math.MaxInt64}
	for range 4 {
		evs, err := s.Next()
		require.NoError(t, err)
		at := evs[len(evs)-1].At() / sec
		v := s.View()
		require.InDelta(t, want[at], v.GPUs[0].UsedMiB, 1e-6, "t=%ds", at)
		require.Equal(t, until[at], v.Telemetry.(policies.SteadyTelemetry).UsedMiBChangesAt(0), "t=%ds", at)
	}
}

// A deliberately broken interference model must not break time; a broken
// world must surface as an error naming the event, time, job and GPU.
type broken struct{ *sim.Sim }

func (b broken) View() *policies.View {
	v := b.Sim.View()
	if len(v.GPUs[0].Jobs) > 0 {
		v.GPUs[0].UsedMiB = v.GPUs[0].CapacityMiB * 2
	}
	return v
}

func TestLoopReportsBrokenBackend(t *testing.T) {
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact()},
		[]traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1}})
	require.NoError(t, err)
	// Exclusive as a plain Policy (not Selective), so that the loop decides,
	// and checks the view, at every instant.
	err = loop.Run(context.Background(), broken{s}, struct{ policies.Policy }{&exclusive.Policy{}}, results.NewCollector(s.Jobs()))
	require.ErrorContains(t, err, "GPU 0: measured memory")
	require.ErrorContains(t, err, "t=")
}

// unplaceable never places anything; the loop names the jobs it left.
type unplaceable struct{}

func (unplaceable) Name() string                              { return "idle" }
func (unplaceable) Schedule(*policies.View) []policies.Action { return nil }

func TestLoopReportsUnfinishedJobs(t *testing.T) {
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100()},
		[]traces.Job{{ID: "lonely", Workload: "mnist_bs32_1gpu", GPUs: 1}})
	require.NoError(t, err)
	err = loop.Run(context.Background(), s, unplaceable{}, results.NewCollector(s.Jobs()))
	require.ErrorContains(t, err, "left 1 job(s) unfinished")
	require.ErrorContains(t, err, "lonely")
}

func TestApplyRejectsBadPlacements(t *testing.T) {
	specs := []traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1}, {ID: "b", Workload: "xlnet_base_cased_wiki_bs8_2gpu", GPUs: 2},
		{ID: "c", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: time.Hour}}
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100()}, specs)
	require.NoError(t, err)
	_, err = s.Next()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		a    policies.Action
		want string
	}{
		{"no such gpu", policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{7}}, "sim: place job 0: no GPU 7"},
		{"wrong count", policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0, 1}}, "sim: place job 0 on 2 GPUs; it needs 1"},
		{"gpu twice", policies.Action{Kind: policies.Place, Job: 1, GPUs: []int{1, 1}}, "sim: place job 1: GPU 1 given twice"},
		{"no such job", policies.Action{Kind: policies.Place, Job: 9, GPUs: []int{0}}, "sim: place: no job 9"},
		{"not yet arrived", policies.Action{Kind: policies.Place, Job: 2, GPUs: []int{0}}, "sim: place job 2: it is waiting, not pending"},
		{"stop not arrived", policies.Action{Kind: policies.Stop, Job: 2}, "sim: stop job 2: not a pending job"},
		{"stop no such job", policies.Action{Kind: policies.Stop, Job: 5}, "sim: stop job 5: not a pending job"},
	} {
		require.EqualError(t, s.Apply(tc.a), tc.want, tc.name)
	}
	// A running job is not pending either.
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	require.EqualError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{1}}), "sim: place job 0: it is running, not pending")
	require.EqualError(t, s.Apply(policies.Action{Kind: policies.Stop, Job: 0}), "sim: stop job 0: not a pending job")
}

// A Wake at or before now fires at once (a Wakeup at now, once per
// instant); a later Wake fires at its time.
func TestWakeNotAfterNowFiresAtOnce(t *testing.T) {
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact()},
		[]traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 5 * sec}})
	require.NoError(t, err)
	evs, err := s.Next()
	require.NoError(t, err)
	require.Equal(t, []policies.Event{{Kind: policies.JobArrived, T: 5 * sec, Job: 0}}, evs)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Wake, At: sec}))
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Wake, At: 5 * sec}))
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Wake, At: 7 * sec}))
	evs, err = s.Next()
	require.NoError(t, err)
	require.Equal(t, []policies.Event{{Kind: policies.Wakeup, T: 5 * sec}}, evs)
	evs, err = s.Next()
	require.NoError(t, err)
	require.Equal(t, []policies.Event{{Kind: policies.Wakeup, T: 7 * sec}}, evs)
}

// Two jobs co-run on one GPU from the start under the fitted interference
// model; the slowdowns match the measured pairs' direction and rough size
// (AEGIS artifact co-runs on A100: ResNet50 bs128 + VGG16 bs128 measured
// 1.98× and 1.21×; MobileNet bs64 + ResNet18 bs32 on CIFAR-100 0.93× and
// 0.99×, i.e. no slowdown beyond noise).
func TestPairSlowdownsUnderFittedModel(t *testing.T) {
	for _, tc := range []struct {
		a, b     string
		loA, hiA float64
		loB, hiB float64
	}{
		{"resnet50_imagenet_bs128_1gpu", "vgg16_imagenet_bs128_1gpu", 1.6, 2.4, 1.05, 1.45},
		{"mobilenet_cifar100_bs64_20e_1gpu", "resnet18_cifar100_bs32_20e_1gpu", 1.0, 1.1, 1.0, 1.1},
	} {
		t.Run(tc.a+"+"+tc.b, func(t *testing.T) {
			s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(),
				Interference: models.DefaultInterference(), Truth: exact()},
				[]traces.Job{{ID: "a", Workload: tc.a, GPUs: 1}, {ID: "b", Workload: tc.b, GPUs: 1}})
			require.NoError(t, err)
			col := results.NewCollector(s.Jobs())
			require.NoError(t, loop.Run(context.Background(), s, script{0: {0}, 1: {0}}, col))
			jobs := col.Jobs()
			slowA := jobs[0].Finish.Seconds() / solo(t, tc.a).Seconds()
			slowB := jobs[1].Finish.Seconds() / solo(t, tc.b).Seconds()
			require.GreaterOrEqual(t, slowA, tc.loA)
			require.LessOrEqual(t, slowA, tc.hiA)
			require.GreaterOrEqual(t, slowB, tc.loB)
			require.LessOrEqual(t, slowB, tc.hiB)
			t.Logf("slowdowns: %.3f and %.3f", slowA, slowB)
		})
	}
}

// Policies do not see the future: a job that has not arrived shows only its
// id and state.
func TestFutureJobsHidden(t *testing.T) {
	specs := []traces.Job{{ID: "now", Workload: "mnist_bs32_1gpu", GPUs: 1}, {ID: "later", Workload: "vgg16_imagenet_bs128_1gpu", GPUs: 1, Submit: time.Hour}}
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100()}, specs)
	require.NoError(t, err)
	_, err = s.Next()
	require.NoError(t, err)
	v := s.View()
	require.Equal(t, "now", v.Jobs[0].Name)
	require.Equal(t, policies.Job{ID: 1, State: policies.Waiting}, v.Jobs[1])
	require.Equal(t, "later", s.Jobs()[1].Name, "recorders still know every job")
}

func TestParseTruth(t *testing.T) {
	tr, err := sim.ParseTruth(map[string]string{"ramp": "20s", "noise": "0", "peak_jitter": "0.1"})
	require.NoError(t, err)
	require.Equal(t, 20*sec, tr.Ramp)
	require.Zero(t, tr.Noise)
	require.Equal(t, 0.1, tr.PeakJitter)
	require.Equal(t, sim.DefaultTruth().ContextMiB, tr.ContextMiB)
	for _, bad := range []map[string]string{{"ramp": "-1"}, {"noise": "NaN"}, {"peak_jitter": "1"}, {"bogus": "1"}} {
		_, err := sim.ParseTruth(bad)
		require.Error(t, err, "%v", bad)
	}
}

// speed_jitter varies each attempt's work by up to ±J around the nominal,
// seeded per job; 0 (the default) keeps solo runs at their solo time.
func TestSpeedJitter(t *testing.T) {
	const id = "resnet18_cifar100_bs64_20e_1gpu"
	var specs []traces.Job
	for i := range 12 {
		specs = append(specs, traces.Job{ID: fmt.Sprint(i), Workload: id, GPUs: 1, Submit: time.Duration(i) * 2000 * sec})
	}
	jobs, _, _ := run(t, "a100-40gb:1", exact(), &exclusive.Policy{}, specs)
	for _, j := range jobs {
		near(t, solo(t, id), j.Exec, "no jitter")
	}
	tr := exact()
	tr.SpeedJitter = 0.03
	jobs, _, _ = run(t, "a100-40gb:1", tr, &exclusive.Policy{}, specs)
	work := solo(t, id).Seconds() - models.Startup(id).Seconds()
	seen := map[int64]bool{}
	for _, j := range jobs {
		d := j.Exec.Seconds() - solo(t, id).Seconds()
		require.LessOrEqual(t, math.Abs(d), 0.03*work+1e-6)
		seen[int64(d*1000)] = true
	}
	require.Greater(t, len(seen), 8, "each job varies on its own")
	again, _, _ := run(t, "a100-40gb:1", tr, &exclusive.Policy{}, specs)
	require.Equal(t, jobs, again, "seeded")
	p, err := sim.ParseTruth(map[string]string{"speed_jitter": "0.03"})
	require.NoError(t, err)
	require.Equal(t, 0.03, p.SpeedJitter)
	_, err = sim.ParseTruth(map[string]string{"speed_jitter": "0.6"})
	require.ErrorContains(t, err, "speed_jitter")
}

// Until it arrives, a policy sees only a job's ID and that it is waiting,
// for the jobs given to New and those added later.
func TestWaitingJobsShowOnlyTheirID(t *testing.T) {
	const mid = "resnet50_imagenet_bs64_1gpu"
	s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:1"), Catalog: models.A100(), Truth: exact()},
		[]traces.Job{{ID: "a", Workload: mid, GPUs: 1, Submit: sec}, {ID: "b", Workload: mid, GPUs: 1, Submit: 2 * sec}})
	require.NoError(t, err)
	for i := range 5 {
		_, err := s.Add(traces.Job{ID: fmt.Sprint("c", i), Workload: mid, GPUs: 1, Submit: 3 * sec})
		require.NoError(t, err)
	}
	want := make([]policies.Job, 7)
	for i := range want {
		want[i] = policies.Job{ID: policies.JobID(i), State: policies.Waiting}
	}
	require.Equal(t, want, s.View().Jobs)
	evs, err := s.Next()
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "a", s.View().Jobs[0].Name)
	require.Equal(t, want[1:], s.View().Jobs[1:])
}

// TestArrivalShowsTheSubmittedJob: at its arrival a job's view entry, a
// Waiting job with only its ID until then, is written in place with the
// submitted fields; it must read as Job(i), pending, whatever the job
// (its own solo time or the catalog's, several GPUs, added late).
func TestArrivalShowsTheSubmittedJob(t *testing.T) {
	tests := []struct {
		name  string
		specs []traces.Job
		late  []traces.Job // added after the first instant
	}{
		{name: "catalog solo time", specs: []traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: sec}}},
		{name: "own solo time", specs: []traces.Job{{ID: "own", Workload: "resnet18_cifar100_bs128_20e_1gpu", GPUs: 1, SoloS: 45, Submit: 3 * sec}}},
		{name: "two GPUs", specs: []traces.Job{
			{ID: "pair", Workload: "xlnet_base_cased_wiki_bs8_2gpu", GPUs: 2, Submit: 2 * sec},
			{ID: "same time", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 2 * sec},
		}},
		{name: "added late", specs: []traces.Job{{ID: "first", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: sec}},
			late: []traces.Job{
				{ID: "late", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1, SoloS: 7, Submit: 5 * sec},
				{ID: "out of order", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 4 * sec},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sim.New(sim.Config{Server: server(t, "a100-40gb:2"), Catalog: models.A100(), Truth: exact(), Seed: 1}, tc.specs)
			require.NoError(t, err)
			arrived := 0
			for step := 0; ; step++ {
				evs, err := s.Next()
				require.NoError(t, err)
				if len(evs) == 0 {
					break
				}
				for _, e := range evs {
					require.Equal(t, policies.JobArrived, e.Kind)
					want := s.Job(int(e.Job))
					want.State = policies.Pending
					require.Equal(t, want, s.View().Jobs[e.Job])
					arrived++
				}
				if step == 0 {
					for _, sp := range tc.late {
						_, err := s.Add(sp)
						require.NoError(t, err)
					}
				}
			}
			require.Equal(t, len(tc.specs)+len(tc.late), arrived)
		})
	}
}
