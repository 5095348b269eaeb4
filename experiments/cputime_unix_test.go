//go:build unix

package experiments

import (
	"syscall"
	"time"
)

// cpuTime is the process's user + system CPU time so far (all threads:
// the garbage collector's work included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
