package executor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// procStat is what the executor reads of a process from /proc/PID/stat.
type procStat struct {
	state byte
	pgrp  int
	// start is the process start time in clock ticks since boot: with the
	// PID it identifies a process, so a reused PID is not mistaken for it.
	start uint64
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) is in parentheses and may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); field N is f[N-3].
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: pgrp: %w", pid, err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: starttime: %w", pid, err)
	}
	return procStat{state: f[0][0], pgrp: pgrp, start: start}, nil
}

// ProcessStart returns process pid's start time in clock ticks since boot:
// with the PID it identifies the process (SignalIfCaught).
func ProcessStart(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.start, err
}

// SignalIfCaught sends sig to process pid, started at start, if the
// process has a handler for sig installed, and reports whether the process
// is gone (ended, a zombie, or its PID taken by another). A Go program
// drops SIGUSR1/2 that arrive before it asks for them, so a caller sends
// a signal again until the process is gone.
func SignalIfCaught(pid int, start uint64, sig syscall.Signal) (gone bool) {
	st, err := readStat(pid)
	if err != nil || st.start != start || st.state == 'Z' {
		return true
	}
	if ok, err := catches(pid, sig); err == nil && ok {
		syscall.Kill(pid, sig)
	}
	return false
}

// alive reports whether the process pid with start time start still runs
// (a zombie has ended).
func alive(pid int, start uint64) bool {
	st, err := readStat(pid)
	return err == nil && st.start == start && st.state != 'Z' && st.state != 'X'
}

// pids returns the PIDs of the processes in /proc for which keep is true
// (nil if /proc cannot be read).
func pids(keep func(pid int) bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && keep(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// findByArg returns the PIDs of processes whose command line has arg as
// one of its arguments.
func findByArg(arg string) []int {
	return pids(func(pid int) bool {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		return err == nil && slices.ContainsFunc(bytes.Split(b, []byte{0}), func(a []byte) bool { return string(a) == arg })
	})
}

// groupMembers returns the live (not zombie) processes of process group
// pgid. Zombies are dead: they wait only for a parent (or an init that may
// not reap) to collect them.
func groupMembers(pgid int) []int {
	return pids(func(pid int) bool {
		st, err := readStat(pid)
		return err == nil && st.pgrp == pgid && st.state != 'Z' && st.state != 'X'
	})
}

// groupAlive reports whether any live process of process group pgid
// remains.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return len(groupMembers(pgid)) > 0
}

// signalGroup sends sig to process group pgid; a group that is gone is
// not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v to process group %d: %w", sig, pgid, err)
	}
	return nil
}

// reapGroup kills what is left of the process group of an attempt's shim
// (PID pid, started at start) once the shim has ended, and reports whether
// anything was left. Linux does not reuse a number that is still some
// process group's ID, so the group's members are the shim's leftovers
// unless the PID now belongs to another process (reused after the group
// emptied): then nothing is signalled.
func reapGroup(pid int, start uint64) (bool, error) {
	if pid <= 1 {
		return false, nil
	}
	if st, err := readStat(pid); err == nil && st.start != start {
		return false, nil
	}
	if !groupAlive(pid) {
		return false, nil
	}
	return true, signalGroup(pid, syscall.SIGKILL)
}
