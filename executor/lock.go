package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is returned (wrapped) when another executor holds a run
// directory's lock.
var ErrLocked = errors.New("run directory in use by another executor")

// LockName is the lock file in a run directory. It is never removed: the
// lock is the flock on it, which the kernel releases when its holder exits
// however it ends, and removing the file could let two executors lock
// different files of the same name.
const LockName = "lock"

// lockDir takes the exclusive lock of run directory dir for this process's
// lifetime (or until the returned file is closed) and writes this
// process's PID into the lock file. The lock file is opened close-on-exec,
// so the attempt processes the executor starts do not hold it. If another
// process holds the lock, the error wraps ErrLocked and names its PID.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		holder := "another process"
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				holder = "process " + strconv.Itoa(pid)
			}
		}
		return nil, fmt.Errorf("%s: %w (%s holds %s); wait for it to end, or stop it, before running or resuming this run",
			dir, ErrLocked, holder, path)
	}
	// The PID only helps the message above: a failure to record it
	// (a full disk) costs nothing else, and the journal's own writes
	// report the directory's faults.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
