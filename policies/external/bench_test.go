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
// children (the policy processes) have used.
func cpuTime() (self, kids time.Duration) {
	t := func(who int) time.Duration {
		var r syscall.Rusage
		syscall.Getrusage(who, &r)
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return t(syscall.RUSAGE_SELF), t(syscall.RUSAGE_CHILDREN)
}

// BenchmarkPythonBestFit is the protocol's cost: the Python example policy
// (policy external, python3 python/bestfit.py) on the Venus-like 24,000-job
// trace (aegis trace gen --like venus --jobs 24000 --seed 1) on 16 A100s.
// It reports decisions per second of wall time, the decisions of a run,
// those asked of the process (bestfit.py declares skip_empty: a decision
// with no job pending is answered by aegis) and the round trips per second,
// and the CPU time of a run: aegis's, the Python process's, and both
// (cpu-s/op). BenchmarkGoBestFit is the same policy in the process.
func BenchmarkPythonBestFit(b *testing.B) {
	benchExternal(b, strconv.Quote(python3(b))+" python/bestfit.py")
}

// BenchmarkServedBestFit is the same through the protocol with the Go
// policy on the other side (external.Serve), declared as bestfit.py
// declares itself: the protocol's cost without Python's.
func BenchmarkServedBestFit(b *testing.B) { benchExternal(b, command("bestfit-fast")) }

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
	tr, err := traces.MapTrace(log.Name, log.Jobs, models.A100(), traces.Exact)
	require.NoError(b, err)
	srv, err := models.ParseServer("a100-40gb:16")
	require.NoError(b, err)
	return assemble.Run{Trace: tr, Server: srv, Seed: 1}
}

func benchExternal(b *testing.B, cmd string) {
	r := venus24k(b)
	r.Policy, r.Params = "external", map[string]string{"command": cmd}
	n, asked := 0, 0
	var x *external.Policy
	r.Wrap = func(p policies.Policy) policies.Policy { x = p.(*external.Policy); return counting{x, &n} }
	runs := 0
	self0, kids0 := cpuTime()
	for b.Loop() {
		_, err := assemble.Simulate(context.Background(), r, io.Discard)
		require.NoError(b, err)
		asked += x.Asked()
		runs++
	}
	self, kids := cpuTime()
	self, kids = self-self0, kids-kids0
	per := func(v float64) float64 { return v / float64(runs) }
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(asked)/b.Elapsed().Seconds(), "asked/s")
	b.ReportMetric(per(float64(n)), "decisions/op")
	b.ReportMetric(per(float64(asked)), "asked/op")
	b.ReportMetric(per((self + kids).Seconds()), "cpu-s/op")
	b.ReportMetric(per(self.Seconds()), "aegis-cpu-s/op")
	b.ReportMetric(per(kids.Seconds()), "policy-cpu-s/op")
}
