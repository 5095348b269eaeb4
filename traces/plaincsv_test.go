package traces

import (
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

type record struct {
	line   int
	fields []string
}

// readAll reads every record of rs with its line, and the error that
// ended it.
func readAll(rs records) ([]record, error) {
	var out []record
	for {
		rec, err := rs.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, err
		}
		line, _ := rs.FieldPos(0)
		out = append(out, record{line, append([]string(nil), rec...)})
	}
}

// TestPlainCSVIsCSV holds plainCSV to encoding/csv as openCSV sets it up,
// on random input without quotes: the same records on the same lines.
func TestPlainCSVIsCSV(t *testing.T) {
	const alphabet = "ab1 ,,\n\n\r#\t\u00e9"
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []string{"", "\n", "\r", "\r\n", "a", "a\r", "a\r\r\n", "#x\na,b\n", " #x\n", "a,\n,b\r\n\n,\n", "x\ry\n"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(40) {
			r := []rune(alphabet)
			b.WriteRune(r[rng.IntN(len(r))])
		}
		cases = append(cases, b.String())
	}
	for _, in := range cases {
		cr := csv.NewReader(strings.NewReader(in))
		cr.Comment = '#'
		cr.FieldsPerRecord = -1
		cr.ReuseRecord = true
		want, werr := readAll(cr)
		require.NoError(t, werr, "%q", in)
		rs := newRecords(strings.NewReader(in), 0)
		_, plain := rs.(*plainCSV)
		require.True(t, plain, "%q", in)
		got, err := readAll(rs)
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, got, "%q", in)
	}
}

// TestRecordsWithQuotesOrErrors: input with a quote, or a reader that
// fails, is read by encoding/csv, the error after the records before it.
func TestRecordsWithQuotesOrErrors(t *testing.T) {
	rs := newRecords(strings.NewReader("a,\"b,c\"\n"), 0)
	got, err := readAll(rs)
	require.NoError(t, err)
	require.Equal(t, []record{{1, []string{"a", "b,c"}}}, got)

	boom := errors.New("boom")
	rs = newRecords(io.MultiReader(strings.NewReader("a,b\nc\n"), errReader{boom}), 8)
	got, err = readAll(rs)
	require.ErrorIs(t, err, boom)
	require.Equal(t, []record{{1, []string{"a", "b"}}, {2, []string{"c"}}}, got)
}

// BenchmarkLoadCSV reads a 24,000-job trace file (`aegis trace gen --like
// venus --jobs 24000 --seed 1`) as aegis simulate --trace FILE does.
func BenchmarkLoadCSV(b *testing.B) {
	log, err := GenerateLike("venus", 24000, 1, 2)
	require.NoError(b, err)
	wl, err := MapWorkloads(log.Jobs, models.A100())
	require.NoError(b, err)
	path := b.TempDir() + "/venus24k.csv"
	var sb strings.Builder
	require.NoError(b, WriteLogCSV(&sb, log.Jobs, wl))
	require.NoError(b, os.WriteFile(path, []byte(sb.String()), 0o644))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}
