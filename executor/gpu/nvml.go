package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrNVMLUnavailable is returned (wrapped) when NVML cannot be used at all:
// the binary was built without cgo, or the NVML library is not installed.
var ErrNVMLUnavailable = errors.New("NVML unavailable")

// gpmMinGap is the shortest interval GPM metrics are computed over; two GPM
// samples closer than this give noisy ratios, so Sample waits out the rest.
const gpmMinGap = 100 * time.Millisecond

// gpmMetric names the GPM metrics the NVML source reads.
type gpmMetric int

// The GPM metrics behind Sample's SMACT, SMOCC and DRAMA.
const (
	gpmSMActivity gpmMetric = iota
	gpmSMOccupancy
	gpmDRAMBandwidth
)

// gpmMetrics are the metrics read per interval, in Sample field order.
var gpmMetrics = []gpmMetric{gpmSMActivity, gpmSMOccupancy, gpmDRAMBandwidth}

func (m gpmMetric) String() string {
	switch m {
	case gpmSMActivity:
		return "NVML_GPM_METRIC_SM_UTIL"
	case gpmSMOccupancy:
		return "NVML_GPM_METRIC_SM_OCCUPANCY"
	case gpmDRAMBandwidth:
		return "NVML_GPM_METRIC_DRAM_BW_UTIL"
	}
	return fmt.Sprintf("gpm metric %d", int(m))
}

// gpmHandle is an opaque GPM sample buffer of the NVML library.
type gpmHandle any

// nvmlProc is one entry of NVML's running compute processes.
type nvmlProc struct {
	PID uint32
	// UsedBytes is the process's GPU memory; nvmlValueNotAvailable when
	// NVML cannot tell (e.g. some containerised or virtualised setups).
	UsedBytes uint64
}

// nvmlValueNotAvailable is NVML's NVML_VALUE_NOT_AVAILABLE for 64-bit values.
const nvmlValueNotAvailable = math.MaxUint64

// nvmlLib is the part of NVML the NVML source uses, one method per NVML call,
// devices addressed by NVML index. Errors carry NVML's own message; the
// source adds the call and the device. The cgo build wraps go-nvml; tests
// use a fake.
type nvmlLib interface {
	Init() error
	Shutdown() error
	DeviceCount() (int, error)
	UUID(i int) (string, error)
	Name(i int) (string, error)
	// Memory reads device i's used and total memory the way nvidia-smi
	// counts it: used excludes the driver-reserved memory (NVML's v2
	// memory query), so an idle GPU reads about 0.
	Memory(i int) (used, total uint64, err error)
	Utilization(i int) (gpuPct uint32, err error)
	ComputeProcesses(i int) ([]nvmlProc, error)
	// DriverVersion is the driver's version string, e.g. "535.104.05".
	DriverVersion() (string, error)
	// MIGEnabled reports whether device i runs in MIG mode now; a GPU
	// without MIG support reports false.
	MIGEnabled(i int) (bool, error)
	GPMSupported(i int) (bool, error)
	GPMSampleAlloc() (gpmHandle, error)
	GPMSampleGet(i int, h gpmHandle) error
	GPMSampleFree(h gpmHandle) error
	// GPMMetrics computes metrics over the interval between two samples
	// of one device. It returns one value per metric (NVML's 0..100
	// percentages) and, per metric, the error NVML reported for it or nil.
	GPMMetrics(first, second gpmHandle, metrics []gpmMetric) ([]float64, []error, error)
	// TotalEnergy reads device i's energy counter, millijoules since the
	// driver loaded; an error wrapping ErrNoEnergy where unsupported.
	TotalEnergy(i int) (uint64, error)
	// Power reads device i's power draw, milliwatts (averaged by the
	// driver over about a second); an error wrapping ErrNoPower where
	// unsupported.
	Power(i int) (uint32, error)
}

// nvmlConfig configures newNVMLSource.
type nvmlConfig struct {
	// gpus restricts the source to these NVML indices; empty means all.
	gpus []int
	// noGPM reads utilization only even where GPM is supported.
	noGPM bool
	// now and sleep are the clock; nil means the wall clock.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// nvmlSource is the NVML Source: memory, utilization and processes from the
// device queries, SMACT/SMOCC/DRAMA from GPM where every device supports it.
type nvmlSource struct {
	lib   nvmlLib
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	devices []Device
	gpm     bool
	note    string
	// noProcs means the driver's process list cannot be read safely
	// (see procListUnsafe): samples carry ProcsUnknown instead.
	noProcs bool
	// noPower holds, per device index, why its power reading is
	// unsupported: it is not read again, and every sample carries it.
	noPower map[int]string
	// prev holds each device's latest GPM sample and when it was taken:
	// the start of the next interval.
	prev   []gpmHandle
	prevAt []time.Time
	closed bool
}

// wallSleep waits d or until ctx is done.
func wallSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// nvmlErr names the NVML call and device an error came from.
func nvmlErr(call string, dev int, err error) error {
	if dev < 0 {
		return fmt.Errorf("nvml: %s: %w", call, err)
	}
	return fmt.Errorf("nvml: %s on GPU %d: %w", call, dev, err)
}

// newNVMLSource initialises lib, lists the devices and, unless cfg.noGPM,
// probes GPM on each and takes the first GPM sample of every device. GPM is
// used only if every selected device supports it and the probing succeeds;
// otherwise the source reads utilization only and Note says why. On error
// lib is shut down again.
func newNVMLSource(lib nvmlLib, cfg nvmlConfig) (_ *nvmlSource, err error) {
	if err := lib.Init(); err != nil {
		return nil, nvmlErr("nvmlInit", -1, err)
	}
	s := &nvmlSource{lib: lib, now: cfg.now, sleep: cfg.sleep}
	if s.now == nil {
		s.now = time.Now
	}
	if s.sleep == nil {
		s.sleep = wallSleep
	}
	defer func() {
		if err != nil {
			s.freeGPM()
			if serr := lib.Shutdown(); serr != nil {
				err = errors.Join(err, nvmlErr("nvmlShutdown", -1, serr))
			}
		}
	}()
	n, err := lib.DeviceCount()
	if err != nil {
		return nil, nvmlErr("nvmlDeviceGetCount", -1, err)
	}
	idx := cfg.gpus
	if len(idx) == 0 {
		if n == 0 {
			return nil, errors.New("nvml: no GPU found (nvmlDeviceGetCount returned 0)")
		}
		for i := range n {
			idx = append(idx, i)
		}
	}
	seen := map[int]bool{}
	for _, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Errorf("nvml: GPU %d does not exist (this machine has %d, indices 0..%d)", i, n, n-1)
		}
		if seen[i] {
			return nil, fmt.Errorf("nvml: GPU %d listed twice", i)
		}
		seen[i] = true
		d, err := s.describe(i)
		if err != nil {
			return nil, err
		}
		s.devices = append(s.devices, d)
	}
	drv := s.checkDriver()
	if cfg.noGPM {
		s.note = "utilization only (GPM not requested): Pressure false" + drv
		return s, nil
	}
	defer func() { s.note += drv }()
	// GPM is used only if every device supports it and gives a first
	// sample; any failure while probing means utilization only, with the
	// reason in the note (e.g. no permission, MIG, a VM without GPM).
	var without []string
	for _, d := range s.devices {
		ok, err := lib.GPMSupported(d.Index)
		if err != nil {
			s.note = fmt.Sprintf("GPM unavailable (%v): utilization only, Pressure false", nvmlErr("nvmlGpmQueryDeviceSupport", d.Index, err))
			return s, nil
		}
		if !ok {
			without = append(without, fmt.Sprintf("GPU %d (%s)", d.Index, d.Name))
		}
	}
	if len(without) > 0 {
		s.note = fmt.Sprintf("GPM unsupported on %s: utilization only, Pressure false (GPM needs Hopper or newer; use --telemetry dcgm for pressure signals on older GPUs)", strings.Join(without, ", "))
		return s, nil
	}
	s.prev = make([]gpmHandle, len(s.devices))
	s.prevAt = make([]time.Time, len(s.devices))
	for j, d := range s.devices {
		h, err := s.gpmTake(d.Index)
		if err != nil {
			if ferr := s.freeGPM(); ferr != nil {
				return nil, errors.Join(err, ferr)
			}
			s.prev, s.prevAt = nil, nil
			s.note = fmt.Sprintf("GPM unavailable (%v): utilization only, Pressure false", err)
			return s, nil
		}
		s.prev[j], s.prevAt[j] = h, s.now()
	}
	s.gpm = true
	s.note = "GPM on every GPU: SMACT, SMOCC, DRAMA valid"
	return s, nil
}

// describe reads device i's identity and capacity.
func (s *nvmlSource) describe(i int) (Device, error) {
	uuid, err := s.lib.UUID(i)
	if err != nil {
		return Device{}, nvmlErr("nvmlDeviceGetUUID", i, err)
	}
	name, err := s.lib.Name(i)
	if err != nil {
		return Device{}, nvmlErr("nvmlDeviceGetName", i, err)
	}
	_, total, err := s.lib.Memory(i)
	if err != nil {
		return Device{}, nvmlErr("nvmlDeviceGetMemoryInfo", i, err)
	}
	mig, err := s.lib.MIGEnabled(i)
	if err != nil {
		return Device{}, nvmlErr("nvmlDeviceGetMigMode", i, err)
	}
	if mig {
		return Device{}, fmt.Errorf("nvml: GPU %d (%s) has MIG mode enabled: aegis places jobs on whole GPUs and cannot read or target MIG instances; leave it out with --gpus, or disable MIG on it yourself (nvidia-smi -i %d -mig 0, as root, with no processes on it; aegis never changes GPU settings)", i, name, i)
	}
	return Device{Index: i, UUID: uuid, Name: name, TotalMiB: mib(total)}, nil
}

// checkDriver reads the driver's version and, where its process list cannot
// be read safely, stops reading it. It returns a note for Note ("" when
// nothing is wrong; a version NVML cannot tell is not an error).
func (s *nvmlSource) checkDriver() string {
	v, err := s.lib.DriverVersion()
	if err != nil {
		return ""
	}
	if procListUnsafe(v) {
		s.noProcs = true
		return fmt.Sprintf("; driver %s: processes not listed (its process list is %d bytes an entry where go-nvml reads %d, go-nvml issue #75), first activity read from each GPU's memory rise", v, 32, 24)
	}
	return ""
}

// procListUnsafe reports whether driver version v (e.g. "535.104.05") is of
// a branch whose nvmlDeviceGetComputeRunningProcesses_v3 writes 32-byte
// entries (with usedGpuCcProtectedMemory) where go-nvml allocates the
// 24-byte nvmlProcessInfo_t: R535. With two processes the second PID would
// be garbage and the driver would write past go-nvml's buffer, so the list
// is not read at all on those drivers.
func procListUnsafe(v string) bool {
	major, _, _ := strings.Cut(strings.TrimSpace(v), ".")
	return major == "535"
}

// gpmTake allocates a GPM sample buffer and fills it from device i.
func (s *nvmlSource) gpmTake(i int) (gpmHandle, error) {
	h, err := s.lib.GPMSampleAlloc()
	if err != nil {
		return nil, nvmlErr("nvmlGpmSampleAlloc", i, err)
	}
	if err := s.lib.GPMSampleGet(i, h); err != nil {
		err = nvmlErr("nvmlGpmSampleGet", i, err)
		if ferr := s.lib.GPMSampleFree(h); ferr != nil {
			err = errors.Join(err, nvmlErr("nvmlGpmSampleFree", i, ferr))
		}
		return nil, err
	}
	return h, nil
}

// freeGPM releases every held GPM sample buffer.
func (s *nvmlSource) freeGPM() error {
	var errs []error
	for j, h := range s.prev {
		if h == nil {
			continue
		}
		if err := s.lib.GPMSampleFree(h); err != nil {
			errs = append(errs, nvmlErr("nvmlGpmSampleFree", s.devices[j].Index, err))
		}
		s.prev[j] = nil
	}
	return errors.Join(errs...)
}

func mib(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// Name implements Source: "nvml+gpm" when the pressure signals come from
// GPM, "nvml" when only utilization is read.
func (s *nvmlSource) Name() string {
	if s.gpm {
		return "nvml+gpm"
	}
	return "nvml"
}

// Note says which mode the source runs in and why.
func (s *nvmlSource) Note() string { return s.note }

// Devices implements Source.
func (s *nvmlSource) Devices() ([]Device, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("nvml: Devices after Close")
	}
	return slices.Clone(s.devices), nil
}

// Sample implements Source. Per device it reads memory, utilization and
// the running compute processes and, with GPM, the metrics over the interval
// since the previous call (the first call's interval starts at open; an
// interval shorter than 100 ms is waited out). The first failing NVML call
// ends the reading with an error naming the call and the device; a GPM
// metric that fails or reads out of range only drops that device's pressure
// signals from the sample (Pressure false, Dropped says why).
func (s *nvmlSource) Sample(ctx context.Context) ([]Sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("nvml: Sample after Close")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("nvml: %w", err)
	}
	if s.gpm {
		var wait time.Duration
		now := s.now()
		for _, at := range s.prevAt {
			wait = max(wait, gpmMinGap-now.Sub(at))
		}
		if wait > 0 {
			if err := s.sleep(ctx, wait); err != nil {
				return nil, fmt.Errorf("nvml: waiting for the GPM interval: %w", err)
			}
		}
	}
	out := make([]Sample, 0, len(s.devices))
	for j, d := range s.devices {
		smp, err := s.read(j, d)
		if err != nil {
			return nil, err
		}
		out = append(out, smp)
	}
	return out, nil
}

// read reads device d, the j-th of the source.
func (s *nvmlSource) read(j int, d Device) (Sample, error) {
	i := d.Index
	smp := Sample{GPU: i, At: s.now()}
	used, total, err := s.lib.Memory(i)
	if err != nil {
		return Sample{}, nvmlErr("nvmlDeviceGetMemoryInfo", i, err)
	}
	smp.UsedMiB, smp.TotalMiB = mib(used), mib(total)
	util, err := s.lib.Utilization(i)
	if err != nil {
		return Sample{}, nvmlErr("nvmlDeviceGetUtilizationRates", i, err)
	}
	smp.UtilPct = min(float64(util), 100)
	s.readPower(&smp)
	if s.noProcs {
		smp.ProcsUnknown = true
	} else {
		procs, err := s.lib.ComputeProcesses(i)
		if err != nil {
			return Sample{}, nvmlErr("nvmlDeviceGetComputeRunningProcesses", i, err)
		}
		smp.Procs = mergeProcs(procs)
	}
	if !s.gpm {
		return smp, nil
	}
	h, err := s.gpmTake(i)
	if err != nil {
		return Sample{}, err
	}
	takenAt := s.now()
	vals, perr, err := s.lib.GPMMetrics(s.prev[j], h, gpmMetrics)
	if err == nil && (len(vals) != len(gpmMetrics) || len(perr) != len(gpmMetrics)) {
		err = fmt.Errorf("%d values and %d errors for %d metrics", len(vals), len(perr), len(gpmMetrics))
	}
	if err != nil {
		// Keep the interval's start: the next call measures from it.
		err = nvmlErr("nvmlGpmMetricsGet", i, err)
		if ferr := s.lib.GPMSampleFree(h); ferr != nil {
			err = errors.Join(err, nvmlErr("nvmlGpmSampleFree", i, ferr))
		}
		return Sample{}, err
	}
	// The interval is measured: h starts the next one, whatever its metrics.
	ferr := s.lib.GPMSampleFree(s.prev[j])
	s.prev[j], s.prevAt[j] = h, takenAt
	if ferr != nil {
		return Sample{}, nvmlErr("nvmlGpmSampleFree", i, ferr)
	}
	if why := badMetric(vals, perr); why != "" {
		// One bad metric drops this sample's pressure signals only: the
		// window sees a missed sample; memory, utilization and processes
		// stand.
		smp.Dropped = nvmlErr("nvmlGpmMetricsGet", i, errors.New(why)).Error()
		return smp, nil
	}
	smp.Pressure = true
	smp.SMACT = min(vals[0]/100, 1)
	smp.SMOCC = min(vals[1]/100, 1)
	smp.DRAMA = min(vals[2]/100, 1)
	return smp, nil
}

// readPower reads the power draw of smp's device into smp. A failed reading
// is not the sample's failure: the sample goes without power and NoPower
// says why; an unsupported one is not tried again.
func (s *nvmlSource) readPower(smp *Sample) {
	if why, ok := s.noPower[smp.GPU]; ok {
		smp.NoPower = why
		return
	}
	mw, err := s.lib.Power(smp.GPU)
	if err != nil {
		smp.NoPower = nvmlErr("nvmlDeviceGetPowerUsage", smp.GPU, err).Error()
		if errors.Is(err, ErrNoPower) {
			if s.noPower == nil {
				s.noPower = map[int]string{}
			}
			s.noPower[smp.GPU] = smp.NoPower
		}
		return
	}
	smp.HasPower, smp.PowerW = true, float64(mw)/1000
}

// badMetric says why GPM's per-metric results cannot be used ("" when they
// can): a metric NVML failed to compute, or a value outside 0..100 (a
// little above 100 is rounding and is clamped).
func badMetric(vals []float64, perr []error) string {
	for k, m := range gpmMetrics {
		if perr[k] != nil {
			return fmt.Sprintf("metric %s: %v", m, perr[k])
		}
		if v := vals[k]; math.IsNaN(v) || v < 0 || v > 100.5 {
			return fmt.Sprintf("metric %s: value %g outside 0..100", m, v)
		}
	}
	return ""
}

// mergeProcs converts NVML's process list, summing a PID listed more than
// once (one entry per MIG instance) and sorting by PID. Memory NVML cannot
// report counts as 0.
func mergeProcs(in []nvmlProc) []Proc {
	if len(in) == 0 {
		return nil
	}
	byPID := map[int]float64{}
	for _, p := range in {
		used := 0.0
		if p.UsedBytes != nvmlValueNotAvailable {
			used = mib(p.UsedBytes)
		}
		byPID[int(p.PID)] += used
	}
	out := make([]Proc, 0, len(byPID))
	for pid, used := range byPID {
		out = append(out, Proc{PID: pid, UsedMiB: used})
	}
	slices.SortFunc(out, func(a, b Proc) int { return a.PID - b.PID })
	return out
}

// Energy implements EnergyMeter: every device's energy counter.
func (s *nvmlSource) Energy(ctx context.Context) ([]uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("nvml: source closed")
	}
	out := make([]uint64, len(s.devices))
	for j, d := range s.devices {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		e, err := s.lib.TotalEnergy(d.Index)
		if err != nil {
			return nil, fmt.Errorf("nvml: GPU %d: total energy: %w", d.Index, err)
		}
		out[j] = e
	}
	return out, nil
}

// Close implements Source: it frees the GPM buffers and shuts NVML down.
func (s *nvmlSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.freeGPM()
	if serr := s.lib.Shutdown(); serr != nil {
		err = errors.Join(err, nvmlErr("nvmlShutdown", -1, serr))
	}
	return err
}
