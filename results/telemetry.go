package results

import (
	"bufio"
	"io"
	"strconv"

	"github.com/aegis-sched/aegis/policies"
)

// TelemetryColumns is the header of telemetry.csv (see runfiles, which reads
// it back).
var TelemetryColumns = []string{"gpu", "t_s", "smact", "smocc", "drama", "util", "used_mib"}

// TelemetryWriter writes telemetry.csv: one row per GPU per whole second,
// in the order the samples arrive. Pressure indicators have 4 decimals,
// utilization 2 and memory 1.
type TelemetryWriter struct {
	w   *bufio.Writer
	err error
	buf []byte
}

// NewTelemetryWriter writes the header to w; call Flush at the end.
func NewTelemetryWriter(w io.Writer) *TelemetryWriter {
	t := ContinueTelemetryWriter(w)
	for i, c := range TelemetryColumns {
		if i > 0 {
			t.buf = append(t.buf, ',')
		}
		t.buf = append(t.buf, c...)
	}
	t.buf = append(t.buf, '\n')
	_, t.err = t.w.Write(t.buf)
	return t
}

// ContinueTelemetryWriter writes rows to w without a header: w continues a
// telemetry.csv that has one (a resumed run appending to its file).
func ContinueTelemetryWriter(w io.Writer) *TelemetryWriter {
	return &TelemetryWriter{w: bufio.NewWriter(w)}
}

// Sample writes one row: GPU gpu's sample at whole second sec.
func (t *TelemetryWriter) Sample(gpu int, sec int64, x policies.Sample) {
	if t.err != nil {
		return
	}
	b := t.buf[:0]
	b = strconv.AppendInt(b, int64(gpu), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, sec, 10)
	for _, f := range [...]struct {
		v    float64
		prec int
	}{{x.SMACT, 4}, {x.SMOCC, 4}, {x.DRAMA, 4}, {x.UtilPct, 2}, {x.UsedMiB, 1}} {
		b = append(b, ',')
		b = strconv.AppendFloat(b, f.v, 'f', f.prec, 64)
	}
	b = append(b, '\n')
	t.buf = b
	_, t.err = t.w.Write(b)
}

// Flush writes out buffered rows and reports the first write error.
func (t *TelemetryWriter) Flush() error {
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}
