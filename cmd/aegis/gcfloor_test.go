package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDelayGC: the collector is off under the floor until the first
// collection, then back to Go's default; exec and the processes it starts
// keep the default throughout.
func TestDelayGC(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: delayGC leaves the collector alone")
	}
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	defer debug.SetMemoryLimit(math.MaxInt64)
	percent := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }

	for _, args := range [][]string{{"exec", "--trace", "x"}, {"attempt"}, {"fake-train", "--workload", "w"}} {
		delayGC(args)
		require.Equal(t, 100, percent(), args)
	}
	delayGC([]string{"simulate", "--trace", "demo"})
	require.Equal(t, -1, percent())
	require.Equal(t, int64(gcFloor), debug.SetMemoryLimit(-1))
	runtime.GC() // the first collection frees the sentinel: its finalizer restores the default
	require.Eventually(t, func() bool { return debug.SetMemoryLimit(-1) == math.MaxInt64 }, 10*time.Second, time.Millisecond)
	require.Equal(t, 100, percent())
}

// TestCollectIfPast: a collection runs only when the heap live at the
// last one reached the floor.
func TestCollectIfPast(t *testing.T) {
	keep := make([]byte, 1<<20)
	runtime.GC()
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	n := forced()
	collectIfPast(1 << 50)
	require.Equal(t, n, forced(), "under the floor: no collection")
	collectIfPast(1 << 10)
	require.Equal(t, n+1, forced(), "past the floor: one collection")
	runtime.KeepAlive(keep)
}
