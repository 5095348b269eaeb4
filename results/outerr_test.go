package results

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A file that cannot be written is named in the error, never the
// temporary file WriteFile writes first (errors read "rename
// /x/.out.tmp-123 /x/out: file exists"); a directory in its place is said
// to be one.
func TestWriteFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	body := func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }
	require.NoError(t, os.Mkdir(filepath.Join(dir, "timeline.svg"), 0o755))
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "timeline.svg"), "output " + filepath.Join(dir, "timeline.svg") + ": is a directory, not a file"},
		{dir, "output " + dir + ": is a directory, not a file"},
		{filepath.Join(dir, "none", "out.csv"), "output " + filepath.Join(dir, "none", "out.csv") + ": no such file or directory"},
	} {
		err := WriteFile(tc.path, body)
		require.EqualError(t, err, tc.want)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file left")
}

// A directory's temporary twin left by a process killed while writing it
// (a SIGKILL mid-cell) is removed by the next write of that directory;
// one of a running process is left alone.
func TestNewOutDirRemovesStaleTemporaries(t *testing.T) {
	parent := t.TempDir()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale := filepath.Join(parent, fmt.Sprintf(".cell.tmp-%d-123", dead.Process.Pid))
	live := filepath.Join(parent, fmt.Sprintf(".cell.tmp-%d-456", os.Getpid()))
	for _, d := range []string{stale, live} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "half"), 0o755))
	}
	require.NoError(t, WriteDir(filepath.Join(parent, "cell"), nil, func(string) error { return nil }))
	require.NoDirExists(t, stale)
	require.DirExists(t, live)
	require.DirExists(t, filepath.Join(parent, "cell"))
}
