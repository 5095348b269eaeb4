package external_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/policies/bestfit"
	"github.com/aegis-sched/aegis/policies/external"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/policies/policytest"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/traces"
)

// TestMain doubles as the external policies of these tests: run as
// "TESTBINARY helper MODE", the test binary speaks the protocol on its
// standard input and output (external.Serve) instead of testing.
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "helper" {
		os.Exit(helper(os.Args[2]))
	}
	os.Exit(m.Run())
}

// helper serves a Go policy over stdin/stdout: "bestfit" and "aegis" as
// they are, or bestfit with a fault at its third decision ("MODE").
func helper(mode string) int {
	b := external.Builder{
		Read: bestfit.ReadConfig,
		New:  func(p map[string]string) (policies.Policy, error) { return bestfit.New(p) },
	}
	switch mode {
	case "bestfit":
	case "bestfit-skip":
		b.Skip = []policies.EventKind{policies.JobStarted, policies.JobActive}
	case "bestfit-fast", "bestfit-fast-v1": // as bestfit.py declares itself
		b.Skip, b.SkipEmpty = []policies.EventKind{policies.JobStarted, policies.JobActive}, true
	case "aegis":
		b = external.Builder{
			Read: func(p *policies.Params) error { _, err := aegis.ReadConfig(p); return err },
			New:  func(p map[string]string) (policies.Policy, error) { return aegis.New(p) },
		}
	case "silent":
		os.Stdin.Read(make([]byte, 1)) // never answers its hello
		time.Sleep(time.Hour)
	default:
		inner := b.New
		b.New = func(p map[string]string) (policies.Policy, error) {
			bf, err := inner(p)
			return &faulty{Policy: bf, mode: mode}, err
		}
	}
	var in io.Reader = os.Stdin
	if p := os.Getenv(dumpEnv); p != "" { // the test reads what aegis sent
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		defer f.Close()
		in = io.TeeReader(in, f)
	}
	if strings.HasSuffix(mode, "-v1") { // as if aegis spoke version 1
		r := bufio.NewReader(in)
		hello, err := r.ReadBytes('\n')
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		in = io.MultiReader(bytes.NewReader(bytes.Replace(hello, []byte(`{"v":2,`), []byte(`{"v":1,`), 1)), r)
	}
	if err := external.Serve(in, os.Stdout, b); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// dumpEnv names the file a helper copies its input to.
const dumpEnv = "EXTERNAL_TEST_DUMP"

// faulty is bestfit that misbehaves at its third decision, once a job is
// running.
type faulty struct {
	policies.Policy
	mode string
	n    int
}

func (f *faulty) Schedule(v *policies.View) []policies.Action {
	if f.n++; f.n < 3 {
		return f.Policy.Schedule(v)
	}
	running := policies.JobID(-1)
	for _, j := range v.Jobs {
		if j.State == policies.Running {
			running = j.ID
		}
	}
	switch f.mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "Traceback: something broke")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour)
	case "garbage":
		os.Stdout.WriteString("this is not JSON\n")
	case "flood":
		os.Stdout.Write(bytes.Repeat([]byte{'x'}, external.DefaultMaxLine+10))
	case "nogpu":
		return []policies.Action{{Kind: policies.Place, Job: v.Queue.At(0), GPUs: []int{7}}}
	case "notqueued":
		return []policies.Action{{Kind: policies.Place, Job: running, GPUs: []int{0}}}
	case "memory":
		return []policies.Action{{Kind: policies.Place, Job: v.Queue.At(0), GPUs: []int{0}}}
	case "twice":
		id := v.Queue.At(0)
		return []policies.Action{{Kind: policies.Stop, Job: id}, {Kind: policies.Stop, Job: id}}
	case "wakepast":
		return []policies.Action{{Kind: policies.Wake, At: v.Now}}
	}
	return f.Policy.Schedule(v)
}

// command is the command line of a helper mode.
func command(mode string) string { return strconv.Quote(os.Args[0]) + " helper " + mode }

func simulate(t *testing.T, trace, policy string, params map[string]string) (string, *assemble.Outcome, error) {
	t.Helper()
	tr, err := traces.Load(trace)
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	var ev bytes.Buffer
	o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: policy, Params: params, Seed: 1}, &ev)
	return ev.String(), o, err
}

// A Go policy served over the protocol gives the same run, byte for byte,
// as the same policy in the process: on the three paper traces, bestfit
// on the three paper traces, and AEGIS on one (telemetry
// queries, wake-ups, deferrals; without the simulator's foresight it
// decides at every tick, to the same outputs).
func TestServedPolicyIsTheSame(t *testing.T) {
	for _, tc := range []struct{ trace, policy, mode string }{
		{"philly", "bestfit", "bestfit"}, {"saturn", "bestfit", "bestfit"}, {"venus", "bestfit", "bestfit"},
		{"demo", "aegis", "aegis"},
		{"philly", "bestfit", "bestfit-fast"}, {"saturn", "bestfit", "bestfit-fast"}, {"venus", "bestfit", "bestfit-fast"},
		{"philly", "bestfit", "bestfit-fast-v1"},
	} {
		t.Run(tc.trace+"/"+tc.mode, func(t *testing.T) {
			want, wo, err := simulate(t, tc.trace, tc.policy, nil)
			require.NoError(t, err)
			got, o, err := simulate(t, tc.trace, "external", map[string]string{"command": command(tc.mode)})
			require.NoError(t, err)
			require.Equal(t, wo.Summary, o.Summary)
			require.Equal(t, wo.Jobs, o.Jobs)
			require.Equal(t, want, got, "events.jsonl")
		})
	}
}

// Protocol version 2's declarations: a process that declared skip_empty
// is asked only decisions with a job pending, and one that declared
// events false gets decisions without events; a process speaking version
// 1 (its hello without them) is asked every decision, with its events.
// Either way the run is the same (TestServedPolicyIsTheSame).
func TestVersion2Declarations(t *testing.T) {
	for _, tc := range []struct {
		mode          string
		events, empty bool // decide lines with events, with an empty queue
	}{{"bestfit-fast", false, false}, {"bestfit-fast-v1", true, true}, {"bestfit-skip", false, true}, {"bestfit", false, true}} {
		t.Run(tc.mode, func(t *testing.T) {
			dump := filepath.Join(t.TempDir(), "in.jsonl")
			t.Setenv(dumpEnv, dump)
			n := 0
			var x *external.Policy
			tr, err := traces.Load("philly")
			require.NoError(t, err)
			srv, err := models.ParseServer("a100-40gb:3")
			require.NoError(t, err)
			_, err = assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Seed: 1,
				Policy: "external", Params: map[string]string{"command": command(tc.mode)},
				Wrap: func(p policies.Policy) policies.Policy { x = p.(*external.Policy); return counting{x, &n} }}, io.Discard)
			require.NoError(t, err)
			b, err := os.ReadFile(dump)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			require.Contains(t, lines[0], `{"v":2,"msg":"hello"`)
			var asked, events, empty int
			for _, l := range lines[1:] {
				if !strings.HasPrefix(l, `{"msg":"decide"`) {
					continue
				}
				asked++
				if strings.Contains(l, `"events":[{`) {
					events++
				}
				if strings.HasSuffix(l, `"queue_len":0}`) {
					empty++
				}
			}
			require.Equal(t, asked, x.Asked(), "decisions asked")
			require.Equal(t, tc.events, events > 0, "decisions with events")
			require.Equal(t, tc.empty, empty > 0, "decisions with no job pending")
			require.Equal(t, tc.empty, asked == n, "%d decisions, %d asked", n, asked)
		})
	}
}

// Each fault of an external policy ends the run with a typed error that
// names the decision's time, the job of an impossible action and the
// offending line, and no outcome.
func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		mode string
		is   error
		says []string
	}{
		{"exit", external.ErrExited, []string{"decision at t=", "exit status 3", "Traceback: something broke"}},
		{"hang", external.ErrTimeout, []string{"decision at t=", "within 500ms"}},
		{"garbage", external.ErrGarbage, []string{"decision at t=", "its output line", `"this is not JSON"`}},
		{"flood", external.ErrFlood, []string{"decision at t=", "longer than 16777216 bytes", `starts "xxxx`}},
		{"nogpu", external.ErrImpossible, []string{"decision at t=", "job ", "no GPU 7", `{\"msg\":\"actions\"`}},
		{"notqueued", external.ErrImpossible, []string{"decision at t=", "job ", "is running, not pending"}},
		{"twice", external.ErrImpossible, []string{"decision at t=", "job ", "stop: the job is placed or stopped already"}},
		{"wakepast", external.ErrImpossible, []string{"decision at t=", "not after now"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			timeout := "500ms"
			if tc.mode != "hang" {
				timeout = "20s" // a loaded machine moves 16 MiB through a pipe slowly
			}
			_, o, err := simulate(t, "demo", "external", map[string]string{"command": command(tc.mode), "timeout": timeout})
			require.Error(t, err)
			require.Nil(t, o)
			require.ErrorIs(t, err, tc.is)
			var pe *loop.PolicyError
			require.ErrorAs(t, err, &pe)
			for _, s := range tc.says {
				require.Contains(t, err.Error(), s)
			}
		})
	}
}

// A placement on a GPU with less memory than the job's profiled peak is
// refused: the memory it cannot have (bestfit puts any job on an idle GPU).
func TestMemoryItCannotHave(t *testing.T) {
	x, err := external.New(map[string]string{"command": command("bestfit")})
	require.NoError(t, err)
	defer x.Close()
	v := &policies.View{Now: 5 * time.Second, GPUs: []policies.GPU{{Index: 0, CapacityMiB: 1000}}}
	v.Jobs = append(v.Jobs, policies.Job{ID: 0, Name: "big", GPUs: 1, State: policies.Pending,
		Profile: policies.Profile{Workload: "w", PeakMiB: 5000}})
	v.Queue = policies.ListOf(0)
	x.Observe(policies.Event{Kind: policies.JobArrived, T: v.Now, Job: 0})
	require.Nil(t, x.Schedule(v))
	require.ErrorIs(t, x.Err(), external.ErrImpossible)
	require.Contains(t, x.Err().Error(), "decision at t=5s: job 0 (big): impossible action: place on GPU 0: the job needs 5000 MiB at its peak; the GPU has 1000 MiB; its output line 2:")
}

// A process that never answers its hello is given up after the timeout;
// one that declares parameters has them checked: an unknown key is an
// error listing the valid ones, and aegis policies lists them.
func TestHelloAndParams(t *testing.T) {
	start := time.Now()
	cfg, err := external.ReadConfig(policies.NewParams(map[string]string{"command": command("silent")}))
	require.NoError(t, err)
	cfg.Timeout, cfg.HelloTimeout = 300*time.Millisecond, 300*time.Millisecond
	_, err = external.Start(cfg, nil)
	require.ErrorIs(t, err, external.ErrTimeout)
	require.Contains(t, err.Error(), "at its hello")
	require.Less(t, time.Since(start), 5*time.Second)

	_, err = external.New(map[string]string{"command": command("bestfit"), "util_cap": "80", "utilcap": "3"})
	require.ErrorContains(t, err, `unknown parameter "utilcap"`)
	require.ErrorContains(t, err, "util_cap (most summed profiled utilization")

	_, err = external.New(map[string]string{"command": command("bestfit"), "util_cap": "7000"})
	require.ErrorIs(t, err, external.ErrReported)
	require.ErrorContains(t, err, "parameter util_cap=\"7000\"")

	defs, err := registry.Params("external", map[string]string{"command": command("bestfit")})
	require.NoError(t, err)
	var keys []string
	for _, d := range defs {
		keys = append(keys, d.Key)
	}
	require.Equal(t, []string{"command", "timeout", "files", "util_cap", "guard_mib"}, keys)

	x, err := external.New(map[string]string{"command": command("bestfit-skip")})
	require.NoError(t, err)
	require.False(t, x.Wants(policies.Event{Kind: policies.JobActive}), "declared skip")
	require.True(t, x.Wants(policies.Event{Kind: policies.JobFinished}))
	x.Close()

	_, err = external.New(map[string]string{"command": "/nonexistent/policy"})
	require.ErrorContains(t, err, "/nonexistent/policy")
	_, err = external.New(nil)
	require.ErrorContains(t, err, "parameter command: missing")
}

// The fingerprint follows the content of the files named in the command
// line and in files, and changes when one changes.
func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	script, mod := dir+"/p.py", dir+"/helper.py"
	require.NoError(t, os.WriteFile(script, []byte("print(1)\n"), 0o644))
	require.NoError(t, os.WriteFile(mod, []byte("X = 1\n"), 0o644))
	fp := func() string {
		cfg, err := external.ReadConfig(policies.NewParams(map[string]string{"command": "python3 " + script}))
		require.NoError(t, err)
		s, err := external.Fingerprint(cfg)
		require.NoError(t, err)
		return s
	}
	a := fp()
	require.NotEmpty(t, a)
	require.NoError(t, os.WriteFile(mod, []byte("X = 2\n"), 0o644))
	b := fp()
	require.NotEqual(t, a, b, "a module beside the script changed")
	require.NoError(t, os.WriteFile(script, []byte("print(2)\n"), 0o644))
	require.NotEqual(t, b, fp(), "the script changed")

	cfg, err := external.ReadConfig(policies.NewParams(map[string]string{"command": "python3 -c 1"}))
	require.NoError(t, err)
	s, err := external.Fingerprint(cfg)
	require.NoError(t, err)
	require.Empty(t, s, "no file named")
	cfg.Files = []string{dir + "/missing"}
	_, err = external.Fingerprint(cfg)
	require.ErrorContains(t, err, "missing: not a readable file")
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"python3 policy.py", []string{"python3", "policy.py"}, ""},
		{`  a  "b c"  'd "e"' f\ g ""`, []string{"a", "b c", `d "e"`, "f g", ""}, ""},
		{`"a\"b\\c"`, []string{`a"b\c`}, ""},
		{"", nil, ""},
		{`"open`, nil, "double quote"},
		{`'open`, nil, "single quote"},
		{`a\`, nil, "backslash"},
	} {
		got, err := external.Split(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

// FuzzParseReply: the parser of the process's lines never panics, and what
// it accepts is a known message whose actions name their fields.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"msg":"hello","name":"x","params":[{"key":"a","default":"1"}],"skip":["started"],"tick":1}`,
		`{"msg":"actions","actions":[{"kind":"place","job":1,"gpus":[0,1]},{"kind":"wake","at":3.5}]}`,
		`{"msg":"actions","actions":[{"kind":"defer","job":1,"gpu":-1,"reason":"memory"},{"kind":"stop","job":2}]}`,
		`{"msg":"samples","gpu":0,"n":30}`, `{"msg":"error","error":"boom"}`,
		`{"msg":"actions","actions":[{"kind":"wake","at":1e300}]}`, `{"v":2,"msg":"hello"}`, `[]`, `{}`, `null`,
		`{"v":2,"msg":"hello","name":"x","skip_empty":true,"events":false}`, `{"v":1,"msg":"hello","skip_empty":true}`,
		`{"v":3,"msg":"hello"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := external.ParseReply(line)
		if err != nil {
			if !errors.Is(err, external.ErrGarbage) && !errors.Is(err, external.ErrVersion) {
				t.Fatalf("error %v wraps neither ErrGarbage nor ErrVersion", err)
			}
			return
		}
		if !strings.Contains("hello samples actions error", r.Msg) || r.Msg == "" {
			t.Fatalf("accepted msg %q", r.Msg)
		}
		if r.Msg == "hello" && (r.V < external.MinVersion || r.V > external.Version || r.V < 2 && (r.SkipEmpty || r.Events != nil)) {
			t.Fatalf("accepted a hello of version %d with skip_empty %v, events %v", r.V, r.SkipEmpty, r.Events)
		}
	})
}

// writeGuard runs an external policy and records the decisions that wrote
// into its view's jobs or their GPU lists, as TestJobsReadersWriteNoJob
// (experiments) does for the built-in policies. It keeps the policy's
// Observer (the events name the jobs it sends), Fallible, Ticker and
// JobsReader (so the view lists the simulator's own jobs) and hides
// Selective, so that a decision comes at every instant with events.
type writeGuard struct {
	x *external.Policy
	policytest.WriteCheck
}

func (g *writeGuard) Name() string             { return g.x.Name() }
func (g *writeGuard) Observe(e policies.Event) { g.x.Observe(e) }
func (g *writeGuard) Err() error               { return g.x.Err() }
func (g *writeGuard) Tick() time.Duration      { return g.x.Tick() }
func (g *writeGuard) ReadsJobsOnly()           { g.x.ReadsJobsOnly() }
func (g *writeGuard) Schedule(v *policies.View) []policies.Action {
	g.Before(v)
	acts := g.x.Schedule(v)
	g.After(v)
	return acts
}

// The external policy only reads its view's jobs (policies.JobsReader):
// the Go best-fit served through it, as it is and declared as bestfit.py
// declares itself (skip_empty, no events), writes into no job at any
// decision on every built-in trace on two and three A100s, with the
// simulator's own jobs in its view. TestServedPolicyIsTheSame holds its
// outputs to the in-process policy's.
func TestExternalWritesNoJob(t *testing.T) {
	var _ policies.JobsReader = (*external.Policy)(nil)
	for _, mode := range []string{"bestfit", "bestfit-fast"} {
		for _, trace := range []string{"demo", "philly", "saturn", "venus"} {
			tr, err := traces.Load(trace)
			require.NoError(t, err)
			for _, server := range []string{"a100-40gb:2", "a100-40gb:3"} {
				srv, err := models.ParseServer(server)
				require.NoError(t, err)
				var g *writeGuard
				_, err = assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Seed: 1,
					Policy: "external", Params: map[string]string{"command": command(mode)},
					Wrap: func(p policies.Policy) policies.Policy { g = &writeGuard{x: p.(*external.Policy)}; return g }}, io.Discard)
				require.NoError(t, err, "%s, %s on %s", mode, trace, server)
				require.Empty(t, g.Wrote, "%s, %s on %s", mode, trace, server)
			}
		}
	}
}
