//go:build nvml && cgo && linux

package gpu

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// openNVMLLib returns NVML through go-nvml. The library (libnvidia-ml.so.1,
// installed with the NVIDIA driver) is loaded by Init, so a machine without the NVIDIA driver fails there with
// NVML's "library not found", not here.
func openNVMLLib() (nvmlLib, error) {
	return &goNVML{lib: nvml.New(), handles: map[int]nvml.Device{}}, nil
}

// goNVML implements nvmlLib with go-nvml.
type goNVML struct {
	lib     nvml.Interface
	handles map[int]nvml.Device
	// memV1 is set once the v2 memory query proved unavailable (drivers
	// before R510): memory is then read with the v1 query.
	memV1 bool
}

// nvmlError is a failed NVML call's return code; its message is NVML's.
type nvmlError struct{ ret nvml.Return }

func (e nvmlError) Error() string {
	if e.ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		return fmt.Sprintf("%v: %s: libnvidia-ml.so.1 could not be loaded (is the NVIDIA driver installed?)", ErrNVMLUnavailable, nvml.ErrorString(e.ret))
	}
	return nvml.ErrorString(e.ret)
}

func (e nvmlError) Unwrap() error {
	if e.ret == nvml.ERROR_LIBRARY_NOT_FOUND {
		return ErrNVMLUnavailable
	}
	return nil
}

// check turns an NVML return code into an error.
func check(ret nvml.Return) error {
	if ret == nvml.SUCCESS {
		return nil
	}
	return nvmlError{ret}
}

func (g *goNVML) Init() error     { return check(g.lib.Init()) }
func (g *goNVML) Shutdown() error { return check(g.lib.Shutdown()) }

func (g *goNVML) DeviceCount() (int, error) {
	n, ret := g.lib.DeviceGetCount()
	return n, check(ret)
}

func (g *goNVML) device(i int) (nvml.Device, error) {
	if d, ok := g.handles[i]; ok {
		return d, nil
	}
	d, ret := g.lib.DeviceGetHandleByIndex(i)
	if err := check(ret); err != nil {
		return nil, fmt.Errorf("nvmlDeviceGetHandleByIndex: %w", err)
	}
	g.handles[i] = d
	return d, nil
}

func (g *goNVML) UUID(i int) (string, error) {
	d, err := g.device(i)
	if err != nil {
		return "", err
	}
	u, ret := d.GetUUID()
	return u, check(ret)
}

func (g *goNVML) Name(i int) (string, error) {
	d, err := g.device(i)
	if err != nil {
		return "", err
	}
	n, ret := d.GetName()
	return n, check(ret)
}

// Memory reads memory with NVML's v2 query, whose used memory excludes
// what the driver reserves (as nvidia-smi shows it: about 0 on an idle
// GPU; the v1 query counts the reservation as used). Drivers without the v2
// query fall back to v1.
func (g *goNVML) Memory(i int) (uint64, uint64, error) {
	d, err := g.device(i)
	if err != nil {
		return 0, 0, err
	}
	if !g.memV1 {
		m, ret := d.GetMemoryInfo_v2()
		switch ret {
		case nvml.SUCCESS:
			return m.Used, m.Total, nil
		case nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_ARGUMENT_VERSION_MISMATCH:
			g.memV1 = true
		default:
			return 0, 0, check(ret)
		}
	}
	m, ret := d.GetMemoryInfo()
	return m.Used, m.Total, check(ret)
}

func (g *goNVML) Utilization(i int) (uint32, error) {
	d, err := g.device(i)
	if err != nil {
		return 0, err
	}
	u, ret := d.GetUtilizationRates()
	return u.Gpu, check(ret)
}

func (g *goNVML) ComputeProcesses(i int) ([]nvmlProc, error) {
	d, err := g.device(i)
	if err != nil {
		return nil, err
	}
	ps, ret := d.GetComputeRunningProcesses()
	if err := check(ret); err != nil {
		return nil, err
	}
	out := make([]nvmlProc, len(ps))
	for k, p := range ps {
		out[k] = nvmlProc{PID: p.Pid, UsedBytes: p.UsedGpuMemory}
	}
	return out, nil
}

func (g *goNVML) DriverVersion() (string, error) {
	v, ret := g.lib.SystemGetDriverVersion()
	return v, check(ret)
}

func (g *goNVML) TotalEnergy(i int) (uint64, error) {
	d, err := g.device(i)
	if err != nil {
		return 0, err
	}
	e, ret := d.GetTotalEnergyConsumption()
	if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_FUNCTION_NOT_FOUND {
		return 0, fmt.Errorf("%w (%v)", ErrNoEnergy, nvmlError{ret})
	}
	return e, check(ret)
}

func (g *goNVML) Power(i int) (uint32, error) {
	d, err := g.device(i)
	if err != nil {
		return 0, err
	}
	p, ret := d.GetPowerUsage()
	if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_FUNCTION_NOT_FOUND {
		return 0, fmt.Errorf("%w (%v)", ErrNoPower, nvmlError{ret})
	}
	return p, check(ret)
}

func (g *goNVML) MIGEnabled(i int) (bool, error) {
	d, err := g.device(i)
	if err != nil {
		return false, err
	}
	cur, _, ret := d.GetMigMode()
	if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_FUNCTION_NOT_FOUND {
		return false, nil // a GPU or driver without MIG
	}
	if err := check(ret); err != nil {
		return false, err
	}
	return cur == nvml.DEVICE_MIG_ENABLE, nil
}

func (g *goNVML) GPMSupported(i int) (bool, error) {
	d, err := g.device(i)
	if err != nil {
		return false, err
	}
	// A driver older than GPM (before R520) lacks the symbols; calling
	// through a missing symbol would crash, so look them up first.
	for _, sym := range gpmSymbols {
		if g.lib.Extensions().LookupSymbol(sym) != nil {
			return false, nil
		}
	}
	s, ret := d.GpmQueryDeviceSupport()
	if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_FUNCTION_NOT_FOUND {
		// An older driver without GPM, or a GPU it does not cover.
		return false, nil
	}
	if err := check(ret); err != nil {
		return false, err
	}
	return s.IsSupportedDevice != 0, nil
}

func (g *goNVML) GPMSampleAlloc() (gpmHandle, error) {
	s, ret := g.lib.GpmSampleAlloc()
	if err := check(ret); err != nil {
		return nil, err
	}
	return s, nil
}

func (g *goNVML) GPMSampleGet(i int, h gpmHandle) error {
	d, err := g.device(i)
	if err != nil {
		return err
	}
	s, ok := h.(nvml.GpmSample)
	if !ok {
		return fmt.Errorf("GPM sample of type %T", h)
	}
	return check(g.lib.GpmSampleGet(d, s))
}

func (g *goNVML) GPMSampleFree(h gpmHandle) error {
	s, ok := h.(nvml.GpmSample)
	if !ok {
		return fmt.Errorf("GPM sample of type %T", h)
	}
	return check(g.lib.GpmSampleFree(s))
}

// gpmSymbols are the NVML functions the GPM path calls.
var gpmSymbols = []string{"nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc", "nvmlGpmSampleGet", "nvmlGpmSampleFree", "nvmlGpmMetricsGet"}

// gpmIDs maps our metric names to NVML's.
var gpmIDs = map[gpmMetric]nvml.GpmMetricId{
	gpmSMActivity:    nvml.GPM_METRIC_SM_UTIL,
	gpmSMOccupancy:   nvml.GPM_METRIC_SM_OCCUPANCY,
	gpmDRAMBandwidth: nvml.GPM_METRIC_DRAM_BW_UTIL,
}

func (g *goNVML) GPMMetrics(first, second gpmHandle, metrics []gpmMetric) ([]float64, []error, error) {
	s1, ok1 := first.(nvml.GpmSample)
	s2, ok2 := second.(nvml.GpmSample)
	if !ok1 || !ok2 {
		return nil, nil, fmt.Errorf("GPM samples of types %T, %T", first, second)
	}
	if len(metrics) > len(nvml.GpmMetricsGetType{}.Metrics) {
		return nil, nil, fmt.Errorf("%d GPM metrics requested, NVML takes at most %d", len(metrics), len(nvml.GpmMetricsGetType{}.Metrics))
	}
	req := &nvml.GpmMetricsGetType{Version: nvml.GPM_METRICS_GET_VERSION, NumMetrics: uint32(len(metrics)), Sample1: s1, Sample2: s2}
	for k, m := range metrics {
		id, ok := gpmIDs[m]
		if !ok {
			return nil, nil, fmt.Errorf("unknown GPM metric %v", m)
		}
		req.Metrics[k].MetricId = uint32(id)
	}
	if err := check(g.lib.GpmMetricsGet(req)); err != nil {
		return nil, nil, err
	}
	vals := make([]float64, len(metrics))
	errs := make([]error, len(metrics))
	for k := range metrics {
		vals[k] = req.Metrics[k].Value
		errs[k] = check(nvml.Return(req.Metrics[k].NvmlReturn))
	}
	return vals, errs, nil
}
