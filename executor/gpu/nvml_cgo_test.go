//go:build nvml && cgo && linux

package gpu

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/stretchr/testify/require"
)

// mockServer is go-nvml's generated mock NVML (its mock server package
// needs a module outside our allowed list) set up as a server with two H200s.
type mockServer struct {
	mock.Interface
	mock.ExtendedInterface
	Devices []nvml.Device
}

// mockH200 is a mock server of two H200s with utilization, processes and
// GPM. It counts live GPM sample buffers.
type mockH200 struct {
	srv  *mockServer
	mu   sync.Mutex
	live map[*mock.GpmSample]bool
	// takenOn records the device each GPM sample was taken on.
	takenOn map[*mock.GpmSample]nvml.Device
}

func newMockH200(t *testing.T) *mockH200 {
	m := &mockH200{srv: &mockServer{}, live: map[*mock.GpmSample]bool{}, takenOn: map[*mock.GpmSample]nvml.Device{}}
	srv := m.srv
	srv.InitFunc = func() nvml.Return { return nvml.SUCCESS }
	srv.ShutdownFunc = func() nvml.Return { return nvml.SUCCESS }
	srv.ExtensionsFunc = func() nvml.ExtendedInterface { return srv }
	srv.LookupSymbolFunc = func(string) error { return nil }
	srv.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "570.86.15", nvml.SUCCESS }
	srv.DeviceGetCountFunc = func() (int, nvml.Return) { return len(srv.Devices), nvml.SUCCESS }
	srv.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < 0 || i >= len(srv.Devices) {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		return srv.Devices[i], nvml.SUCCESS
	}
	for i := range 2 {
		dev := &mock.Device{}
		srv.Devices = append(srv.Devices, dev)
		dev.GetNameFunc = func() (string, nvml.Return) { return "NVIDIA H200 141GB HBM3e", nvml.SUCCESS }
		dev.GetUUIDFunc = func() (string, nvml.Return) {
			return "GPU-00000000-0000-0000-0000-00000000000" + string(rune('0'+i)), nvml.SUCCESS
		}
		// v1 counts the driver's reservation (here 512 MiB) as used; v2,
		// like nvidia-smi, does not.
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 144384 << 20, Used: 3<<30 + 512<<20, Free: 144384<<20 - 3<<30 - 512<<20}, nvml.SUCCESS
		}
		dev.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: 144384 << 20, Reserved: 512 << 20, Used: 3 << 30, Free: 144384<<20 - 3<<30 - 512<<20}, nvml.SUCCESS
		}
		dev.GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS }
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(60 + i)}, nvml.SUCCESS
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: uint32(1000 + i), UsedGpuMemory: 3 << 30}}, nvml.SUCCESS
		}
		dev.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
			return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return uint32(250500 + 1000*i), nvml.SUCCESS }
	}
	m.srv.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) {
		m.mu.Lock()
		defer m.mu.Unlock()
		s := &mock.GpmSample{}
		m.live[s] = true
		return s, nvml.SUCCESS
	}
	m.srv.GpmSampleFreeFunc = func(s nvml.GpmSample) nvml.Return {
		m.mu.Lock()
		defer m.mu.Unlock()
		if !m.live[s.(*mock.GpmSample)] {
			t.Errorf("GPM sample freed twice or never allocated")
		}
		delete(m.live, s.(*mock.GpmSample))
		return nvml.SUCCESS
	}
	m.srv.GpmSampleGetFunc = func(d nvml.Device, s nvml.GpmSample) nvml.Return {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.takenOn[s.(*mock.GpmSample)] = d
		return nvml.SUCCESS
	}
	m.srv.GpmMetricsGetFunc = func(g *nvml.GpmMetricsGetType) nvml.Return {
		m.mu.Lock()
		defer m.mu.Unlock()
		if g.Version != nvml.GPM_METRICS_GET_VERSION || m.takenOn[g.Sample1.(*mock.GpmSample)] != m.takenOn[g.Sample2.(*mock.GpmSample)] {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		for k := range g.NumMetrics {
			switch nvml.GpmMetricId(g.Metrics[k].MetricId) {
			case nvml.GPM_METRIC_SM_UTIL:
				g.Metrics[k].Value = 45
			case nvml.GPM_METRIC_SM_OCCUPANCY:
				g.Metrics[k].Value = 20
			case nvml.GPM_METRIC_DRAM_BW_UTIL:
				g.Metrics[k].Value = 30
			default:
				g.Metrics[k].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
			}
		}
		return nvml.SUCCESS
	}
	return m
}

// TestGoNVMLOnMockH200 runs the NVML source through the go-nvml adapter
// against go-nvml's generated mock NVML posing as two H200s.
func TestGoNVMLOnMockH200(t *testing.T) {
	m := newMockH200(t)
	s, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
	require.NoError(t, err)
	require.Equal(t, "nvml+gpm", s.Name())
	devs, err := s.Devices()
	require.NoError(t, err)
	require.Len(t, devs, 2)
	require.Contains(t, devs[1].Name, "H200")
	require.NotEmpty(t, devs[1].UUID)
	require.Equal(t, 144384.0, devs[1].TotalMiB)
	require.Equal(t, "GPU-00000000-0000-0000-0000-000000000001", devs[1].UUID)

	got, err := s.Sample(context.Background())
	require.NoError(t, err)
	require.Len(t, got, 2)
	g := got[1]
	require.Equal(t, 1, g.GPU)
	require.Equal(t, 61.0, g.UtilPct)
	require.Equal(t, 3072.0, g.UsedMiB, "used as nvidia-smi counts it: the v2 query, reserved memory excluded")
	require.Equal(t, []Proc{{PID: 1001, UsedMiB: 3072}}, g.Procs)
	require.True(t, g.Pressure)
	require.Equal(t, []float64{0.45, 0.20, 0.30}, []float64{g.SMACT, g.SMOCC, g.DRAMA})
	require.True(t, g.HasPower)
	require.Equal(t, 251.5, g.PowerW, "milliwatts read as watts")
	require.Len(t, m.live, 2, "one GPM sample held per device")
	require.NoError(t, s.Close())
	require.Empty(t, m.live)
}

func TestGoNVMLAdapterFallbacks(t *testing.T) {
	t.Run("driver without GPM symbols", func(t *testing.T) {
		m := newMockH200(t)
		m.srv.LookupSymbolFunc = func(sym string) error {
			if sym == "nvmlGpmMetricsGet" {
				return errors.New("undefined symbol")
			}
			return nil
		}
		s, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.NoError(t, err)
		require.Equal(t, "nvml", s.Name())
		require.NoError(t, s.Close())
	})
	t.Run("GPM query not supported", func(t *testing.T) {
		m := newMockH200(t)
		m.srv.Devices[0].(*mock.Device).GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
			return nvml.GpmSupport{}, nvml.ERROR_NOT_SUPPORTED
		}
		s, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.NoError(t, err)
		require.Equal(t, "nvml", s.Name())
		require.NoError(t, s.Close())
	})
	t.Run("NVML error names call and device", func(t *testing.T) {
		m := newMockH200(t)
		s, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.NoError(t, err)
		m.srv.Devices[1].(*mock.Device).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST
		}
		_, err = s.Sample(context.Background())
		require.EqualError(t, err, "nvml: nvmlDeviceGetUtilizationRates on GPU 1: ERROR_GPU_IS_LOST")
		require.NoError(t, s.Close())
	})
	t.Run("driver without the v2 memory query", func(t *testing.T) {
		m := newMockH200(t)
		for _, d := range m.srv.Devices {
			d.(*mock.Device).GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
				return nvml.Memory_v2{}, nvml.ERROR_FUNCTION_NOT_FOUND
			}
		}
		s, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.NoError(t, err)
		got, err := s.Sample(context.Background())
		require.NoError(t, err)
		require.Equal(t, 3584.0, got[0].UsedMiB, "v1's used, reservation included")
		require.NoError(t, s.Close())
	})
	t.Run("R535 driver: process list not read", func(t *testing.T) {
		m := newMockH200(t)
		m.srv.SystemGetDriverVersionFunc = func() (string, nvml.Return) { return "535.104.05", nvml.SUCCESS }
		for _, d := range m.srv.Devices {
			d.(*mock.Device).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
				t.Error("the process list was read on an R535 driver")
				return nil, nvml.SUCCESS
			}
		}
		s, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.NoError(t, err)
		got, err := s.Sample(context.Background())
		require.NoError(t, err)
		require.True(t, got[0].ProcsUnknown)
		require.NoError(t, s.Close())
	})
	t.Run("MIG enabled", func(t *testing.T) {
		m := newMockH200(t)
		m.srv.Devices[0].(*mock.Device).GetMigModeFunc = func() (int, int, nvml.Return) {
			return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
		}
		_, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.ErrorContains(t, err, "GPU 0 (NVIDIA H200 141GB HBM3e) has MIG mode enabled")
	})
	t.Run("GPU without MIG", func(t *testing.T) {
		m := newMockH200(t)
		for _, d := range m.srv.Devices {
			d.(*mock.Device).GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
		}
		s, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.NoError(t, err)
		require.NoError(t, s.Close())
	})
	t.Run("library not found", func(t *testing.T) {
		m := newMockH200(t)
		m.srv.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		_, err := newNVMLSource(&goNVML{lib: m.srv, handles: map[int]nvml.Device{}}, quick(nvmlConfig{}))
		require.ErrorIs(t, err, ErrNVMLUnavailable)
		require.ErrorContains(t, err, "nvml: nvmlInit: NVML unavailable: ERROR_LIBRARY_NOT_FOUND")
	})
}
