package runfiles

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
)

// Telemetry is a run's 1 Hz telemetry: S[g][k] is GPU g's sample at whole
// second k (At = k s; a zero sample where the file has no row).
type Telemetry struct {
	S [][]policies.Sample
}

// GPUs is the number of GPUs the telemetry covers.
func (t *Telemetry) GPUs() int { return len(t.S) }

// ReadTelemetry reads a telemetry.csv file (results.TelemetryColumns) by
// column name.
func ReadTelemetry(path string) (*Telemetry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTelemetry(path, f)
}

// maxTelemetrySeconds bounds a telemetry file's time axis (a year), so a
// bad t_s cannot make the reader allocate without bound.
const maxTelemetrySeconds = 366 * 24 * 3600

// maxTelemetryGPUs bounds a telemetry file's GPU indexes.
const maxTelemetryGPUs = 4096

// ParseTelemetry reads telemetry.csv content from r; name is used in errors.
func ParseTelemetry(name string, r io.Reader) (*Telemetry, error) {
	t, err := ParseTable(name, r, results.TelemetryColumns...)
	if err != nil {
		return nil, err
	}
	tel := &Telemetry{}
	seen := map[[2]int]bool{}
	for i := 0; i < t.Len(); i++ {
		g, err := t.Int(i, "gpu")
		if err != nil {
			return nil, err
		}
		k, err := t.Int(i, "t_s")
		if err != nil {
			return nil, err
		}
		switch {
		case g < 0 || g >= maxTelemetryGPUs:
			return nil, fmt.Errorf("%s: column gpu: %d is out of range [0, %d)", t.Where(i), g, maxTelemetryGPUs)
		case k < 0 || k > maxTelemetrySeconds:
			return nil, fmt.Errorf("%s: column t_s: %d is out of range [0, %d]", t.Where(i), k, maxTelemetrySeconds)
		case seen[[2]int{g, k}]:
			return nil, fmt.Errorf("%s: GPU %d, second %d appears twice", t.Where(i), g, k)
		}
		seen[[2]int{g, k}] = true
		var x policies.Sample
		for _, f := range []struct {
			col string
			dst *float64
			max float64
		}{{"smact", &x.SMACT, 1}, {"smocc", &x.SMOCC, 1}, {"drama", &x.DRAMA, 1}, {"util", &x.UtilPct, 100}, {"used_mib", &x.UsedMiB, 1e9}} {
			v, err := t.Float(i, f.col)
			if err != nil {
				return nil, err
			}
			if v < 0 || v > f.max {
				return nil, fmt.Errorf("%s: column %s: %g is out of range [0, %g]", t.Where(i), f.col, v, f.max)
			}
			*f.dst = v
		}
		for len(tel.S) <= g {
			tel.S = append(tel.S, nil)
		}
		for len(tel.S[g]) <= k {
			tel.S[g] = append(tel.S[g], policies.Sample{At: time.Duration(len(tel.S[g])) * time.Second})
		}
		x.At = time.Duration(k) * time.Second
		tel.S[g][k] = x
	}
	return tel, nil
}

// Event is one line of events.jsonl.
type Event struct {
	Line    int     // line in the file
	T       float64 // seconds
	Kind    string  // arrived, started, active, finished, failed, stopped, defer
	Job     int
	Attempt int
	GPUs    []int  // started: the attempt's GPUs
	Shared  bool   // started: next to other jobs
	GPU     int    // failed, defer: the GPU concerned
	Reason  string // failed, stopped, defer
}

// ReadEvents reads an events.jsonl file.
func ReadEvents(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseEvents(path, f)
}

// ParseEvents reads events.jsonl content from r; name is used in errors.
// Unknown keys are ignored (the log may grow); a line that is not a JSON
// object, or lacks t, event or job, is an error naming the line.
func ParseEvents(name string, r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	var evs []Event
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var raw struct {
			T       *float64 `json:"t"`
			Event   *string  `json:"event"`
			Job     *int     `json:"job"`
			Attempt int      `json:"attempt"`
			GPUs    []int    `json:"gpus"`
			Shared  bool     `json:"shared"`
			GPU     int      `json:"gpu"`
			Reason  string   `json:"reason"`
		}
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		switch {
		case raw.T == nil:
			return nil, fmt.Errorf("%s:%d: missing key \"t\"", name, n)
		case raw.Event == nil:
			return nil, fmt.Errorf("%s:%d: missing key \"event\"", name, n)
		case raw.Job == nil:
			return nil, fmt.Errorf("%s:%d: missing key \"job\"", name, n)
		case *raw.T < 0:
			return nil, fmt.Errorf("%s:%d: key \"t\": negative time %g", name, n, *raw.T)
		}
		if *raw.Event == "started" && len(raw.GPUs) == 0 {
			return nil, fmt.Errorf("%s:%d: started event without \"gpus\"", name, n)
		}
		for _, g := range raw.GPUs {
			if g < 0 || g >= maxTelemetryGPUs {
				return nil, fmt.Errorf("%s:%d: key \"gpus\": GPU %d is out of range [0, %d)", name, n, g, maxTelemetryGPUs)
			}
		}
		evs = append(evs, Event{Line: n, T: *raw.T, Kind: *raw.Event, Job: *raw.Job, Attempt: raw.Attempt,
			GPUs: raw.GPUs, Shared: raw.Shared, GPU: raw.GPU, Reason: raw.Reason})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return evs, nil
}

// Attempt is one attempt of a job as events.jsonl tells it.
type Attempt struct {
	Job, Attempt int
	GPUs         []int
	Start        float64 // launch, seconds
	Active       float64 // first GPU activity; -1 if it never became active
	End          float64 // finish or failure; -1 if the log ends first
	Outcome      string  // "finished", "failed", "interrupted" (aegis exec) or "" (still running at the end)
}

// Attempts pairs the started, active, finished and failed events of a log
// into attempts, in order of launch; a place-failed event ends the running
// attempt of its job as interrupted (an executor's shutdown or resume). An activity, finish or failure without
// a running attempt of that job is an error naming the line.
func Attempts(name string, evs []Event) ([]Attempt, error) {
	var out []Attempt
	open := map[int]int{} // job -> index in out of its running attempt
	for _, e := range evs {
		switch e.Kind {
		case "started":
			if _, ok := open[e.Job]; ok {
				return nil, fmt.Errorf("%s:%d: job %d started while an attempt is running", name, e.Line, e.Job)
			}
			open[e.Job] = len(out)
			out = append(out, Attempt{Job: e.Job, Attempt: e.Attempt, GPUs: e.GPUs, Start: e.T, Active: -1, End: -1})
		case "active", "finished", "failed":
			i, ok := open[e.Job]
			if !ok {
				return nil, fmt.Errorf("%s:%d: %s event for job %d, which has no running attempt", name, e.Line, e.Kind, e.Job)
			}
			a := &out[i]
			if e.Kind == "active" {
				a.Active = e.T
				continue
			}
			a.End, a.Outcome = e.T, e.Kind
			delete(open, e.Job)
		case "place-failed":
			// An executor's attempt it interrupted (a shutdown, a resume)
			// ends so; a launch that never ran has no attempt open.
			if i, ok := open[e.Job]; ok {
				out[i].End, out[i].Outcome = e.T, "interrupted"
				delete(open, e.Job)
			}
		}
	}
	return out, nil
}
