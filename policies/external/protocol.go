package external

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Version is the newest protocol version this package speaks; aegis's
// hello carries it. A process answers with the version it speaks, from
// MinVersion to Version, and is spoken to in it; another is refused.
//
// Version 2 adds two declarations to the process's hello, each a way to
// ask less of the round trip: skip_empty (aegis answers a decision with no
// job pending itself: no actions) and events false (decisions carry no
// events). Without them a version 2 conversation is version 1's.
const Version = 2

// MinVersion is the oldest protocol version this package speaks.
const MinVersion = 1

// Kinds of events and actions, as they are spelt on the wire.
var (
	eventNames = map[policies.EventKind]string{
		policies.JobArrived: "arrived", policies.JobStarted: "started", policies.JobActive: "active",
		policies.JobFinished: "finished", policies.JobFailed: "failed", policies.JobStopped: "stopped",
		policies.Wakeup: "wakeup", policies.PlaceFailed: "place_failed",
	}
	stateNames   = []string{"waiting", "pending", "running", "done", "stopped"}
	failureNames = []string{"none", "oom", "other"}
)

// EventName is how kind is spelt on the wire ("" for an unknown kind).
func EventName(k policies.EventKind) string { return eventNames[k] }

// eventKind is the kind spelt s.
func eventKind(s string) (policies.EventKind, bool) {
	for k, n := range eventNames {
		if n == s {
			return k, true
		}
	}
	return 0, false
}

// seconds converts a run time to seconds on the wire: a float64 holds every
// nanosecond exactly up to 2^53 ns (104 days), and durationOf reads it back.
func seconds(d time.Duration) float64 { return d.Seconds() }

// durationOf converts seconds from the wire to a run time, rounded to the
// nanosecond, or reports that it is not a finite time a run can have.
func durationOf(s float64) (time.Duration, bool) {
	if math.IsNaN(s) || math.IsInf(s, 0) || math.Abs(s) > float64(math.MaxInt64)/1e9 {
		return 0, false
	}
	return time.Duration(math.Round(s * 1e9)), true
}

// appendFloat appends f as JSON writes it: the shortest text that reads
// back as the same float64 (so both sides compute with the same numbers).
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

func appendInts(b []byte, xs []int) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

func appendIDs(b []byte, xs []policies.JobID) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// appendKey appends ,"key": (or "key": first in an object).
func appendKey(b []byte, key string) []byte {
	if b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendString(b []byte, s string) []byte { return strconv.AppendQuote(b, s) }

// appendEvent appends event e as a JSON object.
func appendEvent(b []byte, e *policies.Event) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, eventNames[e.Kind])
	b = appendFloat(appendKey(b, "t"), seconds(e.T))
	if e.Kind != policies.Wakeup {
		b = strconv.AppendInt(appendKey(b, "job"), int64(e.Job), 10)
	}
	switch e.Kind {
	case policies.JobStarted:
		b = strconv.AppendInt(appendKey(b, "attempt"), int64(e.Attempt), 10)
		b = appendInts(appendKey(b, "gpus"), e.GPUs)
		b = strconv.AppendBool(appendKey(b, "shared"), e.Shared)
	case policies.JobActive, policies.JobFinished:
		b = strconv.AppendInt(appendKey(b, "attempt"), int64(e.Attempt), 10)
	case policies.JobFailed:
		b = strconv.AppendInt(appendKey(b, "attempt"), int64(e.Attempt), 10)
		b = appendString(appendKey(b, "failure"), failureName(e.Failure))
		b = strconv.AppendInt(appendKey(b, "gpu"), int64(e.GPU), 10)
	case policies.JobStopped:
		b = appendString(appendKey(b, "reason"), e.Reason)
	case policies.PlaceFailed:
		b = appendInts(appendKey(b, "gpus"), e.GPUs)
		b = appendString(appendKey(b, "reason"), e.Reason)
	}
	return append(b, '}')
}

func failureName(f policies.Failure) string {
	if int(f) >= 0 && int(f) < len(failureNames) {
		return failureNames[f]
	}
	return "other"
}

func stateName(s policies.State) string {
	if int(s) >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "waiting"
}

// appendJob appends job j as a JSON object: its changing fields (those
// that are zero left out), and with static its fields that never change
// (name, GPUs, submission, profile), sent once when the job is first seen.
func appendJob(b []byte, j *policies.Job, static bool) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(j.ID), 10)
	if static {
		b = appendString(appendKey(b, "name"), j.Name)
		b = strconv.AppendInt(appendKey(b, "gpus"), int64(j.GPUs), 10)
		b = appendFloat(appendKey(b, "submit"), seconds(j.Submit))
		b = appendString(appendKey(b, "workload"), j.Workload)
		for _, f := range []struct {
			k string
			v float64
		}{{"solo_s", j.SoloS}, {"peak_mib", j.PeakMiB}, {"util_pct", j.UtilPct}, {"smact", j.SMACT},
			{"smocc", j.SMOCC}, {"drama", j.DRAMA}, {"analytical_mib", j.Analytical},
			{"faketensor_mib", j.FakeTensor}, {"gpumemnet_mib", j.GPUMemNet}} {
			b = appendFloat(appendKey(b, f.k), f.v)
		}
		b = strconv.AppendInt(appendKey(b, "lucid"), int64(j.Lucid), 10)
	}
	b = appendString(appendKey(b, "state"), stateName(j.State))
	// The changing fields are left out when zero (false, none, empty):
	// most jobs have never failed and are not running.
	if j.Attempts != 0 {
		b = strconv.AppendInt(appendKey(b, "attempts"), int64(j.Attempts), 10)
	}
	if j.OOMs != 0 {
		b = strconv.AppendInt(appendKey(b, "ooms"), int64(j.OOMs), 10)
	}
	if j.LastFailure != policies.NoFailure {
		b = appendString(appendKey(b, "last_failure"), failureName(j.LastFailure))
		b = appendFloat(appendKey(b, "failed_at"), seconds(j.FailedAt))
		b = strconv.AppendBool(appendKey(b, "failed_shared"), j.FailedShared)
	}
	if len(j.On) > 0 {
		b = appendInts(appendKey(b, "on"), j.On)
	}
	if j.Started != 0 {
		b = appendFloat(appendKey(b, "started"), seconds(j.Started))
	}
	if j.Active {
		b = appendBool(appendKey(b, "active"), true)
		b = appendFloat(appendKey(b, "active_at"), seconds(j.ActiveAt))
	}
	return append(b, '}')
}

// appendGPU appends GPU g as a JSON object.
func appendGPU(b []byte, g *policies.GPU) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(g.Index), 10)
	b = appendFloat(appendKey(b, "capacity_mib"), g.CapacityMiB)
	b = appendFloat(appendKey(b, "used_mib"), g.UsedMiB)
	return append(appendIDs(appendKey(b, "jobs"), g.Jobs), '}')
}

// appendSample appends a telemetry sample as a JSON object.
func appendSample(b []byte, s *policies.Sample) []byte {
	b = append(b, `{"at":`...)
	b = appendFloat(b, seconds(s.At))
	b = appendFloat(appendKey(b, "smact"), s.SMACT)
	b = appendFloat(appendKey(b, "smocc"), s.SMOCC)
	b = appendFloat(appendKey(b, "drama"), s.DRAMA)
	b = appendFloat(appendKey(b, "util_pct"), s.UtilPct)
	b = appendFloat(appendKey(b, "used_mib"), s.UsedMiB)
	return append(b, '}')
}

// ParamDef is a parameter an external policy declares in its hello: what
// aegis policies lists, and the keys a run may set.
type ParamDef struct {
	Key     string   `json:"key"`
	Default string   `json:"default"`
	Valid   string   `json:"valid,omitempty"`
	Help    string   `json:"help,omitempty"`
	Choices []string `json:"choices,omitempty"`
}

// wireAction is an action as a process writes it.
type wireAction struct {
	Kind   string   `json:"kind"`
	Job    *int     `json:"job"`
	GPUs   []int    `json:"gpus"`
	GPU    *int     `json:"gpu"`
	Reason string   `json:"reason"`
	At     *float64 `json:"at"`
}

// Reply is one line a process writes: its hello, a telemetry query, its
// actions for the decision asked, or an error it reports.
type Reply struct {
	V   int    `json:"v"`
	Msg string `json:"msg"`
	// hello
	Name   string     `json:"name"`
	Params []ParamDef `json:"params"`
	Skip   []string   `json:"skip"`
	Tick   float64    `json:"tick"`
	// SkipEmpty (version 2) declares that the process never acts while
	// no job is pending: aegis answers those decisions itself.
	SkipEmpty bool `json:"skip_empty"`
	// Events (version 2), when false, declares that the process reads no
	// events: decisions carry none.
	Events *bool `json:"events"`
	// samples (a query)
	GPU *int `json:"gpu"`
	N   int  `json:"n"`
	// actions
	Actions []wireAction `json:"actions"`
	// error
	Error string `json:"error"`
}

// Typed causes of a failed external policy, for errors.Is.
var (
	// ErrGarbage: a line that is not a protocol message.
	ErrGarbage = errors.New("not a protocol message")
	// ErrImpossible: an action the backend cannot carry out.
	ErrImpossible = errors.New("impossible action")
	// ErrTimeout: no answer within the per-decision timeout.
	ErrTimeout = errors.New("no answer in time")
	// ErrExited: the process ended (or closed its output) while it was asked.
	ErrExited = errors.New("the process ended")
	// ErrFlood: a line longer than the limit, or more queries than a
	// decision may ask.
	ErrFlood = errors.New("too much output")
	// ErrReported: the process reported an error ({"msg":"error"}).
	ErrReported = errors.New("the policy reported an error")
	// ErrVersion: the process speaks another protocol version.
	ErrVersion = errors.New("protocol version")
)

// ParseReply reads one line a process wrote. It never panics: anything
// that is not one JSON object of a known message, with the fields that
// message needs, is an error wrapping ErrGarbage.
func ParseReply(line []byte) (Reply, error) {
	var r Reply
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return Reply{}, fmt.Errorf("%w: %v", ErrGarbage, err)
	}
	if d.More() {
		return Reply{}, fmt.Errorf("%w: more than one JSON value on the line", ErrGarbage)
	}
	switch r.Msg {
	case "hello":
		if r.V < MinVersion || r.V > Version {
			return Reply{}, fmt.Errorf("%w %d: this aegis speaks versions %d to %d", ErrVersion, r.V, MinVersion, Version)
		}
		if r.V < 2 && (r.SkipEmpty || r.Events != nil) {
			return Reply{}, fmt.Errorf("%w: hello: skip_empty and events need version 2, not %d", ErrGarbage, r.V)
		}
		if _, ok := durationOf(r.Tick); !ok || r.Tick < 0 {
			return Reply{}, fmt.Errorf("%w: hello: tick %v is not a duration in seconds", ErrGarbage, r.Tick)
		}
		for _, s := range r.Skip {
			if _, ok := eventKind(s); !ok {
				return Reply{}, fmt.Errorf("%w: hello: skip %q is not an event kind", ErrGarbage, s)
			}
		}
		for _, p := range r.Params {
			if p.Key == "" {
				return Reply{}, fmt.Errorf("%w: hello: a parameter without a key", ErrGarbage)
			}
		}
	case "samples":
		if r.GPU == nil {
			return Reply{}, fmt.Errorf("%w: samples: no gpu", ErrGarbage)
		}
		if r.N < 0 {
			return Reply{}, fmt.Errorf("%w: samples: n %d < 0", ErrGarbage, r.N)
		}
	case "actions":
		for i, a := range r.Actions {
			if err := a.check(); err != nil {
				return Reply{}, fmt.Errorf("%w: action %d: %v", ErrGarbage, i, err)
			}
		}
	case "error":
	case "":
		return Reply{}, fmt.Errorf("%w: no msg", ErrGarbage)
	default:
		return Reply{}, fmt.Errorf("%w: unknown msg %q", ErrGarbage, r.Msg)
	}
	return r, nil
}

// check verifies that a has the fields its kind needs.
func (a *wireAction) check() error {
	switch a.Kind {
	case "place":
		if a.Job == nil || a.GPUs == nil {
			return errors.New("place needs job and gpus")
		}
	case "stop":
		if a.Job == nil {
			return errors.New("stop needs job")
		}
	case "defer":
		if a.Job == nil {
			return errors.New("defer needs job")
		}
	case "wake":
		if a.At == nil {
			return errors.New("wake needs at")
		}
		if _, ok := durationOf(*a.At); !ok {
			return fmt.Errorf("wake at %v: not a time", *a.At)
		}
	default:
		return fmt.Errorf("unknown kind %q (place, stop, defer, wake)", a.Kind)
	}
	return nil
}

// action converts a checked wire action.
func (a *wireAction) action() policies.Action {
	switch a.Kind {
	case "place":
		return policies.Action{Kind: policies.Place, Job: policies.JobID(*a.Job), GPUs: a.GPUs}
	case "stop":
		return policies.Action{Kind: policies.Stop, Job: policies.JobID(*a.Job), Reason: a.Reason}
	case "defer":
		g := -1
		if a.GPU != nil {
			g = *a.GPU
		}
		return policies.Action{Kind: policies.Defer, Job: policies.JobID(*a.Job), GPU: g, Reason: a.Reason}
	}
	at, _ := durationOf(*a.At)
	return policies.Action{Kind: policies.Wake, At: at}
}

// appendAction appends action a as a JSON object (the process side).
func appendAction(b []byte, a *policies.Action) []byte {
	switch a.Kind {
	case policies.Place:
		b = append(b, `{"kind":"place","job":`...)
		b = strconv.AppendInt(b, int64(a.Job), 10)
		b = appendInts(appendKey(b, "gpus"), a.GPUs)
	case policies.Stop:
		b = append(b, `{"kind":"stop","job":`...)
		b = strconv.AppendInt(b, int64(a.Job), 10)
		b = appendString(appendKey(b, "reason"), a.Reason)
	case policies.Defer:
		b = append(b, `{"kind":"defer","job":`...)
		b = strconv.AppendInt(b, int64(a.Job), 10)
		b = strconv.AppendInt(appendKey(b, "gpu"), int64(a.GPU), 10)
		b = appendString(appendKey(b, "reason"), a.Reason)
	default:
		b = append(b, `{"kind":"wake","at":`...)
		b = appendFloat(b, seconds(a.At))
	}
	return append(b, '}')
}
