package traces

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
)

// naiveSelect is the specification of SelectWindow written the slow, obvious
// way: profile every window from scratch. It returns the best accepted
// scores' window starts.
func naiveSelect(t *testing.T, jobs []LogJob, o SelectOptions) (starts []int, best float64) {
	t.Helper()
	o, err := o.withDefaults()
	require.NoError(t, err)
	el := FilterGPUs(jobs, o.GPUs)
	whole := ProfileOf(el)
	best = math.Inf(1)
	for s := 0; s+o.Jobs <= len(el); s++ {
		w := el[s : s+o.Jobs]
		ok := true
		for g, m := range o.MinPerGPU {
			c := 0
			for _, j := range w {
				if j.GPUs == g {
					c++
				}
			}
			ok = ok && c >= m
		}
		d := Distance(ProfileOf(w), whole)
		if !ok || d.GPUMix > *o.MaxGPUMix || d.RuntimeCDF > *o.MaxRuntimeCDF {
			continue
		}
		switch sc := d.Score(); {
		case sc < best-1e-9:
			best, starts = sc, []int{s}
		case sc <= best+1e-9:
			starts = append(starts, s)
		}
	}
	return starts, best
}

// randomLog draws a small log with coarse values, so that ties and zero
// gaps are common.
func randomLog(r *rand.Rand, n int) *Log {
	l := &Log{Name: "random", Records: n}
	var at time.Duration
	for i := range n {
		if r.IntN(3) > 0 {
			at += time.Duration(r.IntN(4)*r.IntN(300)) * time.Second
		}
		g := 1
		switch r.IntN(20) {
		case 0, 1:
			g = 2
		case 2:
			g = 4
		}
		d := []time.Duration{time.Minute, 20 * time.Minute, 2 * time.Hour, 10 * time.Hour, 30 * time.Hour}[r.IntN(5)]
		l.Jobs = append(l.Jobs, LogJob{ID: strconv.Itoa(i), Submit: at, Duration: d, GPUs: g})
	}
	return l
}

func TestSelectWindowMatchesNaive(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		l := randomLog(r, 100+r.IntN(300))
		o := SelectOptions{Jobs: 5 + r.IntN(40), MinPerGPU: map[int]int{2: r.IntN(2)}, MaxGPUMix: new(0.2), MaxRuntimeCDF: new(0.2), Seed: seed}
		starts, best := naiveSelect(t, l.Jobs, o)
		sel, err := SelectWindow(l, o)
		if len(starts) == 0 {
			require.Error(t, err, "seed %d", seed)
			require.ErrorContains(t, err, "is acceptable")
			continue
		}
		require.NoError(t, err, "seed %d", seed)
		require.Contains(t, starts, sel.Report.Start, "seed %d", seed)
		require.InDelta(t, best, sel.Report.Score, 1e-9, "seed %d", seed)
		require.Equal(t, len(starts), sel.Report.Tied, "seed %d", seed)
		rep := sel.Report
		require.Equal(t, rep.Windows, rep.RejectedMinPerGPU+rep.RejectedGPUMix+rep.RejectedRuntimeCDF+rep.Accepted)
		require.Len(t, sel.Jobs, o.Jobs)
		require.Equal(t, time.Duration(0), sel.Jobs[0].Submit)
	}
}

func TestSelectWindowFindsPlantedWindow(t *testing.T) {
	// A log whose jobs are all 10-hour 1-GPU jobs arriving every 100 s,
	// except for one stretch that mirrors the whole trace's mix (a 2-GPU
	// 20-minute job among 1-GPU jobs of mixed lengths), repeated: windows
	// that contain exactly one copy are best.
	var jobs []LogJob
	add := func(gpus int, d time.Duration, gap time.Duration) {
		var at time.Duration
		if len(jobs) > 0 {
			at = jobs[len(jobs)-1].Submit + gap
		}
		jobs = append(jobs, LogJob{ID: strconv.Itoa(len(jobs)), Submit: at, Duration: d, GPUs: gpus})
	}
	for i := range 400 {
		switch {
		case i%100 == 50:
			add(2, 20*time.Minute, 0)
		case i%3 == 0:
			add(1, 5*time.Minute, 100*time.Second)
		default:
			add(1, 10*time.Hour, 100*time.Second)
		}
	}
	l := &Log{Name: "planted", Jobs: jobs, Records: len(jobs)}
	o := DefaultSelectOptions("saturn")
	o.Jobs = 50
	sel, err := SelectWindow(l, o)
	require.NoError(t, err)
	n2 := 0
	for _, j := range sel.Jobs {
		if j.GPUs == 2 {
			n2++
		}
	}
	require.Equal(t, 1, n2)
	require.Equal(t, 350, sel.Report.RejectedMinPerGPU+sel.Report.RejectedGPUMix+sel.Report.RejectedRuntimeCDF+sel.Report.Accepted-1)
	require.Greater(t, sel.Report.Tied, 1, "many equally good windows")

	// The seed picks among ties, deterministically.
	again, err := SelectWindow(l, o)
	require.NoError(t, err)
	require.Equal(t, sel.Report.Start, again.Report.Start)
	starts := map[int]bool{}
	for seed := range uint64(20) {
		o.Seed = seed
		s, err := SelectWindow(l, o)
		require.NoError(t, err)
		starts[s.Report.Start] = true
	}
	require.Greater(t, len(starts), 1, "different seeds break ties differently")
}

func TestSelectWindowFilters(t *testing.T) {
	// 4- and 0-GPU jobs are dropped before windowing, and inter-arrivals are
	// recomputed: a 4-GPU job between two 1-GPU jobs does not split their gap.
	l := &Log{Name: "f", Jobs: []LogJob{
		{ID: "a", Submit: 0, Duration: time.Minute, GPUs: 1},
		{ID: "x", Submit: sec(5), Duration: time.Minute, GPUs: 4},
		{ID: "y", Submit: sec(6), Duration: time.Minute, GPUs: 0},
		{ID: "b", Submit: sec(10), Duration: time.Hour, GPUs: 2},
		{ID: "c", Submit: sec(30), Duration: time.Minute, GPUs: 1},
	}, Records: 7, Skipped: map[string]int{SkipNeverStarted: 2}}
	sel, err := SelectWindow(l, SelectOptions{Jobs: 3, MinPerGPU: map[int]int{2: 1}, Seed: 42})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, []string{sel.Jobs[0].ID, sel.Jobs[1].ID, sel.Jobs[2].ID})
	rep := sel.Report
	require.Equal(t, 3, rep.EligibleJobs)
	require.Equal(t, 5, rep.SourceJobs)
	require.Equal(t, 7, rep.Records)
	require.Equal(t, map[string]int{SkipNeverStarted: 2}, rep.Skipped)
	require.Equal(t, 15.0, rep.Whole.InterArrivalP50S)
	require.Equal(t, Distances{}, rep.Distances, "the only window is the whole trace")
}

// TestSelectZeroLimits checks that acceptance limits of 0 are limits (only
// windows at distance 0 pass), not "unset" (they used to become 0.05 and
// 0.10), and that nil limits take the defaults. In the log, the first 20
// jobs alternate 5 min and 2 h and the last 10 are five short then five
// long, so half the jobs are short, as are exactly half of some 10-job
// windows' jobs; every 5th job needs 2 GPUs in the first 20, and jobs 21
// and 22 in the rest (a fifth of all jobs).
func TestSelectZeroLimits(t *testing.T) {
	var jobs []LogJob
	for i := range 30 {
		d, g := 2*time.Hour, 1
		if (i < 20 && i%2 == 0) || (i >= 20 && i < 25) {
			d = 5 * time.Minute
		}
		if (i < 20 && i%5 == 0) || i == 21 || i == 22 {
			g = 2
		}
		jobs = append(jobs, LogJob{ID: strconv.Itoa(i), Submit: sec(float64(i)), Duration: d, GPUs: g})
	}
	l := &Log{Name: "zero", Jobs: jobs, Records: len(jobs)}
	whole := ProfileOf(jobs)
	for _, tc := range []struct {
		name           string
		mix, cdf       *float64
		wantMix, wantC float64
	}{
		{"defaults", nil, nil, DefaultMaxGPUMix, DefaultMaxRuntimeCDF},
		{"zero mix", new(0.0), nil, 0, DefaultMaxRuntimeCDF},
		{"zero cdf", nil, new(0.0), DefaultMaxGPUMix, 0},
		{"both zero", new(0.0), new(0.0), 0, 0},
		{"loose", new(1.0), new(1.0), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rejMix, rejCDF, acc int
			for s := 0; s+10 <= len(jobs); s++ {
				d := Distance(ProfileOf(jobs[s:s+10]), whole)
				switch {
				case d.GPUMix > tc.wantMix:
					rejMix++
				case d.RuntimeCDF > tc.wantC:
					rejCDF++
				default:
					acc++
				}
			}
			sel, err := SelectWindow(l, SelectOptions{Jobs: 10, MaxGPUMix: tc.mix, MaxRuntimeCDF: tc.cdf})
			require.NoError(t, err)
			rep := sel.Report
			require.Equal(t, tc.wantMix, rep.MaxGPUMix)
			require.Equal(t, tc.wantC, rep.MaxRuntimeCDF)
			require.Equal(t, [3]int{rejMix, rejCDF, acc}, [3]int{rep.RejectedGPUMix, rep.RejectedRuntimeCDF, rep.Accepted})
			require.LessOrEqual(t, rep.Distances.GPUMix, tc.wantMix)
			require.LessOrEqual(t, rep.Distances.RuntimeCDF, tc.wantC)
			if tc.name == "both zero" {
				require.Positive(t, rep.RejectedGPUMix)
				require.Positive(t, rep.RejectedRuntimeCDF)
				require.Positive(t, rep.Accepted)
			}
		})
	}
	// No 60-job window matches a 2-GPU share of 5.7 % exactly.
	gen, err := GenerateLike("venus", 1000, 1, 0)
	require.NoError(t, err)
	_, err = SelectWindow(gen, SelectOptions{MaxGPUMix: new(0.0)})
	require.ErrorContains(t, err, "exceed GPU-mix distance 0,")
}

func TestSelectWindowErrors(t *testing.T) {
	l := randomLog(rand.New(rand.NewPCG(1, 2)), 50)
	for _, tc := range []struct {
		name string
		o    SelectOptions
		want string
	}{
		{"short", SelectOptions{Jobs: 1}, "window of 1 jobs: need at least 2"},
		{"too long", SelectOptions{Jobs: 60}, "eligible jobs (GPU counts [1 2]) of 50, fewer than the window's 60"},
		{"negative limit", SelectOptions{MaxGPUMix: new(-1.0)}, "negative or NaN acceptance limit (gpu mix -1, runtime cdf 0.1)"},
		{"NaN limit", SelectOptions{MaxRuntimeCDF: new(math.NaN())}, "negative or NaN acceptance limit (gpu mix 0.05, runtime cdf NaN)"},
		{"min not eligible", SelectOptions{Jobs: 10, MinPerGPU: map[int]int{8: 1}}, "minimum for 8-GPU jobs, but the eligible GPU counts are [1 2]"},
		{"min too big", SelectOptions{Jobs: 10, MinPerGPU: map[int]int{1: 6, 2: 5}}, "add up to 11, more than the window's 10"},
		{"negative min", SelectOptions{Jobs: 10, MinPerGPU: map[int]int{2: -1}}, "negative minimum -1"},
		{"negative gpus", SelectOptions{Jobs: 10, GPUs: []int{-1, 1}}, "negative GPU count"},
		{"none acceptable", SelectOptions{Jobs: 10, MinPerGPU: map[int]int{2: 9}}, "none of 37 windows of 10 jobs is acceptable (37 lack the minimum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SelectWindow(l, tc.o)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSelectReportGolden pins the whole report of a selection on a synthetic
// Philly-like log (run with -update to rewrite).
func TestSelectReportGolden(t *testing.T) {
	l, err := GenerateLike("philly", 20000, 3, 0)
	require.NoError(t, err)
	sel, err := SelectWindow(l, DefaultSelectOptions("philly"))
	require.NoError(t, err)
	got, err := json.MarshalIndent(sel.Report, "", "  ")
	require.NoError(t, err)
	got = append(roundJSON(t, got), '\n')
	golden.File(t, "testdata/golden/select_philly_like.json", got)
	rep := sel.Report
	require.LessOrEqual(t, rep.Distances.GPUMix, DefaultMaxGPUMix)
	require.LessOrEqual(t, rep.Distances.RuntimeCDF, DefaultMaxRuntimeCDF)
	require.Less(t, rep.Score, 0.05, "a 20k-job log has a close window")
}

// TestSelectWindowLarge selects on a 300k-job synthetic Saturn-like log (the
// size of the real Saturn log) and checks that it is fast.
func TestSelectWindowLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	l, err := GenerateLike("saturn", 300000, 5, 0)
	require.NoError(t, err)
	start := time.Now()
	sel, err := SelectWindow(l, DefaultSelectOptions("saturn"))
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("selected window %d-%d of %d jobs in %v (score %.4f, %d accepted windows)", sel.Report.Start, sel.Report.End, len(l.Jobs), took, sel.Report.Score, sel.Report.Accepted)
	require.Less(t, took, 5*time.Second)
}

func BenchmarkSelectWindow300k(b *testing.B) {
	l, err := GenerateLike("saturn", 300000, 5, 0)
	require.NoError(b, err)
	o := DefaultSelectOptions("saturn")
	for b.Loop() {
		if _, err := SelectWindow(l, o); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDistanceComponents(t *testing.T) {
	whole := Profile{RuntimeCDF: RuntimeCDF{0.4, 0.8, 0.9, 1}, GPUDemand: map[int]float64{1: 0.9, 2: 0.1},
		GPUService: map[int]float64{1: 0.8, 2: 0.2}, InterArrivalP50S: 7, InterArrivalP95S: 63, ZeroInterArrival: 0.1}
	win := Profile{RuntimeCDF: RuntimeCDF{0.5, 0.8, 0.8, 1}, GPUDemand: map[int]float64{1: 1},
		GPUService: map[int]float64{1: 0.5, 2: 0.5}, InterArrivalP50S: 15, InterArrivalP95S: 15, ZeroInterArrival: 0.3}
	d := Distance(win, whole)
	require.InDelta(t, 0.05, d.RuntimeCDF, 1e-12)
	require.InDelta(t, 0.1, d.GPUMix, 1e-12)
	require.InDelta(t, 0.3, d.GPUService, 1e-12)
	require.InDelta(t, 0.5*(1+2), d.InterArrival, 1e-12) // log2(16/8) + |log2(16/64)|
	require.InDelta(t, 0.2, d.Burstiness, 1e-12)
	require.InDelta(t, 0.35*0.05+0.25*0.1+0.2*1.5+0.15*0.3+0.05*0.2, d.Score(), 1e-12)
	require.Equal(t, Distances{}, Distance(whole, whole))
	var buf bytes.Buffer
	require.NoError(t, json.NewEncoder(&buf).Encode(d))
	require.Contains(t, buf.String(), `"interarrival":1.5`)
}
