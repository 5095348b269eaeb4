package external_test

import (
	"context"
	"io"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/external"
	"github.com/aegis-sched/aegis/traces"
)

// counting counts an external policy's decisions.
type counting struct {
	*external.Policy
	n *int
}

func (c counting) Schedule(v *policies.View) []policies.Action {
	*c.n++
	return c.Policy.Schedule(v)
}

// cpuTime is the CPU time (user + system) this process and its waited-for
// children have used.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	t := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return t(&self) + t(&kids)
}

// BenchmarkPythonBestFit is the protocol's cost: the Python example policy
// (policy external, python3 python/bestfit.py) on the Venus-like 24,000-job
// trace (aegis trace gen --like venus --jobs 24000 --seed 1) on 16 A100s.
// It reports decisions per second of wall time, the decisions of a run,
// and cpu-s/op: the CPU time of a run, aegis and the Python process
// together. BenchmarkGoBestFit is the same policy in the process.
func BenchmarkPythonBestFit(b *testing.B) {
	benchExternal(b, strconv.Quote(python3(b))+" python/bestfit.py")
}

// BenchmarkServedBestFit is the same through the protocol with the Go
// policy on the other side (external.Serve): the protocol's cost without
// Python's.
func BenchmarkServedBestFit(b *testing.B) { benchExternal(b, command("bestfit")) }

// BenchmarkGoBestFit is the same trace under the Go example policy, in the
// process.
func BenchmarkGoBestFit(b *testing.B) {
	r := venus24k(b)
	r.Policy = "bestfit"
	for b.Loop() {
		_, err := assemble.Simulate(context.Background(), r, io.Discard)
		require.NoError(b, err)
	}
}

func venus24k(b *testing.B) assemble.Run { return venus24kT(b) }

func venus24kT(b testing.TB) assemble.Run {
	log, err := traces.GenerateLike("venus", 24000, 1, 2)
	require.NoError(b, err)
	tr, err := traces.MapTrace(log.Name, log.Jobs, models.A100())
	require.NoError(b, err)
	srv, err := models.ParseServer("a100-40gb:16")
	require.NoError(b, err)
	return assemble.Run{Trace: tr, Server: srv, Seed: 1}
}

func benchExternal(b *testing.B, cmd string) {
	r := venus24k(b)
	r.Policy, r.Params = "external", map[string]string{"command": cmd}
	n := 0
	r.Wrap = func(p policies.Policy) policies.Policy { return counting{p.(*external.Policy), &n} }
	runs := 0
	cpu0 := cpuTime()
	for b.Loop() {
		_, err := assemble.Simulate(context.Background(), r, io.Discard)
		require.NoError(b, err)
		runs++
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(n)/float64(runs), "decisions/op")
	b.ReportMetric(cpu.Seconds()/float64(runs), "cpu-s/op")
}
