package executor_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// readEvents reads a run directory's events.jsonl.
func readEvents(t *testing.T, dir string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

// killLeftovers kills, at the end of a test, the process groups of every
// attempt a run directory's journal started, and every process whose
// command line names a file in it (an attempt whose start a failed journal
// did not record), so that a failed or timed-out test leaves no processes
// behind.
func killLeftovers(t *testing.T, dir string) {
	t.Cleanup(func() {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && pid != os.Getpid() && bytes.Contains(b, []byte(dir+"/")) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
		if err != nil {
			return
		}
		for _, line := range bytes.Split(b, []byte{'\n'}) {
			var r struct {
				Type string `json:"type"`
				PID  int    `json:"pid"`
			}
			if json.Unmarshal(line, &r) == nil && r.Type == "started" && r.PID > 1 {
				syscall.Kill(-r.PID, syscall.SIGKILL)
			}
		}
	})
}
