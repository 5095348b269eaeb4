package traces

import (
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

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

// writeCSVReference is WriteCSV as encoding/csv writes it, record by
// record.
func writeCSVReference(w io.Writer, t *Trace) error {
	cw := csv.NewWriter(w)
	solo := t.HasSoloS()
	head := []string{"submit_offset_s", "workload_id", "num_gpus", "job_id"}
	if solo {
		head = append(head, "solo_s")
	}
	cw.Write(head)
	for _, j := range t.Jobs {
		rec := []string{strconv.FormatFloat(j.Submit.Seconds(), 'f', -1, 64), j.Workload, strconv.Itoa(j.GPUs), j.ID}
		if solo {
			rec = append(rec, soloField(j.SoloS))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// TestWriteCSVIsCSVWriter holds WriteCSV to encoding/csv's bytes on random
// traces whose ids and workloads need quoting or not, long enough to be
// written in several pieces.
func TestWriteCSVIsCSVWriter(t *testing.T) {
	words := []string{"", "a", "resnet50_bs64", "a,b", "\"q\"", " lead", "\tlead", "\u00a0nbsp", "\u00e9t\u00e9", `\.`, `\.x`, "x\r", "l\nf", "trail ", "#c", "1e5"}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 40 {
		tr := &Trace{Name: "t"}
		n := 1 + rng.IntN(4000)
		for i := range n {
			j := Job{ID: words[rng.IntN(len(words))] + strconv.Itoa(i), Workload: words[rng.IntN(len(words))],
				Submit: time.Duration(rng.Int64N(1e16)), GPUs: 1 + rng.IntN(8)}
			if round%2 == 0 && rng.IntN(3) == 0 {
				j.SoloS = rng.Float64() * 1e5
			}
			if rng.IntN(50) == 0 {
				j.ID = words[rng.IntN(len(words))]
			}
			tr.Jobs = append(tr.Jobs, j)
		}
		var got, want strings.Builder
		require.NoError(t, WriteCSV(&got, tr))
		require.NoError(t, writeCSVReference(&want, tr))
		require.Equal(t, want.String(), got.String(), "round %d", round)
	}
}

// TestIDLinesIsAMap holds idLines to a map of every id read: decimal ids
// below and above the bound, leading zeros, signs and words, repeated in
// random order.
func TestIDLinesIsAMap(t *testing.T) {
	ids := []string{"0", "1", "7", "00", "01", "-1", "+1", "1e3", "a", "", "65535", "65536", "99999", "123456789", "1234567890", "x1", "1 "}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		x, ref := newIDLines(rng.IntN(3)*20000), map[string]int{}
		for line := 2; line < 200; line++ {
			id := ids[rng.IntN(len(ids))]
			if rng.IntN(2) == 0 {
				id = strconv.Itoa(rng.IntN(300))
			}
			prev, dup := x.add(id, line)
			p, ok := ref[id]
			require.Equal(t, ok, dup, id)
			require.Equal(t, p, prev, id)
			if !ok {
				ref[id] = line
			}
		}
	}
	n, ok := decimal("123456789")
	require.True(t, ok)
	require.Equal(t, 123456789, n)
	for _, s := range []string{"", "00", "-1", "1x", "1234567890"} {
		_, ok := decimal(s)
		require.False(t, ok, s)
	}
}

// TestReadCSVCopiesOutOfInput: the jobs' ids and workloads do not point
// into the input as read, so that it is freed once read (a million-job
// file's 49 MB in aegis simulate): the ids lie back to back in one string
// in file order, and jobs of one workload share its one copy.
func TestReadCSVCopiesOutOfInput(t *testing.T) {
	for _, in := range []string{
		"submit_offset_s,workload_id,num_gpus,job_id\n0,w1,1,a\n1,w2,1,bb\n2,w1,1,ccc\n3,w1,1,d\n",
		"submit_offset_s,workload_id,num_gpus,job_id\n0,\"w1\",1,a\n1,w2,1,bb\n2,w1,1,ccc\n3,w1,1,d\n", // encoding/csv's
		"submit_offset_s,workload_id,num_gpus\n0,w1,1\n1,w2,1\n2,w1,1\n3,w1,1\n",                       // ids made up
	} {
		tr, err := ReadCSV(strings.NewReader(in), "t.csv")
		require.NoError(t, err)
		js := tr.Jobs
		require.Len(t, js, 4)
		for i := 1; i < len(js); i++ {
			prev := unsafe.StringData(js[i-1].ID)
			require.Equal(t, unsafe.Add(unsafe.Pointer(prev), len(js[i-1].ID)), unsafe.Pointer(unsafe.StringData(js[i].ID)),
				"job %d's id follows job %d's", i, i-1)
		}
		require.Equal(t, "w1", js[0].Workload)
		require.Same(t, unsafe.StringData(js[0].Workload), unsafe.StringData(js[2].Workload))
		require.Same(t, unsafe.StringData(js[0].Workload), unsafe.StringData(js[3].Workload))
	}
}
