// Package external runs a scheduling policy written in any language as a
// separate process speaking a line protocol over its standard input and
// output (one JSON object per line, versioned: Version). It is the one
// policy that does I/O: a bridge that sends each decision's changes of the
// View and the events since the last one, and turns the process's answer
// into Actions after checking that the backend can carry them out. The
// process must be deterministic: the same lines in give the same lines out.
// Serve is the other side, for a policy written in Go; docs/own-policy.md
// describes the protocol and its schema.
package external

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Own parameters of policy external; every other key goes to the process.
const (
	KeyCommand = "command"
	KeyTimeout = "timeout"
	KeyFiles   = "files"
)

// Config is how to run an external policy.
type Config struct {
	// Args is the command line (Command split into words).
	Args []string
	// Command is the command line as given.
	Command string
	// Timeout bounds the wait for each answer.
	Timeout time.Duration
	// HelloTimeout is the least wait for the process's hello (an
	// interpreter may take long to start on a loaded machine).
	HelloTimeout time.Duration
	// Files are files beside those named in the command line whose content
	// makes the policy (for cells' keys: Fingerprint).
	Files []string
	// MaxLine bounds the length of a line the process writes (bytes).
	MaxLine int
	// MaxQueries bounds the telemetry queries of one decision.
	MaxQueries int
}

// Defaults of Config.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultHelloTimeout = time.Minute
	DefaultMaxLine      = 16 << 20
	DefaultMaxQueries   = 1 << 20
)

// ReadConfig reads policy external's own parameters (command, timeout,
// files) from p. An empty command is allowed here (aegis policies lists the
// parameters without one); New refuses it.
func ReadConfig(p *policies.Params) (Config, error) {
	c := Config{MaxLine: DefaultMaxLine, MaxQueries: DefaultMaxQueries}
	c.Command = p.Pattern(KeyCommand, "", "a command line", "the policy's program and its arguments, run without a shell (quotes group words)")
	c.Timeout = p.Duration(KeyTimeout, DefaultTimeout, time.Millisecond, 24*time.Hour, "longest wait for one answer of the program, e.g. 10s")
	files := p.Pattern(KeyFiles, "", "comma-separated paths", "more files the policy is made of, hashed into cells' keys (the files named in command are always)")
	var err error
	if c.Args, err = Split(c.Command); err != nil {
		return c, fmt.Errorf("policy external: parameter command=%q: %w", c.Command, err)
	}
	for _, f := range strings.Split(files, ",") {
		if f = strings.TrimSpace(f); f != "" {
			c.Files = append(c.Files, f)
		}
	}
	return c, nil
}

// Policy is an external policy: a process that decides.
type Policy struct {
	cfg  Config
	p    *process
	name string
	skip [16]bool // by policies.EventKind: events that never call for a decision
	tick time.Duration
	// skipEmpty: decisions without a pending job are not asked (the
	// process declared it never acts then); noEvents: decisions carry no
	// events (it reads none). Both version 2.
	skipEmpty, noEvents bool

	err  error // the first failure: every later decision returns no action
	now  time.Duration
	buf  []byte // the decision message being written
	evs  []byte // the events since the last decision, as JSON objects
	sent []byte // per job: 1 once its static fields were sent
	// touched lists the jobs named by events and actions since the last
	// decision (mark: listed already).
	touched []policies.JobID
	mark    []bool
	gpus    []policies.GPU // the GPUs as last sent
	failed  []policies.JobID
	nJobs   int
	first   bool
	placed  []bool // jobs placed in the decision being checked
	samples []policies.Sample
	wire    []wireAction // the actions of the last answer read by fastActions
	asked   int          // decisions sent to the process
}

// New starts the external policy that params describe: its own keys
// (ReadConfig) and the process's, which it declares in its hello. A key
// neither declares is an error listing the valid ones.
func New(params map[string]string) (*Policy, error) {
	pp := policies.NewParams(params)
	cfg, err := ReadConfig(pp)
	if err != nil {
		return nil, err
	}
	if len(cfg.Args) == 0 {
		return nil, fmt.Errorf("policy external: parameter command: missing (the program to run, e.g. command=python3 mypolicy.py)")
	}
	rest := map[string]string{}
	for k, v := range params {
		if k != KeyCommand && k != KeyTimeout && k != KeyFiles {
			rest[k] = v
		}
	}
	x, err := Start(cfg, rest)
	if err != nil {
		return nil, err
	}
	for _, d := range x.defs {
		pp.Pattern(d.Key, d.Default, d.Valid, d.Help)
	}
	if err := pp.Done("policy external (" + cfg.Command + ")"); err != nil {
		x.Close()
		return nil, err
	}
	return x.Policy, nil
}

// started is a policy whose process answered its hello.
type started struct {
	*Policy
	defs []ParamDef
}

// Start starts the process of cfg and greets it with params; it returns
// the policy and the parameters the process declared.
func Start(cfg Config, params map[string]string) (started, error) {
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = DefaultMaxLine
	}
	if cfg.MaxQueries <= 0 {
		cfg.MaxQueries = DefaultMaxQueries
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HelloTimeout <= 0 {
		cfg.HelloTimeout = DefaultHelloTimeout
	}
	p, err := start(cfg.Args, cfg.Timeout, cfg.MaxLine)
	if err != nil {
		return started{}, fmt.Errorf("policy external (%s): %w", cfg.Command, err)
	}
	x := &Policy{cfg: cfg, p: p, first: true, now: -1}
	r, err := x.hello(params)
	if err != nil {
		x.fail(err, -1, nil)
		p.kill()
		return started{}, x.err
	}
	x.name = r.Name
	if x.name == "" {
		x.name = "external"
	}
	for _, s := range r.Skip {
		k, _ := eventKind(s)
		x.skip[k] = true
	}
	x.tick, _ = durationOf(r.Tick)
	x.skipEmpty, x.noEvents = r.SkipEmpty, r.Events != nil && !*r.Events
	for _, d := range r.Params {
		if d.Key == KeyCommand || d.Key == KeyTimeout || d.Key == KeyFiles {
			x.Close()
			return started{}, fmt.Errorf("policy external (%s): it declares parameter %q, which is aegis's own", cfg.Command, d.Key)
		}
	}
	return started{x, r.Params}, nil
}

// Describe starts the process of cfg with no parameters, reads the
// parameters it declares, and stops it (aegis policies).
func Describe(cfg Config) ([]ParamDef, error) {
	x, err := Start(cfg, nil)
	if err != nil {
		return nil, err
	}
	x.Close()
	return x.defs, nil
}

// hello sends the hello with params and reads the process's.
func (x *Policy) hello(params map[string]string) (Reply, error) {
	b := append(x.buf[:0], `{"v":`...)
	b = fmt.Appendf(b, "%d", Version)
	b = append(b, `,"msg":"hello","params":{`...)
	for i, k := range sortedKeys(params) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, k), ':')
		b = appendString(b, params[k])
	}
	b = append(b, "}}"...)
	x.buf = b
	if err := x.p.send(b); err != nil {
		return Reply{}, err
	}
	// An interpreter may take long to start on a loaded machine: the hello
	// gets at least helloTimeout.
	t := x.p.timeout
	x.p.timeout = max(t, x.cfg.HelloTimeout)
	l, err := x.p.next()
	x.p.timeout = t
	if err != nil {
		return Reply{}, err
	}
	r, err := ParseReply(l)
	if err == nil && r.Msg == "error" {
		err = fmt.Errorf("%w: %s", ErrReported, r.Error)
	}
	if err == nil && r.Msg != "hello" {
		err = fmt.Errorf("%w: want its hello first, got msg %q", ErrGarbage, r.Msg)
	}
	if err != nil {
		return Reply{}, &Error{Command: x.cfg.Command, At: -1, Job: -1, Line: x.p.n, Text: shorten(l), Err: err}
	}
	return r, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Error is why an external policy failed: the decision (its time; -1 at
// the hello), the job the offending action named (-1: none), and the line
// of the process's output at fault (Line 0: none).
type Error struct {
	Command string
	At      time.Duration
	Job     policies.JobID
	JobName string // the trace's id of Job, when known
	Line    int
	Text    string
	// Exit says how the process ended, when it did.
	Exit string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "external policy (%s): ", e.Command)
	if e.At < 0 {
		b.WriteString("at its hello: ")
	} else {
		fmt.Fprintf(&b, "decision at t=%v: ", e.At)
	}
	if e.Job >= 0 && e.JobName != "" {
		fmt.Fprintf(&b, "job %d (%s): ", e.Job, e.JobName)
	} else if e.Job >= 0 {
		fmt.Fprintf(&b, "job %d: ", e.Job)
	}
	b.WriteString(e.Err.Error())
	if e.Line > 0 {
		fmt.Fprintf(&b, "; its output line %d: %s", e.Line, e.Text)
	}
	if e.Exit != "" {
		fmt.Fprintf(&b, "; the process: %s", e.Exit)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// fail records the policy's first failure and ends its process.
func (x *Policy) fail(err error, job policies.JobID, l []byte) {
	if x.err != nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Command: x.cfg.Command, At: x.now, Job: job, Err: err}
		if l != nil {
			e.Line, e.Text = x.p.n, shorten(l)
		}
	}
	if errors.Is(err, ErrExited) {
		e.Exit = x.p.exitStatus()
	}
	x.err = e
	x.p.kill()
}

// Name implements policies.Policy: the name the process gave.
func (x *Policy) Name() string { return x.name }

// Tick implements policies.Ticker: the decision grid the process declared
// (0: none; deferrals are then counted in decisions).
func (x *Policy) Tick() time.Duration { return x.tick }

// Wants implements policies.Selective with the event kinds the process
// declared it never decides on (skip).
func (x *Policy) Wants(e policies.Event) bool { return !x.skip[e.Kind&15] }

// ReadsJobsOnly implements policies.JobsReader: the bridge writes into no
// job of its view nor its GPU list. It encodes the jobs an event or action
// touched (appendJob reads them), compares and copies the GPUs' job lists
// into its own (changedGPUs), copies the failed list, and checks the
// process's actions against the view (check, checkOne: the placements'
// GPU lists are parsed into slices of their own); it keeps no *Job past
// a decision. The loop then hands it the backend's jobs instead of a copy
// of every job. TestExternalWritesNoJob holds it to this.
func (x *Policy) ReadsJobsOnly() {}

// Asked is how many decisions were sent to the process (a decision a
// skip_empty process is not asked is not counted).
func (x *Policy) Asked() int { return x.asked }

// Err implements policies.Fallible: why the process failed, or nil.
func (x *Policy) Err() error { return x.err }

// Close ends the process (it sees the end of its input).
func (x *Policy) Close() error {
	if x.err == nil {
		x.p.stop(time.Second)
	}
	return nil
}

// Observe implements policies.Observer: the event goes into the next
// decision's message.
func (x *Policy) Observe(e policies.Event) {
	if x.err != nil {
		return
	}
	if !x.noEvents {
		if len(x.evs) > 0 {
			x.evs = append(x.evs, ',')
		}
		x.evs = appendEvent(x.evs, &e)
	}
	if e.Kind != policies.Wakeup {
		x.touch(e.Job)
	}
}

func (x *Policy) touch(id policies.JobID) {
	if id < 0 {
		return
	}
	for int(id) >= len(x.mark) {
		x.mark = append(x.mark, false)
		x.sent = append(x.sent, 0)
	}
	if !x.mark[id] {
		x.mark[id] = true
		x.touched = append(x.touched, id)
	}
}

// noActions is the answer of a decision that does nothing, as the Python
// module and Serve write it.
var noActions = []byte(`{"msg":"actions","actions":[]}`)

// Schedule implements policies.Policy: it sends the decision's message,
// answers the process's telemetry queries, and returns its actions once
// each is checked against v. On any failure it returns none and Err
// reports the failure. A process that declared skip_empty is not asked
// while no job is pending: the decision has no actions, and what it would
// have carried (events, jobs, GPUs) goes with the next one asked.
func (x *Policy) Schedule(v *policies.View) []policies.Action {
	if x.err != nil {
		return nil
	}
	x.now = v.Now
	if x.skipEmpty && v.Queue.Len() == 0 {
		return nil
	}
	x.asked++
	if err := x.p.send(x.decision(v)); err != nil {
		x.fail(err, -1, nil)
		return nil
	}
	for q := 0; ; q++ {
		l, err := x.p.next()
		if err != nil {
			x.fail(err, -1, nil)
			return nil
		}
		if bytes.Equal(l, noActions) { // the most common answer, without a parser
			return nil
		}
		var r Reply
		if acts, ok := fastActions(l, x.wire); ok { // the next most common
			x.wire, r.Msg, r.Actions = acts, "actions", acts
		} else if r, err = ParseReply(l); err != nil {
			x.fail(err, -1, l)
			return nil
		}
		switch r.Msg {
		case "actions":
			acts, job, err := x.check(v, r.Actions)
			if err != nil {
				x.fail(err, job, l)
				if job >= 0 && int(job) < len(v.Jobs) {
					x.err.(*Error).JobName = v.Jobs[job].Name
				}
				return nil
			}
			return acts
		case "samples":
			if q >= x.cfg.MaxQueries {
				x.fail(fmt.Errorf("%w: more than %d telemetry queries in one decision", ErrFlood, x.cfg.MaxQueries), -1, l)
				return nil
			}
			if err := x.answer(v, *r.GPU, r.N); err != nil {
				x.fail(err, -1, l)
				return nil
			}
		case "error":
			x.fail(fmt.Errorf("%w: %s", ErrReported, r.Error), -1, l)
			return nil
		default:
			x.fail(fmt.Errorf("%w: msg %q during a decision (want actions or samples)", ErrGarbage, r.Msg), -1, l)
			return nil
		}
	}
}

// decision writes the decision's message: the time, the events since the
// last one, the jobs they and the last actions touched, the GPUs that
// changed, the failed list when it changed, the number of jobs and the
// queue's length.
func (x *Policy) decision(v *policies.View) []byte {
	b := append(x.buf[:0], `{"msg":"decide","now":`...)
	b = appendFloat(b, seconds(v.Now))
	if x.first {
		b = appendBool(appendKey(b, "pressure"), v.Pressure)
	}
	if !x.noEvents {
		b = append(append(append(appendKey(b, "events"), '['), x.evs...), ']')
		x.evs = x.evs[:0]
	}
	if len(v.Jobs) != x.nJobs {
		x.nJobs = len(v.Jobs)
		b = appendFloat(appendKey(b, "n_jobs"), float64(x.nJobs))
	}
	b = append(appendKey(b, "jobs"), '[')
	n := 0
	for _, id := range x.touched {
		x.mark[id] = false
		if int(id) >= len(v.Jobs) {
			continue
		}
		j := &v.Jobs[id]
		static := x.sent[id] == 0 && j.State != policies.Waiting
		if static {
			x.sent[id] = 1
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = appendJob(b, j, static)
		n++
	}
	x.touched = x.touched[:0]
	b = append(b, ']')
	b = x.changedGPUs(b, v)
	if x.first || !slices.Equal(x.failed, v.Failed) {
		x.failed = append(x.failed[:0], v.Failed...)
		b = appendIDs(appendKey(b, "failed"), x.failed)
	}
	b = appendFloat(appendKey(b, "queue_len"), float64(v.Queue.Len()))
	x.first = false
	x.buf = append(b, '}')
	return x.buf
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// changedGPUs appends "gpus" with each GPU that differs from what was
// last sent (all of them at the first decision).
func (x *Policy) changedGPUs(b []byte, v *policies.View) []byte {
	if len(x.gpus) != len(v.GPUs) {
		x.gpus = make([]policies.GPU, len(v.GPUs))
		for g := range x.gpus {
			x.gpus[g].Index = -1
		}
	}
	b = append(appendKey(b, "gpus"), '[')
	n := 0
	for g := range v.GPUs {
		s, c := &x.gpus[g], &v.GPUs[g]
		if s.Index == c.Index && s.CapacityMiB == c.CapacityMiB && s.UsedMiB == c.UsedMiB && slices.Equal(s.Jobs, c.Jobs) {
			continue
		}
		s.Index, s.CapacityMiB, s.UsedMiB = c.Index, c.CapacityMiB, c.UsedMiB
		s.Jobs = append(s.Jobs[:0], c.Jobs...)
		if n > 0 {
			b = append(b, ',')
		}
		b = appendGPU(b, c)
		n++
	}
	return append(b, ']')
}

// answer writes GPU g's last n samples.
func (x *Policy) answer(v *policies.View, g, n int) error {
	if g < 0 || g >= len(v.GPUs) {
		return fmt.Errorf("%w: samples of GPU %d: there are GPUs 0 to %d", ErrImpossible, g, len(v.GPUs)-1)
	}
	if v.Telemetry != nil {
		x.samples = v.Telemetry.Samples(x.samples[:0], g, n)
	} else {
		x.samples = x.samples[:0]
	}
	b := append(x.buf[:0], `{"msg":"samples","gpu":`...)
	b = appendFloat(b, float64(g))
	b = append(b, `,"samples":[`...)
	for i := range x.samples {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSample(b, &x.samples[i])
	}
	x.buf = append(b, "]}"...)
	return x.p.send(x.buf)
}

// check converts the process's actions and checks that the backend can
// carry out each: a placement of a queued job, once, on GPUs that exist,
// none of them with less memory than the job's profiled peak; a stop of a
// queued job; a deferral of a known job on a GPU that exists (or -1); a
// wake-up after now. It returns the job of the first bad action.
func (x *Policy) check(v *policies.View, ws []wireAction) ([]policies.Action, policies.JobID, error) {
	if len(x.placed) < len(v.Jobs) {
		x.placed = make([]bool, len(v.Jobs))
	}
	acts := make([]policies.Action, len(ws))
	defer func() {
		for _, a := range acts {
			if (a.Kind == policies.Place || a.Kind == policies.Stop) && a.Job >= 0 && int(a.Job) < len(x.placed) {
				x.placed[a.Job] = false
			}
		}
	}()
	for i := range ws {
		a := ws[i].action()
		acts[i] = a
		if a.Kind == policies.Wake {
			if a.At <= v.Now {
				return nil, -1, fmt.Errorf("%w: wake at %v: not after now (%v)", ErrImpossible, a.At, v.Now)
			}
			continue
		}
		if a.Job < 0 || int(a.Job) >= len(v.Jobs) {
			return nil, a.Job, fmt.Errorf("%w: %s: no job %d (jobs 0 to %d)", ErrImpossible, ws[i].Kind, a.Job, len(v.Jobs)-1)
		}
		if err := x.checkOne(v, a); err != nil {
			return nil, a.Job, fmt.Errorf("%w: %v", ErrImpossible, err)
		}
		if a.Kind != policies.Defer {
			x.placed[a.Job] = true
		}
	}
	for _, a := range acts {
		if a.Kind == policies.Place || a.Kind == policies.Stop {
			x.touch(a.Job)
		}
	}
	return acts, -1, nil
}

// checkOne checks one action naming an existing job.
func (x *Policy) checkOne(v *policies.View, a policies.Action) error {
	j := &v.Jobs[a.Job]
	switch a.Kind {
	case policies.Defer:
		if a.GPU < -1 || a.GPU >= len(v.GPUs) {
			return fmt.Errorf("defer on GPU %d: no such GPU (0 to %d, or -1)", a.GPU, len(v.GPUs)-1)
		}
		return nil
	case policies.Stop:
		if j.State != policies.Pending || x.placed[a.Job] {
			return fmt.Errorf("stop: the job is %s, not queued", stateOf(j, x.placed[a.Job]))
		}
		return nil
	}
	if x.placed[a.Job] {
		return fmt.Errorf("place: the job was placed or stopped already in this decision")
	}
	if err := v.CheckPlace(a); err != nil {
		return err
	}
	for _, g := range a.GPUs {
		if c := v.GPUs[g].CapacityMiB; j.PeakMiB > c {
			return fmt.Errorf("place on GPU %d: the job needs %s MiB at its peak; the GPU has %s MiB", g, num(j.PeakMiB), num(c))
		}
	}
	return nil
}

func stateOf(j *policies.Job, placed bool) string {
	if placed {
		return "placed or stopped already in this decision"
	}
	return j.State.String()
}

func num(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%g", f)
}
