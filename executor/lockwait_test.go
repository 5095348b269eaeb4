package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A lock held through an open file whose recorded holder has ended (a
// process the holder was forking still shares the file until its exec) is
// waited for, up to the bound; a lock whose holder runs is refused at once.
func TestLockWaitsForEndedHolder(t *testing.T) {
	const gone = 999999999 // no process has this PID
	tests := []struct {
		name    string
		holder  string        // the lock file's content
		release time.Duration // when the test lets go of the lock; 0: never
		settle  time.Duration
		err     string
	}{
		{"holder ended, lock let go", strconv.Itoa(gone) + "\n", 50 * time.Millisecond, time.Minute, ""},
		{"no holder recorded, lock let go", "", 50 * time.Millisecond, time.Minute, ""},
		{"holder ended, lock kept", strconv.Itoa(gone) + "\n", 0, 100 * time.Millisecond,
			"process 999999999 took DIR/lock and has ended, but a process it started still holds it"},
		{"no holder recorded, lock kept", "", 0, 100 * time.Millisecond, "another process holds DIR/lock"},
		{"holder runs", strconv.Itoa(os.Getpid()) + "\n", 0, time.Minute,
			"process " + strconv.Itoa(os.Getpid()) + " holds DIR/lock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, LockName)
			require.NoError(t, os.WriteFile(path, []byte(tt.holder), 0o644))
			h, err := os.Open(path)
			require.NoError(t, err)
			defer h.Close()
			require.NoError(t, syscall.Flock(int(h.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
			if tt.release > 0 {
				time.AfterFunc(tt.release, func() { h.Close() })
			}
			start := time.Now()
			f, err := lockDirWait(dir, tt.settle)
			if tt.err != "" {
				require.ErrorIs(t, err, ErrLocked)
				require.ErrorContains(t, err, strings.ReplaceAll(tt.err, "DIR", dir))
				require.Less(t, time.Since(start), time.Minute, "a running holder is not waited for")
				return
			}
			require.NoError(t, err)
			defer f.Close()
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b))
		})
	}
}

// A directory whose executor has taken the lock but not yet written its
// journal (or only part of it) is in use to a resume, not a directory
// without a run; once the lock is free, the missing journal is said again
// and the probe has not touched the lock file.
func TestResumeOfStartingRunIsInUse(t *testing.T) {
	for _, tt := range []struct {
		name    string
		journal string // "-": none
	}{
		{"no journal yet", "-"},
		{"empty journal", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "journal.jsonl")
			if tt.journal != "-" {
				require.NoError(t, os.WriteFile(path, []byte(tt.journal), 0o644))
			}
			f, err := lockDir(dir)
			require.NoError(t, err)
			_, _, err = OpenJournal(path)
			require.ErrorIs(t, err, ErrLocked)
			require.ErrorContains(t, err, fmt.Sprintf("process %d holds", os.Getpid()))
			require.NoError(t, f.Close())
			if tt.journal == "-" {
				_, _, err = OpenJournal(path)
				require.ErrorContains(t, err, "no run to resume")
				b, err := os.ReadFile(filepath.Join(dir, LockName))
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("%d\n", os.Getpid()), string(b), "the probe wrote to the lock file")
			}
		})
	}
}
