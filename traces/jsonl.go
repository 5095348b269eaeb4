package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// jsonlJob is one line of our JSON Lines trace format.
type jsonlJob struct {
	JobID      json.RawMessage `json:"job_id"`
	Submit     *float64        `json:"submit_offset_s"`
	WorkloadID string          `json:"workload_id"`
	GPUs       *float64        `json:"num_gpus"`
	SoloS      *float64        `json:"solo_s"`
}

// jsonlKeys lists jsonlJob's keys for error messages.
const jsonlKeys = "job_id, submit_offset_s, workload_id, num_gpus, solo_s"

// ReadJSONL reads our trace format as JSON Lines: one object per line with
// submit_offset_s (seconds), workload_id and num_gpus, and optionally job_id
// (a string; else the job's line order) and solo_s (the job's length in solo
// seconds: positive, finite, at most 1e9; null or absent means the
// workload's profiled solo time); another key is an error (as in the
// YAML inputs), blank lines
// and lines starting with '#' are skipped. As with ReadCSV the result is
// sorted by submit time, ties keeping file order. Errors name the file, line
// and field.
func ReadJSONL(r io.Reader, name string) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine+1)
	t := &Trace{Name: name}
	seen := map[string]int{}
	line := 0
	for sc.Scan() {
		if sc.Err() != nil {
			break // a read error: the token is what was read before it
		}
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff")) // a UTF-8 byte order mark, as the CSV readers allow
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		var j jsonlJob
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			if k, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
				return nil, fmt.Errorf("%s:%d: unknown key %s; valid keys: %s", name, line, k, jsonlKeys)
			}
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field == "" {
				return nil, fmt.Errorf("%s:%d: want a JSON object, got a JSON %s", name, line, te.Value)
			}
			if errors.As(err, &te) {
				return nil, fmt.Errorf("%s:%d: field %s: want %s, got a JSON %s", name, line, te.Field, jsonKind(te.Type.Kind()), te.Value)
			}
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if k := repeatedKey(b); k != "" {
			return nil, fmt.Errorf("%s:%d: key %q given twice", name, line, k)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: more than one JSON value on the line", name, line)
		}
		ferr := func(field, format string, args ...any) error {
			return fmt.Errorf("%s:%d: field %s: %s", name, line, field, fmt.Sprintf(format, args...))
		}
		if j.Submit == nil {
			return nil, ferr("submit_offset_s", "missing")
		}
		if s := *j.Submit; s < 0 || s > maxSeconds {
			return nil, ferr("submit_offset_s", "%v is not a number of seconds in [0, 1e9]", s)
		}
		if strings.TrimSpace(j.WorkloadID) == "" {
			return nil, ferr("workload_id", "missing or empty")
		}
		if j.GPUs == nil {
			return nil, ferr("num_gpus", "missing")
		}
		if g := *j.GPUs; g != math.Trunc(g) || g < 1 || g > maxJobGPUs {
			return nil, ferr("num_gpus", "%v is not a whole number in 1..1024", g)
		}
		var solo float64
		if j.SoloS != nil {
			if !validSoloS(*j.SoloS) {
				return nil, ferr("solo_s", "%v is not a positive, finite number of seconds up to 1e9", *j.SoloS)
			}
			solo = *j.SoloS
		}
		id, err := jsonlID(j.JobID)
		if err != nil {
			return nil, ferr("job_id", "%v", err)
		}
		if id == "" {
			id = strconv.Itoa(len(t.Jobs))
		}
		if prev, dup := seen[id]; dup {
			return nil, ferr("job_id", "%q repeats line %d", id, prev)
		}
		seen[id] = line
		t.Jobs = append(t.Jobs, Job{ID: id, Submit: time.Duration(math.Round(*j.Submit * 1e9)),
			Workload: strings.TrimSpace(j.WorkloadID), GPUs: int(*j.GPUs), SoloS: solo})
		t.Lines = append(t.Lines, line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = LineTooLongError{line + 1}
		}
		if errors.As(err, new(LineTooLongError)) {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(t.Jobs) == 0 {
		return nil, fmt.Errorf("%s: no jobs", name)
	}
	t.sortBySubmit()
	return t, nil
}

// jsonKind names what a Go kind of jsonlJob's fields wants.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return "a string or a number" // job_id
}

// repeatedKey is a key that the JSON object b gives twice ("" when none,
// or when b is not an object: the decoder reports that): the decoder would
// keep the last value silently.
func repeatedKey(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := make(map[string]bool, 5)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := t.(string)
		if seen[k] {
			return k
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return ""
		}
	}
	return ""
}

// jsonlID reads a job_id given as a string or a number ("" when absent or
// null).
func jsonlID(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return strings.TrimSpace(s), nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("%s is neither a string nor a number", raw)
	}
	return n.String(), nil
}

// WriteJSONL writes t in our JSON Lines trace format, one object per job
// with job_id, submit_offset_s, workload_id and num_gpus, and solo_s for a
// job with its own length.
func WriteJSONL(w io.Writer, t *Trace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, j := range t.Jobs {
		s := j.Submit.Seconds()
		if err := enc.Encode(struct {
			JobID      string  `json:"job_id"`
			Submit     float64 `json:"submit_offset_s"`
			WorkloadID string  `json:"workload_id"`
			GPUs       int     `json:"num_gpus"`
			SoloS      float64 `json:"solo_s,omitempty"`
		}{j.ID, s, j.Workload, j.GPUs, j.SoloS}); err != nil {
			return fmt.Errorf("write jsonl: job %s: %w", j.ID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	return nil
}
