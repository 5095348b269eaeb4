package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
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
	// interrupted (the executor ended the attempt when it shut down).
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
}

// Journal appends records to a file, fsync'ing each.
type Journal struct {
	f   *os.File
	buf []byte
}

// CreateJournal creates path; it fails if path exists (a run directory is
// resumed, never overwritten).
func CreateJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return &Journal{f: f}, nil
}

// Append writes records and fsyncs the file once.
func (j *Journal) Append(rs ...Record) error {
	j.buf = j.buf[:0]
	for i := range rs {
		b, err := json.Marshal(&rs[i])
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		j.buf = append(append(j.buf, b...), '\n')
	}
	if _, err := j.f.Write(j.buf); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

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
			return nil, false, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		recs = append(recs, rec)
	}
	return recs, false, nil
}

// OpenJournal reads the journal at path for a resume and reopens it for
// appending, cutting off a torn last line first.
func OpenJournal(path string) (*Journal, []Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	recs, torn, err := ReadJournal(bytes.NewReader(b), path)
	if err != nil {
		return nil, nil, err
	}
	if len(recs) == 0 || recs[0].Type != "run" || recs[0].Run == nil {
		return nil, nil, fmt.Errorf("%s:1: not an executor journal (want a run record first)", path)
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
	return &Journal{f: f}, recs, nil
}
