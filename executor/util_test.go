package executor_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
// attempt a run directory's journal started, so that a failed or timed-out
// test leaves no processes behind.
func killLeftovers(t *testing.T, dir string) {
	t.Cleanup(func() {
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
