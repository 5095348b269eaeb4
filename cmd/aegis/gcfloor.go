package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
)

// gcFloor is the heap below which the command runs no garbage collection.
const gcFloor = 256 << 20

// gcSentinel is an object only the first collection frees: its finalizer
// hands the collector back to Go's default pacing.
type gcSentinel struct{ _ *byte }

// delayGC keeps the garbage collector off until the process's memory
// reaches gcFloor, and from the first collection on leaves it to Go's
// default (GOGC=100). Most commands (aegis simulate of a 24,000-job trace
// holds about 40 MiB) then end before any collection, which Go's pacing
// would otherwise start from a 4 MiB heap on, several times over, each
// marking the run's live job arrays again; a large run collects as before
// once past the floor, so its peak memory is what it was. GOGC or
// GOMEMLIMIT in the environment leave the collector as they set it, and so
// do the commands that run for long or in many processes (exec and the
// processes it starts: args is the command line after the program's name),
// whose garbage would pile up to the floor.
func delayGC(args []string) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			if a == "exec" || a == "attempt" || a == "fake-train" {
				return
			}
			break
		}
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(gcFloor)
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

// collectIfPast runs a garbage collection if the heap live at the last
// one was at least floor (gcFloor): aegis simulate calls it once it has let go of
// a large trace's jobs (assemble.Run.Released), whose memory the run's
// later allocations then reuse instead of new pages (a million jobs: 83
// MiB less peak RSS, docs/performance.md). A run that has not collected
// (below the floor: every run but the largest), or whose heap is small
// (in a process paced by GOGC, e.g. a benchmark), does not collect now.
func collectIfPast(floor uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() >= floor {
		runtime.GC()
	}
}
