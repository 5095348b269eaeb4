package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/aegis-sched/aegis/internal/atomicfile"
)

// Record is one line of a run's journal (DIR/journal.jsonl). Every event
// and every action that changes the world is appended and fsync'd before
// it takes effect, so that a restarted executor rebuilds the run's state
// from it.
type Record struct {
	// Type is one of: run (the run's settings, first line), job (a job
	// became known), arrived, launch (a placement is about to start a
	// process), started (the process runs), active, finished, failed,
	// stopped, place-failed (a launch that did not take effect),
	// terminate (the executor is about to signal the attempt to end it:
	// written before the signal), interrupted (an attempt it terminated
	// ended without finishing or running out of memory: its job is placed
	// again).
	Type string `json:"type"`
	// T is the run time in nanoseconds.
	T       int64 `json:"t"`
	Job     int   `json:"job"`
	Attempt int   `json:"attempt,omitempty"`
	GPUs    []int `json:"gpus,omitempty"`
	// PID and Start identify a started attempt's shim process (Start is the
	// process start time in clock ticks since boot).
	PID   int    `json:"pid,omitempty"`
	Start uint64 `json:"start,omitempty"`
	// Shared: another job ran on one of the attempt's GPUs when it started
	// (started) or failed (failed).
	Shared  bool   `json:"shared,omitempty"`
	Failure string `json:"failure,omitempty"` // failed: oom or other
	GPU     int    `json:"gpu,omitempty"`     // failed: the GPU it failed on
	Reason  string `json:"reason,omitempty"`
	Spec    *Spec  `json:"spec,omitempty"` // job
	Run     *Run   `json:"run,omitempty"`  // run
}

// Spec is a job as the journal keeps it.
type Spec struct {
	Name     string  `json:"name"`
	Workload string  `json:"workload"`
	GPUs     int     `json:"gpus"`
	SubmitNs int64   `json:"submit_ns"`
	SoloS    float64 `json:"solo_s,omitempty"`
}

// Run holds what a resumed executor needs to continue a run: when it
// started and the settings it was started with (the command line's, as
// key/value strings, so the journal format does not follow every flag).
type Run struct {
	Start    time.Time         `json:"start"`
	Settings map[string]string `json:"settings"`
	// Jobs is how many job records follow this one, written with it in
	// one append (the jobs known at the start); fewer means the journal
	// was cut short. Journals written before it was recorded have none.
	Jobs *int `json:"jobs,omitempty"`
}

// Journal appends records to a file, fsync'ing each append, and holds the
// run directory's lock (see LockName) until it is closed: one executor per
// run directory. After a failed append it appends nothing more (a torn
// line can only be the last one) and every later Append returns the first
// error.
type Journal struct {
	w    syncWriter
	lock *os.File
	err  error
	buf  []byte
}

// syncWriter is what a journal writes to: its file (a fault-injecting
// writer in tests).
type syncWriter interface {
	io.WriteCloser
	Sync() error
}

// CreateJournal takes the lock of path's directory and creates path
// holding head, the records a run starts with (its run record first); it
// fails if path exists (a run directory is resumed, never overwritten) or
// another executor holds the directory. The journal appears whole: head is
// written to a temporary file that is renamed to path once it is synced,
// so an executor killed while creating it leaves no journal (the run is
// started again, not resumed) rather than an empty one no resume can read.
func CreateJournal(path string, head ...Record) (*Journal, error) {
	if len(head) == 0 || head[0].Type != "run" {
		return nil, errors.New("journal: a journal starts with its run record")
	}
	lock, err := lockDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	j, err := createJournal(path, head)
	if err != nil {
		lock.Close()
		return nil, err
	}
	j.lock = lock
	return j, nil
}

// createJournal writes head to path's temporary file and renames it to
// path, under the directory's lock: nobody else creates path meanwhile.
func createJournal(path string, head []Record) (*Journal, error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			err = fs.ErrExist
		}
		return nil, fmt.Errorf("journal: %s: %w", path, err)
	}
	// Written whole to path.new, synced, renamed, the directory synced:
	// the journal appears with its head or not at all.
	f, err := atomicfile.Create(path, atomicfile.Options{SyncFile: true, SyncDir: true, Temp: path + ".new"})
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer f.Abort()
	b, err := encode(nil, head)
	if err == nil {
		_, err = f.Write(b)
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	w, err := f.Publish()
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Journal{w: w, buf: b}, nil
}

// encode appends records to buf as JSON lines.
func encode(buf []byte, rs []Record) ([]byte, error) {
	for i := range rs {
		b, err := json.Marshal(&rs[i])
		if err != nil {
			return nil, err
		}
		buf = append(append(buf, b...), '\n')
	}
	return buf, nil
}

// Append writes records and fsyncs the file once.
func (j *Journal) Append(rs ...Record) error {
	if j.err != nil {
		return j.err
	}
	b, err := encode(j.buf[:0], rs)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.buf = b
	_, err = j.w.Write(j.buf)
	if err == nil {
		err = j.w.Sync()
	}
	if err != nil {
		j.err = fmt.Errorf("journal: %w", err)
	}
	return j.err
}

// Close closes the file and releases the run directory's lock.
func (j *Journal) Close() error {
	err := j.w.Close()
	if j.lock != nil {
		err = errors.Join(err, j.lock.Close())
		j.lock = nil
	}
	return err
}

// ReadJournal reads a journal's records. A torn last line (the executor was
// killed while writing it) is dropped and reported by torn; a bad line
// elsewhere is an error naming it.
func ReadJournal(r io.Reader, name string) (recs []Record, torn bool, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	for i, line := range lines {
		if len(line) == 0 {
			continue
		}
		last := i == len(lines)-1
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil || !bytes.HasSuffix(line, []byte{'\n'}) || rec.Type == "" {
			if last {
				return recs, true, nil
			}
			if err == nil {
				err = errors.New("no type")
			}
			if what := notJournal(line); what != "" && i == 0 {
				return nil, false, fmt.Errorf("%s:1: %s, not an executor journal (aegis exec's journal.jsonl, whose first line is the run record)", name, what)
			}
			return nil, false, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		recs = append(recs, rec)
	}
	return recs, false, nil
}

// notJournal says what a file whose first line is line is when it is a
// run's other JSON Lines file (events.jsonl), or "".
func notJournal(line []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return ""
	}
	if _, ok := m["event"]; ok {
		return "this is a run's event log (events.jsonl: aegis simulate and aegis exec write it)"
	}
	return ""
}

// OpenJournal takes the lock of path's directory, reads the journal at path
// for a resume and reopens it for appending, cutting off a torn last line
// first. It fails if another executor holds the directory, and names the
// line of a journal that was cut short or is damaged (see CheckJournal).
func OpenJournal(path string) (*Journal, []Record, error) {
	// A directory an executor holds is in use, whether or not its journal
	// is written yet (an executor takes the lock, then writes it).
	if err := inUse(filepath.Dir(path)); err != nil {
		return nil, nil, err
	}
	// No journal, no run: refused before the lock file is made, so that
	// a mistyped directory is left as it was.
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no run to resume (no %s there; start one with aegis exec --out %s)", filepath.Dir(path), filepath.Base(path), filepath.Dir(path))
		}
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	// A file that is no journal (or a damaged one) is refused before the
	// lock is taken too: a refused resume leaves no lock file behind. It
	// is read again under the lock.
	if b, err := os.ReadFile(path); err == nil {
		recs, _, err := ReadJournal(bytes.NewReader(b), path)
		if err == nil {
			err = CheckJournal(recs, path)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	lock, err := lockDir(filepath.Dir(path))
	if err != nil {
		return nil, nil, err
	}
	j, recs, err := openJournal(path)
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	j.lock = lock
	return j, recs, nil
}

func openJournal(path string) (*Journal, []Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	recs, torn, err := ReadJournal(bytes.NewReader(b), path)
	if err != nil {
		return nil, nil, err
	}
	if err := CheckJournal(recs, path); err != nil {
		return nil, nil, err
	}
	if torn {
		if err := os.Truncate(path, int64(bytes.LastIndexByte(b, '\n')+1)); err != nil {
			return nil, nil, fmt.Errorf("journal: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	return &Journal{w: f}, recs, nil
}

// maxRecordT bounds a record's run time: 100 years, far beyond any run,
// and far enough from the int64 limit that no run-time arithmetic
// overflows.
const maxRecordT = 100 * 365 * 24 * time.Hour

// CheckJournal checks what a resume needs of a journal's records before
// replaying them: a run record first, followed by as many job records as
// it says the run started with (fewer: the journal was cut short), and run
// times between 0 and maxRecordT. Errors name the file and line.
func CheckJournal(recs []Record, name string) error {
	if len(recs) == 0 || recs[0].Type != "run" || recs[0].Run == nil {
		return fmt.Errorf("%s:1: not an executor journal (want a run record first)", name)
	}
	if n := recs[0].Run.Jobs; n != nil {
		k := 1
		for k < len(recs) && k <= *n && recs[k].Type == "job" {
			k++
		}
		if k-1 < *n {
			return fmt.Errorf("%s:%d: the run started with %d jobs but the journal lists %d before line %d: it was cut short (start the run again in a new directory)",
				name, k, *n, k-1, k+1)
		}
	}
	for i, r := range recs {
		if r.T < 0 || time.Duration(r.T) > maxRecordT {
			return fmt.Errorf("%s:%d: run time t=%d ns: want 0 to %d (%v): the journal is damaged", name, i+1, r.T, int64(maxRecordT), maxRecordT)
		}
		if r.Spec != nil && (r.Spec.SubmitNs < 0 || time.Duration(r.Spec.SubmitNs) > maxRecordT) {
			return fmt.Errorf("%s:%d: submit_ns %d: want 0 to %d (%v): the journal is damaged", name, i+1, r.Spec.SubmitNs, int64(maxRecordT), maxRecordT)
		}
	}
	return nil
}
