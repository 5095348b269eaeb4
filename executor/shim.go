package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aegis-sched/aegis/internal/atomicfile"
)

// Status is how an attempt's command ended, as the attempt shim records it
// in the attempt's status file.
type Status struct {
	Code   int    `json:"code"`             // exit code; 128+n when killed by signal n
	Signal string `json:"signal,omitempty"` // the signal that killed it
	Error  string `json:"error,omitempty"`  // why the command could not start
}

// RunAttempt is the attempt shim (`aegis attempt --status FILE -- ARGV...`):
// the process the executor starts for each attempt, leader of the job's
// process group. It runs ARGV with the shim's stdio, environment and
// working directory, records how it ended in FILE (written atomically) and
// exits with its code (it waits while the status file cannot be written,
// trying again, unless its directory is gone). The shim ignores the signals the executor sends the
// group (the command receives them), so that it outlives the command and
// records its end; a resumed executor, which is not its parent, reads it.
func RunAttempt(args []string, stderr io.Writer) int {
	if len(args) < 4 || args[0] != "--status" || args[2] != "--" {
		fmt.Fprintln(stderr, "usage: aegis attempt --status FILE -- COMMAND [ARG...]")
		return 2
	}
	file, argv := args[1], args[3:]
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	// The command dies with the shim, even when the shim is killed (its
	// own children, in the group, are then the executor's to kill).
	// Pdeathsig fires when the thread that started the command ends: this
	// goroutine keeps its thread for the shim's life.
	runtime.LockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var st Status
	err := cmd.Start()
	if err == nil {
		// SIGUSR1 and SIGUSR2 sent to the shim alone (the emulator's
		// "done" and "out of memory") go to the command once it catches
		// them; the group's signals reach the command directly.
		child := cmd.Process.Pid
		go func() {
			for s := range sigs {
				if s == syscall.SIGUSR1 || s == syscall.SIGUSR2 {
					go forwardWhenCaught(child, s.(syscall.Signal))
				}
			}
		}()
		err = cmd.Wait()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		ws, _ := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			st.Code, st.Signal = 128+int(ws.Signal()), ws.Signal().String()
		} else {
			st.Code = ee.ExitCode()
		}
	default:
		st.Code, st.Error = 127, err.Error()
		fmt.Fprintf(os.Stderr, "aegis attempt: %v\n", err)
	}
	// Whatever the command left behind in its process group (background
	// workers, stray children) ends with it: no orphans.
	me := os.Getpid()
	for _, pid := range groupMembers(syscall.Getpgrp()) {
		if pid != me {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	// The status is how the executor, or a resumed one, learns how the
	// job ended: while it cannot be written (the run directory failed),
	// the shim keeps it and tries again every statusRetry, so that the
	// job counts as running rather than as failed; unless the status
	// file's directory is gone (the run was deleted: nobody will read it).
	for i := 0; ; i++ {
		err := writeStatus(file, st)
		if err == nil {
			break
		}
		if _, serr := os.Stat(filepath.Dir(file)); errors.Is(serr, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "aegis attempt: %v; its directory is gone: not trying again\n", err)
			return st.Code
		}
		if i == 0 {
			fmt.Fprintf(stderr, "aegis attempt: %v; trying again every %v\n", err, statusRetry)
		}
		time.Sleep(statusRetry)
	}
	return st.Code
}

// statusRetry is how often a shim tries again to write a status it could
// not write.
const statusRetry = time.Second

// writeStatus writes an attempt's status file atomically.
func writeStatus(file string, st Status) error {
	b, _ := json.Marshal(st)
	// A fixed temporary name: a shim killed while writing leaves one
	// file that the next try overwrites. Synced before the rename, so the
	// status is whole after a crash.
	err := atomicfile.WriteFile(file, append(b, '\n'), atomicfile.Options{SyncFile: true, Temp: file + ".tmp"})
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// readStatus reads an attempt's status file; ok is false when there is
// none.
func readStatus(file string) (st Status, ok bool, err error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("status: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, false, fmt.Errorf("status %s: %w", file, err)
	}
	return st, true, nil
}

// FakeTrain is `aegis fake-train --workload ID`: the process an emulated
// job runs. It waits until the emulator ends it: SIGUSR1 means the work is
// done (exit 0), SIGUSR2 that the emulated GPU ran out of memory (a PyTorch
// style OOM message on stderr, exit 1); SIGTERM or SIGINT end it as they
// would a training script.
func FakeTrain(workload string, stderr io.Writer) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGINT)
	switch s := <-sigs; s {
	case syscall.SIGUSR1:
		return 0
	case syscall.SIGUSR2:
		fmt.Fprintf(stderr, "torch.OutOfMemoryError: CUDA out of memory. (emulated GPU, workload %s)\n", workload)
		return 1
	default:
		return 128 + int(s.(syscall.Signal))
	}
}

// forwardWhenCaught sends sig to pid once pid has a handler for it (or
// gives up when pid is gone or after a second: the sender repeats).
func forwardWhenCaught(pid int, sig syscall.Signal) {
	for range 1000 {
		caught, err := catches(pid, sig)
		if err != nil {
			return
		}
		if caught {
			syscall.Kill(pid, sig)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// catches reports whether process pid has a handler for sig installed
// (/proc/PID/status, SigCgt).
func catches(pid int, sig syscall.Signal) (bool, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return false, err
			}
			return m&(1<<(uint(sig)-1)) != 0, nil
		}
	}
	return false, errors.New("no SigCgt")
}
