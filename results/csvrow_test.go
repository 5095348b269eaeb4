package results

import (
	"bytes"
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// refJobRow is a job's jobs.csv fields as strings, the way they were built
// before csvRows (one string per field, then csv.Writer): the reference
// TestJobRowsAsCSVWriter compares csvRows's bytes with.
func refJobRow(j *Job) []string {
	start, finish, jct, queue, norm := "", "", "", "", ""
	if j.Start >= 0 {
		start = secs(j.Start)
	}
	if j.Finish >= 0 {
		finish, jct, queue, norm = secs(j.Finish), secs(j.JCT()), secs(j.Queue()), num(j.NormJCT())
	}
	return []string{j.Name, j.Workload, strconv.Itoa(j.GPUs), j.State.String(), secs(j.Submit),
		start, finish, jct, secs(j.Exec), queue, strconv.Itoa(j.Attempts), strconv.Itoa(j.Failed),
		num(j.SoloS), norm}
}

// TestJobRowsAsCSVWriter checks that csvRows writes jobs.csv rows and extra
// fields byte for byte as csv.Writer writes the reference rows: names that
// need quoting or only look like it, empty fields, unfinished and unstarted
// jobs, odd numbers.
func TestJobRowsAsCSVWriter(t *testing.T) {
	names := []string{"", "j1", "a,b", `say "hi"`, " lead", "trail ", "in side", "line\nbreak", "cr\rx",
		`\.`, `\..`, "tab\tx", "\tlead", "ünïcode", "\u00a0nbsp", "-", "x'y", "#1"}
	sec := time.Second
	var jobs []Job
	for i, n := range names {
		j := Job{ID: policies.JobID(i), Name: n, Workload: names[(i+3)%len(names)], GPUs: 1 + i%3,
			SoloS: float64(i) * 12.3456, State: policies.State(i % 5), Submit: time.Duration(i) * 1500 * time.Millisecond,
			Start: -1, Finish: -1, Exec: time.Duration(i) * 777 * time.Microsecond, Attempts: i % 4, Failed: i % 2}
		switch i % 3 {
		case 1:
			j.Start = j.Submit + sec
		case 2:
			j.Start, j.Finish = j.Submit+sec, j.Submit+time.Duration(i)*sec+sec/2
		}
		if i == 4 {
			j.SoloS = math.Inf(1)
		}
		if i == 5 {
			j.SoloS = 0 // a normalized JCT of +Inf
		}
		jobs = append(jobs, j)
	}
	var want bytes.Buffer
	cw := csv.NewWriter(&want)
	cw.Write(append(JobColumns, "extra"))
	for i := range jobs {
		cw.Write(append(refJobRow(&jobs[i]), names[len(names)-1-i]))
	}
	cw.Flush()
	require.NoError(t, cw.Error())
	var got bytes.Buffer
	vals := make([]string, len(jobs))
	for i := range vals {
		vals[i] = names[len(names)-1-i]
	}
	require.NoError(t, WriteJobsCSVWith(&got, jobs, ExtraColumn{Name: "extra", Values: vals}))
	require.Equal(t, want.String(), got.String())
}

// TestCSVRowsChunks checks that rows beyond one chunk are all written, in
// order, and that a write error is reported.
func TestCSVRowsChunks(t *testing.T) {
	var want, got bytes.Buffer
	cw := csv.NewWriter(&want)
	r := csvRows{w: &got}
	for i := range 20000 {
		row := []string{strconv.Itoa(i), "w,x", "plain"}
		cw.Write(row)
		r.row(row)
	}
	cw.Flush()
	require.NoError(t, r.Flush())
	require.Equal(t, want.String(), got.String())
	bad := csvRows{w: failWriter{}}
	bad.row([]string{"a"})
	require.Error(t, bad.Flush())
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, csv.ErrFieldCount }

// BenchmarkJobRow writes one finished job's jobs.csv row (the row a streamed
// run writes at each finish), and BenchmarkFixed3 one of its two numbers
// with three decimals by strconv and by appendFixed3.
func BenchmarkJobRow(b *testing.B) {
	r := csvRows{w: io.Discard}
	j := Job{ID: 12345, Name: "12345", Workload: "resnet50_imagenet_bs64_1gpu", GPUs: 1, State: policies.Done,
		SoloS: 5321.25, Submit: 81234 * time.Second, Start: 90321500 * time.Millisecond,
		Finish: 96843250 * time.Millisecond, Exec: 6521750 * time.Millisecond, Attempts: 1}
	b.ReportAllocs()
	for b.Loop() {
		r.jobRow(&j)
		r.end()
	}
}

func BenchmarkFixed3(b *testing.B) {
	buf := make([]byte, 0, 64)
	for _, c := range []struct {
		name string
		f    func([]byte, float64) []byte
	}{
		{"strconv", func(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'f', 3, 64) }},
		{"appendFixed3", appendFixed3},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf = c.f(buf[:0], 1+float64(i%4096)/777) // a normalized JCT
			}
		})
	}
}
