package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// newTestSim builds a simulator of one 1-GPU job on a100-40gb:1.
func newTestSim(t *testing.T, m models.Interference) *Sim {
	t.Helper()
	srv, err := models.ParseServer("a100-40gb:1")
	require.NoError(t, err)
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 1, Interference: m},
		[]traces.Job{{ID: "a", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1}})
	require.NoError(t, err)
	return s
}

// Telemetry draws of distinct (job, attempt) pairs use distinct keys, past
// 256 attempts too (the original packing id<<8|attempt made attempt 256 of
// job 0 collide with attempt 0 of job 1).
func TestNoiseKeyDistinct(t *testing.T) {
	seen := map[uint64][2]int{}
	for id := range 300 {
		for _, attempt := range []int{0, 1, 2, 255, 256, 257, 511, 512, 1000, 1 << 20} {
			k := noiseKey(id, attempt)
			prev, dup := seen[k]
			require.False(t, dup, "job %d attempt %d collides with job %d attempt %d", id, attempt, prev[0], prev[1])
			seen[k] = [2]int{id, attempt}
		}
	}
	require.Equal(t, uint64(1)<<8|3, noiseKey(1, 3), "attempts below 256 keep the original key")
}

// The sample cache grows to the longest window asked for, so a window of
// aegis's largest size (3600 samples) is computed once, and cached samples
// equal fresh ones.
func TestSampleCacheFitsLongestWindow(t *testing.T) {
	s := newTestSim(t, nil)
	_, err := s.Next() // arrival
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	_, err = s.AdvanceTo(2 * time.Hour)
	require.NoError(t, err)
	tm := telemetry{s}
	for _, n := range []int{30, 1000, 3600} {
		got := tm.Samples(nil, 0, n)
		require.Len(t, got, n)
		require.GreaterOrEqual(t, len(s.gpus[0].tel.cache), n)
		for i, x := range got {
			require.Equal(t, s.sample(0, int64(x.At/time.Second)), x, "sample %d of %d", i, n)
		}
		require.Equal(t, got, tm.Samples(nil, 0, n))
	}
}

// Events of the policy's actions are returned only after the invariants are
// checked: a GPU that forgets its job is reported.
func TestNextChecksInvariantsAfterActions(t *testing.T) {
	s := newTestSim(t, nil)
	_, err := s.Next()
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	s.view.GPUs[0].Jobs = nil // break the bookkeeping
	_, err = s.Next()
	require.ErrorContains(t, err, "sim: invariant violated after the policy's actions at t=0s: job 0 runs on GPU 0, which does not list it")
}

// At the end of an instant every job its events name is checked, not only
// the last one's (the loop leaves this to the simulator: ChecksBookkeeping):
// of two jobs that become active at the same time, the first one's broken
// bookkeeping is reported.
func TestInstantChecksEveryEventsJob(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:2")
	require.NoError(t, err)
	truth := DefaultTruth()
	truth.StartupJitter = 0
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: truth, Seed: 1},
		[]traces.Job{{ID: "a", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1}, {ID: "b", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1}})
	require.NoError(t, err)
	_, err = s.Next() // the arrivals
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 1, GPUs: []int{1}}))
	_, err = s.Next() // the starts
	require.NoError(t, err)
	s.view.Jobs[0].GPUs = 2 // break job 0's bookkeeping
	evs, err := s.Next()    // both become active
	require.ErrorContains(t, err, "job 0 runs on [0], needs 2 GPUs", "%v", evs)
}

// rateModel is an interference model that returns a fixed rate.
type rateModel float64

func (r rateModel) Rate(models.Profile, []models.Profile) float64 { return float64(r) }

// A rate that is not a positive number is a defect of the model: the run
// stops with an error naming the job and the rate instead of going on at a
// made-up speed.
func TestBadRateIsAnError(t *testing.T) {
	for _, r := range []float64{math.NaN(), 0, -1, math.Inf(1)} {
		s := newTestSim(t, rateModel(r))
		_, err := s.Next()
		require.NoError(t, err)
		require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
		_, err = s.Next() // started
		require.NoError(t, err)
		_, err = s.Next() // active: the rate is asked for
		require.ErrorContains(t, err, "the interference model gave job 0 (resnet50_imagenet_bs64_1gpu) a rate of")
	}
}

// Ahead (policies.Foresight) returns the samples the GPU reports when their
// seconds come if nothing changes, and none of them is served once a change
// was recorded: a second job placed on the GPU changes the later samples.
func TestAheadForeseesSamples(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:1")
	require.NoError(t, err)
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 1},
		[]traces.Job{{ID: "a", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1},
			{ID: "b", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1, Submit: 150 * time.Second}})
	require.NoError(t, err)
	_, err = s.Next() // a arrives
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	_, err = s.AdvanceTo(100 * time.Second)
	require.NoError(t, err)
	tm := telemetry{s}
	require.Implements(t, (*policies.Foresight)(nil), tm)
	ahead := tm.Ahead(nil, 0, 100*time.Second, 20)
	require.Len(t, ahead, 20)
	require.Equal(t, 101*time.Second, ahead[0].At)
	mixed := tm.Ahead(nil, 0, 90*time.Second, 20) // past seconds as Samples gives them
	require.Equal(t, append(tm.Samples(nil, 0, 10), ahead[:10]...), mixed)
	before := tm.Regime(0)
	_, err = s.AdvanceTo(120 * time.Second)
	require.NoError(t, err)
	require.Equal(t, ahead, tm.Samples(nil, 0, 20), "the foreseen samples come")
	require.Equal(t, before, tm.Regime(0))

	later := tm.Ahead(nil, 0, 120*time.Second, 60) // up to 180 s, as if a ran alone
	_, err = s.AdvanceTo(150 * time.Second)        // b arrives
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 1, GPUs: []int{0}}))
	_, err = s.AdvanceTo(180 * time.Second)
	require.NoError(t, err)
	require.NotEqual(t, before, tm.Regime(0), "b's activity changed the telemetry")
	got := tm.Samples(nil, 0, 60)
	require.NotEqual(t, later, got)
	for _, x := range got {
		require.Equal(t, s.sample(0, int64(x.At/time.Second)), x, "at %v", x.At)
	}
}

// sharing is an interference model that halves a job's rate per co-runner.
type sharing struct{}

func (sharing) Rate(_ models.Profile, co []models.Profile) float64 { return 1 / float64(1+len(co)) }

// A job joining one GPU of a 2-GPU job slows it, which changes the other
// GPU's telemetry under a rate-weighted combination though that GPU's jobs
// stay the same: its Regime changes, so that a policy's foresight from
// before is not trusted.
func TestRegimeFollowsRates(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:2")
	require.NoError(t, err)
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 1,
		Telemetry: models.TelemetryParams{RateWeight: 1}, Interference: sharing{}},
		[]traces.Job{{ID: "pair", Workload: "xlnet_base_cased_wiki_bs8_2gpu", GPUs: 2},
			{ID: "b", Workload: "bert_base_wiki_bs32_1gpu", GPUs: 1, Submit: 100 * time.Second}})
	require.NoError(t, err)
	_, err = s.Next()
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0, 1}}))
	_, err = s.AdvanceTo(100 * time.Second) // b arrives
	require.NoError(t, err)
	tm := telemetry{s}
	before := tm.Regime(1)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 1, GPUs: []int{0}}))
	_, err = s.AdvanceTo(200 * time.Second) // b active on GPU 0: the pair slows
	require.NoError(t, err)
	require.Less(t, s.jobs[0].rate, 1.0, "the pair slowed")
	require.Equal(t, []policies.JobID{0}, s.view.GPUs[1].Jobs, "GPU 1's jobs are unchanged")
	require.NotEqual(t, before, tm.Regime(1), "GPU 1's telemetry changed with the pair's rate")
}

// A prepared draw gives draw's value bit for bit, for every kind of
// signal (constant, bursty, normal, with a low mode) and noise level,
// at the ends of (0, 1) and at random points; and a sample's noise key
// is unitPrefix's.
// TestClampsAreBuiltins holds clamp4 and nonNeg to the built-in min and
// max they replace, bit for bit, on special and ordinary operands (a NaN
// to a NaN).
func TestClampsAreBuiltins(t *testing.T) {
	xs := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 4, -4, math.Nextafter(4, 5),
		math.Nextafter(-4, -5), 1e-300, -1e-300, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 3.9, -3.9, 1e300, -1e300}
	for i := range 1000 {
		xs = append(xs, 12*(unitFrom(unitPrefix(3, uint64(i), 1), 1)-0.5))
	}
	for _, x := range xs {
		if math.IsNaN(x) { // NaNs' bits may differ
			require.True(t, math.IsNaN(clamp4(x)) && math.IsNaN(nonNeg(x)))
			continue
		}
		require.Equal(t, math.Float64bits(max(-4, min(4, x))), math.Float64bits(clamp4(x)), "clamp4(%v)", x)
		require.Equal(t, math.Float64bits(max(0, x)), math.Float64bits(nonNeg(x)), "nonNeg(%v)", x)
	}
}

func TestDistIsDraw(t *testing.T) {
	stats := []models.Stat{
		{Mean: 0.4, P95: 0.4},            // constant
		{Mean: 0.12, P95: 0.61},          // bursty
		{Mean: 0.5, P95: 0.7},            // normal
		{Mean: 0.05, P95: 0.09},          // normal, clipped at 0 by the tail
		{Mean: 0.3, P95: 0.8, Idle: 0.4}, // low mode, bursty busy level
		{Mean: 0.3, P95: 0.6, Idle: 0.2}, // low mode, normal busy level
		{Mean: 0.3, P95: 0.2, Idle: 0.2}, // low mode, constant busy level
	}
	us := []float64{0.5 / (1 << 53), 1e-300, 0.05, 0.0999999, 0.1, 0.2, 0.4, 0.5, 0.97, 1 - 0.5/(1<<53)}
	for i := range 20000 {
		us = append(us, unitFrom(unitPrefix(7, uint64(i), 3), 1))
	}
	for _, st := range stats {
		for _, noise := range []float64{0, 0.5, 1, 2} {
			d := distOf(st, noise)
			for _, u := range us {
				want, got := draw(st, u, noise), d.at(u)
				require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%+v noise %v u %v", st, noise, u)
			}
		}
	}
	for _, seed := range []uint64{0, 1, 1 << 63} {
		require.Equal(t, unitPrefix(seed, 5, 9), mix(mix(seedMix(seed)^5)^9))
		require.Equal(t, unitPrefix(seed, 5, 9), prefixFrom(seedMix(seed), 5, 9))
	}
}

// A sample's signals are its jobs' draws combined by CombineTelemetry, bit
// for bit (sample combines them as it draws, through models.Load): three
// co-located jobs, a bursty one among them, noise on, rate-weighted, with
// the saturation and a steady saturation the jobs pass within the samples.
func TestSampleIsCombineTelemetry(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:1")
	require.NoError(t, err)
	truth := DefaultTruth()
	truth.Noise = 1
	tp := models.TelemetryParams{RateWeight: 0.7, Saturation: 1, SteadySaturation: 1.2}
	specs := []traces.Job{
		{ID: "a", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1},
		{ID: "b", Workload: "vgg16_imagenet_bs64_1gpu", GPUs: 1},
		{ID: "c", Workload: "dlrm_criteo_bs32768_1gpu", GPUs: 1},
	}
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: truth, Seed: 5, Telemetry: tp,
		Interference: models.DefaultInterference()}, specs)
	require.NoError(t, err)
	_, err = s.Next()
	require.NoError(t, err)
	for id := range specs {
		require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: policies.JobID(id), GPUs: []int{0}}))
	}
	_, err = s.AdvanceTo(400 * time.Second)
	require.NoError(t, err)
	steady, three := 0, 0
	for k := int64(1); k <= 400; k++ {
		at := time.Duration(k) * time.Second
		x := s.sample(0, k)
		seg := s.gpus[0].tel.at(at)
		if seg == nil {
			continue // before the first activity
		}
		pre := mix(s.seedMix ^ uint64(k))
		var jobs []models.TelemetryJob
		for _, j := range seg.jobs {
			u := func(sig uint64) float64 { return unitFrom(mix(pre^j.key), sig) }
			jobs = append(jobs, models.TelemetryJob{SMACT: draw(j.prof.SMACT, u(1), truth.Noise),
				SMOCC: draw(j.prof.SMOCC, u(2), truth.Noise), DRAMA: draw(j.prof.DRAMA, u(3), truth.Noise),
				Util: j.prof.UtilPct / 100, Rate: j.rate, Steady: at-j.activeAt >= models.WindowLength})
			if at-j.activeAt >= models.WindowLength {
				steady++
			}
		}
		if len(jobs) == 3 {
			three++
		}
		a, o, d := tp.CombineTelemetry(jobs)
		require.Equal(t, [3]float64{a, o, d}, [3]float64{x.SMACT, x.SMOCC, x.DRAMA}, "second %d", k)
	}
	require.Positive(t, steady, "the jobs pass their first window")
	require.Greater(t, three, 300, "seconds with all three jobs active")
}

// BenchmarkSample is one telemetry sample of a GPU running three jobs (the
// loaded AEGIS case draws about a million a run).
func BenchmarkSample(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprint("cached=", cached), func(b *testing.B) { benchSample(b, cached) })
	}
}

func benchSample(b *testing.B, cached bool) {
	srv, err := models.ParseServer("a100-40gb:1")
	require.NoError(b, err)
	specs := []traces.Job{
		{ID: "a", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1},
		{ID: "b", Workload: "vgg16_imagenet_bs64_1gpu", GPUs: 1},
		{ID: "c", Workload: "efficientnet_imagenet_bs64_1gpu", GPUs: 1},
	}
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 5,
		Telemetry: models.DefaultTelemetry(), Interference: models.DefaultInterference()}, specs)
	require.NoError(b, err)
	_, err = s.Next()
	require.NoError(b, err)
	for id := range specs {
		require.NoError(b, s.Apply(policies.Action{Kind: policies.Place, Job: policies.JobID(id), GPUs: []int{0}}))
	}
	_, err = s.AdvanceTo(400 * time.Second)
	require.NoError(b, err)
	var sum float64
	k := int64(400)
	for b.Loop() {
		var x policies.Sample
		if cached {
			x = s.cachedSample(0, k) // a second not cached yet
		} else {
			x = s.sample(0, k)
		}
		sum += x.SMACT + x.SMOCC + x.DRAMA + x.UtilPct
		k++
	}
	_ = sum
}

// The lone-job memo gives the energy meter CombineTelemetry's values bit
// for bit: the catalog's workloads and random jobs at several rates (more
// than the memo's slots, so entries are replaced), each asked several
// times, under several telemetry models, one memo for each.
func TestLoneMemoIsCombine(t *testing.T) {
	cat := models.A100()
	var jobs []models.TelemetryJob
	for _, id := range cat.IDs() {
		w, _ := cat.Get(id)
		for _, p := range w.PerGPU {
			for _, rate := range []float64{1, 0.5, 0.731} {
				jobs = append(jobs, models.TelemetryJob{SMACT: p.SMACT.Mean, SMOCC: p.SMOCC.Mean, DRAMA: p.DRAMA.Mean, Util: p.UtilPct / 100, Rate: rate})
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		jobs = append(jobs, models.TelemetryJob{SMACT: r.Float64(), SMOCC: r.Float64(), DRAMA: r.Float64(), Util: 1.5 * r.Float64(), Rate: r.Float64()})
	}
	jobs = append(jobs, models.TelemetryJob{SMACT: math.Copysign(0, -1), Util: 0.5, Rate: 1}, models.TelemetryJob{Util: 0.5, Rate: 1})
	for _, p := range []models.TelemetryParams{{}, {RateWeight: 1, Saturation: 1}, {RateWeight: 0.5, Saturation: 0.8, SteadySaturation: 1.3}, {Saturation: 0.3, DepthOverlap: 1}} {
		var m loneMemo
		for range 5000 {
			one := []models.TelemetryJob{jobs[r.IntN(len(jobs))]}
			a, o, d := p.CombineTelemetry(one)
			ma, mo, md := m.combine(&p, one)
			require.Equal(t, [3]uint64{math.Float64bits(a), math.Float64bits(o), math.Float64bits(d)},
				[3]uint64{math.Float64bits(ma), math.Float64bits(mo), math.Float64bits(md)}, "%+v: %+v", p, one[0])
		}
	}
}

// View reads the measured memory once per time, and again at the same time
// once a segment was recorded since: a job withdrawn at a whole second
// leaves its GPU reading 0 at once.
func TestViewReadsAgainAfterASegment(t *testing.T) {
	s := newTestSim(t, nil)
	_, err := s.Next() // the arrival
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	_, err = s.AdvanceTo(60 * time.Second) // started, active, ramped up
	require.NoError(t, err)
	require.Positive(t, s.View().GPUs[0].UsedMiB)
	require.NoError(t, s.Withdraw(0))
	require.Zero(t, s.View().GPUs[0].UsedMiB)
}

// The end-of-instant check reads whether a GPU's jobs fit at their peaks
// from scheduleOOM only in the instant it was found: at a later time it
// computes it again, and a GPU over its capacity is reported.
func TestCheckReadsPeaksAgainLater(t *testing.T) {
	s := newTestSim(t, nil)
	_, err := s.Next()
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	_, err = s.AdvanceTo(60 * time.Second)
	require.NoError(t, err)
	require.True(t, s.gpus[0].fits, "found to fit at its activity")
	s.att(0).peak = 100 // break the bookkeeping: far over the capacity
	s.touch([]int{0})
	require.ErrorContains(t, s.check(-1), "GPU 0 holds")
}

// Add finds a workload by name in the memo (nameMemo) once the name was
// added: after the catalog's workloads, the memo holds most of their names
// (those whose slot no later name took), and every job, added in a
// shuffled order ten times over with names whose bytes are not the
// catalog's strings, runs the catalog's workload with its derived figures.
// A name the catalog lacks fails, and a name takes the slot of another.
func TestAddFindsWorkloadsByName(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:8")
	require.NoError(t, err)
	cat := models.A100()
	var specs []traces.Job
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 10 {
		for _, k := range rng.Perm(cat.Len()) {
			id := cat.IDs()[k]
			w, _ := cat.Get(id)
			specs = append(specs, traces.Job{ID: fmt.Sprint(round, id), Workload: string([]byte(id)), GPUs: w.GPUs})
		}
	}
	s, err := New(Config{Server: srv, Catalog: cat, Truth: DefaultTruth(), Seed: 1}, specs[:cat.Len()])
	require.NoError(t, err)
	held := 0
	for _, id := range cat.IDs() {
		if x := s.named.get(id); x != nil {
			w, _ := cat.Get(id)
			require.Same(t, s.workloads[w], x, id)
			held++
		}
	}
	require.Greater(t, held, cat.Len()*3/4, "the memo holds most of the catalog's names")
	for _, sp := range specs[cat.Len():] {
		_, err := s.Add(sp)
		require.NoError(t, err)
	}
	for i, sp := range specs {
		w, _ := cat.Get(sp.Workload)
		require.Same(t, w, s.jobs[i].info0.w, sp.ID)
		require.Same(t, s.workloads[w], s.jobs[i].info0, sp.ID)
	}
	_, err = s.Add(traces.Job{ID: "x", Workload: "nosuch", GPUs: 1})
	require.ErrorContains(t, err, `workload "nosuch" is not in the a100-40gb catalog`)

	var m *nameMemo
	require.Nil(t, m.get("a"))
	a, b := &workloadInfo{}, &workloadInfo{}
	m = m.put("a", a)
	require.Same(t, a, m.get("a"))
	require.Nil(t, m.get("b"))
	other := "b"
	for nameSlot(other) != nameSlot("a") {
		other += "b"
	}
	m.put(other, b)
	require.Same(t, b, m.get(other))
	require.Nil(t, m.get("a"), "its slot taken by a name of the same slot")
}

// A finish re-timed later pushes nothing: the heap keeps the one entry it
// holds for the attempt, which comes out first and is pushed again then as
// the pending finish (requeue), with the sequence it was given when re-timed;
// the job still finishes at its re-timed time.
func TestLaterFinishKeepsOneEntry(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:1")
	require.NoError(t, err)
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 1, Interference: sharing{}},
		[]traces.Job{{ID: "a", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1},
			{ID: "b", Workload: "bert_base_wiki_bs32_1gpu", GPUs: 1, Submit: 100 * time.Second}})
	require.NoError(t, err)
	finishes := func() (n int) {
		for _, it := range s.q.a {
			if it.kind == evFinish && it.job == 0 {
				n++
			}
		}
		return n
	}
	_, err = s.Next()
	require.NoError(t, err)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	_, err = s.AdvanceTo(100 * time.Second) // a active alone, b arrives
	require.NoError(t, err)
	require.Equal(t, 1, finishes())
	alone := s.att(0).done
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 1, GPUs: []int{0}}))
	_, err = s.AdvanceTo(200 * time.Second) // b active: a slows
	require.NoError(t, err)
	require.Greater(t, s.att(0).done, alone, "a's finish re-timed later")
	require.Equal(t, 1, finishes(), "one entry for a in the heap")
	require.Equal(t, alone, s.q.a[slices.IndexFunc(s.q.a, func(it item) bool { return it.kind == evFinish && it.job == 0 })].t)
	_, err = s.AdvanceTo(alone) // the old entry has come out
	require.NoError(t, err)
	require.Equal(t, policies.Running, s.view.Jobs[0].State)
	require.Equal(t, 1, finishes())
	i := slices.IndexFunc(s.q.a, func(it item) bool { return it.kind == evFinish && it.job == 0 })
	require.Equal(t, item{t: s.att(0).done, seq: s.att(0).fseq, job: 0, kind: evFinish, epoch: s.jobs[0].epoch}, s.q.a[i], "the pending finish")
}

// record writes a segment's jobs over a recycled array without zeroing
// them: the draws' fields (smact, smocc, drama, term) are written when the
// segment is first sampled (segment.drawn), so an array holding another
// segment's draws gives the samples and the measured memory of a fresh
// one, for every second of a job's start, ramp and steady run.
func TestRecordOverRecycledDraws(t *testing.T) {
	type reading struct {
		x    []policies.Sample
		used float64
	}
	run := func(poison bool) reading {
		s := newTestSim(t, nil)
		_, err := s.Next() // the arrival
		require.NoError(t, err)
		var junks [][]segJob
		if poison { // arrays for the segments at the placement and the activity, and one more; room for segments appended in place
			h := &s.gpus[0].tel
			h.buf = make([]segment, 0, 8)
			h.segs = h.buf
			bad := dist{kind: distNormal, mean: 0.9, scale: 5, hi: 3, lo: -3}
			for range 3 {
				junk := make([]segJob, 4)
				for i := range junk {
					junk[i] = segJob{smact: bad, smocc: bad, drama: bad, term: models.Term{W: 7}}
				}
				junks = append(junks, junk)
				s.gpus[0].tel.free = append(s.gpus[0].tel.free, junk[:0])
			}
		}
		require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
		_, err = s.AdvanceTo(120 * time.Second)
		require.NoError(t, err)
		if poison { // the junk array holds a recorded segment's job
			used := false
			for _, seg := range s.gpus[0].tel.segs {
				for _, junk := range junks {
					used = used || (len(seg.jobs) > 0 && &seg.jobs[0] == &junk[0])
				}
			}
			require.True(t, used)
		}
		return reading{s.View().Telemetry.Samples(nil, 0, 121), s.View().GPUs[0].UsedMiB}
	}
	fresh := run(false)
	require.Len(t, fresh.x, 121)
	require.Equal(t, fresh, run(true))
}

// TestMeasuredAtIsUsedAndSteady: View's one look at a GPU's history
// (measuredAt) gives usedAtSecond's memory, bit for bit, and whether
// UsedMiBChangesAt says it stays, at every tenth of a second while jobs
// start, ramp up (with the CUDA context or without a ramp), share a GPU
// and end, on every GPU (one never used).
func TestMeasuredAtIsUsedAndSteady(t *testing.T) {
	noRamp := DefaultTruth()
	noRamp.Ramp = 0
	tests := []struct {
		name  string
		truth Truth
	}{
		{name: "ramp", truth: DefaultTruth()},
		{name: "no ramp", truth: noRamp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := models.ParseServer("a100-40gb:3")
			require.NoError(t, err)
			s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: tc.truth, Seed: 1, Interference: sharing{}},
				[]traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 40},
					{ID: "b", Workload: "resnet18_cifar100_bs128_20e_1gpu", GPUs: 1, SoloS: 90, Submit: 7 * time.Second},
					{ID: "c", Workload: "xlnet_base_cased_wiki_bs8_2gpu", GPUs: 2, SoloS: 60, Submit: 12500 * time.Millisecond}})
			require.NoError(t, err)
			places := map[policies.JobID][]int{0: {0}, 1: {0}, 2: {0, 1}}
			for now := time.Duration(0); now <= 400*time.Second; now += 100 * time.Millisecond {
				evs, err := s.AdvanceTo(now)
				require.NoError(t, err)
				for _, e := range evs {
					if e.Kind == policies.JobArrived {
						require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: e.Job, GPUs: places[e.Job]}))
					}
				}
				k := int64(s.now / time.Second)
				for g := range 3 {
					u, steady := s.measuredAt(g, k)
					require.Equal(t, math.Float64bits(s.usedAtSecond(g, k)), math.Float64bits(u), "GPU %d at %v", g, now)
					require.Equal(t, telemetry{s}.UsedMiBChangesAt(g) == never, steady, "GPU %d at %v", g, now)
				}
			}
			require.Equal(t, policies.Done, s.view.Jobs[2].State, "every job ran")
		})
	}
}

// TestNextAfterAdvanceTo: AdvanceTo takes only the events due by its time
// (Next under advancing), and a Next after it takes the next instant's,
// however far; AdvanceTo's Next is bounded again at its next call.
func TestNextAfterAdvanceTo(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:1")
	require.NoError(t, err)
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 1},
		[]traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: time.Second},
			{ID: "b", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 10 * time.Second},
			{ID: "c", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 30 * time.Second}})
	require.NoError(t, err)
	steps := []struct {
		advance time.Duration // AdvanceTo this, or Next when 0
		want    []policies.JobID
		now     time.Duration
	}{
		{advance: 5 * time.Second, want: []policies.JobID{0}, now: 5 * time.Second},
		{want: []policies.JobID{1}, now: 10 * time.Second},
		{advance: 20 * time.Second, now: 20 * time.Second},
		{want: []policies.JobID{2}, now: 30 * time.Second},
	}
	for i, st := range steps {
		var evs []policies.Event
		if st.advance > 0 {
			evs, err = s.AdvanceTo(st.advance)
		} else {
			evs, err = s.Next()
		}
		require.NoError(t, err)
		var got []policies.JobID
		for _, e := range evs {
			require.Equal(t, policies.JobArrived, e.Kind)
			got = append(got, e.Job)
		}
		require.Equal(t, st.want, got, "step %d", i)
		require.Equal(t, st.now, s.Now(), "step %d", i)
	}
}

// TestActivityChecksItsGPUs: the end-of-instant check walks the GPUs of a
// job that became active there (the activity marks them; changed no longer
// does), so a GPU that lists a job it does not run is found at the job's
// activity, though the check of an arrival in between cleared the marks
// its placement made.
func TestActivityChecksItsGPUs(t *testing.T) {
	srv, err := models.ParseServer("a100-40gb:2")
	require.NoError(t, err)
	s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 1},
		[]traces.Job{{ID: "a", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1},
			{ID: "b", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1, Submit: 100 * time.Millisecond}})
	require.NoError(t, err)
	evs, err := s.Next() // a arrives
	require.NoError(t, err)
	require.Equal(t, policies.JobArrived, evs[0].Kind)
	require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
	evs, err = s.Next() // a started
	require.NoError(t, err)
	require.Equal(t, policies.JobStarted, evs[0].Kind)
	evs, err = s.Next() // b arrives: its check clears the marks
	require.NoError(t, err)
	require.Equal(t, []policies.Event{{Kind: policies.JobArrived, T: 100 * time.Millisecond, Job: 1}}, evs)
	s.view.GPUs[0].Jobs = append(s.view.GPUs[0].Jobs, 1) // b is pending, not on GPU 0
	_, err = s.Next()                                    // a active
	require.ErrorContains(t, err, "GPU 0 lists job 1, which is pending")
}

// TestLoneJobsRate: a job alone on its GPU runs at its model's rate alone,
// 1 under a PressureModel (retime and rateOn take it without asking the
// model) and what Rate gives under any other (half, under halved).
func TestLoneJobsRate(t *testing.T) {
	tests := []struct {
		name string
		m    models.Interference
		want float64
	}{
		{name: "pressure", m: models.DefaultInterference(), want: 1},
		{name: "halved", m: halved{}, want: 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSim(t, tc.m)
			_, err := s.Next() // the arrival
			require.NoError(t, err)
			require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
			_, err = s.AdvanceTo(60 * time.Second) // started, active
			require.NoError(t, err)
			require.True(t, s.view.Jobs[0].Active)
			require.Equal(t, tc.want, s.jobs[0].rate)
		})
	}
}

// TestPlaceAndReleaseMarkTheirGPUs: a placement's GPUs and the GPUs a
// finish frees are walked by the next end-of-instant check (mark): a GPU
// made to list a job that does not run there, after the placement's events
// or after the job's activity, is found at the next instant (the other
// job's arrival, the finish).
func TestPlaceAndReleaseMarkTheirGPUs(t *testing.T) {
	tests := []struct {
		name    string
		corrupt policies.EventKind // GPU 0 is made to list job 1 after job 0's event of this kind
	}{
		{name: "placement", corrupt: policies.JobStarted},
		{name: "release", corrupt: policies.JobActive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := models.ParseServer("a100-40gb:2")
			require.NoError(t, err)
			s, err := New(Config{Server: srv, Catalog: models.A100(), Truth: DefaultTruth(), Seed: 1},
				[]traces.Job{{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 30},
					{ID: "b", Workload: "mnist_bs32_1gpu", GPUs: 1, Submit: 100 * time.Millisecond}})
			require.NoError(t, err)
			for range 10 {
				evs, err := s.Next()
				require.NoError(t, err)
				e := evs[len(evs)-1]
				if e.Kind == policies.JobArrived && e.Job == 0 {
					require.NoError(t, s.Apply(policies.Action{Kind: policies.Place, Job: 0, GPUs: []int{0}}))
				}
				if e.Kind == tc.corrupt && e.Job == 0 {
					s.view.GPUs[0].Jobs = append(s.view.GPUs[0].Jobs, 1) // b does not run on GPU 0
					_, err := s.Next()
					require.ErrorContains(t, err, "GPU 0 lists job 1")
					return
				}
			}
			t.Fatal("no such event")
		})
	}
}
