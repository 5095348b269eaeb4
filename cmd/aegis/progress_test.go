package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeTerminal is a buffer that says it is a terminal.
type fakeTerminal struct{ bytes.Buffer }

func (*fakeTerminal) Terminal() bool { return true }

// Progress shows on a terminal only: a buffer, a file or a pipe gets none.
func TestTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.False(t, terminal(&bytes.Buffer{}))
	require.False(t, terminal(f))
	require.False(t, terminal(w))
	require.True(t, terminal(&fakeTerminal{}))
	require.Nil(t, newBar(f, "x", 10))
}

// aegis simulate counts the jobs done on a terminal (stderr) and clears
// the bar before the summary; on anything else stderr stays empty.
func TestSimulateProgress(t *testing.T) {
	var out bytes.Buffer
	tty := &fakeTerminal{}
	code := run([]string{"simulate", "--trace", "demo", "--policy", "exclusive"}, &out, tty)
	require.Equal(t, 0, code, tty.String())
	require.Contains(t, tty.String(), "simulate: jobs done")
	require.Contains(t, tty.String(), "(1/60)", "jobs done of the trace's")
	require.NotContains(t, out.String(), "jobs done", "the summary on stdout stays clean")

	code, stdout, stderr := aegis("simulate", "--trace", "demo", "--policy", "exclusive")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr, "not a terminal: quiet")
	require.Equal(t, out.String(), stdout)
}

// aegis run's bar says what it does once every cell is done (the
// combined files, tables and figures), not sitting silent at 100 %.
func TestRunProgress(t *testing.T) {
	tty := &fakeTerminal{}
	code := run([]string{"run", "--trace", "demo", "--policy", "exclusive", "--out", t.TempDir()}, tty, &bytes.Buffer{})
	require.Equal(t, 0, code, tty.String())
	require.Contains(t, tty.String(), "run: tables, figures 100%")
	require.Contains(t, tty.String(), "(1/1)")
}
