package results

import (
	"bufio"
	"io"
	"math"
	"strconv"

	"github.com/aegis-sched/aegis/policies"
)

// TelemetryColumns is the header of telemetry.csv (see runfiles, which reads
// it back).
var TelemetryColumns = []string{"gpu", "t_s", "smact", "smocc", "drama", "util", "used_mib"}

// PowerColumn is telemetry.csv's last column, after TelemetryColumns: the
// GPU's power draw in watts (aegis exec: NVML's reading or an emulated
// GPU's power model, empty where not read; aegis simulate --telemetry: the
// second's mean power as the energy meter charges it, empty without a power
// model). A run directory of aegis exec begun before the column existed
// has none.
const PowerColumn = "power_w"

// TelemetryColumnSet says whether telemetry.csv has PowerColumn.
type TelemetryColumnSet int

const (
	// TelemetryPlain is TelemetryColumns (an aegis exec run resumed in a
	// directory begun before PowerColumn existed).
	TelemetryPlain TelemetryColumnSet = iota
	// TelemetryPower adds PowerColumn (aegis exec, aegis simulate).
	TelemetryPower
)

// TelemetryWriter writes telemetry.csv: one row per GPU per whole second,
// in the order the samples arrive. Pressure indicators have 4 decimals,
// utilization 2, memory and power 1.
type TelemetryWriter struct {
	w     *bufio.Writer
	err   error
	buf   []byte
	power bool
}

// NewTelemetryWriter writes the header of cols to w; call Flush at the end.
func NewTelemetryWriter(w io.Writer, cols TelemetryColumnSet) *TelemetryWriter {
	t := ContinueTelemetryWriter(w, cols)
	for i, c := range TelemetryColumns {
		if i > 0 {
			t.buf = append(t.buf, ',')
		}
		t.buf = append(t.buf, c...)
	}
	if t.power {
		t.buf = append(t.buf, ","+PowerColumn...)
	}
	t.buf = append(t.buf, '\n')
	_, t.err = t.w.Write(t.buf)
	return t
}

// ContinueTelemetryWriter writes rows to w without a header: w continues a
// telemetry.csv that has one, of columns cols (a resumed run appending to
// its file).
func ContinueTelemetryWriter(w io.Writer, cols TelemetryColumnSet) *TelemetryWriter {
	return &TelemetryWriter{w: bufio.NewWriter(w), power: cols == TelemetryPower}
}

// Sample writes one row: GPU gpu's sample at whole second sec (an empty
// power cell when the file has PowerColumn).
func (t *TelemetryWriter) Sample(gpu int, sec int64, x policies.Sample) {
	t.SamplePower(gpu, sec, x, math.NaN())
}

// SamplePower writes one row with the GPU's power draw w in watts: NaN
// leaves the cell empty. Without PowerColumn, w is not written.
func (t *TelemetryWriter) SamplePower(gpu int, sec int64, x policies.Sample, w float64) {
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
	if t.power {
		b = append(b, ',')
		if !math.IsNaN(w) {
			b = strconv.AppendFloat(b, w, 'f', 1, 64)
		}
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
