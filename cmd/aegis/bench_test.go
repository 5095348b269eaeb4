//go:build unix

package main

import (
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkSimulateCommand is the whole of `aegis simulate --trace
// venus24k.csv --policy exclusive --server a100-40gb:8 --out DIR` in the
// process (issue 30's whole command): building the command, reading the
// trace file, the run, writing every output file and the provenance. The
// trace is `aegis trace gen --like venus --jobs 24000 --seed 1`. What a
// separate process adds (starting it, the runtime's and packages' init)
// is not in it: docs/performance.md quotes both.
func BenchmarkSimulateCommand(b *testing.B) {
	dir := b.TempDir()
	trace := filepath.Join(dir, "venus24k.csv")
	var errb strings.Builder
	require.Zero(b, run([]string{"trace", "gen", "--like", "venus", "--jobs", "24000", "--seed", "1", "--out", trace}, io.Discard, &errb), errb.String())
	out := filepath.Join(dir, "out")
	args := []string{"simulate", "--trace", trace, "--policy", "exclusive", "--server", "a100-40gb:8", "--out", out}
	b.ReportAllocs()
	cpu0, runs := cpuTime(), 0
	for b.Loop() {
		errb.Reset()
		if rc := run(args, io.Discard, &errb); rc != 0 {
			b.Fatalf("rc %d: %s", rc, errb.String())
		}
		runs++
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(runs), "cpu-ns/op")
	}
}

// cpuTime is the process's user + system CPU time so far (all threads:
// the garbage collector's work included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
