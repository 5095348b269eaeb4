package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var s []string
	for _, e := range es {
		s = append(s, e.Name())
	}
	return s
}

func TestWriteAllOrNothing(t *testing.T) {
	for _, o := range []Options{{}, {SyncFile: true, SyncDir: true}, {Temp: "fixed"}} {
		dir := t.TempDir()
		if o.Temp != "" {
			o.Temp = filepath.Join(dir, o.Temp)
		}
		p := filepath.Join(dir, "f.txt")
		require.NoError(t, WriteFile(p, []byte("one\n"), o))
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, "one\n", string(b))
		st, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), st.Mode().Perm())

		boom := errors.New("boom")
		err = Write(p, o, func(w io.Writer) error {
			_, err := io.WriteString(w, "two, half")
			require.NoError(t, err)
			return boom
		})
		require.ErrorIs(t, err, boom, "write's own error, as it is")
		b, err = os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, "one\n", string(b), "a failed write leaves the file as it was")
		require.Equal(t, []string{"f.txt"}, entries(t, dir), "no temporary file left")
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	require.Error(t, WriteFile(filepath.Join(dir, "no", "such", "f"), nil, Options{}))
	// A directory where the fixed temporary file goes blocks the write.
	tmp := filepath.Join(dir, "f.tmp")
	require.NoError(t, os.Mkdir(tmp, 0o755))
	require.Error(t, WriteFile(filepath.Join(dir, "f"), []byte("x"), Options{Temp: tmp}))
	require.NoFileExists(t, filepath.Join(dir, "f"))
	// The rename fails onto a non-empty directory: the temporary file goes.
	target := filepath.Join(dir, "d")
	require.NoError(t, os.MkdirAll(filepath.Join(target, "x"), 0o755))
	require.Error(t, WriteFile(target, []byte("x"), Options{SyncFile: true}))
	require.ElementsMatch(t, []string{"d", "f.tmp"}, entries(t, dir))
}

// Publish puts the file in place and leaves it open for more (the
// journal's appends).
func TestPublish(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "j")
	f, err := Create(p, Options{SyncFile: true, SyncDir: true, Temp: p + ".new"})
	require.NoError(t, err)
	defer f.Abort()
	_, err = f.Write([]byte("head\n"))
	require.NoError(t, err)
	require.NoFileExists(t, p, "nothing in place before Publish")
	w, err := f.Publish()
	require.NoError(t, err)
	f.Abort() // does nothing now
	_, err = w.Write([]byte("more\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "head\nmore\n", string(b))
	require.Equal(t, []string{"j"}, entries(t, dir))
}
