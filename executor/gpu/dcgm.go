package gpu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DCGM field ids of the pressure signals, as dcgmi dmon -e takes them.
const (
	dcgmFieldSMActive    = 1002 // DCGM_FI_PROF_SM_ACTIVE, column SMACT
	dcgmFieldSMOccupancy = 1003 // DCGM_FI_PROF_SM_OCCUPANCY, column SMOCC
	dcgmFieldDRAMActive  = 1005 // DCGM_FI_PROF_DRAM_ACTIVE, column DRAMA
)

// dmonRecord is one data line of dcgmi dmon: one GPU's pressure signals.
type dmonRecord struct {
	GPU int
	// Valid is false when DCGM printed N/A for any of the three signals.
	Valid               bool
	SMACT, SMOCC, DRAMA float64
}

// dmonParser parses the output of `dcgmi dmon -e 1002,1003,1005`, line by
// line. The documented format is a header naming the columns, a line with
// the entity id heading, then one line per entity and interval; dcgmi
// repeats the header from time to time:
//
//	#Entity   SMACT        SMOCC        DRAMA
//	ID
//	GPU 0     0.000        0.000        0.000
//	GPU 1     N/A          N/A          N/A
//
// Values are fractions 0..1; N/A means DCGM has no value for the field.
type dmonParser struct {
	line int
	// col[k] is the data column of SMACT, SMOCC, DRAMA; ncols the number
	// of value columns the header announced. ncols is 0 before a header.
	col   [3]int
	ncols int
}

// dmonSignals are the column names dmonParser needs, in record order.
var dmonSignals = [3]string{"SMACT", "SMOCC", "DRAMA"}

// dmonMaxGPU bounds GPU ids, so a garbled line cannot pose as GPU 10^9.
const dmonMaxGPU = 1 << 16

// Feed parses the next line. ok reports whether it was a GPU data line;
// headers, blank lines and other entities' lines give ok false and no error.
// Errors name the line number and what is wrong with it.
func (p *dmonParser) Feed(line string) (rec dmonRecord, ok bool, err error) {
	p.line++
	f := strings.Fields(line)
	switch {
	case len(f) == 0:
		return rec, false, nil
	case strings.HasPrefix(f[0], "#"):
		return rec, false, p.header(f)
	case len(f) == 1 && strings.EqualFold(f[0], "ID"):
		return rec, false, nil
	case strings.Contains(strings.ToLower(line), "error"):
		return rec, false, fmt.Errorf("dcgmi line %d: dcgmi reports %q", p.line, strings.TrimSpace(line))
	case len(f) >= 2 && isWord(f[0]) && isInt(f[1]):
		// An entity line: "GPU 0 v v v" (other entity types are skipped).
	default:
		return rec, false, fmt.Errorf("dcgmi line %d: unrecognised line %q", p.line, clip(line))
	}
	if p.ncols == 0 {
		return rec, false, fmt.Errorf("dcgmi line %d: data before the column header", p.line)
	}
	if len(f)-2 != p.ncols {
		return rec, false, fmt.Errorf("dcgmi line %d: %d values, the header names %d columns", p.line, len(f)-2, p.ncols)
	}
	if f[0] != "GPU" {
		return rec, false, nil
	}
	id, err := strconv.Atoi(f[1])
	if err != nil || id < 0 || id > dmonMaxGPU {
		return rec, false, fmt.Errorf("dcgmi line %d: bad GPU id %q", p.line, f[1])
	}
	rec = dmonRecord{GPU: id, Valid: true}
	var vals [3]float64
	for k, c := range p.col {
		s := f[2+c]
		if s == "N/A" {
			rec.Valid = false
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1.005 {
			return dmonRecord{}, false, fmt.Errorf("dcgmi line %d: %s of GPU %d is %q, want a fraction 0..1 or N/A", p.line, dmonSignals[k], id, s)
		}
		vals[k] = min(v, 1)
	}
	if rec.Valid {
		rec.SMACT, rec.SMOCC, rec.DRAMA = vals[0], vals[1], vals[2]
	}
	return rec, true, nil
}

// header reads a column header: "#Entity SMACT SMOCC DRAMA" (also "# Entity").
func (p *dmonParser) header(f []string) error {
	if f[0] == "#" {
		f = f[1:]
	} else {
		f[0] = strings.TrimPrefix(f[0], "#")
	}
	if len(f) == 0 || !strings.EqualFold(f[0], "Entity") {
		return fmt.Errorf("dcgmi line %d: header does not start with #Entity", p.line)
	}
	cols := f[1:]
	for k, name := range dmonSignals {
		c := slices.Index(cols, name)
		if c < 0 {
			return fmt.Errorf("dcgmi line %d: header lacks column %s (run dcgmi dmon -e %d,%d,%d)", p.line, name, dcgmFieldSMActive, dcgmFieldSMOccupancy, dcgmFieldDRAMActive)
		}
		p.col[k] = c
	}
	p.ncols = len(cols)
	return nil
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

func isInt(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// clip shortens a line for an error message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// dcgmMaxAge is how old a DCGM reading may be and still count for a sample;
// older ones (dcgmi stalled) leave the sample without pressure signals.
const dcgmMaxAge = 3 * time.Second

// dcgmSource is the DCGM Source: memory, utilization, processes, power and
// the energy counter from a utilization-only base source (NVML),
// SMACT/SMOCC/DRAMA from a dcgmi dmon stream. DCGM GPU ids are taken to be NVML indices (DCGM numbers GPUs in
// NVML order).
type dcgmSource struct {
	base Source
	now  func() time.Time
	stop func() error // ends the stream and reports how it ended

	mu     sync.Mutex
	latest map[int]dmonRecord
	at     map[int]time.Time
	// seenValid holds the GPUs that gave at least one valid reading.
	seenValid map[int]bool
	fresh     chan struct{} // closed and replaced on every record or error
	err       error         // a parse error not yet reported
	ended     error         // why the stream ended; nil while it runs
	closed    bool
	done      chan struct{} // closed when the reader goroutine returns
}

// newDCGMSource reads dmon lines from r in a goroutine and overlays them on
// base's samples. stop ends the stream (kills dcgmi) and returns its exit
// status; it is called by Close.
func newDCGMSource(base Source, r io.Reader, stop func() error, now func() time.Time) *dcgmSource {
	if now == nil {
		now = time.Now
	}
	s := &dcgmSource{base: base, now: now, stop: stop, latest: map[int]dmonRecord{}, at: map[int]time.Time{}, seenValid: map[int]bool{},
		fresh: make(chan struct{}), done: make(chan struct{})}
	go s.read(r)
	return s
}

// read consumes the stream until it ends.
func (s *dcgmSource) read(r io.Reader) {
	defer close(s.done)
	var p dmonParser
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rec, ok, err := p.Feed(sc.Text())
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		if ok {
			s.latest[rec.GPU], s.at[rec.GPU] = rec, s.now()
			s.seenValid[rec.GPU] = s.seenValid[rec.GPU] || rec.Valid
		}
		if ok || err != nil {
			close(s.fresh)
			s.fresh = make(chan struct{})
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = errors.New("dcgmi output ended")
	if err := sc.Err(); err != nil {
		s.ended = fmt.Errorf("reading dcgmi output: %w", err)
	}
	close(s.fresh)
	s.fresh = make(chan struct{})
}

// waitFirst waits until every GPU in gpus has had a valid reading (not N/A),
// the stream ends or fails, or ctx is done.
func (s *dcgmSource) waitFirst(ctx context.Context, gpus []int) error {
	for {
		s.mu.Lock()
		missing := slices.IndexFunc(gpus, func(g int) bool { return !s.seenValid[g] })
		what := "no reading"
		if missing >= 0 {
			if _, ok := s.latest[gpus[missing]]; ok {
				what = "only N/A readings"
			}
		}
		err, ended, fresh := s.err, s.ended, s.fresh
		s.mu.Unlock()
		switch {
		case err != nil:
			return fmt.Errorf("dcgm: %w", err)
		case missing < 0:
			return nil
		case ended != nil:
			return fmt.Errorf("dcgm: %s for GPU %d: %w", what, gpus[missing], ended)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dcgm: %s for GPU %d: %w", what, gpus[missing], ctx.Err())
		case <-fresh:
		}
	}
}

// Name implements Source.
func (s *dcgmSource) Name() string { return "dcgm" }

// Devices implements Source.
func (s *dcgmSource) Devices() ([]Device, error) { return s.base.Devices() }

// Sample implements Source: the base source's sample with each GPU's latest
// DCGM reading, if valid and at most 3 s old (otherwise Pressure is false
// for that GPU). It fails if the dcgmi stream failed to parse since the last
// call, or has ended.
func (s *dcgmSource) Sample(ctx context.Context) ([]Sample, error) {
	out, err := s.base.Sample(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("dcgm: Sample after Close")
	}
	if err := s.err; err != nil {
		s.err = nil
		return nil, fmt.Errorf("dcgm: %w", err)
	}
	if s.ended != nil {
		return nil, fmt.Errorf("dcgm: %w", s.ended)
	}
	now := s.now()
	for j := range out {
		rec, ok := s.latest[out[j].GPU]
		if !ok || !rec.Valid || now.Sub(s.at[out[j].GPU]) > dcgmMaxAge {
			continue
		}
		out[j].Pressure = true
		out[j].SMACT, out[j].SMOCC, out[j].DRAMA = rec.SMACT, rec.SMOCC, rec.DRAMA
	}
	return out, nil
}

// Energy implements EnergyMeter with the base source's counters (NVML's):
// DCGM's own energy field reads the same counter. A base without them
// gives an error wrapping ErrNoEnergy.
func (s *dcgmSource) Energy(ctx context.Context) ([]uint64, error) {
	m, ok := s.base.(EnergyMeter)
	if !ok {
		return nil, fmt.Errorf("dcgm: %w (its base source %s reads none)", ErrNoEnergy, s.base.Name())
	}
	return m.Energy(ctx)
}

// Close implements Source: it stops dcgmi, waits for the reader and closes
// the base source.
func (s *dcgmSource) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	return errors.Join(s.abort(), s.base.Close())
}

// abort stops the stream and waits for the reader, leaving base open.
func (s *dcgmSource) abort() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	var err error
	if s.stop != nil {
		err = s.stop()
	}
	<-s.done
	if err != nil {
		return fmt.Errorf("dcgm: %w", err)
	}
	return nil
}

// startDCGMI starts `dcgmi dmon -e 1002,1003,1005 -d 1000 -i GPUS` and returns
// its stdout and a stop function that kills and reaps it. If dcgmi exits on
// its own, the stream ends with an error carrying its exit status and
// stderr, and stop returns that error.
func startDCGMI(path string, gpus []int) (io.Reader, func() error, error) {
	if path == "" {
		path = "dcgmi"
	}
	ids := make([]string, len(gpus))
	for k, g := range gpus {
		ids[k] = strconv.Itoa(g)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, path, "dmon",
		"-e", fmt.Sprintf("%d,%d,%d", dcgmFieldSMActive, dcgmFieldSMOccupancy, dcgmFieldDRAMActive),
		"-d", "1000", "-i", strings.Join(ids, ","))
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = pw, &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("dcgm: starting %s: %w", path, err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if ctx.Err() != nil { // stopped on purpose: a clean end
			pw.Close()
			exited <- nil
			return
		}
		if err == nil {
			err = fmt.Errorf("%s exited", path)
		} else {
			err = fmt.Errorf("%s: %w: %s", path, err, clip(strings.TrimSpace(stderr.String())))
		}
		pw.CloseWithError(err)
		exited <- err
	}()
	stop := func() error {
		select {
		case err := <-exited: // it ended on its own
			cancel()
			return err
		default:
		}
		cancel()
		return <-exited
	}
	return pr, stop, nil
}
