package executor

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results/runfiles"
	"github.com/aegis-sched/aegis/traces"
)

// The executor keeps at most one sample per whole second, by timestamp; a
// missed second is a gap, not a shift; the window is the samples of the
// last n whole seconds by their timestamps.
func TestTelemetryWindowByTimestamp(t *testing.T) {
	x := &Executor{tel: make([]ring, 1)}
	x.view.Telemetry = telemetry{x}
	ms := time.Millisecond
	for _, at := range []time.Duration{1000 * ms, 2100 * ms, 2900 * ms /* same second: replaces */, 4050 * ms, 3500 * ms /* late, out of order: dropped */, 5000 * ms} {
		x.tel[0].add(policies.Sample{At: at, UtilPct: float64(at / ms)})
	}
	got := func(now time.Duration, n int) []float64 {
		x.view.Now = now
		var out []float64
		for _, s := range x.view.Telemetry.Samples(nil, 0, n) {
			out = append(out, s.UtilPct)
		}
		return out
	}
	require.Equal(t, []float64{1000, 2900, 4050, 5000}, got(5400*ms, 10))
	require.Equal(t, []float64{4050, 5000}, got(5400*ms, 3), "seconds 3, 4 and 5: 3 was missed")
	require.Equal(t, []float64{2900}, got(2500*ms, 1))
	require.Empty(t, got(500*ms, 5))
}

// A reading without pressure signals in a run that has them is a missed
// sample, not a sample of an idle GPU; without pressure signals the run
// keeps utilization and memory only.
func TestWindowSample(t *testing.T) {
	busy := gpu.Sample{UtilPct: 90, UsedMiB: 1000, Pressure: true, SMACT: 0.8, SMOCC: 0.4, DRAMA: 0.6}
	stale := gpu.Sample{UtilPct: 90, UsedMiB: 1000}
	for _, c := range []struct {
		name     string
		pressure bool
		in       gpu.Sample
		want     policies.Sample
		ok       bool
	}{
		{"pressure run, full reading", true, busy, policies.Sample{At: time.Second, UtilPct: 90, UsedMiB: 1000, SMACT: 0.8, SMOCC: 0.4, DRAMA: 0.6}, true},
		{"pressure run, reading without pressure", true, stale, policies.Sample{}, false},
		{"utilization run, full reading", false, busy, policies.Sample{At: time.Second, UtilPct: 90, UsedMiB: 1000}, true},
		{"utilization run, plain reading", false, stale, policies.Sample{At: time.Second, UtilPct: 90, UsedMiB: 1000}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := windowSample(c.pressure, c.in, time.Second)
			require.Equal(t, c.ok, ok)
			require.Equal(t, c.want, got)
		})
	}
}

// When the telemetry's PIDs cannot identify jobs (a driver whose process
// list is not read, or PIDs of another namespace in three readings in a
// row), first activity comes from memory rise for shared attempts too;
// until then a shared attempt is known active only by its processes.
func TestActivityFromMemoryWhenPIDsUnusable(t *testing.T) {
	const ghost = 1 << 30 // no such PID here
	mine := gpu.Proc{PID: os.Getpid(), UsedMiB: 100}
	shared := &attempt{gpus: []int{0}, pid: ghost - 1, base: []float64{10000}}
	rose := func(procs ...gpu.Proc) gpu.Sample { return gpu.Sample{UsedMiB: 10000 + activityMiB + 1, Procs: procs} }
	tests := []struct {
		name     string
		readings []gpu.Sample
		memOnly  bool
		log      string
	}{
		{"PIDs of this machine", []gpu.Sample{rose(mine), rose(mine), rose(mine)}, false, ""},
		{"process list not read", []gpu.Sample{{ProcsUnknown: true}}, true, "the driver's process list is not read"},
		{"foreign PIDs twice", []gpu.Sample{rose(gpu.Proc{PID: ghost}), rose(gpu.Proc{PID: ghost})}, false, ""},
		{"foreign PIDs, interrupted", []gpu.Sample{rose(gpu.Proc{PID: ghost}), rose(gpu.Proc{PID: ghost}), rose(mine), rose(gpu.Proc{PID: ghost})}, false, ""},
		{"foreign PIDs three times", []gpu.Sample{rose(gpu.Proc{PID: ghost}), rose(gpu.Proc{PID: ghost}), rose(gpu.Proc{PID: ghost})}, true,
			"3 readings in a row list GPU processes that do not exist here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log strings.Builder
			x := &Executor{cfg: Config{Log: &log, Source: gpu.NewFake(nil)}}
			for _, s := range tc.readings {
				x.checkPIDs([]gpu.Sample{s})
			}
			require.Equal(t, tc.memOnly, x.memOnly)
			if tc.log != "" {
				require.Contains(t, log.String(), tc.log)
				require.Contains(t, log.String(), "first activity is now read from each GPU's memory rise")
			} else {
				require.Empty(t, log.String())
			}
			require.Equal(t, tc.memOnly, x.showsActivity(shared, 0, rose()), "a shared attempt's memory rise counts only without usable PIDs")
			require.False(t, x.showsActivity(shared, 0, gpu.Sample{UsedMiB: 10000 + activityMiB}), "no rise, no activity")
		})
	}
}

// The run's telemetry.csv: one row per GPU and second (the first reading
// of the second), appended after a resume without a header, a torn last
// line dropped, no second repeated across the resume.
func TestTelRecord(t *testing.T) {
	dir := t.TempDir()
	r, err := openTelRecord(dir, io.Discard)
	require.NoError(t, err)
	for _, at := range []time.Duration{1100 * time.Millisecond, 1900 * time.Millisecond, 2050 * time.Millisecond} {
		r.add(0, policies.Sample{At: at, SMACT: 0.5, UsedMiB: float64(at / time.Millisecond)}, 61.25)
	}
	r.add(1, policies.Sample{At: 2 * time.Second, UtilPct: 40}, math.NaN())
	require.NoError(t, r.close())
	p := filepath.Join(dir, TelemetryName)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "gpu,t_s,smact,smocc,drama,util,used_mib,power_w\n0,1,0.5000,0.0000,0.0000,0.00,1100.0,61.2\n0,2,0.5000,0.0000,0.0000,0.00,2050.0,61.2\n1,2,0.0000,0.0000,0.0000,40.00,0.0,\n", string(b),
		"power in watts, empty where not read")

	// A killed executor left half a row; the resumed one cuts it and goes on.
	require.NoError(t, os.WriteFile(p, append(b, "0,3,0.12"...), 0o644))
	r, err = openTelRecord(dir, io.Discard)
	require.NoError(t, err)
	r.add(0, policies.Sample{At: 2500 * time.Millisecond}, 1) // second 2 is recorded
	r.add(0, policies.Sample{At: 3 * time.Second, DRAMA: 0.25}, 70)
	r.add(1, policies.Sample{At: 3 * time.Second}, 80)
	require.NoError(t, r.close())
	got, err := runfiles.ReadTelemetry(p)
	require.NoError(t, err, "the file reads back as aegis plot reads it")
	require.Len(t, got.S, 2)
	require.Len(t, got.S[0], 4)
	require.InDelta(t, 0.25, got.S[0][3].DRAMA, 1e-9)
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), "gpu,t_s"), "one header")
	require.True(t, strings.HasSuffix(string(b), "\n0,3,0.0000,0.0000,0.2500,0.00,0.0,70.0\n1,3,0.0000,0.0000,0.0000,0.00,0.0,80.0\n"), string(b))

	// A run begun before telemetry.csv had power goes on without it.
	old := "gpu,t_s,smact,smocc,drama,util,used_mib\n0,1,0.5000,0.0000,0.0000,0.00,1100.0\n"
	require.NoError(t, os.WriteFile(p, []byte(old), 0o644))
	r, err = openTelRecord(dir, io.Discard)
	require.NoError(t, err)
	r.add(0, policies.Sample{At: 2 * time.Second}, 70)
	require.NoError(t, r.close())
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, old+"0,2,0.0000,0.0000,0.0000,0.00,0.0\n", string(b))
}

// pastSource reads GPU 0 as busy from second 4 on, the process pid using
// it.
type pastSource struct {
	*gpu.Fake
	start time.Time
	now   time.Duration
	pid   int
}

func (p *pastSource) reading(sec time.Duration) gpu.Sample {
	s := gpu.Sample{GPU: 0, At: p.start.Add(sec), Pressure: true, TotalMiB: 1000}
	if sec >= 4*time.Second {
		s.UsedMiB, s.SMACT, s.Procs = 500, 0.9, []gpu.Proc{{PID: p.pid, UsedMiB: 500}}
	}
	return s
}

func (p *pastSource) Sample(context.Context) ([]gpu.Sample, error) {
	return []gpu.Sample{p.reading(p.now.Truncate(time.Second))}, nil
}

// keepingSource is a pastSource that keeps its past readings.
type keepingSource struct{ *pastSource }

func (p keepingSource) Backlog(_ context.Context, after time.Duration) ([]gpu.Sample, error) {
	var out []gpu.Sample
	for k := after.Truncate(time.Second) + time.Second; k < p.now.Truncate(time.Second); k += time.Second {
		out = append(out, p.reading(k))
	}
	return out, nil
}

// A poll that comes late takes a backlog source's readings of the seconds
// it missed, oldest first, into the window, first activity included (at
// the reading's second); a source without a backlog (a real GPU) leaves
// the missed seconds missed and the activity seen late. A source whose
// clock ran ahead of the poll's (an emulator read after the loop stalled)
// has its readings taken at their own seconds: not stamped at the poll's
// time, which made a job active seconds before its GPU showed it (and the
// policy's hold end that early), nor left without the seconds between.
func TestPollTakesBacklog(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name    string
		backlog bool
		polls   [][2]time.Duration // the poll's run time, the source's
		secs    []int64
		active  time.Duration
	}{
		{"backlog source", true, [][2]time.Duration{{ms(2500), ms(2500)}, {ms(7200), ms(7200)}}, []int64{2, 3, 4, 5, 6, 7}, 4 * time.Second},
		{"plain source", false, [][2]time.Duration{{ms(2500), ms(2500)}, {ms(7200), ms(7200)}}, []int64{2, 7}, 7 * time.Second},
		{"source ahead of the poll", true, [][2]time.Duration{{ms(2500), ms(2500)}, {ms(2600), ms(7200)}}, []int64{2, 3, 4, 5, 6, 7}, 4 * time.Second},
		{"source ahead, then the poll", true, [][2]time.Duration{{ms(2500), ms(2500)}, {ms(2600), ms(3900)}, {ms(3950), ms(7200)}},
			[]int64{2, 3, 4, 5, 6, 7}, 4 * time.Second},
		{"plain source ahead of the poll", false, [][2]time.Duration{{ms(2500), ms(2500)}, {ms(2600), ms(7200)}}, []int64{2, 7}, 7 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			p := &pastSource{Fake: gpu.NewFake(nil), start: start, pid: os.Getpid()}
			var src gpu.Source = p
			if tt.backlog {
				src = keepingSource{p}
			}
			x := &Executor{cfg: Config{Source: src, Speedup: 1, Log: io.Discard}, start: start, devIndex: map[int]int{0: 0},
				tel: make([]ring, 1), polled: -1, replaying: true}
			x.view.Pressure = true
			x.view.Telemetry = telemetry{x}
			x.view.GPUs = []policies.GPU{{CapacityMiB: 1000, Jobs: []policies.JobID{0}}}
			x.view.Jobs = []policies.Job{{ID: 0}}
			x.att = []*attempt{{job: 0, pid: p.pid, own: true, gpus: []int{0}}}
			for _, pl := range tt.polls {
				p.now, x.view.Now = pl[1], pl[0]
				require.NoError(t, x.poll(t.Context(), pl[0]))
			}
			x.view.Now = p.now
			var secs []int64
			for _, s := range x.view.Telemetry.Samples(nil, 0, 60) {
				secs = append(secs, int64(s.At/time.Second))
			}
			require.Equal(t, tt.secs, secs)
			require.True(t, x.view.Jobs[0].Active)
			require.Equal(t, tt.active, x.view.Jobs[0].ActiveAt)
		})
	}
}

// A loop that wakes late takes the backlog's first activity before the
// arrivals due by then: the activity keeps its reading's second and the
// events stay in time order (after the arrivals, it was stamped at their
// time, seconds after the GPU showed it).
func TestDueTakesBacklogBeforeArrivals(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &pastSource{Fake: gpu.NewFake(nil), start: start, pid: os.Getpid()}
	x := &Executor{cfg: Config{Source: keepingSource{p}, Speedup: 1, Log: io.Discard, Catalog: models.A100()}, start: start,
		devIndex: map[int]int{0: 0}, tel: make([]ring, 1), polled: -1, replaying: true}
	x.books = policies.NewBooks(&x.view)
	x.view.Pressure = true
	x.view.Telemetry = telemetry{x}
	x.view.GPUs = []policies.GPU{{CapacityMiB: 1000}}
	x.add(traces.Job{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 60})
	x.add(traces.Job{ID: "b", Workload: "mnist_bs32_1gpu", GPUs: 1, SoloS: 60, Submit: 5 * time.Second})
	x.waiting = x.waiting[1:] // a runs on GPU 0
	x.view.GPUs[0].Jobs = []policies.JobID{0}
	x.att[0] = &attempt{job: 0, pid: p.pid, own: true, gpus: []int{0}}
	for _, now := range []time.Duration{2500 * time.Millisecond, 7200 * time.Millisecond} {
		p.now, x.view.Now = now, now
		require.NoError(t, x.due(t.Context(), now))
	}
	var got []string
	for _, e := range x.out {
		got = append(got, fmt.Sprintf("%v %d at %v", e.Kind, e.Job, e.At()))
	}
	require.Equal(t, []string{
		fmt.Sprintf("%v 0 at 4s", policies.JobActive),
		fmt.Sprintf("%v 1 at 7.2s", policies.JobArrived),
	}, got)
}
