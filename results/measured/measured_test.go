package measured

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/runfiles"
)

func parse(t *testing.T, s string) *Run {
	t.Helper()
	r, err := Parse("run.csv", strings.NewReader(s))
	require.NoError(t, err)
	return r
}

// The minimal CSV: three jobs, one retried; the running count is the
// final attempts' overlap.
func TestParseMinimal(t *testing.T) {
	r := parse(t, "job_id,submit_s,start_s,last_start_s,finish_s,failed_attempts,workload_id\n"+
		"a,10,10,,110,0,w1\n"+
		"b,20,30,60,160,1,w2\n"+
		"c,15,50,50,60,,w1\n")
	require.Equal(t, []string{"a", "c", "b"}, []string{r.Jobs[0].ID, r.Jobs[1].ID, r.Jobs[2].ID}, "sorted by submission")
	require.Equal(t, Job{ID: "a", Workload: "w1", Submit: 0, Start: 0, Last: 0, Finish: 100, Queue: 0}, r.Jobs[0])
	require.Equal(t, Job{ID: "b", Workload: "w2", Submit: 10, Start: 20, Last: 50, Finish: 150, Queue: 10, Failed: 1}, r.Jobs[2])
	require.Equal(t, 130.0, r.Jobs[2].Span(), "span from the first launch")
	s := r.Running()
	require.Equal(t, Step{T: []float64{0, 40, 100, 150}, V: []int{1, 2, 1, 0}}, s,
		"c ends at 50 when b's last attempt starts: counted once")
	m := r.Metrics()
	require.Equal(t, 2, m.MaxRunning)
	require.InDelta(t, (40+2*60+50)/150.0, m.MeanRunning, 1e-12)
	require.Equal(t, 150.0, m.Makespan)
	require.Equal(t, 1, m.Failed)
	require.InDelta(t, (100+10+130)/3.0, m.MeanSpan, 1e-12)
	require.InDelta(t, (0+35+10)/3.0, m.MeanQueue, 1e-12)
}

// The testbed's columns: timestamps, the spec path's base name as the
// workload, total_queue_wait_s as the queue.
func TestParseTestbed(t *testing.T) {
	head := "task_id,task_file,submitted_at,first_launched_at,final_successful_launch_at,completed_at,total_queue_wait_s,failed_attempt_count,configuration_label\n"
	r := parse(t, head+
		"x,/a/b/vgg16_imagenet_bs128_1gpu.yaml,2026-06-11 09:05:21.5+00:00,2026-06-11 09:05:22.5+00:00,2026-06-11 09:06:22.5+00:00,2026-06-11 10:05:21.5+00:00,50.5,1,aegis_lug_thresholded\n"+
		"y,/a/mnist_bs32_1gpu.yaml,2026-06-11T09:05:31.5Z,2026-06-11 09:05:41.5+00:00,2026-06-11 09:05:41.5+00:00,2026-06-11 09:15:41.5+00:00,10,0,aegis_lug_thresholded\n")
	require.Equal(t, "vgg16_imagenet_bs128_1gpu", r.Jobs[0].Workload)
	require.Equal(t, Job{ID: "x", Workload: "vgg16_imagenet_bs128_1gpu", Start: 1, Last: 61, Finish: 3600, Queue: 50.5, Failed: 1}, r.Jobs[0])
	require.Equal(t, 10.0, r.Jobs[1].Submit)
	l, err := Label("run.csv", strings.NewReader(head+"x,w,1,2,2,3,0,0,aegis_lug_thresholded\n"))
	require.NoError(t, err)
	require.Equal(t, "aegis_lug_thresholded", l)
}

// Bad input: an error naming the file, line and column; never a panic.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "run.csv: the file is empty"},
		{"submit_s,start_s\n1,2\n", `run.csv:1: missing column "finish_s"`},
		{"submit_s,start_s,finish_s\n", "run.csv: no jobs"},
		{"submit_s,start_s,finish_s\n0,1,x\n", "run.csv:2: column finish_s: \"x\" is neither seconds nor a timestamp"},
		{"submit_s,start_s,finish_s\n0,1,\n", "run.csv:2: column finish_s: empty"},
		{"submit_s,start_s,finish_s\n5,1,9\n", "run.csv:2: column start_s: launch before submission"},
		{"submit_s,start_s,finish_s\n0,5,4\n", "run.csv:2: column finish_s: completion before launch"},
		{"submit_s,start_s,last_start_s,finish_s\n0,5,4,9\n", "run.csv:2: column last_start_s: last launch before the first"},
		{"submit_s,start_s,finish_s\n0,1,2\n0,2026-06-11T09:05:31Z,3\n", "run.csv:3: column start_s: \"2026-06-11T09:05:31Z\": the file mixes seconds and timestamps"},
		{"submit_s,start_s,finish_s,failed_attempts\n0,1,2,-1\n", "run.csv:2: column failed_attempts: negative count -1"},
		{"submit_s,start_s,finish_s,failed_attempts\n0,1,2,1.5\n", "run.csv:2: column failed_attempts: \"1.5\" is not an integer"},
		{"submit_s,start_s,finish_s,queue_s\n0,1,2,-3\n", "run.csv:2: column queue_s: negative wait -3"},
	} {
		_, err := Parse("run.csv", strings.NewReader(tc.in))
		require.ErrorContains(t, err, tc.want, tc.in)
	}
}

// A simulated run: the last attempt's launch comes from the events, the
// span from the first launch.
func TestFromSimAndErrors(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	jobs := []results.Job{
		{ID: 0, Workload: "w1", Submit: 0, Start: 0, Finish: sec(200), Exec: sec(200), Attempts: 1},
		{ID: 1, Workload: "w2", Submit: sec(10), Start: sec(20), Finish: sec(300), Exec: sec(250), Attempts: 2, Failed: 1},
		{ID: 2, Workload: "w1", Submit: sec(15), Start: sec(50), Finish: sec(70), Exec: sec(20), Attempts: 1},
	}
	att := []runfiles.Attempt{{Job: 1, Attempt: 1, Start: 20, End: 50, Outcome: "failed"}, {Job: 1, Attempt: 2, Start: 50, End: 300, Outcome: "finished"}}
	s := FromSim("seed 1", jobs, att)
	require.Equal(t, 50.0, s.Jobs[1].Last)
	require.Equal(t, 0.0, s.Jobs[0].Last)
	require.Equal(t, 40.0, s.Jobs[1].Queue, "JCT − exec")
	meas := &Run{Name: "m", Jobs: []Job{
		{Workload: "w1", Finish: 100},
		{Workload: "w2", Submit: 10, Start: 20, Last: 20, Finish: 160},
		{Workload: "w1", Submit: 15, Start: 50, Last: 50, Finish: 60},
	}}
	e, err := Errors(meas, s)
	require.NoError(t, err)
	require.Equal(t, []float64{2, 2, 2}, e.Ratios)
	require.Equal(t, 1.0, e.MedianAbs)
	meas.Jobs[1].Workload = "w3"
	_, err = Errors(meas, s)
	var me *MismatchError
	require.True(t, errors.As(err, &me))
	require.Equal(t, 1, me.Job)
	_, err = Errors(&Run{Jobs: meas.Jobs[:2]}, s)
	require.ErrorContains(t, err, "the measured run has 2 jobs, the simulated trace 3")
}

// A simulated run identical to the measured one has no error; the report
// and the per-job file say so.
func TestCompareIdentical(t *testing.T) {
	m := parse(t, "job_id,submit_s,start_s,finish_s,failed_attempts,workload_id\na,0,0,100,1,w\nb,0,10,50,0,v\nc,5,50,80,0,w\n")
	c, err := Compare(m, []*Run{m, m}, []uint64{1, 2})
	require.NoError(t, err)
	for _, e := range c.E {
		require.Equal(t, 0.0, e.MedianAbs)
		require.Equal(t, 1.0, e.MedianRatio)
	}
	require.Equal(t, c.M, c.S[0])
	var b bytes.Buffer
	require.NoError(t, c.WriteMarkdown(&b, "same"))
	require.Contains(t, b.String(), "| jobs running at once, max | 2.0 | 2.0 ± 0.0 | +0.0 |")
	require.Contains(t, b.String(), "| failed attempts per seed | 1 | 1, 1 | |")
	require.Contains(t, b.String(), "| median \\|ratio − 1\\| | 0.000 ± 0.000 |")
	b.Reset()
	require.NoError(t, c.WriteJobsCSV(&b))
	require.Equal(t, "job,workload,submit_s,start_s,last_start_s,finish_s,span_s,queue_s,failed_attempts,ours_span_s_seed1,ours_failed_seed1,ours_span_s_seed2,ours_failed_seed2,span_ratio_median,seed_pair_abs_err_median\n"+
		"a,w,0.000,0.000,0.000,100.000,100.000,0.000,1,100.000,1,100.000,1,1.0000,0.0000\n", strings.SplitAfterN(b.String(), "\n", 3)[0]+strings.SplitAfterN(b.String(), "\n", 3)[1])
	b.Reset()
	require.NoError(t, c.WriteSummaryCSV(&b))
	require.Contains(t, b.String(), "measure,measured,ours_mean,ours_ci95,seeds\nmax_running,2.0000,2.0000,0.0000,2\n")
	require.Contains(t, b.String(), "job_span_abs_err_median,,0.0000,0.0000,2\n")
	require.True(t, strings.HasSuffix(b.String(), "\njob_span_abs_err_seed_floor,,0.0000,,2\n"), "the seed floor's row, no CI")
	f, err := c.Figure("t", "aegis")
	require.NoError(t, err)
	require.NoError(t, f.WriteTo(&b, "svg"))
	_, err = Compare(m, nil, nil)
	require.Error(t, err)
}

// The concurrency figure follows the one colour per policy of every
// figure (plots' TestStylesEveryFigure): the seeds in the policy's colour
// whatever the case it is given in, one dash pattern each, and the
// measured line black and thicker, the colour of no policy.
func TestFigureStyles(t *testing.T) {
	m := parse(t, "job_id,submit_s,start_s,finish_s\na,0,0,100\nb,0,10,50\nc,5,50,80\n")
	c, err := Compare(m, []*Run{m, m, m, m}, []uint64{1, 2, 3, 4})
	require.NoError(t, err)
	for _, tc := range []struct{ policy, color string }{
		{"aegis", "#0072B2"}, {"AEGIS", "#0072B2"}, {"lucid", "#E69F00"}, {"Horus", "#009E73"}, {"exclusive", "#999999"},
	} {
		f, err := c.Figure("t", tc.policy)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, f.WriteTo(&b, "svg"))
		svg := b.String()
		require.Contains(t, svg, ">measured<")
		require.Equal(t, 2, strings.Count(svg, "stroke:#000000;stroke-width:2\""), "%s: the measured line and its legend, black", tc.policy)
		strokes := regexp.MustCompile(`stroke:(#[0-9A-F]{6});stroke-width:1.2(;stroke-dasharray:[0-9.,]+)?"`).FindAllStringSubmatch(svg, -1)
		dashes := map[string]bool{}
		for _, s := range strokes {
			require.Equal(t, tc.color, s[1], "%s: a seed in another colour", tc.policy)
			dashes[s[2]] = true
		}
		require.Len(t, strokes, 2*FigureSeeds, "%s: each seed's line and legend", tc.policy)
		require.Len(t, dashes, FigureSeeds, "%s: one dash pattern per seed", tc.policy)
		for i := 1; i <= FigureSeeds; i++ {
			require.Contains(t, svg, fmt.Sprintf(">%s, seed %d<", tc.policy, i))
		}
	}
}

// On the testbed's runs: the notes' counts (Exclusive 4, with the filter
// 13–15, without 15–17) come out of the files.
func TestTestbedRunning(t *testing.T) {
	shared, ok := models.SharedDir()
	dir := filepath.Join(shared, "calibration", "aegis", "testbed_runs")
	if _, err := os.Stat(dir); !ok || err != nil {
		t.Skip("no shared data folder (set AEGIS_SHARED): the testbed's runs (calibration/aegis/testbed_runs) are not here")
	}
	for _, tc := range []struct {
		file string
		max  int
	}{
		{"philly/job_metrics__exclusive.csv", 4},
		{"philly/job_metrics__aegis_magm_thresholded.csv", 13},
		{"philly/job_metrics__aegis_magm_no_thresholds.csv", 17},
		{"philly/job_metrics__aegis_lug_thresholded.csv", 14},
		{"saturn/job_metrics__aegis_lug_no_thresholds.csv", 15},
	} {
		f, err := os.Open(filepath.Join(dir, tc.file))
		require.NoError(t, err)
		r, err := Parse(tc.file, f)
		f.Close()
		require.NoError(t, err)
		require.Len(t, r.Jobs, 60)
		require.Equal(t, tc.max, r.Metrics().MaxRunning, tc.file)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("submit_s,start_s,finish_s\n0,1,2\n")
	f.Add("job_id,submit_s,start_s,last_start_s,finish_s,failed_attempts,workload_id\na,10,10,,110,0,w1\n")
	f.Add("submitted_at,first_launched_at,final_successful_launch_at,completed_at\n2026-06-11 09:05:21.5+00:00,2026-06-11 09:05:22.5+00:00,2026-06-11 09:06:22.5+00:00,2026-06-11 10:05:21.5+00:00\n")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := Parse("f.csv", strings.NewReader(in))
		if err != nil {
			return
		}
		m := r.Metrics()
		if m.MaxRunning < 0 || m.MaxRunning > len(r.Jobs) || m.Makespan < 0 {
			t.Fatalf("metrics %+v of %d jobs", m, len(r.Jobs))
		}
	})
}

// The dispatch timeline: gaps between consecutive first launches, and the
// hold cycles among them (at least HoldCycleMin, a job waiting, no
// completion in between).
func TestTimeline(t *testing.T) {
	r := &Run{Jobs: []Job{
		{Submit: 0, Start: 0, Last: 0, Finish: 1000},
		{Submit: 0, Start: 2, Last: 2, Finish: 1000},      // gap 2: one round
		{Submit: 1, Start: 40, Last: 40, Finish: 1000},    // 38: waited, nothing completed: a cycle
		{Submit: 100, Start: 100, Last: 100, Finish: 200}, // 60: nothing waited
		{Submit: 50, Start: 250, Last: 250, Finish: 300},  // 150: a completion (200) in between
		{Submit: 60, Start: 290, Last: 290, Finish: 400},  // 40: a cycle
	}}
	m := r.Metrics()
	require.Equal(t, 2.0, m.LaunchGapMin)
	require.Equal(t, policies.Quantile([]float64{2, 38, 60, 150, 40}, 0.1), m.LaunchGapP10)
	require.Equal(t, 39.0, m.HoldCycle)
	r.Jobs[4].Finish = 290 + CompletionSlack // a completion logged just after the later launch counts
	require.Equal(t, 38.0, r.Metrics().HoldCycle)
	one := (&Run{Jobs: r.Jobs[:1]}).Metrics()
	require.Zero(t, one.LaunchGapMin+one.LaunchGapP10+one.HoldCycle)
	none := (&Run{Jobs: r.Jobs[:2]}).Metrics()
	require.Equal(t, 2.0, none.LaunchGapMin)
	require.Zero(t, none.HoldCycle)
}

// spans is a run whose jobs (ids in the order given) ran for the spans.
func spans(ids string, s ...float64) *Run {
	r := &Run{}
	for i, id := range strings.Split(ids, ",") {
		r.Jobs = append(r.Jobs, Job{ID: id, Start: 10, Finish: 10 + s[i]})
	}
	return r
}

// The seed floor: per pair of seeds the median over the jobs (matched by
// id) of |span_b ÷ span_a − 1|, then the median over the pairs.
func TestFloor(t *testing.T) {
	s1 := spans("a,b,c", 100, 100, 100)
	s2 := spans("a,b,c", 110, 120, 100) // vs s1: 0.1, 0.2, 0 → 0.1
	s3 := spans("c,a,b", 50, 100, 150)  // vs s1: 0, 0.5, 0.5 → 0.5; vs s2: 1/11, 0.25, 0.5 → 0.25
	for _, tc := range []struct {
		name          string
		sims          []*Run
		pairs         int
		med, min, max float64
	}{
		{"three seeds, jobs matched by id", []*Run{s1, s2, s3}, 3, 0.25, 0.1, 0.5},
		{"two seeds, one pair", []*Run{s1, s2}, 1, 0.1, 0.1, 0.1},
		{"the same run twice", []*Run{s2, s2}, 1, 0, 0, 0},
		{"a job one seed lacks, one of zero span: left out", []*Run{spans("a,b,z", 100, 0, 5), spans("b,a,d", 7, 130, 1)}, 1, 0.3, 0.3, 0.3},
		{"one seed: no floor", []*Run{s1}, 0, math.NaN(), math.NaN(), math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Floor(tc.sims)
			require.Equal(t, tc.pairs, f.Pairs)
			for _, x := range [][2]float64{{tc.med, f.Median}, {tc.min, f.Min}, {tc.max, f.Max}} {
				if math.IsNaN(x[0]) {
					require.True(t, math.IsNaN(x[1]))
					continue
				}
				require.InDelta(t, x[0], x[1], 1e-12)
			}
		})
	}
}

// The report reads the per-job error against the seed floor, summary.csv
// and jobs.csv carry it; with one seed the report says the floor needs
// two.
func TestFloorReported(t *testing.T) {
	m := spans("a,b,c", 100, 100, 100)
	for i := range m.Jobs {
		m.Jobs[i].Workload = "w"
	}
	c, err := Compare(m, []*Run{spans("a,b,c", 100, 100, 100), spans("a,b,c", 110, 120, 100), spans("a,b,c", 100, 150, 50)}, []uint64{1, 2, 3})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, c.WriteMarkdown(&b, "ours"))
	require.Contains(t, b.String(), "| seed floor: median \\|ratio − 1\\| between two of our seeds, median over the 3 pairs of seeds (range) | 0.250 (0.100–0.500) |")
	require.Contains(t, b.String(), "Read against the seed floor: a per-job median |error| of 0.200 vs a seed floor of 0.250.")
	b.Reset()
	require.NoError(t, c.WriteSummaryCSV(&b))
	require.Contains(t, b.String(), "\njob_span_abs_err_seed_floor,,0.2500,,3\n")
	b.Reset()
	require.NoError(t, c.WriteJobsCSV(&b))
	// Job b: 120/100, 150/100, 150/120 → 0.2, 0.5, 0.25: median 0.25.
	require.Contains(t, b.String(), ",span_ratio_median,seed_pair_abs_err_median\n")
	require.Regexp(t, `\nb,w,[^\n]*,0\.2500\n`, b.String())

	c, err = Compare(m, []*Run{m}, []uint64{1})
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, c.WriteMarkdown(&b, "ours"))
	require.Contains(t, b.String(), "| seed floor: median \\|ratio − 1\\| between two of our seeds | needs two seeds (--seeds) |")
	b.Reset()
	require.NoError(t, c.WriteSummaryCSV(&b))
	require.Contains(t, b.String(), "\njob_span_abs_err_seed_floor,,,,1\n")
}
