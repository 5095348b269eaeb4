package results

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aegis-sched/aegis/internal/jobslots"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results/rundir"
)

// LabelColumns are the columns every combined CSV of a spec run starts with
// (experiments writes them, plots reads past them); one column per swept
// parameter follows them, and a tuple parameter's component columns
// (PARAM.1 … PARAM.K) follow its own.
var LabelColumns = []string{"spec", "trace", "config", "policy", "seed"}

// secs formats a duration as seconds with millisecond precision.
func secs(d time.Duration) string { return string(appendSecs(nil, d)) }

// appendSecs appends strconv.FormatFloat(d.Seconds(), 'f', 3, 64) to b,
// with integer arithmetic where that gives the same digits: d rounded to
// the millisecond, unless d lies within a microsecond of halfway between
// two milliseconds (where the float's rounding error could decide) or is
// negative or beyond 10⁹ s; then by FormatFloat.
func appendSecs(b []byte, d time.Duration) []byte {
	q, ok := millis(d)
	if !ok {
		return strconv.AppendFloat(b, d.Seconds(), 'f', 3, 64)
	}
	b = appendInt(b, q/1000)
	f := q % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

// millis is d rounded to the millisecond, and whether appendSecs writes
// it with integer arithmetic (false: by FormatFloat).
func millis(d time.Duration) (int64, bool) {
	const ms, slack = int64(time.Millisecond), int64(time.Microsecond)
	n := int64(d)
	if n < 0 || n > 1e18 {
		return 0, false
	}
	q, r := n/ms, n%ms
	switch {
	case r < ms/2-slack:
	case r > ms/2+slack:
		q++
	default:
		return 0, false
	}
	return q, true
}

// appendInt appends n in decimal, as strconv.AppendInt(b, n, 10) does,
// writing the digits in place (the event log writes several per line).
func appendInt(b []byte, n int64) []byte {
	if uint64(n) < 10 { // an attempt, a GPU: one digit, inlined
		return append(b, byte('0'+n))
	}
	return appendDigits(b, n)
}

// appendDigits is appendInt for n outside [0, 10), out of line.
func appendDigits(b []byte, n int64) []byte {
	if n < 0 {
		return strconv.AppendInt(b, n, 10)
	}
	u := uint64(n)
	var d int // u's digits: most numbers logged have few
	switch {
	case u < 10:
		d = 1
	case u < 100:
		d = 2
	case u < 1000:
		d = 3
	case u < 10000:
		d = 4
	case u < 100000:
		d = 5
	case u < 1000000:
		d = 6
	default:
		d = 7
		for x := u / 1000000; x >= 10; x /= 10 {
			d++
		}
	}
	i := len(b) + d
	b = slices.Grow(b, d)[:i]
	for u >= 100 {
		q := u / 100
		r := 2 * (u - 100*q)
		i -= 2
		b[i], b[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		b[i-2], b[i-1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		b[i-1] = byte('0' + u)
	}
	return b
}

const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

func num(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// JobColumns is the header of jobs.csv.
var JobColumns = []string{"job_id", "workload", "gpus", "state", "submit_s", "start_s", "finish_s",
	"jct_s", "exec_s", "queue_s", "attempts", "failed_attempts", "solo_s", "norm_jct"}

// WriteJobsCSV writes one row per job. Start and finish are empty for jobs
// that never started or finished.
func WriteJobsCSV(w io.Writer, jobs []Job) error { return writeJobs(w, jobs, nil) }

// WriteClusterJobsCSV writes jobs.csv of a cluster run: JobColumns plus a
// last column, server, the server(s) of each job's last attempt (servers
// joined by "+" for a job on several; empty when it never started).
func WriteClusterJobsCSV(w io.Writer, jobs []Job, servers []string) error {
	return WriteJobsCSVWith(w, jobs, ExtraColumn{Name: "server", Values: servers})
}

// ExtraColumn is an extra last column of jobs.csv: its name and one value per
// job.
type ExtraColumn struct {
	Name   string
	Values []string
}

// WriteJobsCSVWith writes jobs.csv with JobColumns and then the extra
// columns cols (a cluster run's server, a mixed cluster's gpu_type).
func WriteJobsCSVWith(w io.Writer, jobs []Job, cols ...ExtraColumn) error {
	for _, c := range cols {
		if len(c.Values) != len(jobs) {
			return fmt.Errorf("jobs.csv: %d jobs but %d values of %s", len(jobs), len(c.Values), c.Name)
		}
	}
	return writeJobs(w, jobs, cols)
}

func writeJobs(w io.Writer, jobs []Job, cols []ExtraColumn) error {
	r := csvRows{w: w}
	head := JobColumns
	if len(cols) > 0 {
		head = slices.Clone(JobColumns)
		for _, c := range cols {
			head = append(head, c.Name)
		}
	}
	r.row(head)
	for i := range jobs {
		r.jobRow(&jobs[i])
		for _, c := range cols {
			r.field(false, c.Values[i])
		}
		r.end()
	}
	return r.Flush()
}

// SummaryColumns is the header of summary.csv. Its first nine columns are
// the paper's run metrics; the header is the same for every policy, so that
// summaries of different runs stack (deferrals by reason go to
// deferrals.csv).
var SummaryColumns = []string{rundir.MakespanS, rundir.MeanJCTS, rundir.P95JCTS, rundir.MeanQueueS, rundir.P95QueueS,
	rundir.MeanExecS, rundir.P95ExecS, "failed_attempts", "recovered_attempts",
	"jobs", "finished", "stopped", "mean_norm_jct", "exclusive_retries", "shared_retries", "deferrals"}

// EnergyColumns follow SummaryColumns in summary.csv when the run metered
// its energy (Summary.Energy): energy to solution in joules and kWh, one
// GPU's mean power over the makespan, and the energy per finished job.
var EnergyColumns = []string{"energy_j", "energy_kwh", "mean_gpu_power_w", "energy_per_job_j"}

// SummaryRow returns summary.csv's header and its one row.
func (s Summary) SummaryRow() (head, row []string) {
	total := 0
	for _, n := range s.Deferrals {
		total += n
	}
	row = []string{num(s.MakespanS), num(s.MeanJCTS), num(s.P95JCTS), num(s.MeanQueueS), num(s.P95QueueS),
		num(s.MeanExecS), num(s.P95ExecS), strconv.Itoa(s.FailedAttempts), strconv.Itoa(s.RecoveredAttempts),
		strconv.Itoa(s.Jobs), strconv.Itoa(s.Finished), strconv.Itoa(s.Stopped), num(s.MeanNormJCT),
		strconv.Itoa(s.ExclusiveRetries), strconv.Itoa(s.SharedRetries), strconv.Itoa(total)}
	head = slices.Clone(SummaryColumns)
	if e := s.Energy; e != nil {
		head = append(head, EnergyColumns...)
		if math.IsNaN(e.J) { // not measured: the columns stay empty
			row = append(row, "", "", "", "")
		} else {
			row = append(row, num(e.J), num(e.J/3.6e6), num(s.MeanGPUPowerW()), num(s.EnergyPerJobJ()))
		}
	}
	return head, row
}

// DeferralColumns is the header of deferrals.csv.
var DeferralColumns = []string{"reason", "episodes", "decisions"}

// WriteDeferralsCSV writes deferrals.csv: one row per deferral reason
// (reason,episodes,decisions), sorted by reason: the deferral episodes and
// the decisions they spanned, in ticks of the policy's decision grid.
func WriteDeferralsCSV(w io.Writer, s Summary) error {
	cw := csv.NewWriter(w)
	cw.Write(DeferralColumns)
	for _, k := range slices.Sorted(maps.Keys(s.Deferrals)) {
		cw.Write([]string{k, strconv.Itoa(s.Deferrals[k]), strconv.Itoa(s.DeferralDecisions[k])})
	}
	cw.Flush()
	return cw.Error()
}

// WriteSummaryCSV writes the header and the one row of summary.csv.
func WriteSummaryCSV(w io.Writer, s Summary) error {
	cw := csv.NewWriter(w)
	head, row := s.SummaryRow()
	cw.Write(head)
	cw.Write(row)
	cw.Flush()
	return cw.Error()
}

// WriteSummaryTable prints the summary as an aligned two-column table.
func WriteSummaryTable(w io.Writer, title string, s Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	h := func(sec float64) string { return fmt.Sprintf("%.0f s  (%.2f h)", sec, sec/3600) }
	fmt.Fprintf(tw, "%s\n", title)
	fmt.Fprintf(tw, "jobs\t%d finished, %d stopped, %d total\n", s.Finished, s.Stopped, s.Jobs)
	fmt.Fprintf(tw, "makespan\t%s\n", h(s.MakespanS))
	fmt.Fprintf(tw, "JCT mean / p95\t%s / %s\n", h(s.MeanJCTS), h(s.P95JCTS))
	fmt.Fprintf(tw, "queue mean / p95\t%s / %s\n", h(s.MeanQueueS), h(s.P95QueueS))
	fmt.Fprintf(tw, "exec mean / p95\t%s / %s\n", h(s.MeanExecS), h(s.P95ExecS))
	fmt.Fprintf(tw, "normalized JCT mean\t%.3f\n", s.MeanNormJCT)
	fmt.Fprintf(tw, "failed / recovered attempts\t%d / %d\n", s.FailedAttempts, s.RecoveredAttempts)
	fmt.Fprintf(tw, "retries exclusive / shared\t%d / %d\n", s.ExclusiveRetries, s.SharedRetries)
	if e := s.Energy; e != nil && !math.IsNaN(e.J) {
		fmt.Fprintf(tw, "energy to solution\t%.0f J  (%.3f kWh); %.1f W mean per GPU; %.0f J per finished job\n", e.J, e.J/3.6e6, s.MeanGPUPowerW(), s.EnergyPerJobJ())
	} else if s.EnergyNote != "" {
		fmt.Fprintf(tw, "energy to solution\t- (%s)\n", s.EnergyNote)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Deferrals)) {
		fmt.Fprintf(tw, "deferrals (%s)\t%s, %s\n", k, count(s.Deferrals[k], "episode"), count(s.DeferralDecisions[k], "decision"))
	}
	return tw.Flush()
}

// EventLog writes events and the actions worth keeping (placements are
// visible as "started" events; stops as "stopped"; deferrals as "defer") as
// JSON Lines, one object per line with fixed key order. Wake-ups are left
// out: they carry no information beyond a decision tick.
type EventLog struct {
	w      io.Writer
	now    time.Duration
	err    error
	defers deferIndex[logged] // last logged reason per job and GPU
	// jobDefers is, by job id, the first of the job's slots in defers
	// (the others follow through logged.more): an array grown to the
	// largest id deferred, not a map (a look-up at each new deferral, 1.6 %
	// of a loaded Horus run's profile). firstDefer and setFirstDefer read
	// and write it.
	jobDefers jobslots.Table
	buf       []byte // the lines not yet written to w
	// The latest line's time and a deferral's reason, formatted: lines
	// come in bursts at one time, deferrals mostly for one reason.
	t     time.Duration
	tText []byte
	// tK is the thousands of the whole seconds tText shows, when it shows
	// at least 1,000 s written from integers (appendSecs); -1 otherwise.
	tK int64
	// digits3 are the numbers 0 to 999 as three digits and a '.', for
	// timeText's last digits (4 KB, made by NewEventLog).
	digits3 [1000]uint32
	reason  string
	reasonQ []byte
	reasonI int // reason's entry in quoted, -1 when it has none
	// quoted are the reasons quoted so far: a run has a handful, and a
	// loaded one alternates between them (quoting again each time was 1 %
	// of a loaded Horus run's profile).
	quoted []quotedReason
	// deferHead is the latest defer line's text up to its GPU,
	// `{"t":T,"event":"defer","job":J,"gpu":`, for time deferT and job
	// deferJob (nil: none yet): a decision defers a waiting job on GPU
	// after GPU, and four in five of a loaded run's defer lines begin as
	// the one before.
	deferHead []byte
	// jobText is, by job id below maxJobText, the id's decimal digits (at
	// most seven) in the low bytes and their count in the top byte, 0 when
	// not made yet (appendJob).
	jobText []uint64
	// nextText is the text of id nextJob, the one after the latest whose
	// text appendJob made (0: none).
	nextJob  policies.JobID
	nextText uint64
	// tails are the current reason's defer lines' ends
	// (quoted[reasonI].tails; nil: none made, or a reason past maxQuoted),
	// read by tail without a look at reasonI.
	tails    [][]byte
	deferT   time.Duration
	deferJob policies.JobID
	// heads are the lines' heads by kind (lineHead), for word.
	heads [nHeads]lineHead
}

// lineHead is a line's head, `,"event":"KIND","job":`, in 8-byte words
// (zero past its end) and its length.
type lineHead struct {
	w [4]uint64
	n int
}

// The heads EventLog.word writes, EventLog.heads's entries.
const (
	hArrived = iota
	hStarted
	hActive
	hFinished
	nHeads
)

// headTexts are the heads by their constant (hArrived …).
var headTexts = [nHeads]string{`,"event":"arrived","job":`, `,"event":"started","job":`,
	`,"event":"active","job":`, `,"event":"finished","job":`}

// makeHead is h's words.
func makeHead(h string) lineHead {
	var b [32]byte
	copy(b[:], h)
	var x lineHead
	for i := range x.w {
		x.w[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	x.n = len(h)
	return x
}

// wordRoom is the room past the collected lines that word asks for: the
// time's text and the head (24 and 32 bytes, each rounded up to whole
// words), a job's id (8 bytes from its kept text, at most 20 made), and
// two words of the line's end.
const wordRoom = 24 + 32 + 20 + 16

// attemptW are the words of `,"attempt":D}` and a newline, D the attempt's
// digit at bit attemptShift of the second word (the two bytes past the
// newline are zero).
const (
	attemptW0    = uint64(',') | uint64('"')<<8 | uint64('a')<<16 | uint64('t')<<24 | uint64('t')<<32 | uint64('e')<<40 | uint64('m')<<48 | uint64('p')<<56
	attemptW1    = uint64('t') | uint64('"')<<8 | uint64(':')<<16 | uint64('}')<<32 | uint64('\n')<<40
	attemptShift = 24
)

// startedW are the words of `,"attempt":D,"gpus":[`, D as in attemptW, and
// its length.
const (
	startedW0 = attemptW0
	startedW1 = uint64('t') | uint64('"')<<8 | uint64(':')<<16 | uint64(',')<<32 | uint64('"')<<40 | uint64('g')<<48 | uint64('p')<<56
	startedW2 = uint64('u') | uint64('s')<<8 | uint64('"')<<16 | uint64(':')<<24 | uint64('[')<<32
	startedN  = 21
)

// sharedW are the words of a started line's end, `],"shared":true}` or
// `],"shared":false}` and a newline, and their lengths.
const (
	sharedW0      = uint64(']') | uint64(',')<<8 | uint64('"')<<16 | uint64('s')<<24 | uint64('h')<<32 | uint64('a')<<40 | uint64('r')<<48 | uint64('e')<<56
	sharedTrueW1  = uint64('d') | uint64('"')<<8 | uint64(':')<<16 | uint64('t')<<24 | uint64('r')<<32 | uint64('u')<<40 | uint64('e')<<48 | uint64('}')<<56
	sharedTrueN   = 8 + 8 + 1 // (the newline: the third word's first byte)
	sharedFalseW1 = uint64('d') | uint64('"')<<8 | uint64(':')<<16 | uint64('f')<<24 | uint64('a')<<32 | uint64('l')<<40 | uint64('s')<<48 | uint64('e')<<56
	sharedFalseW2 = uint64('}') | uint64('\n')<<8
	sharedFalseN  = 8 + 8 + 2
)

// word begins a line as start does, `{"t":` t, head h (l.heads's) and job,
// with 8-byte stores into the room past the collected lines instead of
// appends piece by piece (two copy calls and the appends' checks), and
// returns it; nil when the room is short of wordRoom (start then). The
// returned line has room for 16 more bytes; the bytes past it are scratch.
// (The time's text is at most 20 bytes, `{"t":` and the seconds of a
// time.Duration, and l.tText's array has 32.)
func (l *EventLog) word(t time.Duration, h *lineHead, job policies.JobID) []byte {
	if t != l.t || len(l.tText) == 0 {
		l.t = t
		l.timeText(t)
	}
	b, tt := l.buf, l.tText
	n := len(b)
	if cap(b)-n < wordRoom || cap(tt) < 24 {
		return nil
	}
	w := b[n : n+wordRoom]
	x := tt[:24]
	binary.LittleEndian.PutUint64(w[0:], binary.LittleEndian.Uint64(x[0:]))
	binary.LittleEndian.PutUint64(w[8:], binary.LittleEndian.Uint64(x[8:]))
	binary.LittleEndian.PutUint64(w[16:], binary.LittleEndian.Uint64(x[16:]))
	m := len(tt) & 31
	y := w[m : m+40]
	binary.LittleEndian.PutUint64(y[0:], h.w[0])
	binary.LittleEndian.PutUint64(y[8:], h.w[1])
	binary.LittleEndian.PutUint64(y[16:], h.w[2])
	binary.LittleEndian.PutUint64(y[24:], h.w[3])
	m += h.n & 31
	if uint64(job) < uint64(len(l.jobText)) {
		if v := l.jobText[job]; v != 0 {
			binary.LittleEndian.PutUint64(w[m:m+8], v)
			return b[:n+m+int(v>>56)]
		}
	}
	return l.appendJob(b[:n+m], job)
}

// firstDefer returns job's first slot in defers, -1 for none.
func (l *EventLog) firstDefer(job policies.JobID) int32 { return l.jobDefers.Get(int(job)) }

// setFirstDefer makes s job's first slot in defers (-1: none).
func (l *EventLog) setFirstDefer(job policies.JobID, s int32) { l.jobDefers.Set(int(job), s) }

// maxQuoted bounds EventLog.quoted: a policy whose reasons vary more
// quotes the others at each change of reason, as before.
const maxQuoted = 16

// quotedReason is a deferral reason, its JSON string and the ends of
// defer lines with it.
type quotedReason struct {
	reason string
	q      []byte
	// tails are, by GPU below maxTailGPU, the end of a defer line on the
	// GPU for the reason, `G,"reason":R}` and a newline (nil: not made
	// yet).
	tails [][]byte
}

// maxTailGPU bounds the GPUs whose defer lines' ends are kept
// (quotedReason.tails); a line on a GPU from it on is written in parts.
const maxTailGPU = 64

// quote returns reason as a JSON string, quoted once per reason, and its
// entry in l.quoted (-1: none, past maxQuoted).
func (l *EventLog) quote(reason string) ([]byte, int) {
	for i := range l.quoted {
		if same(l.quoted[i].reason, reason) {
			return l.quoted[i].q, i
		}
	}
	q := strconv.AppendQuote(nil, reason)
	if len(l.quoted) < maxQuoted {
		l.quoted = append(l.quoted, quotedReason{reason: reason, q: q})
		return q, len(l.quoted) - 1
	}
	return q, -1
}

// tail returns the end of a defer line on gpu for the current reason
// (l.reasonI), `G,"reason":R}` and a newline, made once (and keeps the
// reason's ends in l.tails); nil when it is not kept (a reason past
// maxQuoted, a GPU past maxTailGPU). deferLine reads an end made in
// l.tails itself.
func (l *EventLog) tail(gpu int) []byte {
	if l.reasonI < 0 || gpu < 0 || gpu >= maxTailGPU {
		return nil
	}
	r := &l.quoted[l.reasonI]
	if r.tails == nil {
		r.tails = make([][]byte, maxTailGPU)
	}
	l.tails = r.tails
	if r.tails[gpu] == nil {
		b := append(appendInt(nil, int64(gpu)), `,"reason":`...)
		r.tails[gpu] = append(append(b, r.q...), '}', '\n')
	}
	return r.tails[gpu]
}

// logged is the reason last logged for a deferral of a job on a GPU.
type logged struct {
	reason string
	more   int32 // the job's next slot in EventLog.defers, -1 if none
	n      int32 // (the job's first slot) the job's slots, with deferrals as changes
}

// deferSlot returns the slot of job's deferral on gpu in l.defers, -1 for
// none. With deferrals as changes (defers.noGuess) a job's slots are
// found by walking its list while it has at most walkEpisodes of them
// (their keys are not in the index's table then: addUnindexed), as the
// collector finds its episodes: a decision adds a waiting job's slots a
// few GPUs at a time, and each key's probe and insertion cost more than
// the walk.
func (l *EventLog) deferSlot(job policies.JobID, gpu int) int32 {
	if !l.defers.noGuess {
		return l.defers.get(deferKey{job, gpu})
	}
	first := l.firstDefer(job)
	if first < 0 {
		return -1
	}
	if l.defers.val(first).n > walkEpisodes {
		return l.defers.get(deferKey{job, gpu})
	}
	for s := first; s >= 0; s = l.defers.val(s).more {
		if l.defers.key(s).gpu == gpu {
			return s
		}
	}
	return -1
}

// addDefer gives job's deferral on gpu a slot in l.defers with reason, at
// the front of the job's list.
func (l *EventLog) addDefer(job policies.JobID, gpu int, reason string) {
	k, first := deferKey{job, gpu}, l.firstDefer(job)
	if !l.defers.noGuess {
		l.setFirstDefer(job, l.defers.add(k, logged{reason: reason, more: first}))
		return
	}
	n := int32(1)
	if first >= 0 {
		n += l.defers.val(first).n
	}
	s := l.defers.addUnindexed(k, logged{reason: reason, more: first, n: n})
	l.setFirstDefer(job, s)
	switch {
	case n == walkEpisodes+1: // from now on in the table
		for x := s; x >= 0; x = l.defers.val(x).more {
			l.defers.index(x)
		}
	case n > walkEpisodes+1:
		l.defers.index(s)
	}
}

// NewEventLog writes to w; call Flush at the end.
func NewEventLog(w io.Writer) *EventLog {
	l := &EventLog{w: w, defers: newDeferIndex[logged](),
		buf:   make([]byte, 0, logChunk+1024), // a chunk and the line that fills it, made once
		tText: make([]byte, 0, 32)}            // (room for word's loads)
	for i, h := range headTexts {
		l.heads[i] = makeHead(h)
	}
	for x := range l.digits3 {
		l.digits3[x] = uint32('0'+x/100) | uint32('0'+x/10%10)<<8 | uint32('0'+x%10)<<16 | '.'<<24
	}
	l.tK = -1
	return l
}

// line writes one line: head, job and extra (see start).
func (l *EventLog) line(t time.Duration, head string, job policies.JobID, extra string) {
	l.end(append(l.start(t, head, job), extra...))
}

// start begins a line in the collected lines: `{"t":` t head job, where
// head is `,"event":"KIND","job":` (a constant per kind: one copy), and
// returns them; the caller appends the line's other fields to it and hands
// it to end. The time's text (with its `{"t":`) is kept for the next lines
// of the instant.
func (l *EventLog) start(t time.Duration, head string, job policies.JobID) []byte {
	if t != l.t || len(l.tText) == 0 {
		l.t = t
		l.timeText(t)
	}
	b := append(l.buf, l.tText...)
	b = append(b, head...)
	if uint64(job) < uint64(len(l.jobText)) { // appendJob's look-up, here
		if v, n := l.jobText[job], len(b); v != 0 && cap(b)-n >= 8 {
			b = b[:n+8]
			binary.LittleEndian.PutUint64(b[n:], v)
			return b[:n+int(v>>56)]
		}
	}
	return l.appendJob(b, job)
}

// maxJobText bounds the job ids whose text EventLog.jobText keeps (ids of
// at most seven digits, so at most 80 MB for ids that far; 8 bytes a job
// for a trace's ids from 0).
const maxJobText = 10_000_000

// appendJob appends job's id in decimal, as appendInt does: from the text
// kept in l.jobText for ids below maxJobText (made at the id's first line),
// one 8-byte store instead of the digits' divisions. Every line has a job,
// and a job has several lines (arrived, started, active, finished, defer);
// start looks the text up itself, and calls appendJob when it finds none.
// A trace's jobs arrive in id order: the text of the id after the last one
// made is that one's plus one (l.nextText, succText), not divided out.
func (l *EventLog) appendJob(b []byte, job policies.JobID) []byte {
	if uint64(job) < uint64(len(l.jobText)) {
		if v, n := l.jobText[job], len(b); v != 0 && cap(b)-n >= 8 {
			b = b[:n+8]
			binary.LittleEndian.PutUint64(b[n:], v)
			return b[:n+int(v>>56)]
		}
	}
	if job < 0 || job >= maxJobText {
		return appendInt(b, int64(job))
	}
	v := l.nextText
	if job != l.nextJob || v == 0 { // its digits, divided out
		n := len(b)
		d := appendInt(b, int64(job))
		var t [8]byte
		copy(t[:7], d[n:])
		t[7] = byte(len(d) - n)
		v = binary.LittleEndian.Uint64(t[:])
		b = d[:n]
	}
	if int(job) >= len(l.jobText) {
		if int(job) >= cap(l.jobText) { // doubled: each id moved about once (append grows large slices by 1.25 ×)
			t := make([]uint64, job+1, max(2*cap(l.jobText), int(job)+1, 64))
			copy(t, l.jobText)
			l.jobText = t
		} else { // zeros past the length: only ids below it are written
			l.jobText = l.jobText[:job+1]
		}
	}
	l.jobText[job] = v
	l.nextJob, l.nextText = job+1, succText(v)
	n := len(b)
	if cap(b)-n >= 8 {
		b = b[:n+8]
		binary.LittleEndian.PutUint64(b[n:], v)
		return b[:n+int(v>>56)]
	}
	var t [8]byte
	binary.LittleEndian.PutUint64(t[:], v)
	return append(b, t[:v>>56]...)
}

// succText is the kept text (EventLog.jobText) of the number after the one
// whose text is v: its last digit plus one, nines carried; 0 past seven
// digits.
func succText(v uint64) uint64 {
	n := int(v >> 56)
	for i := n - 1; i >= 0; i-- {
		sh := uint(8 * i)
		if byte(v>>sh) != '9' {
			return v + 1<<sh
		}
		v -= 9 << sh // '9' becomes '0', and the digit before carries
	}
	if n >= 7 {
		return 0
	}
	return uint64(n+1)<<56 | (v&(1<<(8*n)-1))<<8 | '1' // 99…9 + 1: a one and n zeros
}

// timeText makes l.tText `{"t":` and t in seconds as appendSecs writes
// them. Lines come in time order, mostly seconds apart: when t's whole
// seconds (of at least 1,000) have the text's thousands (l.tK), only the
// last three digits of its seconds and its milliseconds are written, each
// three with one 4-byte store from l.digits3.
func (l *EventLog) timeText(t time.Duration) {
	q, ok := millis(t)
	if k := q / 1_000_000; ok && k == l.tK {
		b := l.tText
		n := len(b)
		r := q - 1_000_000*k // the seconds' last three digits and the milliseconds
		h := r / 1000
		f := r - 1000*h
		binary.LittleEndian.PutUint32(b[n-7:n-3], l.digits3[h])      // hhh.
		binary.LittleEndian.PutUint32(b[n-4:n], l.digits3[f]<<8|'.') // .fff
		return
	}
	l.tText = appendSecs(append(l.tText[:0], `{"t":`...), t)
	l.tK = -1 // not from the integer digits, or under 1,000 s
	if ok && q >= 1_000_000 {
		l.tK = q / 1_000_000
	}
}

// end closes the line start began in b and keeps it, writing the collected
// lines once they fill a chunk; after a write error it keeps nothing.
func (l *EventLog) end(b []byte) { l.keep(append(b, "}\n"...)) }

// keep keeps b, the collected lines and a new whole line, writing them
// once they fill a chunk; after a write error it keeps nothing.
func (l *EventLog) keep(b []byte) {
	if l.err != nil {
		return
	}
	l.buf = b
	if len(l.buf) >= logChunk {
		l.write()
	}
}

// logChunk is how many bytes of lines the event log collects before it
// writes them (64 KiB: a 6 MB log in a hundred writes, not 1,500).
const logChunk = 64 << 10

// write writes the collected lines to the underlying writer. It is not
// inlined, so that keep, which calls it once a chunk, is.
//
//go:noinline
func (l *EventLog) write() {
	_, l.err = l.w.Write(l.buf)
	l.buf = l.buf[:0]
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// Event implements the Recorder.
func (l *EventLog) Event(e policies.Event) { l.EventAt(&e) }

// EventAt implements InPlaceRecorder: Event, e read in place.
func (l *EventLog) EventAt(e *policies.Event) {
	l.now = e.T
	switch e.Kind {
	case policies.JobArrived:
		if b := l.word(e.T, &l.heads[hArrived], e.Job); b != nil {
			n := len(b)
			binary.LittleEndian.PutUint16(b[n:n+2], '}'|'\n'<<8)
			l.keep(b[:n+2])
			return
		}
		l.end(l.start(e.T, `,"event":"arrived","job":`, e.Job))
	case policies.JobStarted:
		// A new attempt starts a new deferral history for the job.
		if s := l.firstDefer(e.Job); s >= 0 {
			for s >= 0 {
				next := l.defers.val(s).more
				l.defers.remove(s)
				s = next
			}
			l.setFirstDefer(e.Job, -1)
		}
		var b []byte
		if uint64(e.Attempt) < 10 {
			b = l.word(e.T, &l.heads[hStarted], e.Job)
		}
		if b != nil {
			n := len(b)
			y := b[n : n+24]
			binary.LittleEndian.PutUint64(y[0:], startedW0)
			binary.LittleEndian.PutUint64(y[8:], startedW1|uint64('0'+e.Attempt)<<attemptShift)
			binary.LittleEndian.PutUint64(y[16:], startedW2)
			b = b[:n+startedN]
		} else {
			b = append(appendInt(append(l.start(e.T, `,"event":"started","job":`, e.Job), `,"attempt":`...), int64(e.Attempt)), `,"gpus":[`...)
		}
		for i, g := range e.GPUs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInt(b, int64(g))
		}
		if n := len(b); cap(b)-n >= 24 {
			y := b[n : n+24]
			binary.LittleEndian.PutUint64(y[0:], sharedW0)
			if e.Shared {
				binary.LittleEndian.PutUint64(y[8:], sharedTrueW1)
				binary.LittleEndian.PutUint64(y[16:], '\n')
				l.keep(b[:n+sharedTrueN])
			} else {
				binary.LittleEndian.PutUint64(y[8:], sharedFalseW1)
				binary.LittleEndian.PutUint64(y[16:], sharedFalseW2)
				l.keep(b[:n+sharedFalseN])
			}
		} else if e.Shared {
			l.keep(append(b, "],\"shared\":true}\n"...))
		} else {
			l.keep(append(b, "],\"shared\":false}\n"...))
		}
	case policies.JobActive, policies.JobFinished:
		h := hActive
		if e.Kind == policies.JobFinished {
			h = hFinished
		}
		if uint64(e.Attempt) < 10 {
			if b := l.word(e.T, &l.heads[h], e.Job); b != nil {
				n := len(b)
				y := b[n : n+16]
				binary.LittleEndian.PutUint64(y[0:], attemptW0)
				binary.LittleEndian.PutUint64(y[8:], attemptW1|uint64('0'+e.Attempt)<<attemptShift)
				l.keep(b[:n+14])
				return
			}
		}
		l.end(appendInt(append(l.start(e.T, headTexts[h], e.Job), `,"attempt":`...), int64(e.Attempt)))
	case policies.JobFailed:
		l.line(e.T, `,"event":"failed","job":`, e.Job, fmt.Sprintf(`,"attempt":%d,"reason":%q,"gpu":%d`, e.Attempt, e.Failure.String(), e.GPU))
	case policies.JobStopped:
		l.line(e.T, `,"event":"stopped","job":`, e.Job, fmt.Sprintf(`,"reason":%q`, e.Reason))
	case policies.PlaceFailed:
		l.line(e.T, `,"event":"place-failed","job":`, e.Job, fmt.Sprintf(`,"gpus":%s,"reason":%q`, ints(e.GPUs), e.Reason))
	}
}

// Action implements the Recorder. A deferral is logged when its reason for
// that job and GPU differs from the last one logged (the summary counts
// every decision's deferrals); it carries the decision's time.
func (l *EventLog) Action(a policies.Action) { l.ActionAt(&a) }

// ActionAt implements InPlaceActionRecorder: Action, a read in place.
func (l *EventLog) ActionAt(a *policies.Action) {
	if a.Kind == policies.Defer {
		s := l.deferSlot(a.Job, a.GPU)
		switch {
		case s < 0:
			l.addDefer(a.Job, a.GPU, a.Reason)
		case !same(l.defers.val(s).reason, a.Reason):
			l.defers.val(s).reason = a.Reason
		default:
			return
		}
		if !same(a.Reason, l.reason) || l.reasonQ == nil {
			l.reason = a.Reason
			l.reasonQ, l.reasonI = l.quote(a.Reason)
			l.tails = nil
			if l.reasonI >= 0 {
				l.tails = l.quoted[l.reasonI].tails
			}
		}
		l.deferLine(a.Job, a.GPU)
	}
}

// deferLine writes the line of job's deferral on gpu for the current
// reason at the current time: the head from the previous defer line's when
// it has the same time and job (deferHead), the end made once per reason
// and GPU (tail).
func (l *EventLog) deferLine(job policies.JobID, gpu int) {
	var b []byte
	if l.deferHead != nil && l.now == l.deferT && job == l.deferJob {
		b = append(l.buf, l.deferHead...)
	} else {
		b = append(l.start(l.now, `,"event":"defer","job":`, job), `,"gpu":`...)
		l.deferHead = append(l.deferHead[:0], b[len(l.buf):]...)
		l.deferT, l.deferJob = l.now, job
	}
	if uint(gpu) < uint(len(l.tails)) && l.tails[gpu] != nil {
		l.keep(append(b, l.tails[gpu]...))
		return
	}
	if t := l.tail(gpu); t != nil {
		l.keep(append(b, t...))
		return
	}
	l.end(append(append(appendInt(b, int64(gpu)), `,"reason":`...), l.reasonQ...))
}

// TakeDeferralChanges implements the loop's DeferralChangeRecorder: the
// log's lines are the same when it is handed a decision's deferrals as
// changes (policies.DeferralChanges). A deferral it is not handed repeats
// the previous decision's for that job and GPU, with no start of the job
// in between (those are handed on): its reason is the one last logged, and
// it would write nothing.
func (l *EventLog) TakeDeferralChanges() bool { return true }

// Flush writes out buffered lines and reports the first write error.
func (l *EventLog) Flush() error {
	if l.err == nil && len(l.buf) > 0 {
		l.write()
	}
	return l.err
}

// RunFiles returns a run's output files by name: jobs.csv (with a server
// column when servers is not nil: a cluster run), summary.csv,
// deferrals.csv and events.jsonl (the event log's bytes). Simulated and
// executed runs write the same files with it.
func RunFiles(jobs []Job, servers []string, sum Summary, events []byte) (map[string][]byte, error) {
	var jb, sb, db bytes.Buffer
	var err error
	if servers != nil {
		err = WriteClusterJobsCSV(&jb, jobs, servers)
	} else {
		err = WriteJobsCSV(&jb, jobs)
	}
	if err != nil {
		return nil, err
	}
	if err := WriteSummaryCSV(&sb, sum); err != nil {
		return nil, err
	}
	if err := WriteDeferralsCSV(&db, sum); err != nil {
		return nil, err
	}
	return map[string][]byte{rundir.Jobs: jb.Bytes(), rundir.Summary: sb.Bytes(),
		rundir.Deferrals: db.Bytes(), rundir.Events: events}, nil
}

// count is n and the noun, plural unless n is 1 ("1 episode", "3 episodes").
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
