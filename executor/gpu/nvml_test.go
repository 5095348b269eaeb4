package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeDev is one device of fakeNVML.
type fakeDev struct {
	uuid, name  string
	used, total uint64
	util        uint32
	procs       []nvmlProc
	gpm         bool
	mig         bool
	// smact etc. are the GPM percentages GPMMetrics returns.
	smact, smocc, drama float64
	// energy is the energy counter, mJ.
	energy uint64
	// power is the power draw, mW.
	power uint32
}

// fakeHandle is a fake GPM sample buffer.
type fakeHandle struct {
	id    int
	dev   int
	freed bool
}

// fakeNVML is a scripted NVML: devices, and an error per call name
// ("Memory", "GPMMetrics", ...) optionally restricted to one device.
type fakeNVML struct {
	devs       []fakeDev
	fail       map[string]error // call -> error
	failDev    int              // device the failures apply to; -1 = any
	metErr     error            // per-metric error for the DRAMA metric
	handles    []*fakeHandle
	driver     string // DriverVersion's answer ("" = 550.54.15)
	procCalls  int    // ComputeProcesses calls
	powerCalls int    // Power calls
	inited     bool
	shutdown   int
}

func (f *fakeNVML) err(call string, dev int) error {
	if e, ok := f.fail[call]; ok && (f.failDev < 0 || dev < 0 || dev == f.failDev) {
		return e
	}
	return nil
}

func (f *fakeNVML) Init() error {
	if err := f.err("Init", -1); err != nil {
		return err
	}
	f.inited = true
	return nil
}

func (f *fakeNVML) Shutdown() error {
	f.shutdown++
	return f.err("Shutdown", -1)
}

func (f *fakeNVML) DeviceCount() (int, error)  { return len(f.devs), f.err("DeviceCount", -1) }
func (f *fakeNVML) UUID(i int) (string, error) { return f.devs[i].uuid, f.err("UUID", i) }
func (f *fakeNVML) Name(i int) (string, error) { return f.devs[i].name, f.err("Name", i) }
func (f *fakeNVML) Memory(i int) (uint64, uint64, error) {
	return f.devs[i].used, f.devs[i].total, f.err("Memory", i)
}
func (f *fakeNVML) Utilization(i int) (uint32, error) { return f.devs[i].util, f.err("Utilization", i) }
func (f *fakeNVML) TotalEnergy(i int) (uint64, error) {
	return f.devs[i].energy, f.err("TotalEnergy", i)
}
func (f *fakeNVML) Power(i int) (uint32, error) {
	f.powerCalls++
	return f.devs[i].power, f.err("Power", i)
}
func (f *fakeNVML) ComputeProcesses(i int) ([]nvmlProc, error) {
	f.procCalls++
	return f.devs[i].procs, f.err("ComputeProcesses", i)
}
func (f *fakeNVML) DriverVersion() (string, error) {
	if f.driver == "" {
		return "550.54.15", f.err("DriverVersion", -1)
	}
	return f.driver, f.err("DriverVersion", -1)
}
func (f *fakeNVML) MIGEnabled(i int) (bool, error)   { return f.devs[i].mig, f.err("MIGEnabled", i) }
func (f *fakeNVML) GPMSupported(i int) (bool, error) { return f.devs[i].gpm, f.err("GPMSupported", i) }
func (f *fakeNVML) GPMSampleAlloc() (gpmHandle, error) {
	if err := f.err("GPMSampleAlloc", -1); err != nil {
		return nil, err
	}
	h := &fakeHandle{id: len(f.handles), dev: -1}
	f.handles = append(f.handles, h)
	return h, nil
}
func (f *fakeNVML) GPMSampleGet(i int, h gpmHandle) error {
	if err := f.err("GPMSampleGet", i); err != nil {
		return err
	}
	h.(*fakeHandle).dev = i
	return nil
}
func (f *fakeNVML) GPMSampleFree(h gpmHandle) error {
	fh := h.(*fakeHandle)
	if fh.freed {
		return errors.New("double free")
	}
	fh.freed = true
	return nil
}
func (f *fakeNVML) GPMMetrics(a, b gpmHandle, ms []gpmMetric) ([]float64, []error, error) {
	ha, hb := a.(*fakeHandle), b.(*fakeHandle)
	if ha.freed || hb.freed || ha.dev != hb.dev || ha.id >= hb.id {
		return nil, nil, fmt.Errorf("bad sample pair %+v %+v", *ha, *hb)
	}
	if err := f.err("GPMMetrics", ha.dev); err != nil {
		return nil, nil, err
	}
	d := f.devs[ha.dev]
	vals := []float64{d.smact, d.smocc, d.drama}
	return vals, []error{nil, nil, f.metErr}, nil
}

// live counts GPM buffers not yet freed.
func (f *fakeNVML) live() int {
	n := 0
	for _, h := range f.handles {
		if !h.freed {
			n++
		}
	}
	return n
}

const gib = 1 << 30

func twoGPUs(gpm bool) *fakeNVML {
	return &fakeNVML{failDev: -1, fail: map[string]error{}, devs: []fakeDev{
		{uuid: "GPU-0", name: "NVIDIA H200", used: 2 * gib, total: 140 * gib, util: 37, gpm: gpm,
			procs: []nvmlProc{{PID: 300, UsedBytes: gib}, {PID: 100, UsedBytes: gib / 2}, {PID: 300, UsedBytes: gib / 4}},
			smact: 45, smocc: 20, drama: 100.3},
		{uuid: "GPU-1", name: "NVIDIA H200", total: 140 * gib, gpm: gpm,
			procs: []nvmlProc{{PID: 5, UsedBytes: nvmlValueNotAvailable}}},
	}}
}

// testClock is a manual clock; sleep advances it.
type testClock struct {
	t      time.Time
	slept  []time.Duration
	sleepE error
}

func (c *testClock) now() time.Time { return c.t }
func (c *testClock) sleep(_ context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	c.t = c.t.Add(d)
	return c.sleepE
}

func TestNVMLSampleAssembly(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		gpm       bool
		noGPM     bool
		wantName  string
		wantPress bool
		wantNote  string
	}{
		{"GPM on every GPU", true, false, "nvml+gpm", true, "GPM on every GPU"},
		{"no GPM: utilization only", false, false, "nvml", false, "GPM unsupported on GPU 0 (NVIDIA H200), GPU 1 (NVIDIA H200)"},
		{"GPM not requested", true, true, "nvml", false, "GPM not requested"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := twoGPUs(tc.gpm)
			clk := &testClock{t: t0}
			s, err := newNVMLSource(lib, nvmlConfig{noGPM: tc.noGPM, now: clk.now, sleep: clk.sleep})
			require.NoError(t, err)
			require.Equal(t, tc.wantName, s.Name())
			require.Contains(t, s.Note(), tc.wantNote)
			devs, err := s.Devices()
			require.NoError(t, err)
			require.Equal(t, []Device{
				{Index: 0, UUID: "GPU-0", Name: "NVIDIA H200", TotalMiB: 140 * 1024},
				{Index: 1, UUID: "GPU-1", Name: "NVIDIA H200", TotalMiB: 140 * 1024},
			}, devs)

			clk.t = t0.Add(time.Second)
			got, err := s.Sample(context.Background())
			require.NoError(t, err)
			require.Len(t, got, 2)
			require.Empty(t, clk.slept, "a second after open is a full GPM interval")
			g0 := got[0]
			require.Equal(t, 0, g0.GPU)
			require.Equal(t, t0.Add(time.Second), g0.At)
			require.Equal(t, 2048.0, g0.UsedMiB)
			require.Equal(t, 140*1024.0, g0.TotalMiB)
			require.Equal(t, 37.0, g0.UtilPct)
			require.Equal(t, []Proc{{PID: 100, UsedMiB: 512}, {PID: 300, UsedMiB: 1280}}, g0.Procs, "sorted by PID, a PID listed twice summed")
			require.Equal(t, []Proc{{PID: 5, UsedMiB: 0}}, got[1].Procs, "memory NVML cannot report counts as 0")
			require.Equal(t, tc.wantPress, g0.Pressure)
			require.Equal(t, tc.wantPress, got[1].Pressure)
			if tc.wantPress {
				require.InDelta(t, 0.45, g0.SMACT, 1e-12)
				require.InDelta(t, 0.20, g0.SMOCC, 1e-12)
				require.Equal(t, 1.0, g0.DRAMA, "a reading just above 100% is clamped")
				require.Equal(t, 2, lib.live(), "one held GPM sample per device")
			} else {
				require.Zero(t, g0.SMACT+g0.SMOCC+g0.DRAMA)
				require.Zero(t, lib.live(), "no GPM buffers without GPM")
			}

			// A call right after the previous one waits out the GPM minimum interval.
			clk.t = clk.t.Add(30 * time.Millisecond)
			_, err = s.Sample(context.Background())
			require.NoError(t, err)
			if tc.wantPress {
				require.Equal(t, []time.Duration{70 * time.Millisecond}, clk.slept)
			} else {
				require.Empty(t, clk.slept, "no waiting without GPM")
			}

			require.NoError(t, s.Close())
			require.Zero(t, lib.live(), "Close frees every GPM buffer")
			require.Equal(t, 1, lib.shutdown)
			require.NoError(t, s.Close(), "a second Close is harmless")
			require.Equal(t, 1, lib.shutdown)
			_, err = s.Sample(context.Background())
			require.ErrorContains(t, err, "after Close")
		})
	}
}

func TestNVMLMixedGPMFallsBack(t *testing.T) {
	lib := twoGPUs(true)
	lib.devs[1].gpm = false
	lib.devs[1].name = "NVIDIA A100-SXM4-40GB"
	s, err := newNVMLSource(lib, quick(nvmlConfig{}))
	require.NoError(t, err)
	require.Equal(t, "nvml", s.Name())
	require.Contains(t, s.Note(), "GPM unsupported on GPU 1 (NVIDIA A100-SXM4-40GB)")
	require.Contains(t, s.Note(), "--telemetry dcgm")
	got, err := s.Sample(context.Background())
	require.NoError(t, err)
	require.False(t, got[0].Pressure, "GPM only when every GPU has it")
	require.Zero(t, lib.live())
}

func TestNVMLSelectGPUs(t *testing.T) {
	tests := []struct {
		name  string
		gpus  []int
		want  []int
		match string
	}{
		{"subset", []int{1}, []int{1}, ""},
		{"all by default", nil, []int{0, 1}, ""},
		{"out of range", []int{0, 2}, nil, "GPU 2 does not exist (this machine has 2, indices 0..1)"},
		{"negative", []int{-1}, nil, "GPU -1 does not exist"},
		{"duplicate", []int{1, 1}, nil, "GPU 1 listed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := twoGPUs(true)
			s, err := newNVMLSource(lib, quick(nvmlConfig{gpus: tc.gpus}))
			if tc.match != "" {
				require.ErrorContains(t, err, tc.match)
				require.Equal(t, 1, lib.shutdown, "a failed open shuts NVML down")
				require.Zero(t, lib.live())
				return
			}
			require.NoError(t, err)
			got, err := s.Sample(context.Background())
			require.NoError(t, err)
			var idx []int
			for _, g := range got {
				idx = append(idx, g.GPU)
			}
			require.Equal(t, tc.want, idx)
			require.NoError(t, s.Close())
		})
	}
}

func TestNVMLOpenErrors(t *testing.T) {
	boom := errors.New("Unknown Error")
	tests := []struct {
		call  string
		dev   int
		match string
	}{
		{"Init", -1, "nvml: nvmlInit: Unknown Error"},
		{"DeviceCount", -1, "nvml: nvmlDeviceGetCount: Unknown Error"},
		{"UUID", 1, "nvml: nvmlDeviceGetUUID on GPU 1: Unknown Error"},
		{"Name", 0, "nvml: nvmlDeviceGetName on GPU 0: Unknown Error"},
		{"Memory", 1, "nvml: nvmlDeviceGetMemoryInfo on GPU 1: Unknown Error"},
	}
	for _, tc := range tests {
		t.Run(tc.call, func(t *testing.T) {
			lib := twoGPUs(true)
			lib.fail[tc.call], lib.failDev = boom, tc.dev
			_, err := newNVMLSource(lib, quick(nvmlConfig{}))
			require.EqualError(t, err, tc.match)
			require.ErrorIs(t, err, boom)
			require.Zero(t, lib.live(), "no GPM buffer leaks on a failed open")
			if tc.call != "Init" {
				require.Equal(t, 1, lib.shutdown)
			}
		})
	}
	_, err := newNVMLSource(&fakeNVML{failDev: -1}, quick(nvmlConfig{}))
	require.ErrorContains(t, err, "no GPU found")
}

// TestNVMLGPMProbeFailureFallsBack: a GPM failure while opening (no
// permission, MIG, a VM) means utilization only, with the reason, not an
// error.
func TestNVMLGPMProbeFailureFallsBack(t *testing.T) {
	tests := []struct {
		call  string
		dev   int
		match string
	}{
		{"GPMSupported", 1, "GPM unavailable (nvml: nvmlGpmQueryDeviceSupport on GPU 1: Insufficient Permissions)"},
		{"GPMSampleAlloc", -1, "GPM unavailable (nvml: nvmlGpmSampleAlloc on GPU 0: Insufficient Permissions)"},
		{"GPMSampleGet", 1, "GPM unavailable (nvml: nvmlGpmSampleGet on GPU 1: Insufficient Permissions)"},
	}
	for _, tc := range tests {
		t.Run(tc.call, func(t *testing.T) {
			lib := twoGPUs(true)
			lib.fail[tc.call], lib.failDev = errors.New("Insufficient Permissions"), tc.dev
			s, err := newNVMLSource(lib, quick(nvmlConfig{}))
			require.NoError(t, err)
			require.Equal(t, "nvml", s.Name())
			require.Contains(t, s.Note(), tc.match)
			require.Contains(t, s.Note(), "utilization only, Pressure false")
			require.Zero(t, lib.live(), "GPM buffers taken before the failure are freed")
			got, err := s.Sample(context.Background())
			require.NoError(t, err)
			require.False(t, got[0].Pressure)
			require.NoError(t, s.Close())
			require.Zero(t, lib.live())
		})
	}
}

func TestNVMLSampleErrors(t *testing.T) {
	boom := errors.New("GPU is lost")
	tests := []struct {
		call   string
		metErr error
		match  string
	}{
		{"Memory", nil, "nvml: nvmlDeviceGetMemoryInfo on GPU 1: GPU is lost"},
		{"Utilization", nil, "nvml: nvmlDeviceGetUtilizationRates on GPU 1: GPU is lost"},
		{"ComputeProcesses", nil, "nvml: nvmlDeviceGetComputeRunningProcesses on GPU 1: GPU is lost"},
		{"GPMSampleGet", nil, "nvml: nvmlGpmSampleGet on GPU 1: GPU is lost"},
		{"GPMMetrics", nil, "nvml: nvmlGpmMetricsGet on GPU 1: GPU is lost"},
	}
	for _, tc := range tests {
		t.Run(tc.match, func(t *testing.T) {
			lib := twoGPUs(true)
			lib.devs[0].drama = 50
			s, err := newNVMLSource(lib, quick(nvmlConfig{}))
			require.NoError(t, err)
			if tc.call != "" {
				lib.fail[tc.call], lib.failDev = boom, 1
			}
			lib.metErr = tc.metErr
			_, err = s.Sample(context.Background())
			require.EqualError(t, err, tc.match)
			require.Equal(t, 2, lib.live(), "a failed reading keeps exactly one GPM sample per device")

			// The fault clears: the next reading works and measures from the
			// interval's kept start.
			clear(lib.fail)
			lib.metErr = nil
			got, err := s.Sample(context.Background())
			require.NoError(t, err)
			require.True(t, got[1].Pressure)
			require.InDelta(t, 0.5, got[0].DRAMA, 1e-12)
			require.NoError(t, s.Close())
			require.Zero(t, lib.live())
		})
	}
}

// TestNVMLBadMetricDropsPressureOnly: a GPM metric NVML fails to compute,
// or reads out of range, drops that device's pressure signals from that
// sample only: memory, utilization and processes stand, the other device
// keeps its signals, and the next reading (measured from this one) is whole.
func TestNVMLBadMetricDropsPressureOnly(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(*fakeNVML)
		want   string
	}{
		{"metric error", func(f *fakeNVML) { f.metErr = errors.New("GPU is lost") },
			"nvml: nvmlGpmMetricsGet on GPU 0: metric NVML_GPM_METRIC_DRAM_BW_UTIL: GPU is lost"},
		{"value out of range", func(f *fakeNVML) { f.devs[0].smocc = 250 },
			"nvml: nvmlGpmMetricsGet on GPU 0: metric NVML_GPM_METRIC_SM_OCCUPANCY: value 250 outside 0..100"},
		{"NaN", func(f *fakeNVML) { f.devs[0].smact = math.NaN() },
			"nvml: nvmlGpmMetricsGet on GPU 0: metric NVML_GPM_METRIC_SM_UTIL: value NaN outside 0..100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lib := twoGPUs(true)
			lib.devs[0].drama, lib.devs[1].smact = 50, 80
			s, err := newNVMLSource(lib, quick(nvmlConfig{}))
			require.NoError(t, err)
			good := lib.devs[0]
			tc.break_(lib) // metErr breaks every device's DRAMA
			got, err := s.Sample(context.Background())
			require.NoError(t, err, "one bad metric is not a failed reading")
			require.False(t, got[0].Pressure)
			require.Equal(t, tc.want, got[0].Dropped)
			require.Zero(t, got[0].SMACT+got[0].SMOCC+got[0].DRAMA, "no partial pressure values")
			require.Equal(t, 2048.0, got[0].UsedMiB, "memory stands")
			require.Equal(t, 37.0, got[0].UtilPct, "utilization stands")
			require.Len(t, got[0].Procs, 2, "processes stand")
			if lib.metErr == nil {
				require.True(t, got[1].Pressure, "the other GPU keeps its signals")
				require.InDelta(t, 0.8, got[1].SMACT, 1e-12)
			}
			require.Equal(t, 2, lib.live(), "the interval was consumed: one GPM sample held per device")

			lib.devs[0], lib.metErr = good, nil
			got, err = s.Sample(context.Background())
			require.NoError(t, err)
			require.True(t, got[0].Pressure)
			require.Empty(t, got[0].Dropped)
			require.InDelta(t, 0.5, got[0].DRAMA, 1e-12)
			require.NoError(t, s.Close())
			require.Zero(t, lib.live())
		})
	}
}

// TestNVMLDriverProcList: on R535 drivers the process list is not read (it
// would overflow go-nvml's buffer and garble PIDs); samples say so.
func TestNVMLDriverProcList(t *testing.T) {
	tests := []struct {
		driver string
		unsafe bool
	}{
		{"535.104.05", true},
		{"535.183.01", true},
		{"550.54.15", false},
		{"525.147.05", false},
		{"5350.1", false},
		{"570.86.10", false},
	}
	for _, tc := range tests {
		t.Run(tc.driver, func(t *testing.T) {
			lib := twoGPUs(true)
			lib.driver = tc.driver
			s, err := newNVMLSource(lib, quick(nvmlConfig{}))
			require.NoError(t, err)
			got, err := s.Sample(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.unsafe, got[0].ProcsUnknown)
			require.Equal(t, tc.unsafe, got[1].ProcsUnknown)
			if tc.unsafe {
				require.Zero(t, lib.procCalls, "the unsafe list is never read")
				require.Empty(t, got[0].Procs)
				require.Contains(t, s.Note(), "driver "+tc.driver+": processes not listed")
				require.True(t, got[0].Pressure, "everything else is read")
			} else {
				require.Equal(t, 2, lib.procCalls)
				require.Len(t, got[0].Procs, 2)
				require.NotContains(t, s.Note(), "processes not listed")
			}
			require.NoError(t, s.Close())
		})
	}
	t.Run("version unknown", func(t *testing.T) {
		lib := twoGPUs(false)
		lib.fail["DriverVersion"] = errors.New("not supported")
		s, err := newNVMLSource(lib, quick(nvmlConfig{}))
		require.NoError(t, err)
		got, err := s.Sample(context.Background())
		require.NoError(t, err)
		require.False(t, got[0].ProcsUnknown)
		require.NoError(t, s.Close())
	})
}

// TestNVMLRefusesMIG: a selected GPU in MIG mode is refused at open with
// what to do, not a failure at every sample; other GPUs can be chosen.
func TestNVMLRefusesMIG(t *testing.T) {
	lib := twoGPUs(true)
	lib.devs[1].mig = true
	_, err := newNVMLSource(lib, quick(nvmlConfig{}))
	require.ErrorContains(t, err, "nvml: GPU 1 (NVIDIA H200) has MIG mode enabled")
	require.ErrorContains(t, err, "--gpus")
	require.Equal(t, 1, lib.shutdown, "NVML is shut down again")

	lib = twoGPUs(true)
	lib.devs[1].mig = true
	s, err := newNVMLSource(lib, quick(nvmlConfig{gpus: []int{0}}))
	require.NoError(t, err, "the GPU without MIG is usable")
	require.NoError(t, s.Close())

	lib = twoGPUs(true)
	lib.fail["MIGEnabled"], lib.failDev = errors.New("GPU is lost"), 0
	_, err = newNVMLSource(lib, quick(nvmlConfig{}))
	require.EqualError(t, err, "nvml: nvmlDeviceGetMigMode on GPU 0: GPU is lost")
}

func TestNVMLSampleCancelled(t *testing.T) {
	clk := &testClock{t: time.Unix(0, 0), sleepE: context.Canceled}
	s, err := newNVMLSource(twoGPUs(true), nvmlConfig{now: clk.now, sleep: clk.sleep})
	require.NoError(t, err)
	_, err = s.Sample(context.Background())
	require.ErrorIs(t, err, context.Canceled, "cancelled while waiting for the GPM interval")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Sample(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// quick gives cfg a manual clock so tests never wait for GPM intervals.
func quick(cfg nvmlConfig) nvmlConfig {
	clk := &testClock{t: time.Unix(0, 0)}
	cfg.now, cfg.sleep = clk.now, clk.sleep
	return cfg
}

// BenchmarkNVMLSample measures the source's own work per 1 Hz reading of
// eight GPUs with GPM (the fake NVML answers at once).
func BenchmarkNVMLSample(b *testing.B) {
	lib := twoGPUs(true)
	lib.devs[0].drama = 50
	for len(lib.devs) < 8 {
		lib.devs = append(lib.devs, lib.devs[0])
	}
	s, err := newNVMLSource(lib, quick(nvmlConfig{}))
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, s.Close())
}
