package results

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// streamRun feeds n jobs whose finishes come in a scrambled order (job i
// finishes at a time that is not monotonic in i; every 7th is stopped,
// every 5th fails once) to a collector, streaming when stream is true
// (the rows piped when pipe is).
func streamRun(t *testing.T, n int, stream bool, servers bool, pipe ...bool) (*Collector, []byte) {
	t.Helper()
	jobs := make([]policies.Job, n)
	for i := range jobs {
		jobs[i] = policies.Job{ID: policies.JobID(i), Name: fmt.Sprint("j", i), GPUs: 1 + i%2, Submit: sec * 10 * dur(int64(i)),
			Profile: policies.Profile{Workload: "w", SoloS: float64(50 + i%13)}}
	}
	var out bytes.Buffer
	c := NewCollector(jobs)
	server := func(id policies.JobID) string { return fmt.Sprint(int(id) % 3) }
	if stream {
		if servers {
			require.NoError(t, c.StreamJobs(&out, server))
		} else {
			require.NoError(t, c.StreamJobs(&out, nil))
		}
		if len(pipe) > 0 && pipe[0] {
			require.NoError(t, c.PipeJobs())
		}
	}
	// Finish times: later jobs may finish before earlier ones.
	fin := func(i int) int64 { return 10*int64(i) + int64((i*37)%101) + 1 }
	var evs []policies.Event
	for i := range n {
		id := policies.JobID(i)
		evs = append(evs, policies.Event{Kind: policies.JobArrived, T: sec * 10 * dur(int64(i)), Job: id})
		if i%7 == 3 {
			evs = append(evs, policies.Event{Kind: policies.JobStopped, T: sec * (10*dur(int64(i)) + 1), Job: id, Reason: "x"})
			continue
		}
		evs = append(evs, policies.Event{Kind: policies.JobStarted, T: sec * 10 * dur(int64(i)), Job: id, Attempt: 1, GPUs: []int{0}})
		if i%5 == 0 {
			evs = append(evs, policies.Event{Kind: policies.JobFailed, T: sec * (10*dur(int64(i)) + 1), Job: id, Attempt: 1, Failure: policies.OOM},
				policies.Event{Kind: policies.JobStarted, T: sec * (10*dur(int64(i)) + 1), Job: id, Attempt: 2, GPUs: []int{0}, Shared: i%10 == 0})
		}
		evs = append(evs, policies.Event{Kind: policies.JobFinished, T: sec * dur(fin(i)), Job: id, Attempt: 1})
	}
	// Deliver in time order (stable: ties keep their order above).
	sortEvents(evs)
	for _, e := range evs {
		c.Event(e)
	}
	if !stream {
		var err error
		if servers {
			ss := make([]string, n)
			for i := range ss {
				ss[i] = server(policies.JobID(i))
			}
			err = WriteClusterJobsCSV(&out, c.Jobs(), ss)
		} else {
			err = WriteJobsCSV(&out, c.Jobs())
		}
		require.NoError(t, err)
	}
	require.NoError(t, c.FlushJobs())
	return c, out.Bytes()
}

// dur converts a count of seconds for sec *.
func dur(n int64) time.Duration { return time.Duration(n) }

func sortEvents(evs []policies.Event) {
	for i := 1; i < len(evs); i++ { // insertion sort: stable
		for k := i; k > 0 && evs[k].At() < evs[k-1].At(); k-- {
			evs[k], evs[k-1] = evs[k-1], evs[k]
		}
	}
}

// TestStreamJobs: streaming jobs.csv gives the bytes WriteJobsCSV (and
// WriteClusterJobsCSV) writes at the end, the same summary, and forgets
// the streamed jobs.
func TestStreamJobs(t *testing.T) {
	for _, servers := range []bool{false, true} {
		t.Run(fmt.Sprint("servers=", servers), func(t *testing.T) {
			n := 3000
			all, want := streamRun(t, n, false, servers)
			st, got := streamRun(t, n, true, servers)
			require.Equal(t, string(want), string(got))
			require.Equal(t, all.Summary(), st.Summary())
			require.Empty(t, st.Jobs(), "every job final: all streamed and forgotten")
			require.Less(t, cap(st.jobs), n, "the window's memory was released")
			for i := 2048; i < n; i++ { // the window moved back to the start: the end was never written
				require.Zero(t, st.rows[i], "row %d", i)
				require.Zero(t, st.startedRows[i], "row %d", i)
			}
			sum := Summarize(all.Jobs(), map[string]int{})
			sum.DeferralDecisions = map[string]int{}
			require.Equal(t, sum, st.Summary())
		})
	}
}

// TestPipedJobsAreStreamedJobs: rows made on the pipe's goroutine are the
// streamed rows (3,000 jobs: several batches), with the same summary; the
// pipe is refused with extra columns, after the run began, or twice.
func TestPipedJobsAreStreamedJobs(t *testing.T) {
	st, want := streamRun(t, 3000, true, false)
	pi, got := streamRun(t, 3000, true, false, true)
	require.Equal(t, string(want), string(got))
	require.Equal(t, st.Summary(), pi.Summary())
	require.NoError(t, pi.FlushJobs(), "a second FlushJobs")

	c := NewCollector([]policies.Job{{ID: 0, Name: "a", GPUs: 1}})
	require.Error(t, c.PipeJobs(), "not streaming")
	require.NoError(t, c.StreamJobs(&bytes.Buffer{}, func(policies.JobID) string { return "s" }))
	require.Error(t, c.PipeJobs(), "extra columns")
	c = NewCollector([]policies.Job{{ID: 0, Name: "a", GPUs: 1}})
	require.NoError(t, c.StreamJobs(&bytes.Buffer{}, nil))
	require.NoError(t, c.PipeJobs())
	require.Error(t, c.PipeJobs(), "twice")
	require.NoError(t, c.FlushJobs())

	bad := &chunkWriter{failAt: 1}
	c = NewCollector(nil)
	require.NoError(t, c.StreamJobs(bad, nil))
	require.NoError(t, c.PipeJobs())
	require.EqualError(t, c.FlushJobs(), "jobs.csv: disk full")
}

// TestStreamJobsPartial: jobs not final at the end are not written, and
// Summary still counts them (as Summarize over every job does).
func TestStreamJobsPartial(t *testing.T) {
	jobs := []policies.Job{{ID: 0, Name: "a", GPUs: 1, Profile: policies.Profile{Workload: "w", SoloS: 10}},
		{ID: 1, Name: "b", GPUs: 1, Profile: policies.Profile{Workload: "w", SoloS: 10}},
		{ID: 2, Name: "c", GPUs: 1, Profile: policies.Profile{Workload: "w", SoloS: 10}}}
	var out bytes.Buffer
	c := NewCollector(jobs)
	require.NoError(t, c.StreamJobs(&out, nil))
	ref := NewCollector(jobs)
	for _, e := range []policies.Event{
		{Kind: policies.JobArrived, T: 0, Job: 0}, {Kind: policies.JobArrived, T: 0, Job: 1}, {Kind: policies.JobArrived, T: 0, Job: 2},
		{Kind: policies.JobStarted, T: 0, Job: 0, Attempt: 1, GPUs: []int{0}},
		{Kind: policies.JobStarted, T: 0, Job: 2, Attempt: 1, GPUs: []int{1}},
		{Kind: policies.JobFinished, T: 5 * sec, Job: 2, Attempt: 1},
		{Kind: policies.JobFinished, T: 9 * sec, Job: 0, Attempt: 1},
	} {
		c.Event(e)
		ref.Event(e)
	}
	require.NoError(t, c.FlushJobs())
	var want bytes.Buffer
	require.NoError(t, WriteJobsCSV(&want, ref.Jobs()[:1]))
	require.Equal(t, want.String(), out.String(), "job 0 streamed; job 2 waits for job 1")
	require.Len(t, c.Jobs(), 2)
	require.Equal(t, ref.Summary(), c.Summary())
	require.Error(t, c.StreamJobs(&out, nil), "only before the run")
}

// sortFloats sorts like slices.Sort: random values of every sign and
// magnitude, ties, infinities, long and short inputs; a NaN or a negative
// zero falls back to slices.Sort. sortFloatsIn sorts the same in a scratch
// array reused from the sort before.
func TestSortFloats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	scratch := make([]uint64, 100000)
	for i := range scratch {
		scratch[i] = rng.Uint64()
	}
	for _, n := range []int{0, 1, 10, 511, 512, 513, 5000, 100000} {
		for _, kind := range []string{"mixed", "positive", "ties", "special", "subnormal"} {
			xs := make([]float64, n)
			for i := range xs {
				switch kind {
				case "mixed":
					xs[i] = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
				case "positive":
					xs[i] = rng.Float64() * 1e6
				case "ties":
					xs[i] = float64(rng.IntN(7)) - 3
				case "special":
					xs[i] = []float64{math.Inf(1), math.Inf(-1), 0, math.MaxFloat64, -math.SmallestNonzeroFloat64, 1}[rng.IntN(6)]
				case "subnormal": // negative ones' keys are NaNs' bits, signalling ones among them
					xs[i] = math.Float64frombits(rng.Uint64()&(1<<52-1) | 1)
					if rng.IntN(2) == 0 {
						xs[i] = -xs[i]
					}
				}
			}
			want, ys := slices.Clone(xs), slices.Clone(xs)
			slices.Sort(want)
			sortFloats(xs)
			require.Equal(t, want, xs, "%d %s", n, kind)
			sortFloatsIn(ys, scratch)
			require.Equal(t, want, ys, "%d %s, scratch", n, kind)
		}
	}
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(1000 - i)
	}
	short := scratch[:len(xs)] // a value a job is all the scratch a sort takes
	require.Zero(t, testing.AllocsPerRun(5, func() { sortFloatsIn(xs, short) }))
	require.True(t, slices.IsSorted(xs))
	xs[10], xs[20] = math.NaN(), math.Copysign(0, -1)
	sortFloats(xs)
	require.True(t, math.IsNaN(xs[0]), "slices.Sort puts NaN first")
}

// appendInt writes strconv.AppendInt's bytes after what the slice holds:
// every digit count, powers of ten and their neighbours, negative numbers,
// the extremes, random values.
func TestAppendInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ns := []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, -1, -10, -12345, math.MaxInt64, math.MinInt64}
	for p := int64(1); p <= 1e18; p *= 10 {
		ns = append(ns, p-1, p, p+1)
	}
	for range 10000 {
		ns = append(ns, rng.Int64N(1<<uint(rng.IntN(62)+1)))
	}
	for _, n := range ns {
		for _, prefix := range []string{"", `{"job":`} {
			b := make([]byte, len(prefix), len(prefix)+rng.IntN(24))
			copy(b, prefix)
			require.Equal(t, string(strconv.AppendInt([]byte(prefix), n, 10)), string(appendInt(b, n)), "%d", n)
		}
	}
}

// appendSecs writes FormatFloat(d.Seconds(), 'f', 3, 64)'s bytes: random
// durations of every size, whole milliseconds, and durations around the
// halfway points between milliseconds.
func TestAppendSecs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(d time.Duration) {
		want := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
		require.Equal(t, want, string(appendSecs(nil, d)), "%d ns", int64(d))
	}
	for _, d := range []time.Duration{0, 1, 499999, 500000, 500001, 999999, time.Millisecond, time.Second, -time.Second,
		1<<62 + 12345, time.Duration(math.MaxInt64)} {
		check(d)
	}
	for range 200000 {
		scale := int64(1) << rng.IntN(62)
		d := time.Duration(rng.Int64N(scale))
		check(d)
		check(d.Truncate(time.Millisecond))
		half := d.Truncate(time.Millisecond) + time.Millisecond/2
		check(half + time.Duration(rng.Int64N(4001)-2000))
	}
}

// appendFixed3 writes FormatFloat(f, 'f', 3, 64)'s bytes: random values of
// every size, whole and halfway thousandths and their neighbours, exact
// ties (dyadic fractions such as 0.0625, which FormatFloat rounds to even),
// ratios, and the values it leaves to FormatFloat (negative, -0, NaN,
// infinities, beyond 10⁹).
func TestAppendFixed3(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(f float64) {
		want := strconv.FormatFloat(f, 'f', 3, 64)
		require.Equal(t, want, string(appendFixed3([]byte("x"), f))[1:], "%v (%b)", f, f)
	}
	for _, f := range []float64{0, math.Copysign(0, -1), -0.0004, -1, 0.0005, 0.0015, 0.0025, 1.0005, 2.5e-4, 0.0625, 0.1875, 1.0625, 999999.9995,
		1e6, 1e6 + 0.0005, 1e9, 1e9 + 0.0625, 123456789.0125, 2 << 51, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64} {
		check(f)
	}
	for range 200000 {
		scale := math.Ldexp(1, rng.IntN(50)-20)
		f := rng.Float64() * scale
		check(f)
		k := math.Round(f * 1000)
		for _, g := range []float64{k / 1000, (k + 0.5) / 1000} { // whole and halfway thousandths
			check(g)
			check(math.Nextafter(g, 0))
			check(math.Nextafter(g, math.Inf(1)))
		}
		check(float64(rng.IntN(100000)) / float64(1+rng.IntN(100000))) // a normalized JCT
		check(math.Ldexp(float64(rng.Int64N(1<<40)), -rng.IntN(45)))   // ties among them
	}
}

// A summary of many jobs (its sorts on two goroutines) has the means and
// 95th percentiles of the values sorted one by one.
func TestSummaryParallelSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 2))
	for _, n := range []int{parallelSortMin - 1, parallelSortMin, 3 * parallelSortMin} {
		jobs := make([]Job, n)
		var jct, queue, exec, norm []float64
		for i := range jobs {
			sub := time.Duration(rng.Int64N(int64(1000 * sec)))
			start := sub + time.Duration(rng.Int64N(int64(500*sec)))
			j := Job{ID: policies.JobID(i), Name: "j", SoloS: 1 + rng.Float64()*100, Submit: sub, Start: start,
				Finish: start + time.Duration(rng.Int64N(int64(900*sec))+1), State: policies.Done}
			j.Exec = j.Finish - j.Start
			jobs[i] = j
			jct, queue = append(jct, j.JCT().Seconds()), append(queue, j.Queue().Seconds())
			exec, norm = append(exec, j.Exec.Seconds()), append(norm, j.NormJCT())
		}
		s := Summarize(jobs, nil)
		for _, c := range []struct {
			xs        []float64
			mean, p95 float64
		}{{jct, s.MeanJCTS, s.P95JCTS}, {queue, s.MeanQueueS, s.P95QueueS}, {exec, s.MeanExecS, s.P95ExecS}, {norm, s.MeanNormJCT, math.NaN()}} {
			slices.Sort(c.xs)
			require.Equal(t, policies.Mean(c.xs), c.mean, n)
			if !math.IsNaN(c.p95) {
				require.Equal(t, policies.SortedQuantile(c.xs, 0.95), c.p95, n)
			}
		}
	}
}

// The event log's time text is appendSecs's at every line, written in
// part when only a time's last seconds changed: times in order with steps
// of milliseconds to hours, across hundreds and powers of ten, around the
// halfway points between milliseconds (FormatFloat's, which the next line
// writes in full), and back in time.
func TestEventLogTimeText(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	l := NewEventLog(io.Discard)
	at := time.Duration(0)
	for i := range 200000 {
		switch r := rng.IntN(100); {
		case r < 60:
			at += time.Duration(rng.Int64N(int64(30 * time.Second)))
		case r < 80:
			at += time.Duration(rng.Int64N(int64(time.Second)))
		case r < 90:
			at = at.Truncate(time.Millisecond) + time.Millisecond/2 + time.Duration(rng.Int64N(3000)) - 1500
		case r < 95:
			at += time.Duration(rng.Int64N(int64(10 * time.Hour)))
		case r < 98:
			at = time.Duration(rng.Int64N(int64(200 * time.Second)))
		default:
			at = time.Duration(1e18 - 100*time.Second + time.Duration(rng.Int64N(int64(200*time.Second))))
		}
		l.timeText(at)
		require.Equal(t, `{"t":`+strconv.FormatFloat(at.Seconds(), 'f', 3, 64), string(l.tText), "line %d: %d ns", i, int64(at))
	}

	// The last digits come from l.digits3: a hand-changed entry is what is
	// written, for the seconds' last three and for the milliseconds.
	l = NewEventLog(io.Discard)
	l.timeText(12345678 * time.Millisecond)
	require.Equal(t, `{"t":12345.678`, string(l.tText))
	l.digits3[346] = uint32('x') | uint32('y')<<8 | uint32('z')<<16 | '.'<<24
	l.timeText(12346346 * time.Millisecond)
	require.Equal(t, `{"t":12xyz.xyz`, string(l.tText))
	l.timeText(999999 * time.Millisecond) // under 1,000 s: in full
	require.Equal(t, `{"t":999.999`, string(l.tText))
	l.timeText(1000346 * time.Millisecond)
	require.Equal(t, `{"t":1000.346`, string(l.tText))
}

// durationsMeanP95 of durations held as bits (durationBits) is meanP95 of
// their seconds, bit for bit, for long and short inputs, durations of a
// second's fractions to years, negative ones and ties, in a scratch array
// or none; it leaves them sorted as durations, so that a second call gives
// the same.
func TestDurationsMeanP95(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	scratch := make([]uint64, 100000)
	for _, n := range []int{0, 1, 2, 10, 511, 512, 513, 5000, 100000} {
		for _, kind := range []string{"jobs", "years", "signed", "ties"} {
			ds := make([]time.Duration, n)
			for i := range ds {
				switch kind {
				case "jobs":
					ds[i] = time.Duration(rng.Int64N(int64(100 * time.Hour)))
				case "years":
					ds[i] = time.Duration(rng.Int64N(int64(1 << 62)))
				case "signed":
					ds[i] = time.Duration(rng.Int64() >> rng.IntN(63))
				case "ties":
					ds[i] = time.Duration(rng.IntN(7)-3) * time.Second
				}
			}
			secs := make([]float64, n)
			xs := make([]float64, n)
			for i, d := range ds {
				secs[i], xs[i] = d.Seconds(), durationBits(d)
			}
			wantMean, wantP95 := meanP95(secs, nil)
			for _, sc := range [][]uint64{nil, scratch, nil} { // the last: xs sorted already
				mean, p95 := durationsMeanP95(xs, sc)
				require.Equal(t, math.Float64bits(wantMean), math.Float64bits(mean), "%d %s", n, kind)
				require.Equal(t, math.Float64bits(wantP95), math.Float64bits(p95), "%d %s", n, kind)
			}
			slices.Sort(ds)
			for i, d := range ds {
				require.Equal(t, d, time.Duration(math.Float64bits(xs[i])), "%d %s: sorted as durations", n, kind)
			}
		}
	}
}
