package aegis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

const sec = time.Second

// tel serves fixed samples per GPU; the last one is at Now.
type tel map[int][]policies.Sample

func (t tel) Samples(dst []policies.Sample, g, n int) []policies.Sample {
	s := t[g]
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return append(dst, s...)
}

// flat returns n identical samples.
func flat(n int, smact, smocc, drama, util float64) []policies.Sample {
	s := make([]policies.Sample, n)
	for i := range s {
		s[i] = policies.Sample{SMACT: smact, SMOCC: smocc, DRAMA: drama, UtilPct: util}
	}
	return s
}

// world builds views: GPUs of 40960 MiB, each running the given resident
// jobs, plus pending jobs.
type world struct {
	v policies.View
}

func newWorld(now time.Duration, gpus int) *world {
	w := &world{v: policies.View{Now: now, Pressure: true, Telemetry: tel{}}}
	for g := range gpus {
		w.v.GPUs = append(w.v.GPUs, policies.GPU{Index: g, CapacityMiB: 40960})
	}
	return w
}

// resident adds a running job on GPU g, active since activeAt (negative:
// not active yet), using usedMiB.
func (w *world) resident(g int, activeAt time.Duration, usedMiB float64) policies.JobID {
	id := policies.JobID(len(w.v.Jobs))
	j := policies.Job{ID: id, GPUs: 1, State: policies.Running, On: []int{g}, Attempts: 1,
		Active: activeAt >= 0, ActiveAt: max(activeAt, 0)}
	w.v.Jobs = append(w.v.Jobs, j)
	w.v.GPUs[g].Jobs = append(w.v.GPUs[g].Jobs, id)
	w.v.GPUs[g].UsedMiB += usedMiB
	return id
}

// pending adds a queued job.
func (w *world) pending(gpus int, prof policies.Profile) policies.JobID {
	id := policies.JobID(len(w.v.Jobs))
	w.v.Jobs = append(w.v.Jobs, policies.Job{ID: id, GPUs: gpus, State: policies.Pending, Profile: prof})
	w.v.Queue = policies.ListOf(append(w.v.Queue.AppendTo(nil), id)...)
	return id
}

// tel sets GPU g's samples, stamped one a second with the last at Now.
func (w *world) tel(g int, s []policies.Sample) {
	s = append([]policies.Sample(nil), s...)
	last := w.v.Now.Truncate(sec)
	for i := range s {
		s[i].At = last - time.Duration(len(s)-1-i)*sec
	}
	w.v.Telemetry.(tel)[g] = s
}

func policy(t *testing.T, params map[string]string) *Policy {
	t.Helper()
	p, err := New(params)
	require.NoError(t, err)
	return p
}

// decide returns the placements, the deferral reasons by GPU and the
// number of stops of one decision.
func decide(p *Policy, v *policies.View) (places map[policies.JobID][]int, defers map[int]string, stops int) {
	places, defers = map[policies.JobID][]int{}, map[int]string{}
	for _, a := range p.Schedule(v) {
		switch a.Kind {
		case policies.Place:
			places[a.Job] = a.GPUs
		case policies.Defer:
			defers[a.GPU] = a.Reason
		case policies.Stop:
			stops++
		}
	}
	return places, defers, stops
}

// quiet is a GPU's telemetry well below every threshold.
var quiet = flat(60, 0.2, 0.1, 0.1, 30)

// busy is above τ1 and τ2.
var busy = flat(60, 0.8, 0.5, 0.3, 90)

func TestExclusiveFirst(t *testing.T) {
	w := newWorld(200*sec, 2)
	w.resident(0, 10*sec, 2000)
	w.tel(0, quiet)
	j := w.pending(1, policies.Profile{})
	places, _, _ := decide(policy(t, nil), &w.v)
	require.Equal(t, []int{1}, places[j], "an idle GPU is taken before collocating")
}

func TestObservationHold(t *testing.T) {
	for _, tc := range []struct {
		name     string
		activeAt time.Duration
		hold     string
		placed   bool
	}{
		{"not active yet", -1, "30s", false},
		{"active 10 s ago", 190 * sec, "30s", false},
		{"hold just over", 170 * sec, "30s", true},
		{"hold disabled", 190 * sec, "0s", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(200*sec, 1)
			w.resident(0, tc.activeAt, 2000)
			w.tel(0, quiet)
			j := w.pending(1, policies.Profile{})
			places, defers, _ := decide(policy(t, map[string]string{"hold": tc.hold}), &w.v)
			if tc.placed {
				require.Equal(t, []int{0}, places[j])
			} else {
				require.Empty(t, places)
				require.Equal(t, "hold", defers[0])
			}
		})
	}
}

// A heavy job left GPU 0 before the newest job's first activity: an
// anchored 120-sample window sees only the new mix (quiet), an unanchored one
// still sees the departed job's pressure.
func TestActivityAnchoredWindow(t *testing.T) {
	for _, anchor := range []string{"on", "off"} {
		t.Run(anchor, func(t *testing.T) {
			w := newWorld(200*sec, 1)
			w.resident(0, 165*sec, 2000) // active at 165 s; the window covers 81..200
			w.tel(0, append(flat(84, 0.95, 0.6, 0.6, 99), flat(36, 0.2, 0.1, 0.1, 30)...))
			j := w.pending(1, policies.Profile{})
			places, defers, _ := decide(policy(t, map[string]string{"window": "120", "anchor": anchor}), &w.v)
			if anchor == "on" {
				require.Equal(t, []int{0}, places[j])
			} else {
				require.Equal(t, "pressure", defers[0])
			}
		})
	}
}

// With no hold, a GPU whose newest job has just become active has no sample
// of the new mix yet: the filter cannot judge it and defers.
func TestEmptyWindowDefers(t *testing.T) {
	w := newWorld(200700*time.Millisecond, 1)
	w.resident(0, 200500*time.Millisecond, 2000) // active after the last whole second
	w.tel(0, quiet)
	w.pending(1, policies.Profile{})
	places, defers, _ := decide(policy(t, map[string]string{"hold": "0s"}), &w.v)
	require.Empty(t, places)
	require.Equal(t, "window", defers[0])
}

func TestPressureFilter(t *testing.T) {
	for _, tc := range []struct {
		name                string
		smact, smocc, drama float64
		params              map[string]string
		admit               bool
	}{
		{"quiet", 0.2, 0.1, 0.1, nil, true},
		{"smact and smocc high", 0.8, 0.5, 0.1, nil, false},
		{"smact and drama high", 0.8, 0.1, 0.6, nil, false},
		{"smact high only", 0.8, 0.2, 0.2, nil, true},
		{"smocc and drama high, smact low", 0.5, 0.9, 0.9, nil, true},
		{"at the thresholds", 0.65, 0.35, 0, nil, false},
		{"just below τ1", 0.6499, 0.9, 0.9, nil, true},
		{"nf keeps busy GPU", 0.8, 0.5, 0.6, map[string]string{"filter": "nf"}, true},
		{"custom thresholds", 0.55, 0.25, 0, map[string]string{"thresholds": "0.5,0.2,0.4"}, false},
		{"util:70 rejects 90 %", 0.2, 0.1, 0.1, map[string]string{"filter": "util:70"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(200*sec, 1)
			w.resident(0, 10*sec, 2000)
			util := 30.0
			if tc.name == "util:70 rejects 90 %" {
				util = 90
			}
			w.tel(0, flat(30, tc.smact, tc.smocc, tc.drama, util))
			j := w.pending(1, policies.Profile{})
			places, defers, _ := decide(policy(t, tc.params), &w.v)
			if tc.admit {
				require.Equal(t, []int{0}, places[j])
			} else {
				require.Equal(t, "pressure", defers[0])
			}
		})
	}
}

func TestMemoryInputs(t *testing.T) {
	prof := policies.Profile{PeakMiB: 8000, Analytical: 12000, GPUMemNet: 16000, FakeTensor: 3000}
	for _, tc := range []struct {
		memory string
		free   float64 // measured free MiB on the GPU
		admit  bool
		reason string
	}{
		{EstFree, 5120 + 512, true, ""},
		{EstFree, 5120 + 511, false, "memory"},
		{PeakMem, 8000 + 512 + 512, true, ""},
		{PeakMem, 8000 + 512 + 511, false, "memory"},
		{Analytical, 12000 + 1024, true, ""},
		{Analytical, 12000 + 1023, false, "memory"},
		{GPUMemNet, 16000 + 1024, true, ""},
		{GPUMemNet, 12000 + 1024, false, "memory"},
		{FakeTensor, 3000 + 1024, true, ""},
		{FakeTensor, 3000 + 1023, false, "memory"},
	} {
		t.Run(tc.memory, func(t *testing.T) {
			w := newWorld(200*sec, 1)
			w.resident(0, 10*sec, 40960-tc.free)
			w.tel(0, quiet)
			j := w.pending(1, prof)
			places, defers, _ := decide(policy(t, map[string]string{"memory": tc.memory}), &w.v)
			if tc.admit {
				require.Equal(t, []int{0}, places[j])
			} else {
				require.Equal(t, tc.reason, defers[0])
			}
		})
	}
	t.Run("unavailable estimate means exclusive only", func(t *testing.T) {
		w := newWorld(200*sec, 1)
		w.resident(0, 10*sec, 1000)
		w.tel(0, quiet)
		w.pending(1, policies.Profile{PeakMiB: 8000}) // no analytical estimate
		places, defers, _ := decide(policy(t, map[string]string{"memory": Analytical}), &w.v)
		require.Empty(t, places)
		require.Equal(t, "memory-unavailable", defers[0])
	})
}

// Four occupied GPUs: GPU 3 has the most free memory but is the busiest
// (still under the filter), GPU 1 is the least active, GPU 2 is next after
// the round-robin cursor and lacks memory for Est-free, GPU 0 is none of
// these (so no rule can pass by picking the lowest index).
func TestPlacementRules(t *testing.T) {
	for _, tc := range []struct {
		placement string
		want      int
	}{{MFM, 3}, {MU, 1}, {RR, 2}} {
		t.Run(tc.placement, func(t *testing.T) {
			w := newWorld(200*sec, 4)
			w.resident(0, 10*sec, 20000)
			w.resident(1, 10*sec, 30000)
			w.resident(2, 10*sec, 38000)
			w.resident(3, 10*sec, 1000)
			w.tel(0, flat(30, 0.3, 0.1, 0.1, 40))
			w.tel(1, flat(30, 0.1, 0.1, 0.1, 20))
			w.tel(2, flat(30, 0.3, 0.1, 0.1, 40))
			w.tel(3, flat(30, 0.6, 0.3, 0.3, 70))
			p := policy(t, map[string]string{"placement": tc.placement})
			p.Placed(nil, []int{1}) // the cursor now points at GPU 2
			j := w.pending(1, policies.Profile{})
			places, _, _ := decide(p, &w.v)
			require.Equal(t, []int{tc.want}, places[j])
		})
	}
}

func TestRoundRobinAdvances(t *testing.T) {
	p := policy(t, map[string]string{"placement": RR})
	w := newWorld(200*sec, 3)
	for g := range 3 {
		w.resident(g, 10*sec, 1000)
		w.tel(g, quiet)
	}
	var got []int
	for range 4 {
		w.v.Queue = policies.JobList{}
		j := w.pending(1, policies.Profile{})
		places, _, _ := decide(p, &w.v)
		got = append(got, places[j][0])
	}
	require.Equal(t, []int{0, 1, 2, 0}, got)
}

// failed adds a pending job that failed with OOM k times while shared.
func (w *world) failed(k int, at time.Duration) policies.JobID {
	id := w.pending(1, policies.Profile{PeakMiB: 8000})
	j := &w.v.Jobs[id]
	j.OOMs, j.Attempts, j.LastFailure, j.FailedAt, j.FailedShared = k, k, policies.OOM, at, true
	w.v.Failed = append(w.v.Failed, id)
	return id
}

func TestRecoveryLadder(t *testing.T) {
	c := DefaultConfig()
	require.Equal(t, []float64{10240, 18432, 20480, 28672, 30720}, c.Ladder(40960))
	for _, tc := range []struct {
		name     string
		recovery string
		ooms     int
		free     float64
		placed   bool
		reason   string
	}{
		{"ladder 1st retry fits", "ladder", 1, 10240 + 512, true, ""},
		{"ladder 1st retry short", "ladder", 1, 10240 + 511, false, "recovery-memory"},
		{"ladder 3rd retry", "ladder", 3, 20480 + 512, true, ""},
		{"ladder 3rd retry short", "ladder", 3, 18432 + 512, false, "recovery-memory"},
		{"past the ladder: exclusive", "ladder", 6, 40000, false, "recovery-exclusive"},
		{"exclusive recovery never collocates", "exclusive", 1, 40000, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(200*sec, 1)
			w.resident(0, 10*sec, 40960-tc.free)
			w.tel(0, quiet)
			j := w.failed(tc.ooms, 100*sec)
			places, defers, _ := decide(policy(t, map[string]string{"recovery": tc.recovery}), &w.v)
			if tc.placed {
				require.Equal(t, []int{0}, places[j])
				return
			}
			require.Empty(t, places)
			require.Equal(t, tc.reason, defers[0])
		})
	}
}

// The recovery queue has strict priority: a failed job takes the idle GPU
// before an older job of the main queue, and while it waits no main-queue
// job collocates.
func TestRecoveryQueuePriority(t *testing.T) {
	w := newWorld(200*sec, 2)
	w.resident(0, 10*sec, 1000)
	w.tel(0, quiet)
	m := w.pending(1, policies.Profile{})
	r := w.failed(1, 150*sec)
	places, _, _ := decide(policy(t, nil), &w.v)
	require.Equal(t, []int{1}, places[r])
	require.NotContains(t, places, m, "the main queue may not collocate while the recovery queue is non-empty")

	w2 := newWorld(200*sec, 1)
	w2.resident(0, 10*sec, 1000)
	w2.tel(0, quiet)
	w2.pending(1, policies.Profile{})
	w2.failed(1, 150*sec)
	places, _, _ = decide(policy(t, nil), &w2.v)
	require.Empty(t, places, "a waiting recovered job blocks collocation")
}

// A retry on the ladder must still pass the policy's own admission: its
// memory input (when that demands more than the ladder level) and the
// pressure filter.
func TestLadderKeepsAdmissionRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		free   float64
		tel    []policies.Sample
		reason string
	}{
		{"estimate above the level", map[string]string{"recovery": "ladder", "memory": GPUMemNet}, 10240 + 512, quiet, "memory"},
		{"estimate and level met", map[string]string{"recovery": "ladder", "memory": GPUMemNet}, 16000 + 1024, quiet, ""},
		{"busy GPU", map[string]string{"recovery": "ladder"}, 30000, busy, "pressure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(200*sec, 1)
			w.resident(0, 10*sec, 40960-tc.free)
			w.tel(0, tc.tel)
			j := w.failed(1, 100*sec)
			w.v.Jobs[j].GPUMemNet = 16000
			places, defers, _ := decide(policy(t, tc.params), &w.v)
			if tc.reason == "" {
				require.Equal(t, []int{0}, places[j])
				return
			}
			require.Empty(t, places)
			require.Equal(t, tc.reason, defers[0])
		})
	}
}

func TestStopsJobsThatCannotRecover(t *testing.T) {
	w := newWorld(200*sec, 1)
	id := w.failed(1, 100*sec)
	w.v.Jobs[id].FailedShared = false // it failed while alone on its GPU
	_, _, stops := decide(policy(t, nil), &w.v)
	require.Equal(t, 1, stops)
}

func TestHeadOfLineBlockingAndTick(t *testing.T) {
	w := newWorld(200500*time.Millisecond, 1)
	w.resident(0, 10*sec, 40000) // no memory left
	w.tel(0, quiet)
	w.pending(1, policies.Profile{})
	w.pending(1, policies.Profile{})
	acts := policy(t, nil).Schedule(&w.v)
	var defers, wakes int
	for _, a := range acts {
		switch a.Kind {
		case policies.Defer:
			defers++
		case policies.Wake:
			wakes++
			require.Equal(t, 201*sec, a.At, "ticks lie on the 1 s grid")
		}
	}
	require.Equal(t, 1, defers, "only the head job is considered")
	require.Equal(t, 1, wakes)
}

func TestParams(t *testing.T) {
	for _, tc := range []struct {
		params map[string]string
		err    string
	}{
		{map[string]string{"memory": "magic"}, "memory"},
		{map[string]string{"filter": "util:0"}, "util:<pct>"},
		{map[string]string{"filter": "util:NaN"}, "util:<pct>"},
		{map[string]string{"filter": "what"}, "filter"},
		{map[string]string{"thresholds": "0.5,0.2"}, "3 comma-separated"},
		{map[string]string{"placement": "best"}, "placement"},
		{map[string]string{"bogus": "1"}, "valid:"},
		{map[string]string{"hold": "1e12"}, "hold"},
		{map[string]string{"hold": "inf"}, "hold"},
		{map[string]string{"tick": "0"}, "tick"},
		{map[string]string{"tick": "1e-6"}, "tick"},
		{map[string]string{"thresholds": "NaN,0.2,0.4"}, "thresholds"},
		{map[string]string{"estfree_mib": "NaN"}, "estfree_mib"},
	} {
		_, err := New(tc.params)
		require.ErrorContains(t, err, tc.err)
	}
	p := policy(t, map[string]string{"memory": "peakmem", "placement": "mu", "filter": "util:70",
		"thresholds": "0.5,0.2,0.4", "hold": "20s", "window": "45", "recovery": "ladder"})
	c := p.Config()
	require.Equal(t, PeakMem, c.Memory)
	require.Equal(t, 70.0, c.UtilPct)
	require.Equal(t, [3]float64{0.5, 0.2, 0.4}, c.Thresholds)
	require.Equal(t, 20*sec, c.Hold)
	require.Equal(t, 45, c.Window)
}

func TestValidateNeedsPressureTelemetry(t *testing.T) {
	v := &policies.View{Pressure: false}
	require.Error(t, policy(t, nil).Validate(v))
	require.NoError(t, policy(t, map[string]string{"filter": "mem-only"}).Validate(v))
	require.NoError(t, policy(t, map[string]string{"filter": "util:70"}).Validate(v))
}
