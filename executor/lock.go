package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned (wrapped) when another executor holds a run
// directory's lock.
var ErrLocked = errors.New("run directory in use by another executor")

// LockName is the lock file in a run directory. It is never removed: the
// lock is the flock on it, which the kernel releases when its holder exits
// however it ends, and removing the file could let two executors lock
// different files of the same name.
const LockName = "lock"

// lockSettle bounds how long lockDir waits for a lock whose holder has
// ended. The lock is on the open file, and a process the holder was
// forking when it was killed shares that file until its exec closes it
// (close-on-exec acts at exec, and Linux has no close-on-fork): measured
// on a loaded 2-core machine, up to 0.1 s after the holder was reaped.
const lockSettle = 5 * time.Second

// lockPoll is how often lockDir tries again while it waits.
const lockPoll = 5 * time.Millisecond

// lockDir takes the exclusive lock of run directory dir for this process's
// lifetime (or until the returned file is closed) and writes this
// process's PID into the lock file. The lock file is opened close-on-exec,
// so the attempt processes the executor starts do not hold it. If a
// running process holds the lock, the error wraps ErrLocked and names its
// PID. If the process that took the lock has ended (or has not written its
// PID yet), lockDir tries again for up to lockSettle before refusing.
func lockDir(dir string) (*os.File, error) { return lockDirWait(dir, lockSettle) }

// lockDirWait is lockDir waiting up to settle for a holder that ended.
func lockDirWait(dir string, settle time.Duration) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := flockWait(f, syscall.LOCK_EX, dir, settle); err != nil {
		f.Close()
		return nil, err
	}
	// The PID only helps the message above and the wait: a failure to
	// record it (a full disk) costs nothing else, and the journal's own
	// writes report the directory's faults.
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// flockWait takes the flock how (LOCK_EX or LOCK_SH) on f, dir's lock
// file, waiting up to settle for a holder that ended (see lockDir).
func flockWait(f *os.File, how int, dir string, settle time.Duration) error {
	path := filepath.Join(dir, LockName)
	deadline := time.Now().Add(settle)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", path, err)
		}
		pid, known := lockHolder(path)
		if running := known && isRunning(pid); running || time.Now().After(deadline) {
			return lockedError(dir, path, pid, known, running)
		}
		time.Sleep(lockPoll)
	}
}

// inUse reports, as lockDir would, that an executor holds run directory
// dir's lock, without taking it for good, creating the lock file or
// writing to it: a resume asks first, so that a directory whose executor
// has taken the lock but not yet written its journal reads as in use, not
// as holding no run.
func inUse(dir string) error {
	f, err := os.Open(filepath.Join(dir, LockName))
	if err != nil {
		return nil // no lock file: no executor ever took this directory
	}
	defer f.Close() // and with it the shared flock
	return flockWait(f, syscall.LOCK_SH, dir, lockSettle)
}

// lockHolder reads the PID the lock's holder wrote in the lock file.
func lockHolder(path string) (pid int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// isRunning reports whether process pid exists and has not ended (a
// zombie has closed its files).
func isRunning(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z' && st.state != 'X'
}

// lockedError is the refusal of a lock held by process pid (known: the
// lock file names it; running: it still runs).
func lockedError(dir, path string, pid int, known, running bool) error {
	holder := "another process holds " + path
	switch {
	case running:
		holder = "process " + strconv.Itoa(pid) + " holds " + path
	case known:
		holder = fmt.Sprintf("process %d took %s and has ended, but a process it started still holds it", pid, path)
	}
	return fmt.Errorf("%s: %w (%s); wait for it to end, or stop it, before running or resuming this run", dir, ErrLocked, holder)
}
