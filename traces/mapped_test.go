//go:build linux

package traces

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoadMappedIsLoad: a trace file read from its mapped pages is the
// trace the reader gives for the same bytes (plain, quoted, CRLF, comments,
// unsorted rows, solo_s, made-up ids), read after the pages are unmapped
// (a string pointing into them would fault here); files the mapping leaves
// to the reader (JSON Lines, a line over MaxLine, bad rows, an empty file)
// say so and get the reader's trace or error from Load.
func TestLoadMappedIsLoad(t *testing.T) {
	dir := t.TempDir()
	head := "submit_offset_s,workload_id,num_gpus,job_id\n"
	for _, tc := range []struct {
		name, in string
		mapped   bool
	}{
		{"plain.csv", head + "0,w1,1,a\n1.5,w2,2,bb\n2,w1,1,ccc\n", true},
		{"quoted.csv", head + "0,\"w1\",1,a\n1,w2,1,\" b,c \"\n", true},
		{"crlf.csv", strings.ReplaceAll(head+"0,w1,1,a\n1,w2,1,b\n", "\n", "\r\n"), true},
		{"comments.csv", "# a comment\n" + head + "\n# another\n3,w1,1,x\n1,w1,1,y\n2,w2,1,z", true},
		{"solo.csv", "submit_offset_s,workload_id,num_gpus,solo_s\n0,w,1,60\n1,w,1,\n", true},
		{"demo.csv", string(demoCSV), true},
		{"jobs.jsonl", `{"submit_offset_s": 0, "workload_id": "w", "num_gpus": 1}` + "\n", false},
		{"long.csv", head + "0,w1,1," + strings.Repeat("x", MaxLine) + "\n", false},
		{"bad.csv", head + "0,w1,0,a\n", false},
		{"dup.csv", head + "0,w1,1,a\n1,w1,1,a\n", false},
		{"empty.csv", "", false},
	} {
		path := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(path, []byte(tc.in), 0o644))
		f, err := os.Open(path)
		require.NoError(t, err)
		got, ok, err := loadMapped(f, path)
		f.Close()
		require.Equal(t, tc.mapped, ok, tc.name)
		want, wantErr := Load(path)
		if !tc.mapped {
			require.Nil(t, got, tc.name)
			require.NoError(t, err, tc.name)
			if !strings.HasSuffix(tc.name, ".jsonl") {
				require.Error(t, wantErr, tc.name)
			}
			continue
		}
		require.NoError(t, err, tc.name)
		require.NoError(t, wantErr, tc.name)
		read, err := readCSV(limitLines(bytes.NewReader([]byte(tc.in))), path, 0, 0)
		require.NoError(t, err, tc.name)
		require.Equal(t, read, got, tc.name)
		require.Equal(t, read, want, tc.name)
	}
}

// TestParseMappedFileCutShort: a mapped file cut short while it is read
// (its pages gone, SIGBUS) is an error naming the file, not a crash.
func TestParseMappedFileCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	in := "submit_offset_s,workload_id,num_gpus\n" + strings.Repeat("0,w,1\n", 10000)
	require.NoError(t, os.WriteFile(path, []byte(in), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	m, unmap, err := mapFile(f, len(in))
	require.NoError(t, err)
	defer unmap()
	require.NoError(t, os.Truncate(path, 0))
	_, ok, err := parseMapped(m, path)
	require.True(t, ok)
	require.ErrorContains(t, err, path+" changed while it was read")
}

// FuzzLoadMapped: whatever a file holds, a trace read from its mapped
// pages is the one the reader gives for the same bytes, and bytes the
// reader refuses are never taken as a trace by the mapping (Load then
// hands them to the reader, which names the error).
func FuzzLoadMapped(f *testing.F) {
	head := "submit_offset_s,workload_id,num_gpus,job_id\n"
	for _, s := range []string{head + "0,w1,1,a\n1.5,w2,2,bb\n", head + "0,\"w1\",1,\" b,c \"\r\n", "# c\n" + head + "\n3,w1,1,x\n1,w1,1,y",
		"submit_offset_s,workload_id,num_gpus,solo_s\n0,w,1,60\n1,w,1,\n", head + "0,w1,0,a\n", ""} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(dir, "t.csv")
		require.NoError(t, os.WriteFile(path, in, 0o644))
		fh, err := os.Open(path)
		require.NoError(t, err)
		got, ok, err := loadMapped(fh, path)
		fh.Close()
		if !ok {
			require.Nil(t, got)
			require.NoError(t, err)
			return
		}
		require.NoError(t, err)
		read, err := readCSV(limitLines(bytes.NewReader(in)), path, 0, 0)
		require.NoError(t, err, "the mapping read %q, the reader did not", in)
		require.Equal(t, read, got)
	})
}
