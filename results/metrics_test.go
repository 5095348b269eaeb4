package results

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/internal/jobslots"
	"github.com/aegis-sched/aegis/policies"
)

const sec = time.Second

// replay feeds a hand-written event history to a collector.
func replay(t *testing.T) *Collector {
	t.Helper()
	jobs := []policies.Job{
		{ID: 0, Name: "a", GPUs: 1, Submit: 0, Profile: policies.Profile{Workload: "w", SoloS: 100}},
		{ID: 1, Name: "b", GPUs: 2, Submit: 10 * sec, Profile: policies.Profile{Workload: "v", SoloS: 50}},
		{ID: 2, Name: "c", GPUs: 1, Submit: 20 * sec, Profile: policies.Profile{Workload: "w", SoloS: 100}},
	}
	var log bytes.Buffer
	el := NewEventLog(&log)
	c := NewCollector(jobs, el)
	for _, e := range []policies.Event{
		{Kind: policies.JobArrived, T: 0, Job: 0},
		{Kind: policies.JobStarted, T: 0, Job: 0, Attempt: 1, GPUs: []int{0}},
		{Kind: policies.JobArrived, T: 10 * sec, Job: 1},
		{Kind: policies.JobStarted, T: 10 * sec, Job: 1, Attempt: 1, GPUs: []int{1, 2}},
		{Kind: policies.JobArrived, T: 20 * sec, Job: 2},
		{Kind: policies.JobFailed, T: 40 * sec, Job: 1, Attempt: 1, Failure: policies.OOM, GPU: 2},
		{Kind: policies.JobStarted, T: 100 * sec, Job: 1, Attempt: 2, GPUs: []int{1, 2}, Shared: true},
		{Kind: policies.JobFinished, T: 100 * sec, Job: 0, Attempt: 1},
		{Kind: policies.JobStopped, T: 120 * sec, Job: 2, Reason: "test"},
		{Kind: policies.JobFinished, T: 150 * sec, Job: 1, Attempt: 2},
	} {
		c.Event(e)
		if e.At() == 20*sec {
			c.Decision(20 * sec)
			c.Action(policies.Action{Kind: policies.Defer, Job: 2, GPU: 0, Reason: "memory"})
			c.Decision(21 * sec)
			c.Action(policies.Action{Kind: policies.Defer, Job: 2, GPU: 0, Reason: "memory"}) // one episode, logged once
			c.Decision(22 * sec)                                                              // ends it
			c.Decision(23 * sec)
			c.Action(policies.Action{Kind: policies.Defer, Job: 2, GPU: 0, Reason: "memory"}) // a second episode, still open
		}
	}
	require.NoError(t, el.Flush())
	checkGolden(t, "events.jsonl", log.Bytes())
	return c
}

// checkGolden compares got with testdata/name (golden.File).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.File(t, filepath.Join("testdata", name), got)
}

// TestDeferralEpisodes checks that a job deferred on a GPU for one reason
// in consecutive decisions is one episode, and that the decisions it spans
// are counted in ticks of the decision grid, whichever ticks were decided.
func TestDeferralEpisodes(t *testing.T) {
	ms := time.Millisecond
	type dec struct {
		at     time.Duration
		defers []policies.Action
	}
	d := func(at time.Duration, reasons ...string) dec {
		var ds []policies.Action
		for i, r := range reasons {
			if r != "" {
				ds = append(ds, policies.Action{Kind: policies.Defer, Job: 1, GPU: i, Reason: r})
			}
		}
		return dec{at, ds}
	}
	for _, c := range []struct {
		name      string
		grid      time.Duration
		decisions []dec
		episodes  map[string]int
		spans     map[string]int
	}{
		{"every tick", sec, []dec{d(0, "p"), d(sec, "p"), d(2*sec, "p"), d(3*sec, "p"), d(4 * sec)},
			map[string]int{"p": 1}, map[string]int{"p": 4}},
		{"ticks skipped", sec, []dec{d(0, "p"), d(4 * sec)},
			map[string]int{"p": 1}, map[string]int{"p": 4}},
		{"events between ticks not counted", sec, []dec{d(0, "p"), d(500*ms, "p"), d(sec, "p"), d(1500*ms, "p"), d(4 * sec)},
			map[string]int{"p": 1}, map[string]int{"p": 4}},
		{"off-grid start", sec, []dec{d(500*ms, "p"), d(700 * ms)},
			map[string]int{"p": 1}, map[string]int{"p": 1}},
		{"reason changes", sec, []dec{d(0, "p"), d(3*sec, "m"), d(5 * sec)},
			map[string]int{"p": 1, "m": 1}, map[string]int{"p": 3, "m": 2}},
		{"a gap starts a new episode", sec, []dec{d(0, "p"), d(sec), d(2*sec, "p")},
			map[string]int{"p": 2}, map[string]int{"p": 2}},
		{"per GPU", sec, []dec{d(0, "p", "h"), d(2*sec, "p"), d(3 * sec)},
			map[string]int{"p": 1, "h": 1}, map[string]int{"p": 3, "h": 2}},
		{"fine grid", ms, []dec{d(0, "p"), d(sec)},
			map[string]int{"p": 1}, map[string]int{"p": 1000}},
		{"no grid: decisions seen", 0, []dec{d(0, "p"), d(4*sec, "p"), d(5 * sec)},
			map[string]int{"p": 1}, map[string]int{"p": 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := NewCollector([]policies.Job{{ID: 0}, {ID: 1}})
			col.SetDecisionGrid(c.grid)
			for _, x := range c.decisions {
				col.Decision(x.at)
				for _, a := range x.defers {
					col.Action(a)
				}
			}
			s := col.Summary()
			require.Equal(t, c.episodes, s.Deferrals)
			require.Equal(t, c.spans, s.DeferralDecisions)
		})
	}
}

func TestCollectorAndSummary(t *testing.T) {
	c := replay(t)
	jobs := c.Jobs()
	// a: 0..100 alone.
	require.Equal(t, 100*sec, jobs[0].JCT())
	require.Equal(t, time.Duration(0), jobs[0].Queue())
	// b: failed attempt 10..40 (30 s) + 100..150 (50 s) = 80 s exec; JCT 140 s.
	require.Equal(t, 140*sec, jobs[1].JCT())
	require.Equal(t, 80*sec, jobs[1].Exec)
	require.Equal(t, 60*sec, jobs[1].Queue())
	require.Equal(t, 2, jobs[1].Attempts)
	require.Equal(t, 1, jobs[1].Failed)
	require.InDelta(t, 140.0/50, jobs[1].NormJCT(), 1e-12)
	require.Equal(t, policies.Stopped, jobs[2].State)

	s := c.Summary()
	require.Equal(t, 150.0, s.MakespanS)
	require.Equal(t, 120.0, s.MeanJCTS)
	require.InDelta(t, 100+0.95*40, s.P95JCTS, 1e-9)
	require.Equal(t, 30.0, s.MeanQueueS)
	require.Equal(t, 1, s.FailedAttempts)
	require.Equal(t, 1, s.RecoveredAttempts)
	require.Equal(t, 1, s.Stopped)
	require.Equal(t, 1, s.SharedRetries)
	require.Zero(t, s.ExclusiveRetries)
	require.Equal(t, map[string]int{"memory": 2}, s.Deferrals)
	require.Equal(t, map[string]int{"memory": 3}, s.DeferralDecisions, "2 + 1 decisions without a grid")

	var jb, sb, tb, db bytes.Buffer
	require.NoError(t, WriteJobsCSV(&jb, jobs))
	require.NoError(t, WriteSummaryCSV(&sb, s))
	require.NoError(t, WriteDeferralsCSV(&db, s))
	checkGolden(t, "deferrals.csv", db.Bytes())
	require.NoError(t, WriteSummaryTable(&tb, "test run", s))
	checkGolden(t, "jobs.csv", jb.Bytes())
	checkGolden(t, "summary.csv", sb.Bytes())
	checkGolden(t, "summary.txt", tb.Bytes())
}

func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{[]float64{1}, 0.95, 1},
		{[]float64{3, 1, 2}, 0.5, 2},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{0, 10}, 0.95, 9.5},
		{[]float64{5, 1, 4, 2, 3}, 0, 1},
		{[]float64{5, 1, 4, 2, 3}, 1, 5},
	} {
		require.InDelta(t, tc.want, policies.Quantile(tc.xs, tc.q), 1e-12, "%v q=%v", tc.xs, tc.q)
	}
	require.True(t, policies.Quantile(nil, 0.5) != policies.Quantile(nil, 0.5), "NaN for no data")
}

func TestScore(t *testing.T) {
	// Constant window: every statistic equals the constant.
	require.InDelta(t, 0.4, policies.Score([]float64{0.4, 0.4, 0.4}, nil), 1e-12)
	// 0,1: mean .5, median .5, p95 .95, EWMA (α=2/3) = 2/3.
	require.InDelta(t, 0.25*(0.5+0.5+0.95+2.0/3), policies.Score([]float64{0, 1}, nil), 1e-12)
	require.Zero(t, policies.Score(nil, nil))
}

// A deferral is logged when its reason changes, and again after the job has
// started a new attempt.
func TestEventLogDeferralHistory(t *testing.T) {
	var buf bytes.Buffer
	l := NewEventLog(&buf)
	d := policies.Action{Kind: policies.Defer, Job: 0, GPU: 1, Reason: "memory"}
	l.Event(policies.Event{Kind: policies.Wakeup, T: sec})
	l.Action(d)
	l.Action(d)
	l.Action(policies.Action{Kind: policies.Defer, Job: 0, GPU: 1, Reason: "pressure"})
	l.Event(policies.Event{Kind: policies.JobStarted, T: 2 * sec, Job: 0, Attempt: 1, GPUs: []int{0}})
	l.Event(policies.Event{Kind: policies.JobFailed, T: 3 * sec, Job: 0, Attempt: 1, Failure: policies.OOM})
	l.Action(policies.Action{Kind: policies.Defer, Job: 0, GPU: 1, Reason: "pressure"})
	require.NoError(t, l.Flush())
	require.Equal(t, 3, bytes.Count(buf.Bytes(), []byte(`"event":"defer"`)), buf.String())
}

// The deferral history is kept per job whatever its id: ids beyond the
// dense array (negative, or past jobslots.MaxDense) and one just inside it
// log a deferral once per reason and again after the job's start.
func TestEventLogDeferralHistoryAnyID(t *testing.T) {
	for _, id := range []policies.JobID{-1, 0, 7, jobslots.MaxDense - 1, jobslots.MaxDense, 1 << 40} {
		var buf bytes.Buffer
		l := NewEventLog(&buf)
		other := policies.Action{Kind: policies.Defer, Job: 3, GPU: 0, Reason: "memory"}
		if id == 3 {
			other.Job = 4
		}
		l.Event(policies.Event{Kind: policies.Wakeup, T: sec})
		for range 2 {
			l.Action(other)
			l.Action(policies.Action{Kind: policies.Defer, Job: id, GPU: 1, Reason: "memory"})
			l.Action(policies.Action{Kind: policies.Defer, Job: id, GPU: 2, Reason: "memory"})
		}
		l.Event(policies.Event{Kind: policies.JobStarted, T: 2 * sec, Job: id, Attempt: 1, GPUs: []int{0}})
		l.Action(policies.Action{Kind: policies.Defer, Job: id, GPU: 1, Reason: "memory"})
		l.Action(other)
		require.NoError(t, l.Flush())
		require.Equal(t, 3, bytes.Count(buf.Bytes(), []byte(fmt.Sprintf(`"event":"defer","job":%d,`, id))), "id %d: %s", id, buf.String())
		require.Equal(t, 1, bytes.Count(buf.Bytes(), []byte(fmt.Sprintf(`"event":"defer","job":%d,`, other.Job))), "id %d: %s", id, buf.String())
	}
}

// A deferral's reason is quoted as JSON whether or not it was quoted
// before, for more reasons than are kept quoted.
func TestEventLogQuotesReasons(t *testing.T) {
	var buf bytes.Buffer
	l := NewEventLog(&buf)
	l.Event(policies.Event{Kind: policies.Wakeup, T: sec})
	var want []string
	for i := range 3 * maxQuoted {
		r := fmt.Sprintf("r\"%d\"", i%(maxQuoted+4))
		want = append(want, r)
		l.Action(policies.Action{Kind: policies.Defer, Job: policies.JobID(i), GPU: 0, Reason: r})
	}
	require.NoError(t, l.Flush())
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var x struct{ Reason string }
		require.NoError(t, json.Unmarshal([]byte(line), &x), line)
		got = append(got, x.Reason)
	}
	require.Equal(t, want, got)
}

// A defer line is the one written field by field, whether its head comes
// from the previous defer line's (the same time and job) or not, and its
// end from those made per reason and GPU or not (a GPU from maxTailGPU, a
// reason past maxQuoted, a negative GPU); the kept head and ends are what
// the lines are made of (a hand-changed one is what is written).
func TestEventLogDeferLines(t *testing.T) {
	var buf bytes.Buffer
	l := NewEventLog(&buf)
	var want strings.Builder
	deferAt := func(at time.Duration, job policies.JobID, gpu int, reason string) {
		l.Event(policies.Event{Kind: policies.Wakeup, T: at})
		l.Action(policies.Action{Kind: policies.Defer, Job: job, GPU: gpu, Reason: reason})
		fmt.Fprintf(&want, `{"t":%.3f,"event":"defer","job":%d,"gpu":%d,"reason":%q}`+"\n", at.Seconds(), job, gpu, reason)
	}
	for _, at := range []time.Duration{sec, sec, 2 * sec} {
		for _, job := range []policies.JobID{3, 3, 12345, 3} {
			for _, gpu := range []int{0, 1, 7, maxTailGPU - 1, maxTailGPU, 1000, -1} {
				for i := range maxQuoted + 2 {
					deferAt(at, job, gpu, fmt.Sprintf("reason %d of %s", i, at))
				}
			}
		}
	}
	require.NoError(t, l.Flush())
	require.Equal(t, want.String(), buf.String())
	require.Equal(t, `{"t":2.000,"event":"defer","job":3,"gpu":`, string(l.deferHead))
	require.Equal(t, "7,\"reason\":\"reason 0 of 1s\"}\n", string(l.quoted[0].tails[7]))

	buf.Reset()
	l.deferHead = []byte(`{"t":2.000,"event":"defer","job":4,"gpu":`)
	l.quoted[0].tails[7] = []byte("7,\"reason\":\"kept\"}\n")
	l.Action(policies.Action{Kind: policies.Defer, Job: 3, GPU: 7, Reason: "reason 0 of 1s"})
	require.NoError(t, l.Flush())
	require.Equal(t, `{"t":2.000,"event":"defer","job":4,"gpu":7,"reason":"kept"}`+"\n", buf.String())
}

// With deferrals as changes (defers.noGuess, which the collector sets) the
// event log finds a job's last logged reasons by walking the job's list
// while it has at most walkEpisodes (their keys not in the index's table),
// and in the table from then on; it writes the lines of a log that looks
// every key up in the table.
func TestEventLogWalksShortDeferLists(t *testing.T) {
	for _, gpus := range []int{4, walkEpisodes, walkEpisodes + 8} {
		var walked, hashed bytes.Buffer
		lw, lh := NewEventLog(&walked), NewEventLog(&hashed)
		lw.defers.noGuess = true
		for r := range 4 {
			for _, l := range []*EventLog{lw, lh} {
				l.Event(policies.Event{Kind: policies.Wakeup, T: time.Duration(r) * sec})
				if r == 2 {
					l.Event(policies.Event{Kind: policies.JobStarted, T: 2 * sec, Job: 1, Attempt: 1, GPUs: []int{0}})
				}
				for job := range policies.JobID(3) {
					for g := range gpus {
						l.Action(policies.Action{Kind: policies.Defer, Job: job, GPU: g, Reason: []string{"a", "b"}[(r+g)%3/2]})
					}
				}
			}
			if r == 0 {
				require.Equal(t, gpus > walkEpisodes, lw.defers.at.n > 0, "%d GPUs: keys in the table", gpus)
			}
		}
		require.NoError(t, lw.Flush())
		require.NoError(t, lh.Flush())
		require.Equal(t, hashed.String(), walked.String(), "%d GPUs", gpus)
		require.Equal(t, strings.Count(walked.String(), "\n"), strings.Count(walked.String(), "defer")+1)
	}
}

// A job added after the start (a live queue) is collected like the others;
// ids must come in order.
func TestCollectorAdd(t *testing.T) {
	c := NewCollector(nil)
	require.NoError(t, c.Add(policies.Job{ID: 0, Name: "a", GPUs: 1, Submit: 5 * time.Second, Profile: policies.Profile{Workload: "w", SoloS: 10}}))
	require.ErrorContains(t, c.Add(policies.Job{ID: 3, Name: "b"}), "expected id 1")
	c.Event(policies.Event{Kind: policies.JobArrived, T: 5 * time.Second, Job: 0})
	c.Event(policies.Event{Kind: policies.JobStarted, T: 6 * time.Second, Job: 0, Attempt: 1, GPUs: []int{0}})
	c.Event(policies.Event{Kind: policies.JobFinished, T: 16 * time.Second, Job: 0, Attempt: 1})
	j := c.Jobs()[0]
	require.Equal(t, policies.Done, j.State)
	require.Equal(t, 11*time.Second, j.JCT())
	require.Equal(t, 10*time.Second, j.Exec)
}

// chunkWriter records the size of every Write and fails from the failAt-th
// (counting from 1; 0: never).
type chunkWriter struct {
	bytes.Buffer
	writes []int
	failAt int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	if w.failAt > 0 && len(w.writes) >= w.failAt {
		return 0, errors.New("disk full")
	}
	return w.Buffer.Write(p)
}

// The event log writes whole lines in chunks of at least logChunk bytes
// (the last one at Flush), not a Write per line; the first write error is
// kept and Flush reports it.
func TestEventLogChunks(t *testing.T) {
	log := func(w io.Writer) *EventLog {
		l := NewEventLog(w)
		for i := range 5000 {
			l.Event(policies.Event{Kind: policies.JobArrived, T: time.Duration(i) * time.Millisecond, Job: policies.JobID(i)})
		}
		return l
	}
	var w chunkWriter
	require.NoError(t, log(&w).Flush())
	lines := bytes.Split(bytes.TrimSuffix(w.Bytes(), []byte("\n")), []byte("\n"))
	require.Len(t, lines, 5000)
	require.Equal(t, `{"t":4.999,"event":"arrived","job":4999}`, string(lines[4999]))
	require.Greater(t, len(w.writes), 1)
	require.Less(t, len(w.writes), 5000/50)
	total := 0
	for i, n := range w.writes {
		if i < len(w.writes)-1 {
			require.GreaterOrEqual(t, n, logChunk)
		}
		total += n
		require.Equal(t, byte('\n'), w.Bytes()[total-1], "write %d ends a line", i)
	}
	bad := chunkWriter{failAt: 2}
	require.EqualError(t, log(&bad).Flush(), "disk full")
	require.Len(t, bad.writes, 2, "no write after the error")
}

func TestCount(t *testing.T) {
	require.Equal(t, "1 episode", count(1, "episode"))
	require.Equal(t, "0 episodes", count(0, "episode"))
	require.Equal(t, "3 decisions", count(3, "decision"))
}

// Deferral episodes are counted by reason past the reasons the collector
// compares in turn (scanReasons), alternating between them.
func TestDeferralReasonsMany(t *testing.T) {
	c := NewCollector([]policies.Job{{ID: 0}})
	want := map[string]int{}
	for d := range 3 * scanReasons {
		c.Decision(time.Duration(d) * sec)
		r := fmt.Sprintf("reason %d", (d*5)%(scanReasons+3))
		c.Action(policies.Action{Kind: policies.Defer, Job: 0, GPU: 0, Reason: r})
		want[r]++ // another reason each decision: a new episode
	}
	require.Equal(t, want, c.Deferrals())
}

// byValueSeen keeps the events it was handed (by value).
type byValueSeen struct{ val []policies.Event }

func (s *byValueSeen) Event(e policies.Event) { s.val = append(s.val, e) }
func (s *byValueSeen) Action(policies.Action) {}

// seenAt also keeps where each event it read in place was.
type seenAt struct {
	byValueSeen
	at []*policies.Event
}

func (s *seenAt) EventAt(e *policies.Event) { s.at = append(s.at, e) }

// actionsAt also keeps where each action it read in place was, and the
// actions it was handed by value.
type actionsAt struct {
	byValueSeen
	at  []*policies.Action
	val []policies.Action
}

func (s *actionsAt) Action(a policies.Action)    { s.val = append(s.val, a) }
func (s *actionsAt) ActionAt(a *policies.Action) { s.at = append(s.at, a) }

// valueActions keeps the actions it was handed (by value only).
type valueActions struct {
	byValueSeen
	val []policies.Action
}

func (s *valueActions) Action(a policies.Action) { s.val = append(s.val, a) }

// The collector hands an action it reads in place (ActionAt) on in place
// to the forward recorders that read actions so, and by value to the
// others; the event log writes the same lines either way.
func TestCollectorForwardsActionsInPlace(t *testing.T) {
	in, plain := &actionsAt{}, &valueActions{}
	var viaAt, viaValue bytes.Buffer
	logAt, logValue := NewEventLog(&viaAt), NewEventLog(&viaValue)
	c := NewCollector([]policies.Job{{ID: 0, GPUs: 1}}, in, plain, logAt)
	acts := []policies.Action{
		{Kind: policies.Defer, Job: 0, GPU: 1, Reason: "memory"},
		{Kind: policies.Defer, Job: 0, GPU: 2, Reason: "memory"},
		{Kind: policies.Place, Job: 0, GPUs: []int{3}},
	}
	for i := range acts {
		c.ActionAt(&acts[i])
		logValue.Action(acts[i])
	}
	require.Len(t, in.at, len(acts))
	for i := range acts {
		require.Same(t, &acts[i], in.at[i], "action %d read in place", i)
	}
	require.Empty(t, in.val)
	require.Equal(t, acts, plain.val)
	require.NoError(t, logAt.Flush())
	require.NoError(t, logValue.Flush())
	require.NotEmpty(t, viaAt.String())
	require.Equal(t, viaValue.String(), viaAt.String())
}

// The collector hands an event it reads in place (EventAt) on in place to
// the forward recorders that read events so, and by value to the others;
// the event log writes the same line either way.
func TestCollectorForwardsInPlace(t *testing.T) {
	in, plain := &seenAt{}, &byValueSeen{}
	var viaAt, viaValue bytes.Buffer
	logAt, logValue := NewEventLog(&viaAt), NewEventLog(&viaValue)
	c := NewCollector([]policies.Job{{ID: 0, GPUs: 1}}, in, plain, logAt)
	evs := []policies.Event{
		{Kind: policies.JobArrived, T: 1 * sec, Job: 0},
		{Kind: policies.JobStarted, T: 2 * sec, Job: 0, Attempt: 1, GPUs: []int{3}},
		{Kind: policies.JobFinished, T: 5 * sec, Job: 0, Attempt: 1},
	}
	for i := range evs {
		c.EventAt(&evs[i])
		logValue.Event(evs[i])
	}
	require.Len(t, in.at, len(evs))
	for i := range evs {
		require.Same(t, &evs[i], in.at[i], "event %d read in place", i)
	}
	require.Empty(t, in.val)
	require.Equal(t, evs, plain.val)
	require.NoError(t, logAt.Flush())
	require.NoError(t, logValue.Flush())
	require.Equal(t, viaValue.String(), viaAt.String())
	require.Equal(t, 3, c.Events())
	require.Equal(t, 3*sec, c.Jobs()[0].Exec)
}

// A defer line's end for the current reason and a GPU is read from the
// reason's ends kept in EventLog.tails (made by tail, changed with the
// reason): a hand-changed end there is what is written, for the current
// reason only.
func TestEventLogReadsCurrentTails(t *testing.T) {
	var buf bytes.Buffer
	l := NewEventLog(&buf)
	l.Event(policies.Event{Kind: policies.Wakeup, T: sec})
	l.Action(policies.Action{Kind: policies.Defer, Job: 1, GPU: 3, Reason: "a"})
	l.Action(policies.Action{Kind: policies.Defer, Job: 1, GPU: 4, Reason: "b"})
	require.Len(t, l.tails, maxTailGPU)
	require.Equal(t, "4,\"reason\":\"b\"}\n", string(l.tails[4]))
	l.tails[5] = []byte("5,\"reason\":\"kept\"}\n")
	l.Action(policies.Action{Kind: policies.Defer, Job: 2, GPU: 5, Reason: "b"})
	l.Action(policies.Action{Kind: policies.Defer, Job: 2, GPU: 3, Reason: "a"})
	require.NoError(t, l.Flush())
	require.Equal(t, `{"t":1.000,"event":"defer","job":1,"gpu":3,"reason":"a"}`+"\n"+
		`{"t":1.000,"event":"defer","job":1,"gpu":4,"reason":"b"}`+"\n"+
		`{"t":1.000,"event":"defer","job":2,"gpu":5,"reason":"kept"}`+"\n"+
		`{"t":1.000,"event":"defer","job":2,"gpu":3,"reason":"a"}`+"\n", buf.String())
}

// The event log writes a job's id from the text it kept at the id's first
// line (EventLog.jobText, ids below maxJobText): the lines are those
// written digit by digit, for ids of one to seven digits, past the bound
// and negative; a hand-changed text is what is written.
func TestEventLogJobText(t *testing.T) {
	var buf bytes.Buffer
	l := NewEventLog(&buf)
	var want strings.Builder
	ids := []policies.JobID{0, 9, 10, 99, 100, 12345, 123456, 1234567, maxJobText, 1 << 40, -1, -12345}
	for range 2 {
		for _, job := range ids {
			l.Event(policies.Event{Kind: policies.JobArrived, T: sec, Job: job})
			fmt.Fprintf(&want, `{"t":1.000,"event":"arrived","job":%d}`+"\n", job)
		}
	}
	require.NoError(t, l.Flush())
	require.Equal(t, want.String(), buf.String())
	require.Len(t, l.jobText, 1234568)
	require.EqualValues(t, 5<<56|uint64('5')<<32|uint64('4')<<24|uint64('3')<<16|uint64('2')<<8|uint64('1'), l.jobText[12345])

	buf.Reset()
	l.jobText[12345] = 2<<56 | uint64('7')<<8 | uint64('7')
	l.Event(policies.Event{Kind: policies.JobArrived, T: sec, Job: 12345})
	require.NoError(t, l.Flush())
	require.Equal(t, `{"t":1.000,"event":"arrived","job":77}`+"\n", buf.String())
}

// The event log begins an arrived, started, active or finished line with
// 8-byte words (EventLog.word: the time's text, the kind's head from
// EventLog.heads, the job's kept text) and ends it with words for an
// attempt of one digit and a started line's shared flag: the lines are
// those fmt writes, for times, jobs, attempts (0, 9, 10, 12, -1) and GPU
// lists, with the room past the collected lines ample or short of
// wordRoom (then written piece by piece); a hand-changed head is what is
// written (the words are read).
func TestEventLogWords(t *testing.T) {
	type ev struct {
		kind    policies.EventKind
		at      time.Duration
		job     policies.JobID
		attempt int
		gpus    []int
		shared  bool
	}
	evs := []ev{
		{policies.JobArrived, 0, 3, 0, nil, false},
		{policies.JobArrived, 1500 * time.Millisecond, 1234567, 0, nil, false},
		{policies.JobStarted, 1500 * time.Millisecond, 3, 1, []int{0}, false},
		{policies.JobStarted, 2 * sec, 1234567, 9, []int{1, 12, 3}, true},
		{policies.JobActive, 2 * sec, 3, 1, nil, false},
		{policies.JobActive, 9653064980 * time.Millisecond, 3, 10, nil, false},
		{policies.JobFinished, 9653064980 * time.Millisecond, 1234567, 9, nil, false},
		{policies.JobFinished, 9653064981 * time.Millisecond, 3, 12, nil, false},
		{policies.JobStarted, 9653064981 * time.Millisecond, 3, 12, []int{7}, true},
		{policies.JobActive, 9653064982 * time.Millisecond, 1 << 40, -1, nil, false},
		{policies.JobArrived, time.Duration(1<<63 - 1), -5, 0, nil, false},
		{policies.JobStarted, time.Duration(1<<63 - 1), -5, 0, []int{}, false},
	}
	var want strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&want, `{"t":%s,"event":"%s","job":%d`, strconv.FormatFloat(e.at.Seconds(), 'f', 3, 64), strings.ToLower(strings.TrimPrefix(e.kind.String(), "Job")), e.job)
		switch e.kind {
		case policies.JobStarted:
			gpus := make([]string, len(e.gpus))
			for i, g := range e.gpus {
				gpus[i] = strconv.Itoa(g)
			}
			fmt.Fprintf(&want, `,"attempt":%d,"gpus":[%s],"shared":%t`, e.attempt, strings.Join(gpus, ","), e.shared)
		case policies.JobActive, policies.JobFinished:
			fmt.Fprintf(&want, `,"attempt":%d`, e.attempt)
		}
		want.WriteString("}\n")
	}
	for _, tc := range []struct {
		name string
		fill int // bytes collected before the events: the room past them cap(buf) − fill
	}{{"ample room", 0}, {"short of wordRoom", logChunk + 1024 - wordRoom + 1}, {"a chunk's end", logChunk - 1}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := NewEventLog(&buf)
			l.buf = append(l.buf, strings.Repeat("x", tc.fill)...)
			for _, e := range evs {
				l.Event(policies.Event{Kind: e.kind, T: e.at, Job: e.job, Attempt: e.attempt, GPUs: e.gpus, Shared: e.shared})
			}
			require.NoError(t, l.Flush())
			require.Equal(t, want.String(), strings.TrimLeft(buf.String(), "x"))
		})
	}

	var buf bytes.Buffer
	l := NewEventLog(&buf)
	l.Event(policies.Event{Kind: policies.JobArrived, T: sec, Job: 7})
	l.heads[hActive] = makeHead(`,"event":"kept","job":`)
	l.Event(policies.Event{Kind: policies.JobActive, T: sec, Job: 7, Attempt: 1})
	require.NoError(t, l.Flush())
	require.Equal(t, `{"t":1.000,"event":"arrived","job":7}`+"\n"+`{"t":1.000,"event":"kept","job":7,"attempt":1}`+"\n", buf.String())
}

// The text of a job id after the one made last is that one's plus one
// (EventLog.nextText, succText): ids in order across every carry and power
// of ten up to seven digits, and past them, write what appendInt writes,
// and keep it; a hand-changed next text is what is written.
func TestEventLogNextJobText(t *testing.T) {
	for _, r := range []struct{ from, to policies.JobID }{
		{0, 25000}, {99990, 100010}, {999990, 1000010}, {maxJobText - 20, maxJobText + 5},
	} {
		var buf bytes.Buffer
		l := NewEventLog(&buf)
		var want strings.Builder
		for job := r.from; job < r.to; job++ {
			l.Event(policies.Event{Kind: policies.JobArrived, T: sec, Job: job})
			fmt.Fprintf(&want, `{"t":1.000,"event":"arrived","job":%d}`+"\n", job)
		}
		require.NoError(t, l.Flush())
		require.Equal(t, want.String(), buf.String(), "ids %d to %d", r.from, r.to)
		for job := r.from; job < min(r.to, maxJobText); job++ {
			v := l.jobText[job]
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], v)
			require.Equal(t, strconv.Itoa(int(job)), string(b[:v>>56]))
		}
	}

	var buf bytes.Buffer
	l := NewEventLog(&buf)
	l.Event(policies.Event{Kind: policies.JobArrived, T: sec, Job: 41})
	require.Equal(t, policies.JobID(42), l.nextJob)
	l.nextText = 2<<56 | uint64('7')<<8 | uint64('7')
	l.Event(policies.Event{Kind: policies.JobArrived, T: sec, Job: 42})
	require.NoError(t, l.Flush())
	require.Equal(t, `{"t":1.000,"event":"arrived","job":41}`+"\n"+`{"t":1.000,"event":"arrived","job":77}`+"\n", buf.String())
}

// A collector whose one forward recorder is an event log calls it directly
// (Collector.log): its lines are those of an event log forwarded to with
// another recorder, and of one given the events and actions itself.
func TestCollectorCallsItsOneEventLog(t *testing.T) {
	var one, two, direct bytes.Buffer
	logOne, logTwo, logDirect := NewEventLog(&one), NewEventLog(&two), NewEventLog(&direct)
	jobs := []policies.Job{{ID: 0, GPUs: 1}, {ID: 1, GPUs: 1}}
	c1 := NewCollector(jobs, logOne)
	c2 := NewCollector(jobs, logTwo, &seenAt{})
	require.Same(t, logOne, c1.log)
	require.Nil(t, c2.log)
	evs := []policies.Event{
		{Kind: policies.JobArrived, T: 1 * sec, Job: 0},
		{Kind: policies.JobArrived, T: 1 * sec, Job: 1},
		{Kind: policies.JobStarted, T: 2 * sec, Job: 0, Attempt: 1, GPUs: []int{3}},
		{Kind: policies.JobFinished, T: 5 * sec, Job: 0, Attempt: 1},
	}
	acts := []policies.Action{
		{Kind: policies.Defer, Job: 1, GPU: 3, Reason: "a"},
		{Kind: policies.Defer, Job: 1, GPU: 4, Reason: "b"},
		{Kind: policies.Defer, Job: 1, GPU: 3, Reason: "a"},
	}
	for i := range evs {
		for _, c := range []*Collector{c1, c2} {
			c.EventAt(&evs[i])
			if i == 1 {
				for k := range acts {
					c.ActionAt(&acts[k])
				}
			}
		}
		logDirect.EventAt(&evs[i])
		if i == 1 {
			for k := range acts {
				logDirect.ActionAt(&acts[k])
			}
		}
	}
	for _, l := range []*EventLog{logOne, logTwo, logDirect} {
		require.NoError(t, l.Flush())
	}
	require.Contains(t, direct.String(), `"event":"defer"`)
	require.Equal(t, direct.String(), one.String())
	require.Equal(t, direct.String(), two.String())
	require.Equal(t, c2.Summary(), c1.Summary())
}
