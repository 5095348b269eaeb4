package external

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Builder is a Go policy as Serve runs it.
type Builder struct {
	// Read declares and checks the policy's parameters (as the registry's
	// readers do: typed getters, then nothing else); nil: none.
	Read func(*policies.Params) error
	// New makes the policy from its parameters.
	New func(map[string]string) (policies.Policy, error)
	// Skip are the event kinds on which the policy never decides (it
	// returns no action, or repeats its last deferrals): policy external
	// then does not ask.
	Skip []policies.EventKind
	// SkipEmpty declares that the policy returns no action while no job
	// is pending: policy external then does not ask (protocol version 2).
	SkipEmpty bool
}

// Serve runs a Go policy as an external policy: it reads the protocol's
// messages from r, keeps the View they describe, and answers on w, until
// r ends. It is the reference for the protocol's other side (the Python
// module follows it), and lets a Go policy outside this module run under
// aegis without changing it: a main that calls Serve, run as
// command=./mypolicy.
func Serve(r io.Reader, w io.Writer, b Builder) error {
	s := &server{in: bufio.NewReaderSize(r, 64<<10), out: bufio.NewWriterSize(w, 64<<10), b: b}
	s.v.Telemetry = &pipeTelemetry{s: s}
	err := s.run()
	if err != nil {
		s.send(append(appendString([]byte(`{"msg":"error","error":`), err.Error()), '}'))
	}
	return err
}

type server struct {
	in    *bufio.Reader
	out   *bufio.Writer
	b     Builder
	p     policies.Policy
	v     policies.View
	queue []policies.JobID
	buf   []byte
}

// inMsg is a message aegis writes to the policy.
type inMsg struct {
	V        int               `json:"v"`
	Msg      string            `json:"msg"`
	Params   map[string]string `json:"params"`
	Now      float64           `json:"now"`
	Pressure *bool             `json:"pressure"`
	Events   []inEvent         `json:"events"`
	NJobs    *int              `json:"n_jobs"`
	Jobs     []inJob           `json:"jobs"`
	GPUs     []inGPU           `json:"gpus"`
	Failed   []policies.JobID  `json:"failed"`
	QueueLen int               `json:"queue_len"`
	GPU      int               `json:"gpu"`
	Samples  []inSample        `json:"samples"`
}

type inEvent struct {
	Kind    string  `json:"kind"`
	T       float64 `json:"t"`
	Job     int     `json:"job"`
	Attempt int     `json:"attempt"`
	GPUs    []int   `json:"gpus"`
	Shared  bool    `json:"shared"`
	Failure string  `json:"failure"`
	GPU     int     `json:"gpu"`
	Reason  string  `json:"reason"`
}

type inJob struct {
	ID           int     `json:"id"`
	Name         *string `json:"name"`
	GPUs         int     `json:"gpus"`
	Submit       float64 `json:"submit"`
	Workload     string  `json:"workload"`
	SoloS        float64 `json:"solo_s"`
	PeakMiB      float64 `json:"peak_mib"`
	UtilPct      float64 `json:"util_pct"`
	SMACT        float64 `json:"smact"`
	SMOCC        float64 `json:"smocc"`
	DRAMA        float64 `json:"drama"`
	Analytical   float64 `json:"analytical_mib"`
	FakeTensor   float64 `json:"faketensor_mib"`
	GPUMemNet    float64 `json:"gpumemnet_mib"`
	Lucid        int     `json:"lucid"`
	State        string  `json:"state"`
	Attempts     int     `json:"attempts"`
	OOMs         int     `json:"ooms"`
	LastFailure  string  `json:"last_failure"`
	FailedAt     float64 `json:"failed_at"`
	FailedShared bool    `json:"failed_shared"`
	On           []int   `json:"on"`
	Started      float64 `json:"started"`
	Active       bool    `json:"active"`
	ActiveAt     float64 `json:"active_at"`
}

type inGPU struct {
	Index       int              `json:"index"`
	CapacityMiB float64          `json:"capacity_mib"`
	UsedMiB     float64          `json:"used_mib"`
	Jobs        []policies.JobID `json:"jobs"`
}

type inSample struct {
	At      float64 `json:"at"`
	SMACT   float64 `json:"smact"`
	SMOCC   float64 `json:"smocc"`
	DRAMA   float64 `json:"drama"`
	UtilPct float64 `json:"util_pct"`
	UsedMiB float64 `json:"used_mib"`
}

// read reads the next message.
func (s *server) read() (inMsg, error) {
	l, err := s.in.ReadBytes('\n')
	if err != nil {
		if err == io.EOF && len(l) == 0 {
			return inMsg{}, io.EOF
		}
		return inMsg{}, fmt.Errorf("reading: %w", err)
	}
	var m inMsg
	if err := json.Unmarshal(l, &m); err != nil {
		return inMsg{}, fmt.Errorf("a line that is not a message: %w", err)
	}
	return m, nil
}

func (s *server) send(b []byte) error {
	s.out.Write(b)
	s.out.WriteByte('\n')
	return s.out.Flush()
}

// run answers the hello, then every decision until the input ends.
func (s *server) run() error {
	m, err := s.read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return err
	}
	if m.Msg != "hello" || m.V < MinVersion {
		return fmt.Errorf("want hello of version %d to %d first, got %q version %d", MinVersion, Version, m.Msg, m.V)
	}
	if err := s.hello(m.Params, min(m.V, Version)); err != nil {
		return err
	}
	for {
		m, err := s.read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if m.Msg != "decide" {
			return fmt.Errorf("want decide, got %q", m.Msg)
		}
		if err := s.decide(&m); err != nil {
			return err
		}
	}
}

// hello reads the parameters, makes the policy and declares it in
// protocol version v (aegis's, when older than ours).
func (s *server) hello(params map[string]string, v int) error {
	pp := policies.NewParams(params)
	if s.b.Read != nil {
		if err := s.b.Read(pp); err != nil {
			return err
		}
	}
	p, err := s.b.New(params)
	if err != nil {
		return err
	}
	s.p = p
	b := fmt.Appendf(nil, `{"v":%d,"msg":"hello","name":`, v)
	b = appendString(b, p.Name())
	b = append(b, `,"params":[`...)
	for i, d := range pp.Defs() {
		if i > 0 {
			b = append(b, ',')
		}
		j, _ := json.Marshal(ParamDef{Key: d.Key, Default: d.Default, Valid: d.Valid, Help: d.Help, Choices: d.Choices})
		b = append(b, j...)
	}
	b = append(b, `],"skip":[`...)
	for i, k := range s.b.Skip {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, EventName(k))
	}
	b = append(b, ']')
	if t, ok := p.(policies.Ticker); ok {
		b = appendFloat(appendKey(b, "tick"), seconds(t.Tick()))
	}
	if v >= 2 {
		if s.b.SkipEmpty {
			b = appendBool(appendKey(b, "skip_empty"), true)
		}
		if _, ok := p.(policies.Observer); !ok {
			b = appendBool(appendKey(b, "events"), false) // it reads none
		}
	}
	return s.send(append(b, '}'))
}

// decide brings the view up to date, observes the events, and answers with
// the policy's actions.
func (s *server) decide(m *inMsg) error {
	v := &s.v
	v.Now, _ = durationOf(m.Now)
	if m.Pressure != nil {
		v.Pressure = *m.Pressure
	}
	if m.NJobs != nil {
		for len(v.Jobs) < *m.NJobs {
			v.Jobs = append(v.Jobs, policies.Job{ID: policies.JobID(len(v.Jobs))})
		}
	}
	for i := range m.Jobs {
		if err := s.job(&m.Jobs[i]); err != nil {
			return err
		}
	}
	for _, g := range m.GPUs {
		for len(v.GPUs) <= g.Index {
			v.GPUs = append(v.GPUs, policies.GPU{Index: len(v.GPUs)})
		}
		v.GPUs[g.Index] = policies.GPU{Index: g.Index, CapacityMiB: g.CapacityMiB, UsedMiB: g.UsedMiB, Jobs: g.Jobs}
	}
	if m.Failed != nil {
		v.Failed = m.Failed
	}
	v.Queue = policies.ListOf(s.queue...)
	if len(s.queue) != m.QueueLen {
		return fmt.Errorf("at t=%v: the queue kept here has %d jobs, aegis's %d", v.Now, len(s.queue), m.QueueLen)
	}
	if o, ok := s.p.(policies.Observer); ok {
		for _, e := range m.Events {
			o.Observe(e.event())
		}
	}
	acts := s.p.Schedule(v)
	if f, ok := s.p.(policies.Fallible); ok && f.Err() != nil {
		return f.Err()
	}
	if t := v.Telemetry.(*pipeTelemetry); t.err != nil {
		return t.err
	}
	b := append(s.buf[:0], `{"msg":"actions","actions":[`...)
	for i := range acts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAction(b, &acts[i])
	}
	s.buf = append(b, "]}"...)
	return s.send(s.buf)
}

// job applies a job record, keeping the queue (the pending jobs in id
// order).
func (s *server) job(r *inJob) error {
	v := &s.v
	if r.ID < 0 || r.ID >= len(v.Jobs) {
		return fmt.Errorf("job %d: not among the %d jobs", r.ID, len(v.Jobs))
	}
	j := &v.Jobs[r.ID]
	if r.Name != nil {
		j.Name, j.GPUs, j.Submit = *r.Name, r.GPUs, dur(r.Submit)
		j.Profile = policies.Profile{Workload: r.Workload, SoloS: r.SoloS, PeakMiB: r.PeakMiB, UtilPct: r.UtilPct,
			SMACT: r.SMACT, SMOCC: r.SMOCC, DRAMA: r.DRAMA, Lucid: r.Lucid,
			Analytical: r.Analytical, FakeTensor: r.FakeTensor, GPUMemNet: r.GPUMemNet}
	}
	was := j.State == policies.Pending
	if r.LastFailure == "" {
		r.LastFailure = "none"
	}
	st := slices.Index(stateNames, r.State)
	fl := slices.Index(failureNames, r.LastFailure)
	if st < 0 || fl < 0 {
		return fmt.Errorf("job %d: state %q or failure %q unknown", r.ID, r.State, r.LastFailure)
	}
	j.State, j.Attempts, j.OOMs, j.LastFailure = policies.State(st), r.Attempts, r.OOMs, policies.Failure(fl)
	j.FailedAt, j.FailedShared, j.On = dur(r.FailedAt), r.FailedShared, r.On
	j.Started, j.Active, j.ActiveAt = dur(r.Started), r.Active, dur(r.ActiveAt)
	now := j.State == policies.Pending
	i, in := slices.BinarySearch(s.queue, j.ID)
	switch {
	case now && !was && !in:
		s.queue = slices.Insert(s.queue, i, j.ID)
	case !now && was && in:
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	return nil
}

func dur(s float64) time.Duration { d, _ := durationOf(s); return d }

func (e inEvent) event() policies.Event {
	k, _ := eventKind(e.Kind)
	f := slices.Index(failureNames, e.Failure)
	return policies.Event{Kind: k, T: dur(e.T), Job: policies.JobID(e.Job), Attempt: e.Attempt, GPUs: e.GPUs,
		Shared: e.Shared, Failure: policies.Failure(max(f, 0)), GPU: e.GPU, Reason: e.Reason}
}

// pipeTelemetry answers Samples by asking aegis.
type pipeTelemetry struct {
	s   *server
	err error
}

func (t *pipeTelemetry) Samples(dst []policies.Sample, g, n int) []policies.Sample {
	if t.err != nil {
		return dst
	}
	b := fmt.Appendf(nil, `{"msg":"samples","gpu":%d,"n":%d}`, g, n)
	if t.err = t.s.send(b); t.err != nil {
		return dst
	}
	m, err := t.s.read()
	if err == nil && m.Msg != "samples" {
		err = fmt.Errorf("want samples, got %q", m.Msg)
	}
	if err != nil {
		t.err = errors.Join(errors.New("telemetry query"), err)
		return dst
	}
	for _, x := range m.Samples {
		dst = append(dst, policies.Sample{At: dur(x.At), SMACT: x.SMACT, SMOCC: x.SMOCC, DRAMA: x.DRAMA, UtilPct: x.UtilPct, UsedMiB: x.UsedMiB})
	}
	return dst
}
