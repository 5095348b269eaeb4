package executor

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestJournalTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	run := Record{Type: "run", Run: &Run{Start: time.Unix(1, 0)}}
	j, err := CreateJournal(path, run)
	require.NoError(t, err)
	require.NoError(t, j.Append(Record{Type: "arrived", Job: 0}))
	require.NoError(t, j.Close())
	_, err = CreateJournal(path, run)
	require.ErrorIs(t, err, fs.ErrExist, "a journal is never overwritten")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"launch","t":5,"jo`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	j, recs, err := OpenJournal(path)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.NoError(t, j.Append(Record{Type: "arrived", Job: 1}))
	require.NoError(t, j.Close())
	_, recs, err = OpenJournal(path)
	require.NoError(t, err, "the torn line was cut off before appending")
	require.Len(t, recs, 3)
	require.Equal(t, 1, recs[2].Job)
}

// A journal appears with its head or not at all: a head that cannot be
// written leaves no journal (the run can be started again in the
// directory), a temporary file left by a creation that was killed is
// replaced, and an existing journal is left as it is.
func TestCreateJournalWhole(t *testing.T) {
	run := Record{Type: "run", Run: &Run{Start: time.Unix(1, 0).UTC()}}
	bad := Record{Type: "job", Spec: &Spec{Name: "a", SoloS: math.NaN()}}
	tests := []struct {
		name   string
		before map[string]string // files in the directory before
		head   []Record
		err    string
	}{
		{"head", nil, []Record{run, {Type: "job", Spec: &Spec{Name: "a"}}}, ""},
		{"leftover temporary file", map[string]string{"journal.jsonl.new": "{\"type\":\"run\""}, []Record{run}, ""},
		{"no run record", nil, []Record{{Type: "arrived"}}, "a journal starts with its run record"},
		{"no head", nil, nil, "a journal starts with its run record"},
		{"head not written", nil, []Record{run, bad}, "unsupported value: NaN"},
		{"journal exists", map[string]string{"journal.jsonl": "{}\n"}, []Record{run}, "file already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.before {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
			}
			path := filepath.Join(dir, "journal.jsonl")
			j, err := CreateJournal(path, tt.head...)
			require.NoFileExists(t, path+".new")
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				if old, ok := tt.before["journal.jsonl"]; ok {
					b, err := os.ReadFile(path)
					require.NoError(t, err)
					require.Equal(t, old, string(b))
					return
				}
				require.NoFileExists(t, path)
				j, err = CreateJournal(path, run)
				require.NoError(t, err, "the directory can start a run")
				tt.head = []Record{run}
			}
			require.NoError(t, err)
			require.NoError(t, j.Close())
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			recs, torn, err := ReadJournal(f, path)
			require.NoError(t, err)
			require.False(t, torn)
			require.Equal(t, tt.head, recs)
		})
	}
}

func TestReadJournalErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, err string }{
		{"bad middle line", "{\"type\":\"run\"}\nnot json\n{\"type\":\"arrived\"}\n", "j:2"},
		{"unknown field", "{\"type\":\"run\",\"bogus\":1}\n{\"type\":\"x\"}\n", "j:1"},
		{"no type", "{}\n{\"type\":\"x\"}\n", "j:1: no type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadJournal(strings.NewReader(tc.data), "j")
			require.ErrorContains(t, err, tc.err)
		})
	}
	recs, torn, err := ReadJournal(strings.NewReader("{\"type\":\"run\"}\n{\"type\":\"arr"), "j")
	require.NoError(t, err)
	require.True(t, torn)
	require.Len(t, recs, 1)
}

func FuzzReadJournal(f *testing.F) {
	f.Add([]byte("{\"type\":\"run\",\"run\":{\"start\":\"2026-01-01T00:00:00Z\",\"settings\":{}}}\n{\"type\":\"arrived\",\"t\":1,\"job\":0}\n"))
	f.Add([]byte("{\"type\":\"launch\",\"gpus\":[0,1]}\n{\"ty"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, _, err := ReadJournal(strings.NewReader(string(b)), "f")
		if err == nil {
			for _, r := range recs {
				if r.Type == "" {
					t.Fatal("record without type accepted")
				}
			}
		}
	})
}
