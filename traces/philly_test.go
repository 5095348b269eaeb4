package traces

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

// TestReadPhillyBOM reads the fixture with a UTF-8 byte-order mark in front,
// directly and through ReadLogFile's detection: the jobs are those of the
// plain file (it used to fail with "byte 0: invalid character 'ï'").
func TestReadPhillyBOM(t *testing.T) {
	plain := mustRead(t, "testdata/philly/cluster_job_log.json")
	want, err := ReadPhilly(bytes.NewReader(plain), "f.json")
	require.NoError(t, err)
	withBOM := append([]byte("\ufeff"), plain...)
	path := filepath.Join(t.TempDir(), "cluster_job_log")
	require.NoError(t, os.WriteFile(path, withBOM, 0o644))
	for _, tc := range []struct {
		name string
		read func() (*Log, error)
	}{
		{"ReadPhilly", func() (*Log, error) { return ReadPhilly(bytes.NewReader(withBOM), "f.json") }},
		{"ReadLogFile auto", func() (*Log, error) { return ReadLogFile(path, FormatAuto, models.A100()) }},
		{"ReadLogFile philly", func() (*Log, error) { return ReadLogFile(path, FormatPhilly, models.A100()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := tc.read()
			require.NoError(t, err)
			require.Equal(t, want.Jobs, l.Jobs)
			require.Equal(t, want.Skipped, l.Skipped)
		})
	}
}

// TestReadPhillyErrorOffsets checks that JSON errors name the byte where
// the error is (0-based, counted in the file, byte-order mark included),
// with the job's own offset after it.
func TestReadPhillyErrorOffsets(t *testing.T) {
	const first = `[{"jobid": "j1", "submitted_time": "2017-10-03 02:56:06", "attempts": [{"start_time": "2017-10-03 02:56:12", "end_time": "2017-10-03 03:00:00", "detail": [{"ip": "m", "gpus": ["g0"]}]}]},` + "\n"
	for _, tc := range []struct {
		name, in string
		bad      string // the input from the offending byte on ("" = end of input)
		job      int
		jobAt    int
		want     string
	}{
		{"doubled comma", first + `{"jobid": "j2",,}]`, `,}]`, 1, len(first), "invalid character ','"},
		{"bad literal deep inside", first + `{"jobid": "j2", "attempts": [{"start_time": nul}]}]`, `}]}]`, 1, len(first), "invalid character '}' in literal null"},
		{"second line", first + "{\"jobid\": \"j2\",\n \"vc\": x}]", `x}]`, 1, len(first), "invalid character 'x'"},
		{"after a BOM", "\ufeff" + first + `  {"jobid": "j2" "vc": 1}]`, `"vc": 1}]`, 1, len("\ufeff"+first) + 2, "invalid character '\"' after object key:value pair"},
		{"truncated", first + `{"jobid": "j2", "attempts": [`, "", 1, len(first), "unexpected EOF"},
		{"first job", `[ {"jobid": 7.5e}]`, `}]`, 0, 2, "invalid character '}' in exponent of numeric literal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := len(tc.in)
			if tc.bad != "" {
				at = strings.LastIndex(tc.in, tc.bad)
			}
			_, err := ReadPhilly(strings.NewReader(tc.in), "f.json")
			require.Error(t, err)
			require.Contains(t, err.Error(), fmt.Sprintf("f.json: byte %d: job %d (from byte %d): ", at, tc.job, tc.jobAt))
			require.Contains(t, err.Error(), tc.want)
		})
	}
	// A missing comma between jobs: the decoder's own offset, the second
	// job's first byte.
	in := strings.TrimSuffix(first, ",\n") + ` {"jobid": "j2"}]`
	_, err := ReadPhilly(strings.NewReader(in), "f.json")
	require.ErrorContains(t, err, fmt.Sprintf("byte %d: job 1 (from byte %d): expected comma after array element", strings.LastIndex(in, "{"), strings.LastIndex(in, "{")))
	// Errors outside the jobs count the byte-order mark too.
	_, err = ReadPhilly(strings.NewReader("\ufeff{}"), "f.json")
	require.ErrorContains(t, err, "f.json: byte 4: want a JSON array of jobs")
}

// TestReadLogFileReportsFormat checks Log.Format, the format FormatAuto
// resolved to (the CLI picks Philly's window defaults from it).
func TestReadLogFileReportsFormat(t *testing.T) {
	for _, tc := range []struct {
		path   string
		format Format
		want   Format
	}{
		{"testdata/philly/cluster_job_log.json", FormatAuto, FormatPhilly},
		{"testdata/philly/cluster_job_log.json", FormatPhilly, FormatPhilly},
		{"testdata/helios/cluster_log.csv", FormatAuto, FormatHelios},
		{"testdata/log.csv", FormatAuto, FormatCSV},
		{"testdata/trace.jsonl", FormatAuto, FormatJSONL},
		{"philly", FormatAuto, FormatCSV},
	} {
		t.Run(tc.path+"/"+string(tc.format), func(t *testing.T) {
			l, err := ReadLogFile(tc.path, tc.format, models.A100())
			require.NoError(t, err)
			require.Equal(t, tc.want, l.Format)
		})
	}
}
