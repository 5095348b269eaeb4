package traces

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/internal/csvhead"
	"github.com/aegis-sched/aegis/models"
)

// LogJob is one job of a production log (or of a synthetic generator): what
// window selection, profiling and workload mapping consume. It carries the
// job's measured run time instead of a catalog workload.
type LogJob struct {
	ID       string
	Submit   time.Duration // since the log's first kept job
	Duration time.Duration // run time (first attempt start to last attempt end)
	GPUs     int           // 0 for CPU-only jobs
	Status   string        // the log's final state (Pass, COMPLETED, ...), "" if unknown
}

// Reasons a reader skips a record. Skipped records are counted in
// Log.Skipped under these keys, never dropped silently.
const (
	SkipNeverStarted   = "never started"    // no attempt, or no start time
	SkipNoEndTime      = "no end time"      // started but no end time (and no duration)
	SkipNoSubmitTime   = "no submit time"   // submit time null/None/empty
	SkipEndBeforeStart = "end before start" // negative run time
)

// Log is a production job log as read: the kept jobs sorted by submit time
// (ties keep file order), plus how many records were read and why the others
// were skipped.
type Log struct {
	Name    string
	Jobs    []LogJob
	Records int            // job records read, kept or skipped
	Skipped map[string]int // skip reason → count; nil or empty when none
	// Format is the format ReadLogFile read the log as, FormatAuto
	// resolved (built-in traces: FormatCSV); "" from the other readers.
	Format Format
	// Mapped reports that ReadLogFile's input named a workload per job (a
	// trace, or a log aegis trace map wrote), which the Log leaves out.
	Mapped bool
}

// SkippedTotal is the number of records read but not kept.
func (l *Log) SkippedTotal() int {
	n := 0
	for _, c := range l.Skipped {
		n += c
	}
	return n
}

func (l *Log) skip(reason string) {
	if l.Skipped == nil {
		l.Skipped = map[string]int{}
	}
	l.Skipped[reason]++
}

// SkipSummary describes the skipped records, e.g. "12 never started, 3 no end
// time", or "none".
func (l *Log) SkipSummary() string {
	if len(l.Skipped) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l.Skipped)) {
		parts = append(parts, fmt.Sprintf("%d %s", l.Skipped[k], k))
	}
	return strings.Join(parts, ", ")
}

// sortLogJobs sorts jobs by submit time, ties keeping their order.
func sortLogJobs(js []LogJob) {
	bySubmit := func(a, b LogJob) int { return cmp.Compare(a.Submit, b.Submit) }
	if !slices.IsSortedFunc(js, bySubmit) {
		slices.SortStableFunc(js, bySubmit)
	}
}

// FilterGPUs returns the jobs whose GPU count is one of gpus, in order. An
// empty gpus keeps every job.
func FilterGPUs(jobs []LogJob, gpus []int) []LogJob {
	if len(gpus) == 0 {
		return slices.Clone(jobs)
	}
	n := 0
	for _, j := range jobs {
		if slices.Contains(gpus, j.GPUs) {
			n++
		}
	}
	out := make([]LogJob, 0, n)
	for _, j := range jobs {
		if slices.Contains(gpus, j.GPUs) {
			out = append(out, j)
		}
	}
	return out
}

// TraceJobs turns a runnable trace into log jobs: each job's duration is its
// catalog workload's solo runtime (SoloS). It fails on a workload the catalog
// lacks.
func TraceJobs(t *Trace, cat *models.Catalog) ([]LogJob, error) {
	out := make([]LogJob, len(t.Jobs))
	for i, j := range t.Jobs {
		w, ok := cat.Get(j.Workload)
		if !ok {
			return nil, fmt.Errorf("trace %s: job %s: workload %q is not in the catalog", t.Name, j.ID, j.Workload)
		}
		out[i] = LogJob{ID: j.ID, Submit: j.Submit, Duration: secondsToDuration(w.SoloS), GPUs: j.GPUs}
	}
	return out, nil
}

func secondsToDuration(s float64) time.Duration {
	return time.Duration(math.Round(s * 1e9))
}

// maxSeconds bounds times and durations read from files (about 31 years), so
// that they fit a time.Duration with room to add them up.
const maxSeconds = 1e9

// ReadLogCSV reads a log in our CSV log format: a header naming at least
// submit_offset_s, duration_s and num_gpus (job_id and status optional, other
// columns such as workload_id ignored), then one row per job. num_gpus may be
// 0 (a CPU-only job). Rows may come in any order; the jobs are sorted by
// submit time, ties keeping file order. Errors name the file, line and
// column.
func ReadLogCSV(r io.Reader, name string) (*Log, error) {
	t, err := openCSV(r, 0, name, "empty log: want a header with submit_offset_s,duration_s,num_gpus", "submit_offset_s", "duration_s", "num_gpus")
	if err != nil {
		return nil, err
	}
	l := &Log{Name: name}
	seen := map[string]int{}
	err = t.each(func(row csvRow) error {
		l.Records++
		sub, err := row.seconds("submit_offset_s")
		if err != nil {
			return err
		}
		dur, err := row.seconds("duration_s")
		if err != nil {
			return err
		}
		g, err := row.gpus("num_gpus")
		if err != nil {
			return err
		}
		id, _ := row.optional("job_id")
		if id == "" {
			id = strconv.Itoa(l.Records - 1)
		}
		if prev, dup := seen[id]; dup {
			return row.errorf("job_id", "%q repeats line %d", id, prev)
		}
		seen[id] = row.line
		status, _ := row.optional("status")
		l.Jobs = append(l.Jobs, LogJob{ID: id, Submit: secondsToDuration(sub), Duration: secondsToDuration(dur), GPUs: g, Status: status})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(l.Jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs", name)
	}
	sortLogJobs(l.Jobs)
	return l, nil
}

// timedJob is a production log's job with its absolute submit time.
type timedJob struct {
	submit time.Time
	job    LogJob
}

// finish completes a production log from its jobs: submit times measured
// from the earliest job, jobs in submit order. A log with no job that ran
// is an error.
func (l *Log) finish(jobs []timedJob) (*Log, error) {
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s: no job that ran (%d records; skipped: %s)", l.Name, l.Records, l.SkipSummary())
	}
	first := jobs[0].submit
	for _, k := range jobs {
		if k.submit.Before(first) {
			first = k.submit
		}
	}
	l.Jobs = make([]LogJob, len(jobs))
	for i, k := range jobs {
		k.job.Submit = k.submit.Sub(first)
		l.Jobs[i] = k.job
	}
	sortLogJobs(l.Jobs)
	return l, nil
}

// csvTable is a CSV file with a header row, read row by row.
type csvTable struct {
	name string
	cr   records
	head []string
	col  map[string]int
}

// openCSV reads the header of a CSV file ('#' comments allowed) and checks
// that it has the required columns; empty is the error message for a file
// with no header. size is the input's size when known (else 0).
func openCSV(r io.Reader, size int, name, empty string, required ...string) (*csvTable, error) {
	cr := newRecords(r, size)
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %s", name, empty)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	col, err := csvhead.Index(head)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", name, err)
	}
	t := &csvTable{name: name, cr: cr, head: slices.Clone(head), col: col}
	for _, c := range required {
		if !t.has(c) {
			return nil, t.lacks(c)
		}
	}
	return t, nil
}

func (t *csvTable) has(c string) bool {
	_, ok := t.col[c]
	return ok
}

// lacks is the error for a missing header column.
func (t *csvTable) lacks(c string) error {
	return fmt.Errorf("%s:1: header lacks column %q (have %s)", t.name, c, strings.Join(t.head, ","))
}

// each calls fn for every data row until it returns an error.
func (t *csvTable) each(fn func(row csvRow) error) error {
	for {
		rec, err := t.cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		line, _ := t.cr.FieldPos(0)
		if len(rec) > len(t.head) {
			return fmt.Errorf("%s:%d: row has %d fields, the header %d", t.name, line, len(rec), len(t.head))
		}
		if err := fn(csvRow{name: t.name, line: line, col: t.col, rec: rec}); err != nil {
			return err
		}
	}
}

// csvRow reads typed fields of one CSV record, with errors naming the file,
// line and column.
type csvRow struct {
	name string
	line int
	col  map[string]int
	rec  []string
}

func (r csvRow) errorf(c, format string, args ...any) error {
	return fmt.Errorf("%s:%d: column %s: %s", r.name, r.line, c, fmt.Sprintf(format, args...))
}

// column is a header column: its name and index (-1 when the header lacks
// it), looked up once for every row (csvTable.column).
type column struct {
	name string
	i    int
}

// column returns header column c.
func (t *csvTable) column(c string) column {
	if i, ok := t.col[c]; ok {
		return column{c, i}
	}
	return column{c, -1}
}

// field returns the trimmed value of a column the header has.
func (r csvRow) field(c string) (string, error) { return r.fieldIn(column{c, r.col[c]}) }

func (r csvRow) fieldIn(c column) (string, error) {
	if c.i >= len(r.rec) {
		return "", r.errorf(c.name, "missing (row has %d fields)", len(r.rec))
	}
	return trimSpace(r.rec[c.i]), nil
}

// optional returns the trimmed value of a column, and whether the header and
// the row have it.
func (r csvRow) optional(c string) (string, bool) {
	i, ok := r.col[c]
	if !ok {
		i = -1
	}
	return r.optionalIn(column{c, i})
}

func (r csvRow) optionalIn(c column) (string, bool) {
	if c.i < 0 || c.i >= len(r.rec) {
		return "", false
	}
	return trimSpace(r.rec[c.i]), true
}

func (r csvRow) seconds(c string) (float64, error) { return r.secondsIn(column{c, r.col[c]}) }

func (r csvRow) secondsIn(c column) (float64, error) {
	s, err := r.fieldIn(c)
	if err != nil {
		return 0, err
	}
	v, ok := parseSeconds(s)
	if !ok {
		return 0, r.errorf(c.name, "%q is not a number of seconds in [0, 1e9]", s)
	}
	return v, nil
}

func (r csvRow) gpus(c string) (int, error) { return r.gpusIn(column{c, r.col[c]}) }

func (r csvRow) gpusIn(c column) (int, error) {
	s, err := r.fieldIn(c)
	if err != nil {
		return 0, err
	}
	g, ok := parseGPUs(s)
	if !ok {
		return 0, r.errorf(c.name, "%q is not a whole number in 0..1024", s)
	}
	return g, nil
}

// parseSeconds parses a finite number of seconds in [0, maxSeconds].
func parseSeconds(s string) (float64, bool) {
	if v, ok := plainDecimal(s); ok { // most submission times: the same value
		if v > maxSeconds {
			return 0, false
		}
		return v, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > maxSeconds {
		return 0, false
	}
	return v, true
}

// maxJobGPUs is the most GPUs a job may ask for, in every input format.
const maxJobGPUs = 1024

// parseGPUs parses a GPU count in 0..1024, accepting integral decimals such
// as "2.0" (what pandas writes for an integer column with gaps).
func parseGPUs(s string) (int, bool) {
	if g, err := strconv.Atoi(s); err == nil {
		return g, g >= 0 && g <= maxJobGPUs
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != math.Trunc(v) || v < 0 || v > maxJobGPUs {
		return 0, false
	}
	return int(v), true
}

// WriteLogCSV writes jobs in our CSV log format (job_id, submit_offset_s,
// num_gpus, duration_s, status). When workloads is not nil (one catalog
// workload id per job, as MapWorkloads returns) a workload_id column is added,
// and the file is then also a runnable trace that ReadCSV and Load accept.
func WriteLogCSV(w io.Writer, jobs []LogJob, workloads []string) error {
	cols := LogPlain
	if workloads != nil {
		cols = LogWorkloads
	}
	lw, err := NewLogWriter(w, cols)
	if err != nil {
		return err
	}
	if err := lw.Write(jobs, workloads); err != nil {
		return err
	}
	return lw.Flush()
}

// LogWriter writes our CSV log (see WriteLogCSV) piece by piece, for logs
// too long to hold in memory.
type LogWriter struct {
	cw   *csv.Writer
	rec  []string
	wl   bool // a workload_id column
	solo bool // a solo_s column (the duration)
}

// LogColumns says which optional columns a CSV log has after status.
type LogColumns int

// The columns of a CSV log after status.
const (
	// LogPlain has none.
	LogPlain LogColumns = iota
	// LogWorkloads has workload_id: the log is then also a runnable trace.
	LogWorkloads
	// LogWorkloadsSolo has workload_id and a last column solo_s repeating
	// each job's duration_s, so that the jobs run for their logged lengths
	// rather than their workloads' solo runtimes.
	LogWorkloadsSolo
)

// NewLogWriter writes the header of a CSV log with the given columns to w.
func NewLogWriter(w io.Writer, cols LogColumns) (*LogWriter, error) {
	return newLogWriter(w, cols != LogPlain, cols == LogWorkloadsSolo)
}

func newLogWriter(w io.Writer, workloads, solo bool) (*LogWriter, error) {
	head := []string{"job_id", "submit_offset_s", "num_gpus", "duration_s", "status"}
	if workloads {
		head = append(head, "workload_id")
	}
	if solo {
		head = append(head, "solo_s")
	}
	lw := &LogWriter{cw: csv.NewWriter(w), rec: make([]string, len(head)), wl: workloads, solo: solo}
	if err := lw.cw.Write(head); err != nil {
		return nil, fmt.Errorf("write log: %w", err)
	}
	return lw, nil
}

// Write appends jobs, with one workload id per job when the log has a
// workload_id column (nil otherwise).
func (lw *LogWriter) Write(jobs []LogJob, workloads []string) error {
	withWL := lw.wl
	if withWL != (workloads != nil) || (withWL && len(workloads) != len(jobs)) {
		return fmt.Errorf("write log: %d workloads for %d jobs", len(workloads), len(jobs))
	}
	rec := lw.rec
	for i, j := range jobs {
		rec[0] = j.ID
		rec[1] = strconv.FormatFloat(j.Submit.Seconds(), 'f', -1, 64)
		rec[2] = strconv.Itoa(j.GPUs)
		rec[3] = strconv.FormatFloat(j.Duration.Seconds(), 'f', -1, 64)
		rec[4] = j.Status
		if withWL {
			rec[5] = workloads[i]
		}
		if lw.solo {
			rec[6] = rec[3]
		}
		if err := lw.cw.Write(rec); err != nil {
			return fmt.Errorf("write log: %w", err)
		}
	}
	return nil
}

// Flush writes any buffered rows.
func (lw *LogWriter) Flush() error {
	lw.cw.Flush()
	if err := lw.cw.Error(); err != nil {
		return fmt.Errorf("write log: %w", err)
	}
	return nil
}

// Format names an input format that ReadLogFile understands.
type Format string

// Input formats.
const (
	FormatAuto   Format = "auto"   // detect from the name and the first bytes
	FormatPhilly Format = "philly" // Philly cluster_job_log (JSON)
	FormatHelios Format = "helios" // Helios cluster_log.csv (Saturn, Venus, Earth, Uranus)
	FormatCSV    Format = "csv"    // our CSV: a log (duration_s) or a trace (workload_id)
	FormatJSONL  Format = "jsonl"  // our JSON Lines trace
)

// Formats lists the formats ReadLogFile accepts.
func Formats() []Format {
	return []Format{FormatAuto, FormatPhilly, FormatHelios, FormatCSV, FormatJSONL}
}

// ReadLogFile reads jobs with durations from a built-in trace name or a file
// in the given format. Runnable traces (built-ins, our CSV with workload_id
// but no duration_s, JSON Lines) take each job's duration from the catalog's
// solo runtime. FormatAuto picks the format from the file: a built-in name,
// a .jsonl name, JSON ('[' first) as Philly, and for CSV the header (gpu_num
// and submit_time: Helios; duration_s: our log; else our trace); Log.Format
// reports the outcome. Files are streamed, not read whole.
func ReadLogFile(path string, format Format, cat *models.Catalog) (*Log, error) {
	l, f, err := readLogFile(path, format, cat)
	if err != nil {
		return nil, err
	}
	l.Format = f
	return l, nil
}

func readLogFile(path string, format Format, cat *models.Catalog) (*Log, Format, error) {
	if _, ok := builtins()[path]; ok && (format == FormatAuto || format == FormatCSV) {
		t, err := Load(path)
		if err != nil {
			return nil, "", err
		}
		l, err := traceLog(t, cat)
		return l, FormatCSV, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	peek, err := br.Peek(1 << 16)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, "", fmt.Errorf("read log: %w", err)
	}
	if format == FormatAuto {
		format = detectFormat(path, peek)
	}
	var l *Log
	lines := limitLines(br) // the line-based formats: all but Philly's JSON
	switch format {
	case FormatPhilly:
		l, err = ReadPhilly(br, path)
	case FormatHelios:
		l, err = ReadHelios(lines, path)
	case FormatJSONL:
		var t *Trace
		if t, err = ReadJSONL(lines, path); err == nil {
			l, err = traceLog(t, cat)
		}
	case FormatCSV:
		head, _ := csvhead.Index(strings.Split(firstLine(peek), ",")) // the reader reports a bad header
		if _, ok := head["duration_s"]; ok {
			if l, err = ReadLogCSV(lines, path); err == nil {
				_, l.Mapped = head["workload_id"]
			}
			break
		}
		var t *Trace
		if t, err = ReadCSV(lines, path); err == nil {
			l, err = traceLog(t, cat)
		}
	default:
		err = fmt.Errorf("read log %s: unknown format %q (want one of %v)", path, format, Formats())
	}
	return l, format, err
}

func traceLog(t *Trace, cat *models.Catalog) (*Log, error) {
	jobs, err := TraceJobs(t, cat)
	if err != nil {
		return nil, err
	}
	return &Log{Name: t.Name, Jobs: jobs, Records: len(jobs), Mapped: true}, nil
}

// firstLine returns the first line of b that is not a '#' comment.
func firstLine(b []byte) string {
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		b = rest
		s := strings.TrimSpace(string(line))
		if s != "" && !strings.HasPrefix(s, "#") {
			return s
		}
	}
	return ""
}

func detectFormat(path string, b []byte) Format {
	if strings.HasSuffix(path, ".jsonl") {
		return FormatJSONL
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\ufeff")), " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return FormatPhilly
	}
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return FormatJSONL
	}
	head, _ := csvhead.Index(strings.Split(firstLine(b), ",")) // sniffing only
	_, g := head["gpu_num"]
	_, s := head["submit_time"]
	if g && s {
		return FormatHelios
	}
	return FormatCSV
}
