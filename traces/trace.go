// Package traces reads, selects, maps, profiles and generates job traces:
// the sequences of training jobs (submit time, workload, GPU count) that the
// simulator replays. Job is the job type of both backends: the simulator
// and the executor take their jobs as traces.Job.
package traces

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Job is one submitted training job: a trace's job and the job a backend
// runs (sim.New and Sim.Add take it, and so does the executor).
type Job struct {
	ID       string
	Submit   time.Duration // since the trace's start
	Workload string        // a catalog workload id
	GPUs     int
	// SoloS, when positive, is the job's length: it runs its workload's
	// profile for this many solo seconds (startup included) instead of the
	// workload's profiled solo time. 0 means the workload's.
	SoloS float64
}

// Trace is a named list of jobs in submission order.
type Trace struct {
	Name string
	Jobs []Job
	// Lines holds, when known, the file line each job was read from
	// (parallel to Jobs), for error messages.
	Lines []int
}

// Where names job i for an error message: the file and line when known,
// and the job's id.
func (t *Trace) Where(i int) string {
	if i < len(t.Lines) && t.Lines[i] > 0 {
		return fmt.Sprintf("%s:%d: job %s", t.Name, t.Lines[i], t.Jobs[i].ID)
	}
	return fmt.Sprintf("%s: job %s", t.Name, t.Jobs[i].ID)
}

// ReadCSV reads our trace format: a header naming at least submit_offset_s,
// workload_id and num_gpus (job_id and solo_s optional, other columns
// ignored), then one row per job. solo_s, when given and not blank, is the
// job's length in solo seconds (positive, finite, at most 1e9). Rows may come in any order; the result is sorted by submit
// time, ties keeping file order. Errors name the file, line and column.
func ReadCSV(r io.Reader, name string) (*Trace, error) { return readCSV(r, name, 0, 0) }

// readCSV is ReadCSV with room made for about rows jobs at the start (an
// estimate; 0 for none), so that a large trace's arrays and index are not
// regrown row by row, and for size bytes of input (0: not known).
func readCSV(r io.Reader, name string, rows, size int) (*Trace, error) {
	tab, err := openCSV(r, size, name, "empty trace: want a header with submit_offset_s,workload_id,num_gpus", "submit_offset_s", "workload_id", "num_gpus")
	if err != nil {
		return nil, err
	}
	t := &Trace{Name: name, Jobs: make([]Job, 0, rows), Lines: make([]int, 0, rows)}
	seen := newIDLines(rows)
	// The jobs' ids and workloads are substrings of the input as read
	// (plainCSV: the whole file); they are copied out, so that the input
	// is let go once read: the ids back to back into a few large strings,
	// the few workloads each once.
	var ids idArena
	workloads := map[string]string{}
	subCol, wlCol, gpusCol := tab.column("submit_offset_s"), tab.column("workload_id"), tab.column("num_gpus")
	soloCol, idCol := tab.column("solo_s"), tab.column("job_id")
	err = tab.each(func(row csvRow) error {
		sub, err := row.secondsIn(subCol)
		if err != nil {
			return err
		}
		wl, err := row.fieldIn(wlCol)
		if err != nil {
			return err
		}
		if wl == "" {
			return row.errorf("workload_id", "empty")
		}
		if w, ok := workloads[wl]; ok {
			wl = w
		} else {
			wl = strings.Clone(wl)
			workloads[wl] = wl
		}
		n, err := row.gpusIn(gpusCol)
		if err != nil {
			return err
		}
		if n < 1 {
			return row.errorf("num_gpus", "%d: a job needs at least one GPU", n)
		}
		var solo float64
		if s, ok := row.optionalIn(soloCol); ok && s != "" {
			v, ok := parseSoloS(s)
			if !ok {
				return row.errorf("solo_s", "%q is not a positive, finite number of seconds up to 1e9", s)
			}
			solo = v
		}
		id, _ := row.optionalIn(idCol)
		if id == "" {
			id = strconv.Itoa(len(t.Jobs))
		}
		if prev, dup := seen.add(id, row.line); dup {
			return row.errorf("job_id", "%q repeats line %d", id, prev)
		}
		t.Jobs = append(t.Jobs, Job{ID: ids.clone(id), Submit: time.Duration(math.Round(sub * 1e9)), Workload: wl, GPUs: n, SoloS: solo})
		t.Lines = append(t.Lines, row.line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs", name)
	}
	t.sortBySubmit()
	return t, nil
}

// idArena copies job ids back to back into strings of idChunk bytes (one
// allocation for thousands of ids, none of them pointing into the input).
type idArena struct{ b strings.Builder }

const idChunk = 64 << 10

// clone returns a copy of s in the arena.
func (a *idArena) clone(s string) string {
	if a.b.Cap()-a.b.Len() < len(s) {
		// A new chunk: the strings returned so far keep the old one,
		// whose bytes a Builder never changes.
		a.b.Reset()
		a.b.Grow(max(idChunk, len(s)))
	}
	n := a.b.Len()
	a.b.WriteString(s)
	return a.b.String()[n:]
}

// idLines remembers the line of each job id read so far, to find a repeated
// one: an id that is a decimal number below a bound fixed at the start (the
// usual 0, 1, 2, ...) in an array by its value, any other in a map.
type idLines struct {
	bound int
	num   []int32 // line by number, 0 for none
	other map[string]int
}

// newIDLines makes room for the ids of about rows jobs (0: not known).
func newIDLines(rows int) *idLines {
	return &idLines{bound: max(2*rows, 1<<16), num: make([]int32, 0, rows)}
}

// add records id at line and reports the line it was read at before, if
// it was.
func (x *idLines) add(id string, line int) (prev int, dup bool) {
	if n, ok := decimal(id); ok && n < x.bound && line <= math.MaxInt32 {
		if n >= len(x.num) {
			x.num = append(x.num, make([]int32, n+1-len(x.num))...)
		}
		if p := x.num[n]; p > 0 {
			return int(p), true
		}
		x.num[n] = int32(line)
		return 0, false
	}
	if p, ok := x.other[id]; ok {
		return p, true
	}
	if x.other == nil {
		x.other = map[string]int{}
	}
	x.other[id] = line
	return 0, false
}

// decimal returns the number s writes in decimal without a sign or leading
// zeros (as strconv.Itoa writes it), and whether it is one, up to 9 digits.
func decimal(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + int(c-'0')
	}
	return n, true
}

// sortBySubmit orders the jobs (and their lines) by submit time, keeping
// file order among ties.
func (t *Trace) sortBySubmit() {
	if slices.IsSortedFunc(t.Jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }) {
		return // a trace in submission order (the usual one) stays as it is
	}
	if len(t.Lines) != len(t.Jobs) {
		sortStable(t.Jobs)
		return
	}
	idx := make([]int, len(t.Jobs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(t.Jobs[a].Submit, t.Jobs[b].Submit) })
	jobs, lines := make([]Job, len(idx)), make([]int, len(idx))
	for k, i := range idx {
		jobs[k], lines[k] = t.Jobs[i], t.Lines[i]
	}
	t.Jobs, t.Lines = jobs, lines
}

func sortStable(js []Job) {
	slices.SortStableFunc(js, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
}

// ReadCSVFile reads a trace file in our CSV format.
func ReadCSVFile(path string) (*Trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	return ReadCSV(bytes.NewReader(b), path)
}

// parseSoloS parses a per-job length: a positive, finite number of seconds
// up to maxSeconds.
func parseSoloS(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && validSoloS(v)
}

func validSoloS(v float64) bool { return v > 0 && v <= maxSeconds }

// HasSoloS reports whether any job of t has its own length.
func (t *Trace) HasSoloS() bool {
	for _, j := range t.Jobs {
		if j.SoloS > 0 {
			return true
		}
	}
	return false
}

// WriteCSV writes t in our CSV format; a solo_s column follows when any job
// has its own length (blank for the jobs that do not). The bytes are
// encoding/csv's (TestWriteCSVIsCSVWriter): a row whose workload or id
// could need quoting is written by it, the others directly.
func WriteCSV(w io.Writer, t *Trace) error {
	solo := t.HasSoloS()
	b := make([]byte, 0, 64<<10)
	b = append(b, "submit_offset_s,workload_id,num_gpus,job_id"...)
	if solo {
		b = append(b, ",solo_s"...)
	}
	b = append(b, '\n')
	var quoted bytes.Buffer
	for _, j := range t.Jobs {
		if !plainField(j.Workload) || !plainField(j.ID) {
			quoted.Reset()
			cw := csv.NewWriter(&quoted)
			rec := []string{strconv.FormatFloat(j.Submit.Seconds(), 'f', -1, 64), j.Workload, strconv.Itoa(j.GPUs), j.ID}
			if solo {
				rec = append(rec, soloField(j.SoloS))
			}
			cw.Write(rec)
			cw.Flush()
			b = append(b, quoted.Bytes()...)
		} else {
			b = strconv.AppendFloat(b, j.Submit.Seconds(), 'f', -1, 64)
			b = append(b, ',')
			b = append(b, j.Workload...)
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(j.GPUs), 10)
			b = append(b, ',')
			b = append(b, j.ID...)
			if solo {
				b = append(b, ',')
				if j.SoloS > 0 {
					b = strconv.AppendFloat(b, j.SoloS, 'f', -1, 64)
				}
			}
			b = append(b, '\n')
		}
		if len(b) >= 60<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}

// soloField is a job's solo_s field: blank for the workload's.
func soloField(s float64) string {
	if s > 0 {
		return strconv.FormatFloat(s, 'f', -1, 64)
	}
	return ""
}

// plainField reports whether encoding/csv writes s as it is, unquoted: no
// comma, quote or line break, not \., and not starting with a space (any
// first byte outside ASCII is taken as one).
func plainField(s string) bool {
	if s == "" {
		return true
	}
	if c := s[0]; c >= utf8.RuneSelf || c == ' ' || (c >= '\t' && c <= '\r') || s == `\.` {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n':
			return false
		}
	}
	return true
}
