package results

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, rel)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(names)
	return names
}

func writeFiles(files map[string]string) func(string) error {
	return func(dir string) error {
		for name, body := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestWriteDir(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		existing map[string]string // files in the target before; nil: no target
		target   string            // relative to the test's root
		fill     map[string]string
		owned    []string // entries of an existing target a rerun may replace
		fillErr  error
		wantErr  string
		want     map[string]string // files in the root afterwards
	}{
		{name: "new target", target: "out", fill: map[string]string{"a.csv": "1", "sub/b.csv": "2"},
			want: map[string]string{"out/a.csv": "1", "out/sub/b.csv": "2"}},
		{name: "new parents", target: "x/y/out", fill: map[string]string{"a.csv": "1"},
			want: map[string]string{"x/y/out/a.csv": "1"}},
		{name: "a rerun replaces the target whole",
			existing: map[string]string{"out/t.csv": "old run's", "out/a.csv": "old", "out/sub/old.csv": "o"},
			target:   "out", owned: []string{"a.csv", "t.csv", "sub"}, fill: map[string]string{"a.csv": "new", "sub/b.csv": "2"},
			want: map[string]string{"out/a.csv": "new", "out/sub/b.csv": "2"}},
		{name: "a target holding other files is refused and kept",
			existing: map[string]string{"out/notes.txt": "mine", "out/a.csv": "old"},
			target:   "out", owned: []string{"a.csv"}, fill: map[string]string{"a.csv": "new"},
			wantErr: "holds notes.txt, which this command does not write", want: map[string]string{"out/notes.txt": "mine", "out/a.csv": "old"}},
		{name: "failed fill leaves no target", target: "out", fill: map[string]string{"a.csv": "1"},
			fillErr: boom, wantErr: "boom", want: map[string]string{}},
		{name: "failed fill leaves no new parents", target: "x/y/out", fill: map[string]string{"a.csv": "1"},
			fillErr: boom, wantErr: "boom", want: map[string]string{}},
		{name: "failed fill leaves an existing target as it was",
			existing: map[string]string{"out/a.csv": "old"}, target: "out", owned: []string{"a.csv"},
			fill: map[string]string{"a.csv": "new", "b.csv": "2"}, fillErr: boom, wantErr: "boom",
			want: map[string]string{"out/a.csv": "old"}},
		{name: "target is a file", existing: map[string]string{"out": "file"}, target: "out",
			fill: map[string]string{"a.csv": "1"}, wantErr: "not a directory", want: map[string]string{"out": "file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, writeFiles(tc.existing)(root))
			err := WriteDir(filepath.Join(root, tc.target), func(n string) bool { return slices.Contains(tc.owned, n) }, func(dir string) error {
				require.NoError(t, writeFiles(tc.fill)(dir))
				return tc.fillErr
			})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			got := map[string]string{}
			for _, rel := range listDir(t, root) {
				p := filepath.Join(root, rel)
				fi, err := os.Stat(p)
				require.NoError(t, err)
				if fi.IsDir() {
					continue
				}
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				got[filepath.ToSlash(rel)] = string(b)
			}
			require.Equal(t, tc.want, got)
			if tc.existing == nil && tc.wantErr != "" {
				require.Equal(t, []string{"."}, listDir(t, root), "new directories left behind")
			}
			// nothing but the target's top component is left in the root
			for _, rel := range listDir(t, root) {
				require.NotContains(t, rel, ".tmp-", "temporary directory left behind")
				require.NotContains(t, rel, ".old-", "set-aside directory left behind")
			}
		})
	}
}

func TestOutDirTargetPermissions(t *testing.T) {
	target := filepath.Join(t.TempDir(), "out")
	require.NoError(t, WriteDir(target, nil, func(string) error { return nil }))
	fi, err := os.Stat(target)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
}

func TestOutDirCommitOnce(t *testing.T) {
	d, err := NewOutDir(filepath.Join(t.TempDir(), "out"), nil)
	require.NoError(t, err)
	require.NoError(t, d.Commit())
	require.ErrorContains(t, d.Commit(), "already committed")
	d.Discard() // no effect after Commit
	_, err = os.Stat(d.Target())
	require.NoError(t, err)
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log.csv")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	err := WriteFile(p, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return errors.New("boom")
	})
	require.ErrorContains(t, err, "boom")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "old", string(b), "a failed write changed the file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "temporary file left behind")

	require.NoError(t, WriteFile(p, func(w io.Writer) error {
		_, err := w.Write([]byte("new"))
		return err
	}))
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))
	require.ErrorContains(t, WriteFile(filepath.Join(dir, "no", "such", "f"), func(io.Writer) error { return nil }), "output "+filepath.Join(dir, "no", "such", "f")+": no such file or directory")
}
