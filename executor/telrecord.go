package executor

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
)

// TelemetryName is the run directory's record of the telemetry the policy
// saw: one row per GPU and reading taken into the window, in the columns
// aegis simulate --telemetry writes (results.TelemetryColumns; t_s is the
// reading's whole second of run time) and the GPU's power draw read with it
// (results.PowerColumn; empty where the source read none). A GPU's second
// has at most one row, its first reading's; a missed reading, or one whose
// pressure signals were dropped in a run that has them, has none.
const TelemetryName = "telemetry.csv"

// telRecord appends the readings to the run directory's telemetry.csv.
// Recording is best effort: after a write error it says so once and stops,
// and the run goes on.
type telRecord struct {
	f    *os.File
	w    *results.TelemetryWriter
	log  io.Writer
	last map[int]int64 // GPU -> the last second recorded
}

// openTelRecord opens dir's telemetry.csv for appending: a new file gets
// the header; an existing one (a resumed run) loses a torn last line, which
// a killed executor can leave, and gets rows only.
func openTelRecord(dir string, log io.Writer) (*telRecord, error) {
	p := filepath.Join(dir, TelemetryName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	b, err := io.ReadAll(f)
	if err == nil {
		keep := int64(bytes.LastIndexByte(b, '\n') + 1)
		if err = f.Truncate(keep); err == nil {
			_, err = f.Seek(keep, io.SeekStart)
		}
		b = b[:keep]
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("executor: %s: %w", p, err)
	}
	r := &telRecord{f: f, log: log, last: lastSeconds(b)}
	if len(b) == 0 {
		r.w = results.NewTelemetryWriter(f, results.TelemetryPower)
	} else {
		// A run begun before telemetry.csv had power goes on without.
		head, _, _ := bytes.Cut(b, []byte{'\n'})
		cols := results.TelemetryPlain
		if bytes.HasSuffix(head, []byte(","+results.PowerColumn)) {
			cols = results.TelemetryPower
		}
		r.w = results.ContinueTelemetryWriter(f, cols)
	}
	return r, nil
}

// lastSeconds reads the last second recorded per GPU from a telemetry.csv's
// rows (gpu, t_s first), so that a resumed run never repeats one.
func lastSeconds(b []byte) map[int]int64 {
	last := map[int]int64{}
	for i, line := range bytes.Split(b, []byte{'\n'}) {
		f := bytes.SplitN(line, []byte{','}, 3)
		if i == 0 || len(f) < 3 {
			continue // the header, or the empty piece after the last newline
		}
		g, err1 := strconv.Atoi(string(f[0]))
		sec, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		if err1 == nil && err2 == nil {
			last[g] = max(last[g], sec)
		}
	}
	return last
}

// add records GPU g's reading s, with its power draw w in watts (NaN: not
// read), unless the GPU's second already has one.
func (r *telRecord) add(g int, s policies.Sample, w float64) {
	if r == nil || r.w == nil {
		return
	}
	sec := int64(s.At / time.Second)
	if l, ok := r.last[g]; ok && sec <= l {
		return
	}
	r.last[g] = sec
	r.w.SamplePower(g, sec, s, w)
}

// flush writes the recorded rows out; the first error stops the recording.
func (r *telRecord) flush() {
	if r == nil || r.w == nil {
		return
	}
	if err := r.w.Flush(); err != nil {
		fmt.Fprintf(r.log, "executor: %s: %v: telemetry no longer recorded\n", TelemetryName, err)
		r.w = nil
	}
}

// close flushes and closes the file.
func (r *telRecord) close() error {
	if r == nil {
		return nil
	}
	r.flush()
	return r.f.Close()
}
