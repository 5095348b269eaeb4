package executor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestJournalTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := CreateJournal(path)
	require.NoError(t, err)
	require.NoError(t, j.Append(Record{Type: "run", Run: &Run{Start: time.Unix(1, 0)}}, Record{Type: "arrived", Job: 0}))
	require.NoError(t, j.Close())
	_, err = CreateJournal(path)
	require.Error(t, err, "a journal is never overwritten")
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
