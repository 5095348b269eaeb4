package gpu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
)

func TestDmonParserLines(t *testing.T) {
	const hdr = "#Entity   SMACT        SMOCC        DRAMA"
	tests := []struct {
		name   string
		header string // fed first when not empty
		line   string
		ok     bool
		want   dmonRecord
		match  string
	}{
		{"data", hdr, "GPU 3     0.500        0.250        1.000", true, dmonRecord{GPU: 3, Valid: true, SMACT: 0.5, SMOCC: 0.25, DRAMA: 1}, ""},
		{"N/A is no value", hdr, "GPU 0 N/A 0.1 0.2", true, dmonRecord{GPU: 0}, ""},
		{"columns in another order", "# Entity DRAMA SMOCC SMACT", "GPU 1 0.3 0.2 0.1", true, dmonRecord{GPU: 1, Valid: true, SMACT: 0.1, SMOCC: 0.2, DRAMA: 0.3}, ""},
		{"extra columns ignored", "#Entity POWER SMACT SMOCC DRAMA", "GPU 1 250.0 0.1 0.2 0.3", true, dmonRecord{GPU: 1, Valid: true, SMACT: 0.1, SMOCC: 0.2, DRAMA: 0.3}, ""},
		{"rounding above 1 is clamped", hdr, "GPU 0 1.001 0 0", true, dmonRecord{GPU: 0, Valid: true, SMACT: 1}, ""},
		{"blank", hdr, "   ", false, dmonRecord{}, ""},
		{"id heading", hdr, "ID", false, dmonRecord{}, ""},
		{"other entity skipped", hdr, "GPU-I 7 0.1 0.2 0.3", false, dmonRecord{}, ""},
		{"data before header", "", "GPU 0 0.1 0.2 0.3", false, dmonRecord{}, "dcgmi line 1: data before the column header"},
		{"too few values", hdr, "GPU 0 0.1 0.2", false, dmonRecord{}, "dcgmi line 2: 2 values, the header names 3 columns"},
		{"not a number", hdr, "GPU 0 0.1 x 0.3", false, dmonRecord{}, `dcgmi line 2: SMOCC of GPU 0 is "x", want a fraction 0..1 or N/A`},
		{"above 1", hdr, "GPU 0 0.1 0.2 45.0", false, dmonRecord{}, `DRAMA of GPU 0 is "45.0"`},
		{"negative", hdr, "GPU 0 -0.1 0.2 0.3", false, dmonRecord{}, `SMACT of GPU 0 is "-0.1"`},
		{"NaN", hdr, "GPU 0 NaN 0.2 0.3", false, dmonRecord{}, `SMACT of GPU 0 is "NaN"`},
		{"huge id", hdr, "GPU 99999999 0.1 0.2 0.3", false, dmonRecord{}, `bad GPU id "99999999"`},
		{"header without a signal", "", "#Entity SMACT SMOCC", false, dmonRecord{}, "dcgmi line 1: header lacks column DRAMA (run dcgmi dmon -e 1002,1003,1005)"},
		{"header without Entity", "", "# nothing here", false, dmonRecord{}, "dcgmi line 1: header does not start with #Entity"},
		{"dcgmi error message", hdr, "Error setting watches. Result: The third-party Profiling module returned an unrecoverable error", false, dmonRecord{}, `dcgmi line 2: dcgmi reports "Error setting watches.`},
		{"garbage", hdr, "hello world", false, dmonRecord{}, `dcgmi line 2: unrecognised line "hello world"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p dmonParser
			if tc.header != "" {
				_, ok, err := p.Feed(tc.header)
				require.NoError(t, err)
				require.False(t, ok)
			}
			rec, ok, err := p.Feed(tc.line)
			if tc.match != "" {
				require.ErrorContains(t, err, tc.match)
				require.False(t, ok)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, rec)
		})
	}
}

// TestDmonRecorded parses output written from the documented dcgmi dmon
// format (header, ID line, N/A while profiling warms up, a repeated header)
// and compares the records with a golden file.
func TestDmonRecorded(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "dmon-1002-1003-1005.txt"))
	require.NoError(t, err)
	var p dmonParser
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(in), "\n"), "\n") {
		rec, ok, err := p.Feed(line)
		require.NoError(t, err)
		if ok {
			fmt.Fprintf(&b, "gpu=%d valid=%t smact=%.3f smocc=%.3f drama=%.3f\n", rec.GPU, rec.Valid, rec.SMACT, rec.SMOCC, rec.DRAMA)
		}
	}
	golden.File(t, filepath.Join("testdata", "dmon-1002-1003-1005.golden"), []byte(b.String()))
}

// FuzzDmonParser checks that no input panics the parser and that every
// accepted record holds fractions 0..1 (zero when not valid).
func FuzzDmonParser(f *testing.F) {
	in, err := os.ReadFile(filepath.Join("testdata", "dmon-1002-1003-1005.txt"))
	require.NoError(f, err)
	f.Add(string(in))
	f.Add("#Entity SMACT SMOCC DRAMA\nGPU 0 N/A 1 0\nGPU-I 1 0 0 0\n")
	f.Add("# Entity DRAMA SMACT SMOCC\nID\nGPU 2 0.1 0.2 1.004\nError: x\n")
	f.Fuzz(func(t *testing.T, s string) {
		var p dmonParser
		sc := bufio.NewScanner(strings.NewReader(s))
		for sc.Scan() {
			rec, ok, err := p.Feed(sc.Text())
			if err != nil || !ok {
				require.Equal(t, dmonRecord{}, rec)
				continue
			}
			require.GreaterOrEqual(t, rec.GPU, 0)
			for _, v := range []float64{rec.SMACT, rec.SMOCC, rec.DRAMA} {
				require.True(t, v >= 0 && v <= 1, "value %v", v)
				if !rec.Valid {
					require.Zero(t, v)
				}
			}
		}
	})
}

// stream is a dmon stream a test writes lines into.
type stream struct {
	w       *io.PipeWriter
	r       *io.PipeReader
	stopped int
}

func newStream() *stream {
	r, w := io.Pipe()
	return &stream{r: r, w: w}
}

func (s *stream) send(t *testing.T, lines ...string) {
	for _, l := range lines {
		_, err := io.WriteString(s.w, l+"\n")
		require.NoError(t, err)
	}
}

func (s *stream) stop() error {
	s.stopped++
	return s.w.Close()
}

func TestDCGMSourceOverlay(t *testing.T) {
	devs := []Device{{Index: 0, UUID: "GPU-0", TotalMiB: 40960}, {Index: 1, UUID: "GPU-1", TotalMiB: 40960}}
	base := NewFake(devs, FakeStep{Samples: []Sample{
		{GPU: 0, UsedMiB: 100, TotalMiB: 40960, UtilPct: 80, Procs: []Proc{{PID: 9, UsedMiB: 90}}, HasPower: true, PowerW: 250},
		{GPU: 1, UsedMiB: 0, TotalMiB: 40960},
	}})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st := newStream()
	s := newDCGMSource(base, st.r, st.stop, clock)
	ctx := context.Background()

	st.send(t, "#Entity SMACT SMOCC DRAMA", "ID", "GPU 0 0.5 0.25 0.125")
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorContains(t, s.waitFirst(short, []int{0, 1}), "no reading for GPU 1")
	st.send(t, "GPU 1 N/A N/A N/A")
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	require.ErrorContains(t, s.waitFirst(short2, []int{0, 1}), "only N/A readings for GPU 1", "N/A is not a first reading")
	st.send(t, "GPU 1 0.1 0.1 0.1", "GPU 1 N/A N/A N/A")
	require.NoError(t, s.waitFirst(ctx, []int{0, 1}))
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return !s.latest[1].Valid
	}, 5*time.Second, time.Millisecond)

	got, err := s.Sample(ctx)
	require.NoError(t, err)
	require.Equal(t, "dcgm", s.Name())
	require.True(t, got[0].Pressure)
	require.Equal(t, []float64{0.5, 0.25, 0.125}, []float64{got[0].SMACT, got[0].SMOCC, got[0].DRAMA})
	require.Equal(t, 80.0, got[0].UtilPct, "the base source's fields are kept")
	require.Equal(t, []Proc{{PID: 9, UsedMiB: 90}}, got[0].Procs)
	require.True(t, got[0].HasPower)
	require.Equal(t, 250.0, got[0].PowerW, "the base source's power")
	require.False(t, got[1].Pressure, "N/A gives no pressure signals")

	// A stale reading (dcgmi stalled) is not used.
	now = now.Add(dcgmMaxAge + time.Second)
	got, err = s.Sample(ctx)
	require.NoError(t, err)
	require.False(t, got[0].Pressure)

	// A malformed line is reported once, by the next Sample.
	st.send(t, "GPU 0 0.5 0.25", "GPU 0 0.7 0.1 0.2")
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.latest[0].SMACT == 0.7
	}, 5*time.Second, time.Millisecond)
	_, err = s.Sample(ctx)
	require.ErrorContains(t, err, "dcgm: dcgmi line 7: 2 values, the header names 3 columns")
	got, err = s.Sample(ctx)
	require.NoError(t, err)
	require.Equal(t, 0.7, got[0].SMACT)

	// The stream ending is an error on every later Sample.
	require.NoError(t, st.w.CloseWithError(errors.New("dcgmi: exit status 255: Error: unable to connect to host engine")))
	require.Eventually(t, func() bool { _, err := s.Sample(ctx); return err != nil }, 5*time.Second, time.Millisecond)
	_, err = s.Sample(ctx)
	require.ErrorContains(t, err, "unable to connect to host engine")

	require.NoError(t, s.Close())
	require.Equal(t, 1, st.stopped)
	require.NoError(t, s.Close())
	require.Equal(t, 1, st.stopped)
	_, err = base.Devices()
	require.ErrorContains(t, err, "after Close", "Close closes the base source")
}

// fakeDCGMI writes a shell script that poses as dcgmi: it prints its
// arguments to args.txt and then body.
func fakeDCGMI(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "dcgmi")
	script := "#!/bin/sh\necho \"$@\" > " + filepath.Join(dir, "args.txt") + "\n" + body + "\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

func TestStartDCGMI(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	t.Run("streams until stopped", func(t *testing.T) {
		path := fakeDCGMI(t, "printf '#Entity SMACT SMOCC DRAMA\\nID\\nGPU 2 0.1 0.2 0.3\\n'\nexec sleep 60")
		r, stop, err := startDCGMI(path, []int{2, 5})
		require.NoError(t, err)
		var p dmonParser
		sc := bufio.NewScanner(r)
		var recs []dmonRecord
		for len(recs) == 0 && sc.Scan() {
			rec, ok, err := p.Feed(sc.Text())
			require.NoError(t, err)
			if ok {
				recs = append(recs, rec)
			}
		}
		require.Equal(t, []dmonRecord{{GPU: 2, Valid: true, SMACT: 0.1, SMOCC: 0.2, DRAMA: 0.3}}, recs)
		args, err := os.ReadFile(filepath.Join(filepath.Dir(path), "args.txt"))
		require.NoError(t, err)
		require.Equal(t, "dmon -e 1002,1003,1005 -d 1000 -i 2,5\n", string(args))
		require.NoError(t, stop(), "killing dcgmi on purpose is not an error")
		_, err = io.ReadAll(r)
		require.NoError(t, err)
	})
	t.Run("exit carries stderr", func(t *testing.T) {
		path := fakeDCGMI(t, "echo 'Error: unable to establish a connection to the specified host: localhost' >&2\nexit 255")
		r, stop, err := startDCGMI(path, []int{0})
		require.NoError(t, err)
		_, err = io.ReadAll(r)
		require.ErrorContains(t, err, "exit status 255: Error: unable to establish a connection")
		require.ErrorContains(t, stop(), "exit status 255")
	})
	t.Run("missing binary", func(t *testing.T) {
		_, _, err := startDCGMI(filepath.Join(t.TempDir(), "no-dcgmi"), []int{0})
		require.ErrorContains(t, err, "dcgm: starting")
	})
}

// The DCGM source's energy counters are its base source's (NVML's); a base
// without them has none.
func TestDCGMEnergy(t *testing.T) {
	devs := []Device{{Index: 0, UUID: "GPU-0", TotalMiB: 40960}}
	step := FakeStep{Samples: []Sample{{GPU: 0, TotalMiB: 40960}}}
	metered := &MeteredFake{Fake: NewFake(devs, step), Meter: func(int) ([]uint64, error) { return []uint64{1234}, nil }}
	got, err := newDCGMSource(metered, strings.NewReader(""), nil, nil).Energy(context.Background())
	require.NoError(t, err)
	require.Equal(t, []uint64{1234}, got)
	_, err = newDCGMSource(NewFake(devs, step), strings.NewReader(""), nil, nil).Energy(context.Background())
	require.ErrorIs(t, err, ErrNoEnergy)
	require.ErrorContains(t, err, "its base source fake reads none")
}
