package traces

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

func TestLimitLines(t *testing.T) {
	long := strings.Repeat("x", MaxLine)
	for _, tc := range []struct {
		name, in string
		line     int // of the error; 0 for none
	}{
		{"short lines", "a,b\n1,2\n", 0},
		{"a line of exactly the limit", "a\n" + long + "\nb\n", 0},
		{"one byte over", "a\n" + long + "x\nb\n", 2},
		{"no line break at all", long + long, 1},
		{"over at the end", "a\nb\nc\n" + long + "xy", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whole, and one byte per read (short inputs only: a MiB
			// a byte at a time is slow): the limit holds across reads.
			rs := []io.Reader{strings.NewReader(tc.in)}
			if len(tc.in) < 100 {
				rs = append(rs, iotest.OneByteReader(strings.NewReader(tc.in)))
			}
			for _, r := range rs {
				got, err := io.ReadAll(limitLines(r))
				if tc.line == 0 {
					require.NoError(t, err)
					require.Equal(t, tc.in, string(got))
					continue
				}
				require.Equal(t, LineTooLongError{tc.line}, err)
			}
		})
	}
}

// TestReadersBoundLines: a file without line breaks (as /dev/zero) is an
// error naming the limit, for traces and logs alike, not an endless read.
func TestReadersBoundLines(t *testing.T) {
	dir := t.TempDir()
	zeros := filepath.Join(dir, "zeros.csv")
	require.NoError(t, os.WriteFile(zeros, bytes.Repeat([]byte{0}, MaxLine+10), 0o644))
	jl := filepath.Join(dir, "long.jsonl")
	require.NoError(t, os.WriteFile(jl, []byte(`{"workload_id": "`+strings.Repeat("w", MaxLine)+`"}`), 0o644))
	const want = "line 1 is longer than 1048576 bytes, the limit of one line"
	for _, tc := range []struct {
		path    string
		formats []Format
	}{{zeros, []Format{FormatAuto, FormatCSV, FormatHelios}}, {jl, []Format{FormatAuto, FormatJSONL}}} {
		_, err := Load(tc.path)
		require.ErrorContains(t, err, want)
		for _, f := range tc.formats {
			_, err = ReadLogFile(tc.path, f, models.A100())
			require.ErrorContains(t, err, want, f)
		}
	}
}
