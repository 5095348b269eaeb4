package gpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testOpener returns an opener over lib whose dcgmi either streams lines
// (kept open until stopped) or fails to start with dcgmiErr.
func testOpener(lib *fakeNVML, libErr error, dcgmiErr error, lines ...string) (opener, *[][]int) {
	var calls [][]int
	return opener{
		lib: func() (nvmlLib, error) {
			if libErr != nil {
				return nil, libErr
			}
			return lib, nil
		},
		dcgmi: func(path string, gpus []int) (io.Reader, func() error, error) {
			calls = append(calls, gpus)
			if dcgmiErr != nil {
				return nil, nil, dcgmiErr
			}
			r, w := io.Pipe()
			go func() {
				for _, l := range lines {
					if _, err := io.WriteString(w, l+"\n"); err != nil {
						return
					}
				}
			}()
			return r, w.Close, nil
		},
		now: time.Now,
	}, &calls
}

func TestOpen(t *testing.T) {
	unavailable := fmt.Errorf("%w: built without cgo", ErrNVMLUnavailable)
	notStarted := errors.New(`exec: "dcgmi": executable file not found in $PATH`)
	dmon := []string{"#Entity SMACT SMOCC DRAMA", "ID", "GPU 0 0.4 0.2 0.1", "GPU 1 0.3 0.2 0.1"}
	tests := []struct {
		name     string
		kind     string
		gpm      bool
		libErr   error
		dcgmiErr error
		lines    []string
		gpus     []int
		wantName string
		wantLog  string
		wantErr  string
		pressure bool
	}{
		{name: "auto picks GPM", kind: "auto", gpm: true, wantName: "nvml+gpm", pressure: true,
			wantLog: "telemetry auto: using nvml+gpm: GPM on every GPU"},
		{name: "auto without GPM picks DCGM", kind: "auto", lines: dmon, wantName: "dcgm", pressure: true,
			wantLog: "telemetry auto: using dcgm: GPM unsupported on GPU 0 (NVIDIA H200), GPU 1 (NVIDIA H200)"},
		{name: "auto without GPM or DCGM: utilization only", kind: "auto", dcgmiErr: notStarted, wantName: "nvml",
			wantLog: "telemetry auto: using nvml: GPM unsupported on GPU 0 (NVIDIA H200), GPU 1 (NVIDIA H200): utilization only, Pressure false (GPM needs Hopper or newer; use --telemetry dcgm for pressure signals on older GPUs); dcgm unavailable: exec: \"dcgmi\""},
		{name: "auto when dcgmi gives no reading", kind: "auto", lines: dmon[:3], wantName: "nvml",
			wantLog: "dcgm unavailable: dcgm: no reading for GPU 1: context deadline exceeded"},
		{name: "auto when dcgmi gives only N/A (no profiling)", kind: "auto", lines: []string{dmon[0], "GPU 0 N/A N/A N/A", "GPU 1 N/A N/A N/A"}, wantName: "nvml",
			wantLog: "dcgm unavailable: dcgm: only N/A readings for GPU 0"},
		{name: "nvml on Hopper", kind: "nvml", gpm: true, wantName: "nvml+gpm", pressure: true},
		{name: "nvml without GPM says so", kind: "nvml", wantName: "nvml", wantLog: "telemetry nvml: using nvml: GPM unsupported on GPU 0"},
		{name: "util ignores GPM", kind: "util", gpm: true, wantName: "nvml", wantLog: "GPM not requested"},
		{name: "dcgm", kind: "dcgm", gpm: true, lines: dmon, wantName: "dcgm", pressure: true,
			wantLog: "telemetry dcgm: using dcgm: memory, utilization and processes from NVML, SMACT/SMOCC/DRAMA from dcgmi dmon"},
		{name: "dcgm on selected GPUs", kind: "dcgm", lines: dmon[:3], gpus: []int{0}, wantName: "dcgm", pressure: true},
		{name: "dcgm unavailable", kind: "dcgm", dcgmiErr: notStarted, wantErr: "gpu: telemetry dcgm: exec: \"dcgmi\": executable file not found"},
		{name: "dcgmi error", kind: "dcgm", lines: []string{"Error: unable to establish a connection to the specified host: localhost"},
			wantErr: `gpu: telemetry dcgm: dcgm: dcgmi line 1: dcgmi reports "Error: unable to establish`},
		{name: "no NVML", kind: "auto", libErr: unavailable, wantErr: "gpu: telemetry auto: NVML unavailable: built without cgo"},
		{name: "unknown kind", kind: "gpm", wantErr: `gpu: unknown telemetry "gpm" (want auto, nvml, dcgm, util)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := twoGPUs(tc.gpm)
			o, calls := testOpener(lib, tc.libErr, tc.dcgmiErr, tc.lines...)
			var log strings.Builder
			s, err := o.open(tc.kind, Options{Log: &log, GPUs: tc.gpus, DCGMWait: 200 * time.Millisecond})
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				if tc.libErr != nil {
					require.ErrorIs(t, err, ErrNVMLUnavailable)
				}
				require.Equal(t, lib.inited, lib.shutdown == 1, "a failed open leaves NVML shut down")
				require.Zero(t, lib.live())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantName, s.Name())
			require.Contains(t, log.String(), tc.wantLog)
			require.Equal(t, 1, strings.Count(log.String(), "\n"), "one line says what was chosen")
			if tc.gpus != nil {
				require.Equal(t, [][]int{tc.gpus}, *calls, "dcgmi watches the selected GPUs")
			}
			got, err := s.Sample(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.pressure, got[0].Pressure)
			require.NoError(t, s.Close())
			require.Equal(t, 1, lib.shutdown)
			require.Zero(t, lib.live())
		})
	}
}

// TestOpenFirstGPMReadingFails: a GPM that probes fine but whose first
// reading fails falls back to utilization only, with a warning, instead of
// failing every reading (or aborting aegis exec and aegis gpus).
func TestOpenFirstGPMReadingFails(t *testing.T) {
	for _, kind := range []string{KindAuto, KindNVML} {
		t.Run(kind, func(t *testing.T) {
			lib := twoGPUs(true)
			lib.fail["GPMMetrics"] = errors.New("GPU is lost")
			o, _ := testOpener(lib, nil, errors.New("no dcgmi"))
			var log strings.Builder
			s, err := o.open(kind, Options{Log: &log})
			require.NoError(t, err)
			require.Equal(t, "nvml", s.Name())
			require.Contains(t, log.String(), "WARNING: the first GPM reading failed (nvml: nvmlGpmMetricsGet on GPU 0: GPU is lost), so no pressure signals: utilization only")
			require.Zero(t, lib.live(), "the GPM buffers of the first try are freed")
			got, err := s.Sample(context.Background())
			require.NoError(t, err)
			require.False(t, got[0].Pressure)
			require.Equal(t, 2048.0, got[0].UsedMiB)
			require.NoError(t, s.Close())
		})
	}
	t.Run("utilization fails too", func(t *testing.T) {
		lib := twoGPUs(true)
		lib.fail["GPMMetrics"] = errors.New("GPU is lost")
		o, _ := testOpener(lib, nil, nil)
		o.lib = func() (nvmlLib, error) {
			if lib.shutdown > 0 {
				lib.fail["Memory"] = errors.New("GPU is lost")
			}
			return lib, nil
		}
		_, err := o.open(KindNVML, Options{})
		require.ErrorContains(t, err, "after a failed first GPM reading: nvml: nvmlGpmMetricsGet on GPU 0: GPU is lost")
	})
}

// TestOpenReal opens the real NVML: on a machine without NVML (CI) it must
// fail with ErrNVMLUnavailable and a message saying what is missing, never
// panic; on a GPU machine it must give samples.
func TestOpenReal(t *testing.T) {
	s, err := Open(KindAuto, Options{DCGMWait: time.Second})
	if err != nil {
		if !errors.Is(err, ErrNVMLUnavailable) {
			t.Skipf("NVML present but not usable here: %v", err)
		}
		require.Regexp(t, `built without NVML|libnvidia-ml`, err.Error())
		return
	}
	defer func() { require.NoError(t, s.Close()) }()
	devs, err := s.Devices()
	require.NoError(t, err)
	got, err := s.Sample(context.Background())
	require.NoError(t, err)
	require.Len(t, got, len(devs))
}

func TestParseList(t *testing.T) {
	tests := []struct {
		in    string
		want  []int
		match string
	}{
		{"", nil, ""},
		{"0", []int{0}, ""},
		{" 2, 0 ,1", []int{2, 0, 1}, ""},
		{"0,,1", nil, `"" is not a GPU index`},
		{"a", nil, `"a" is not a GPU index`},
		{"-1", nil, `"-1" is not a GPU index`},
		{"1,1", nil, "GPU 1 listed twice"},
	}
	for _, tc := range tests {
		got, err := ParseList(tc.in)
		if tc.match != "" {
			require.ErrorContains(t, err, tc.match, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}
