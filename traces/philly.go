package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// phillyTimeLayout is how cluster_job_log writes times (no zone; read as UTC:
// only differences matter).
const phillyTimeLayout = "2006-01-02 15:04:05"

// phillyJob is one element of Philly's cluster_job_log. Times are pointers:
// the log writes null (or the string "None") for times that never happened.
type phillyJob struct {
	Status    string          `json:"status"`
	VC        string          `json:"vc"`
	JobID     string          `json:"jobid"`
	User      string          `json:"user"`
	Submitted *string         `json:"submitted_time"`
	Attempts  []phillyAttempt `json:"attempts"`
}

type phillyAttempt struct {
	Start  *string        `json:"start_time"`
	End    *string        `json:"end_time"`
	Detail []phillyDetail `json:"detail"`
}

type phillyDetail struct {
	IP   string            `json:"ip"`
	GPUs []json.RawMessage `json:"gpus"`
}

// ReadPhilly reads Microsoft Philly's cluster_job_log: a JSON array of jobs
// {jobid, user, vc, status, submitted_time, attempts: [{start_time, end_time,
// detail: [{ip, gpus: [...]}]}]}. It streams the array one job at a time, so
// the 117,325-job file is never decoded at once.
//
// A job's GPU count is the number of GPUs over its first attempt's detail
// entries; its run time is from the first attempt's start to the last
// attempt's end (as the trace's official analysis does). Jobs that never
// started (no attempt, or a null/"None" first start), that have no end time
// or no submit time, or that end before they start are skipped and counted
// in Log.Skipped. Malformed input (bad JSON, a field of the wrong type, an
// unparsable time) is an error naming the file, the job's byte offset and
// index, its jobid and the field; for bad JSON, the byte offset is where the
// error is (and the job's own offset follows). Byte offsets count from the
// start of the file, 0 first. A leading UTF-8 byte-order mark is skipped.
func ReadPhilly(r io.Reader, name string) (*Log, error) {
	br := bufio.NewReader(r)
	var bom int64 // offsets in the file = the decoder's + bom
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
		bom = int64(len(utf8BOM))
	}
	dec := json.NewDecoder(br)
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file: want a JSON array of jobs", name)
		}
		return nil, fmt.Errorf("%s: byte %d: %w", name, bom+dec.InputOffset(), err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("%s: byte %d: want a JSON array of jobs, got %v", name, bom+dec.InputOffset(), tok)
	}
	l := &Log{Name: name}
	var jobs []timedJob
	for dec.More() {
		off := bom + valueStart(dec)
		idx := l.Records
		var pj phillyJob
		if err := dec.Decode(&pj); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, fmt.Errorf("%s: byte %d: job %d: field %s: JSON %s where %s expected",
					name, off, idx, te.Field, te.Value, te.Type)
			}
			return nil, fmt.Errorf("%s: byte %d: job %d (from byte %d): %w", name, bom+decodeErrorOffset(dec, err), idx, off, err)
		}
		l.Records++
		ferr := func(field, format string, args ...any) error {
			return fmt.Errorf("%s: byte %d: job %d (jobid %q): field %s: %s", name, off, idx, pj.JobID, field, fmt.Sprintf(format, args...))
		}
		tj, skip, err := pj.job(idx, ferr)
		if err != nil {
			return nil, err
		}
		if skip != "" {
			l.skip(skip)
			continue
		}
		jobs = append(jobs, tj)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: byte %d: after job %d: %w", name, bom+dec.InputOffset(), l.Records, err)
	}
	if tok, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, fmt.Errorf("%s: byte %d: after the job array: %w", name, bom+dec.InputOffset(), err)
		}
		return nil, fmt.Errorf("%s: byte %d: data after the job array: %v", name, bom+dec.InputOffset(), tok)
	}
	return l.finish(jobs)
}

// job converts pj, the idx-th job of the log, into a job of the log, or
// names in skip the Skip reason it is left out for; ferr makes the error
// for a malformed field.
func (pj *phillyJob) job(idx int, ferr func(field, format string, args ...any) error) (tj timedJob, skip string, err error) {
	submit, ok, err := phillyTime(pj.Submitted)
	if err != nil {
		return timedJob{}, "", ferr("submitted_time", "%v", err)
	}
	if !ok {
		return timedJob{}, SkipNoSubmitTime, nil
	}
	if len(pj.Attempts) == 0 {
		return timedJob{}, SkipNeverStarted, nil
	}
	start, ok, err := phillyTime(pj.Attempts[0].Start)
	if err != nil {
		return timedJob{}, "", ferr("attempts[0].start_time", "%v", err)
	}
	if !ok {
		return timedJob{}, SkipNeverStarted, nil
	}
	last := len(pj.Attempts) - 1
	end, ok, err := phillyTime(pj.Attempts[last].End)
	if err != nil {
		return timedJob{}, "", ferr(fmt.Sprintf("attempts[%d].end_time", last), "%v", err)
	}
	if !ok {
		return timedJob{}, SkipNoEndTime, nil
	}
	// Check the other attempts' times too: malformed input anywhere is an
	// error, not something to skip over.
	for i, a := range pj.Attempts {
		if _, _, err := phillyTime(a.Start); err != nil {
			return timedJob{}, "", ferr(fmt.Sprintf("attempts[%d].start_time", i), "%v", err)
		}
		if _, _, err := phillyTime(a.End); err != nil {
			return timedJob{}, "", ferr(fmt.Sprintf("attempts[%d].end_time", i), "%v", err)
		}
	}
	if end.Before(start) {
		return timedJob{}, SkipEndBeforeStart, nil
	}
	gpus := 0
	for _, d := range pj.Attempts[0].Detail {
		gpus += len(d.GPUs)
	}
	if gpus > maxJobGPUs {
		return timedJob{}, "", ferr("attempts[0].detail", "%d GPUs: more than %d (the limit of every job format)", gpus, maxJobGPUs)
	}
	id := pj.JobID
	if id == "" {
		id = "#" + strconv.Itoa(idx)
	}
	return timedJob{submit: submit, job: LogJob{ID: id, Duration: end.Sub(start), GPUs: gpus, Status: pj.Status}}, "", nil
}

// utf8BOM is the UTF-8 byte-order mark some tools write first.
var utf8BOM = []byte("\ufeff")

// decodeErrorOffset returns the decoder's offset of the error err that
// Decode returned: the offending byte of a syntax error, the end of the input
// for a truncated value. (A syntax error's own Offset counts only the bytes
// Decode scanned, not the whole stream, so the value is scanned again from
// its start, which the decoder still buffers.)
func decodeErrorOffset(dec *json.Decoder, err error) int64 {
	start := dec.InputOffset()
	rest, _ := io.ReadAll(dec.Buffered())
	var se *json.SyntaxError
	switch again := json.NewDecoder(bytes.NewReader(rest)).Decode(new(json.RawMessage)); {
	case errors.As(again, &se):
		return start + se.Offset - 1
	case again == nil && errors.As(err, &se):
		// Not the value's fault (a missing comma before it): the decoder
		// reported the stream offset itself.
		return se.Offset
	}
	return start + int64(len(rest))
}

// valueStart returns the byte offset of the next array element: the
// decoder's offset past the separating comma and white space it has
// buffered.
func valueStart(dec *json.Decoder) int64 {
	off := dec.InputOffset()
	br, ok := dec.Buffered().(io.ByteReader)
	if !ok {
		return off
	}
	comma := false
	for {
		c, err := br.ReadByte()
		if err != nil {
			return off
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case c == ',' && !comma:
			comma = true
		default:
			return off
		}
		off++
	}
}

// phillyTime parses a cluster_job_log time. It reports ok=false for a time
// that is absent (null, "None", "" or "NaN") and an error for one that does
// not parse.
func phillyTime(s *string) (t time.Time, ok bool, err error) {
	if s == nil {
		return time.Time{}, false, nil
	}
	v := strings.TrimSpace(*s)
	if absent(v) {
		return time.Time{}, false, nil
	}
	t, err = time.Parse(phillyTimeLayout, v)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("%q is not a time like 2017-10-03 02:56:12", v)
	}
	return t, true, nil
}

// ReadPhillyFile reads a Philly cluster_job_log file.
func ReadPhillyFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("philly log: %w", err)
	}
	defer f.Close()
	return ReadPhilly(f, path)
}
