package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
)

// startExec starts this test binary as aegis with args.
func startExec(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), selfEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	return cmd, &stderr
}

// holds waits up to 30 s until the lock of run directory dir names pid.
func holds(dir string, pid int) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, executor.LockName))
		if strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// refusesResume checks that aegis exec --resume dir is refused while the
// executor pid holds dir, naming it.
func refusesResume(t *testing.T, dir string, pid int) {
	t.Helper()
	cmd, stderr := startExec(t, "exec", "--resume", dir)
	err := cmd.Wait()
	require.Error(t, err, "a second executor resumed %s", dir)
	require.Contains(t, stderr.String(), "run directory in use by another executor (process "+strconv.Itoa(pid)+" holds")
}

// While aegis exec runs, aegis exec --resume of its directory is refused
// (it ran most jobs twice and broke the journal).
func TestExecConcurrentResumeRefused(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	killGroups(t, out)
	cmd, _ := startExec(t, "exec", "--emulate", "a100-40gb:2", "--trace", smallTrace(t), "--speedup", "1", "--out", out)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	require.True(t, holds(out, cmd.Process.Pid), "the executor takes the lock")
	refusesResume(t, out, cmd.Process.Pid)
}

// stressFault is one way the fault test ends a running aegis exec.
type stressFault struct {
	name string
	hit  func(p *os.Process, rng *rand.Rand)
}

// stressFaults are the faults of the table: a kill at a random
// time, SIGTERM, SIGINT, SIGTERM twice 20 ms apart, and SIGTERM then
// SIGKILL (0-200 ms later, while the executor shuts the jobs down).
var stressFaults = []stressFault{
	{"SIGKILL", func(p *os.Process, _ *rand.Rand) { p.Signal(syscall.SIGKILL) }},
	{"SIGTERM", func(p *os.Process, _ *rand.Rand) { p.Signal(syscall.SIGTERM) }},
	{"SIGINT", func(p *os.Process, _ *rand.Rand) { p.Signal(syscall.SIGINT) }},
	{"SIGTERM twice", func(p *os.Process, _ *rand.Rand) {
		p.Signal(syscall.SIGTERM)
		time.Sleep(20 * time.Millisecond)
		p.Signal(syscall.SIGTERM)
	}},
	{"SIGTERM then SIGKILL", func(p *os.Process, rng *rand.Rand) {
		p.Signal(syscall.SIGTERM)
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		p.Signal(syscall.SIGKILL)
	}},
}

// stressCase is one fault test: aegis exec under a policy, hit by faults.
type stressCase struct {
	policy, trace string
	speedup       string
	jobs          int
	cycles        int           // faults to hit the run with (fewer if it ends first)
	after         [2]int        // a fault comes after a random number of milliseconds in this range
	faults        []stressFault // taken in turn
	refuse        bool          // also check that a concurrent --resume is refused
}

// stressRun runs c into a new run directory: aegis exec, then a resume
// after every fault, until the run ends (rc 0); a session that ends before
// its fault must end with rc 0, and one that a SIGTERM or SIGINT alone hit
// with rc 1 saying how to resume (or 0). It checks that every job ended
// exactly once and finished (executor.Audit: none completed twice, no
// attempt's process left) and returns the faults that hit and the OOM
// failures journaled.
func stressRun(t *testing.T, c stressCase, rng *rand.Rand) (hits map[string]int, ooms int, took time.Duration) {
	out := filepath.Join(t.TempDir(), "run")
	killGroups(t, out)
	fresh := []string{"exec", "--emulate", "a100-40gb:3", "--trace", c.trace, "--policy", c.policy, "--speedup", c.speedup, "--out", out}
	args := fresh
	began := time.Now()
	hits = map[string]int{}
	ended := false
	for k := 0; k < c.cycles && !ended; {
		cmd, stderr := startExec(t, args...)
		done := waitFor(cmd)
		args = []string{"exec", "--resume", out}
		if c.refuse {
			require.True(t, holds(out, cmd.Process.Pid), "the executor takes the lock")
			refusesResume(t, out, cmd.Process.Pid)
		}
		select {
		case err := <-done:
			require.NoError(t, err, "a session ended before its fault: %s", stderr.String())
			ended = true
		case <-time.After(time.Duration(c.after[0]+rng.IntN(c.after[1]-c.after[0])) * time.Millisecond):
			f := c.faults[k%len(c.faults)]
			f.hit(cmd.Process, rng)
			err := waitOrDump(cmd, done, finishLimit)
			require.NotErrorIs(t, err, errHung, "%s: %s", f.name, stderr.String())
			var ee *exec.ExitError
			// A signal before the executor caught signals (it was
			// starting) ends it as the signal does; a caught SIGTERM or
			// SIGINT ends it with rc 1 saying how to resume (0 when the
			// run was over).
			if errors.As(err, &ee) && ee.ExitCode() >= 0 && (f.name == "SIGTERM" || f.name == "SIGINT") {
				require.Contains(t, stderr.String(), "continue with aegis exec --resume "+out, "%s: %v", f.name, err)
			}
			require.NotContains(t, stderr.String(), "loop:", f.name)
			hits[f.name]++
			k++
			if _, err := os.Stat(filepath.Join(out, "journal.jsonl")); err != nil {
				args = fresh // it ended before it had a run: start it again
			}
		}
	}
	if !ended {
		cmd, stderr := startExec(t, args...)
		require.NoError(t, waitOrDump(cmd, waitFor(cmd), finishLimit), stderr.String())
	}
	jobs, err := executor.Audit(out)
	require.NoError(t, err)
	require.Equal(t, c.jobs, jobs)
	b, err := os.ReadFile(filepath.Join(out, "journal.jsonl"))
	require.NoError(t, err)
	if n := strings.Count(string(b), `"type":"finished"`); n != c.jobs {
		var why []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"type":"stopped"`) || strings.Contains(l, `"type":"failed"`) || strings.Contains(l, `"type":"interrupted"`) {
				why = append(why, l)
			}
		}
		t.Fatalf("%d of %d jobs finished:\n%s", n, c.jobs, strings.Join(why, "\n"))
	}
	return hits, strings.Count(string(b), `"failure":"oom"`), time.Since(began)
}

// finishLimit bounds the last session of a fault test, the resume that runs
// the trace to its end: minutes past what it needs even on a loaded host
// (seconds), so that an executor that never ends fails the test with its
// goroutines instead of hanging it until go test's timeout.
const finishLimit = 5 * time.Minute

// errHung says an aegis exec session did not end in time.
var errHung = errors.New("did not end")

// waitFor returns a channel that gets cmd's Wait.
func waitFor(cmd *exec.Cmd) <-chan error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}

// waitOrDump waits for cmd's Wait on done, at most limit: past it, cmd (a
// Go program) gets SIGQUIT, so its goroutines' stacks land in its stderr,
// and the error says it hung.
func waitOrDump(cmd *exec.Cmd, done <-chan error, limit time.Duration) error {
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		return fmt.Errorf("aegis %s: %w within %v (its goroutines are in its stderr)", strings.Join(cmd.Args[1:], " "), errHung, limit)
	}
}

// stressPolicies are the policies the fault tests run.
var stressPolicies = []string{"exclusive", "aegis", "lucid", "horus"}

// The short fault test (make test): each policy on a three-job trace, hit
// by each fault in turn, every job done exactly once.
func TestExecFaults(t *testing.T) {
	for _, pol := range stressPolicies {
		t.Run(pol, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(1, 17))
			c := stressCase{policy: pol, trace: smallTrace(t), speedup: "150", jobs: 3, cycles: len(stressFaults),
				after: [2]int{30, 250}, faults: stressFaults}
			hits, _, took := stressRun(t, c, rng)
			t.Logf("%s: faults %v in %v: every job finished exactly once, no process left", pol, hits, took.Round(time.Millisecond))
		})
	}
}

// make exec-stress: aegis exec on the philly trace (60 jobs, 3 emulated
// A100s, speedup 2000) under each policy, hit AEGIS_EXEC_STRESS times
// (20) per seed at random moments by SIGKILL, SIGTERM, SIGINT, a double
// SIGTERM or SIGTERM then SIGKILL, in turn, and resumed after each (a
// concurrent resume refused each time), then run to the end: every job
// ends exactly once and finished, none completes twice, no attempt's
// process is left, and under AEGIS jobs ran out of memory (the recovery
// path was exercised). AEGIS_EXEC_STRESS_SEEDS (1,2,3) picks the
// moments; AEGIS_EXEC_STRESS_POLICIES (all) the policies.
func TestExecKillResumeStress(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("AEGIS_EXEC_STRESS"))
	if n <= 0 {
		t.Skip("set AEGIS_EXEC_STRESS=20 (make exec-stress) to hit aegis exec on the philly trace that many times per seed and policy")
	}
	seeds := strings.Split(cmp.Or(os.Getenv("AEGIS_EXEC_STRESS_SEEDS"), "1,2,3"), ",")
	pols := stressPolicies
	if s := os.Getenv("AEGIS_EXEC_STRESS_POLICIES"); s != "" {
		pols = strings.Split(s, ",")
	}
	for _, pol := range pols {
		t.Run(pol, func(t *testing.T) {
			for _, s := range seeds {
				seed, err := strconv.ParseUint(s, 10, 64)
				require.NoError(t, err, "AEGIS_EXEC_STRESS_SEEDS")
				rng := rand.New(rand.NewPCG(seed, 17))
				c := stressCase{policy: pol, trace: "philly", speedup: "2000", jobs: 60, cycles: n,
					after: [2]int{100, 1600}, faults: stressFaults, refuse: true}
				hits, ooms, took := stressRun(t, c, rng)
				if pol == "aegis" {
					require.Positive(t, ooms, "no job ran out of memory: the recovery path was not exercised")
				}
				t.Logf("%s seed %d: faults %v in %v, %d OOM failures: 60 jobs, each finished exactly once, none completed twice, no process left",
					pol, seed, hits, took.Round(time.Second), ooms)
			}
		})
	}
}

// A --resume of a directory that holds no run is refused, naming it, and
// leaves nothing behind (it left a lock file: a typo made a run directory).
func TestExecResumeNoRunLeavesNoLock(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"exec", "--resume", dir}, &stdout, &stderr)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr.String(), dir+": no run to resume (no journal.jsonl there; start one with aegis exec --out "+dir+")")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents)
}

// A session that outlives its limit is ended (SIGQUIT, which dumps a Go
// program's goroutines) and reported as hung; one that ends in time
// reports its own exit.
func TestWaitOrDump(t *testing.T) {
	for _, c := range []struct {
		args []string
		hung bool
	}{{[]string{"60"}, true}, {[]string{"0"}, false}} {
		cmd := exec.Command("sleep", c.args...)
		require.NoError(t, cmd.Start())
		err := waitOrDump(cmd, waitFor(cmd), 500*time.Millisecond)
		require.Equal(t, c.hung, errors.Is(err, errHung), "sleep %v: %v", c.args, err)
		if !c.hung {
			require.NoError(t, err)
		}
	}
}
