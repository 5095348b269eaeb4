package results

import (
	"bytes"
	"encoding/csv"
	"io"
	"math"
	"strconv"
)

// csvRows writes CSV rows as encoding/csv's Writer does (the same bytes),
// appending the fields of a row into one buffer instead of building a
// string per field, and writing the buffer out in chunks of rowsChunk.
type csvRows struct {
	w   io.Writer
	buf []byte
	err error
	// odd writes a field that must be quoted (or may be: see plainField)
	// exactly as csv.Writer would, into oddBuf.
	odd    *csv.Writer
	oddBuf bytes.Buffer
}

// rowsChunk is how many bytes of rows csvRows collects before it writes them.
const rowsChunk = 64 << 10

// plainField reports whether csv.Writer writes s as it is: no comma,
// quote, CR or LF in it, not starting with a space, and not `\.`. It checks
// more than that (any byte outside printable ASCII, or a space), so a
// field it refuses is handed to csv.Writer itself.
func plainField(s string) bool {
	if s == `\.` {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ',' || c == '"' {
			return false
		}
	}
	return true
}

// field appends s as a field of the current row (a comma before it unless
// first).
func (r *csvRows) field(first bool, s string) {
	if !first {
		r.buf = append(r.buf, ',')
	}
	if plainField(s) {
		r.buf = append(r.buf, s...)
		return
	}
	if r.odd == nil {
		r.odd = csv.NewWriter(&r.oddBuf)
	}
	r.oddBuf.Reset()
	r.odd.Write([]string{s})
	r.odd.Flush()
	b := r.oddBuf.Bytes()
	r.buf = append(r.buf, b[:len(b)-1]...) // less its line end
}

// raw appends bytes known to need no quoting (numbers) as a field.
func (r *csvRows) raw(b []byte) { r.buf = append(append(r.buf, ','), b...) }

// end ends the current row and writes out a full chunk.
func (r *csvRows) end() {
	r.buf = append(r.buf, '\n')
	if len(r.buf) >= rowsChunk {
		r.write()
	}
}

// row writes a whole row of fields.
func (r *csvRows) row(fields []string) {
	for i, f := range fields {
		r.field(i == 0, f)
	}
	r.end()
}

func (r *csvRows) write() {
	if r.err == nil && len(r.buf) > 0 {
		_, r.err = r.w.Write(r.buf)
	}
	r.buf = r.buf[:0]
}

// Flush writes out the rows collected and reports the first write error.
func (r *csvRows) Flush() error {
	r.write()
	return r.err
}

// jobRow appends job j's jobs.csv fields (JobColumns) as a row, less its
// line end: the empty start of a job that never started, the empty finish,
// JCT, queue and normalized JCT of one that never finished.
func (r *csvRows) jobRow(j *Job) {
	r.field(true, j.Name)
	r.field(false, j.Workload)
	var tmp [32]byte
	r.raw(strconv.AppendInt(tmp[:0], int64(j.GPUs), 10))
	r.field(false, j.State.String())
	r.raw(appendSecs(tmp[:0], j.Submit))
	if j.Start >= 0 {
		r.raw(appendSecs(tmp[:0], j.Start))
	} else {
		r.buf = append(r.buf, ',')
	}
	if j.Finish >= 0 {
		r.raw(appendSecs(tmp[:0], j.Finish))
		r.raw(appendSecs(tmp[:0], j.JCT()))
	} else {
		r.buf = append(r.buf, ",,"...)
	}
	r.raw(appendSecs(tmp[:0], j.Exec))
	if j.Finish >= 0 {
		r.raw(appendSecs(tmp[:0], j.Queue()))
	} else {
		r.buf = append(r.buf, ',')
	}
	r.raw(strconv.AppendInt(tmp[:0], int64(j.Attempts), 10))
	r.raw(strconv.AppendInt(tmp[:0], int64(j.Failed), 10))
	r.num(j.SoloS)
	if j.Finish >= 0 {
		r.num(j.NormJCT())
	} else {
		r.buf = append(r.buf, ',')
	}
}

// num appends num(f)'s digits as a field (they may be "NaN" or "+Inf",
// which need no quoting either).
func (r *csvRows) num(f float64) {
	r.buf = appendFixed3(append(r.buf, ','), f)
}

// appendFixed3 appends strconv.FormatFloat(f, 'f', 3, 64) to b, with
// integer arithmetic where that gives the same digits: f·1000 rounded to the
// nearest integer, for 0 <= f <= 10⁹. The product m is f·1000 correctly
// rounded, and rounding is monotone, so m lies on the same side of every
// halfway point k + ½ as f·1000 (both representable below 2⁵¹), or on it:
// then (a tie, or too close to tell) FormatFloat decides, as it does for
// the values out of range (negative, −0, NaN, infinities).
func appendFixed3(b []byte, f float64) []byte {
	if !(f >= 0 && f <= 1e9) || math.Signbit(f) {
		return strconv.AppendFloat(b, f, 'f', 3, 64)
	}
	m := f * 1000
	q := math.Floor(m)
	switch r := m - q; {
	case r < 0.5:
	case r > 0.5:
		q++
	default:
		return strconv.AppendFloat(b, f, 'f', 3, 64)
	}
	n := int64(q)
	b = appendInt(b, n/1000)
	k := n % 1000
	return append(b, '.', byte('0'+k/100), byte('0'+k/10%10), byte('0'+k%10))
}
