package gpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The telemetry kinds Open accepts (the executor's --telemetry values).
const (
	// KindAuto picks the best available: NVML with GPM, else DCGM, else
	// NVML utilization only.
	KindAuto = "auto"
	// KindNVML is NVML, with GPM where every GPU supports it.
	KindNVML = "nvml"
	// KindDCGM is NVML for memory, utilization and processes plus dcgmi
	// dmon for SMACT, SMOCC and DRAMA.
	KindDCGM = "dcgm"
	// KindUtil is NVML utilization only, even where GPM is supported.
	KindUtil = "util"
)

// Kinds lists the kinds Open accepts.
func Kinds() []string { return []string{KindAuto, KindNVML, KindDCGM, KindUtil} }

// Options configure Open.
type Options struct {
	// GPUs restricts the source to these NVML device indices; empty means
	// every GPU of the machine.
	GPUs []int
	// Log receives one line saying which source was opened and why (what
	// auto chose, which fallback was taken); nil discards it.
	Log io.Writer
	// DCGMI is the dcgmi command; empty means "dcgmi" on PATH.
	DCGMI string
	// DCGMWait bounds how long Open waits for dcgmi's first reading of
	// every GPU; zero means 10 s.
	DCGMWait time.Duration
}

// opener holds what Open needs from the system, so tests can replace it.
type opener struct {
	lib   func() (nvmlLib, error)
	dcgmi func(path string, gpus []int) (io.Reader, func() error, error)
	now   func() time.Time
}

// Open opens the telemetry source of the given kind (see Kinds) and writes
// one line to opt.Log naming it and, where it fell back, why. With KindAuto
// it picks the best available: "nvml+gpm" when every GPU supports GPM, else
// "dcgm" when dcgmi works, else "nvml" (utilization only, Pressure false).
// It fails with a message saying what is missing when the kind cannot be
// had; errors wrap ErrNVMLUnavailable when NVML itself is missing.
func Open(kind string, opt Options) (Source, error) {
	return opener{lib: openNVMLLib, dcgmi: startDCGMI, now: time.Now}.open(kind, opt)
}

func (o opener) open(kind string, opt Options) (Source, error) {
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, "telemetry %s: "+format+"\n", append([]any{kind}, a...)...)
		}
	}
	switch kind {
	case KindAuto, KindNVML, KindDCGM, KindUtil:
	default:
		return nil, fmt.Errorf("gpu: unknown telemetry %q (want %s)", kind, strings.Join(Kinds(), ", "))
	}
	src, err := o.nvml(kind, opt, kind == KindDCGM || kind == KindUtil)
	if err != nil {
		return nil, err
	}
	switch {
	case kind == KindNVML || kind == KindUtil || kind == KindAuto && src.gpm:
		logf("using %s: %s", src.Name(), src.Note())
		return src, nil
	case kind == KindAuto:
		// GPM is not on every GPU, so src reads utilization only:
		// try DCGM on top of it for the pressure signals.
		note := src.Note()
		d, derr := o.dcgm(src, opt)
		if derr == nil {
			logf("using dcgm: %s; pressure signals from dcgmi dmon", note)
			return d, nil
		}
		logf("using nvml: %s; dcgm unavailable: %v", note, derr)
		return src, nil
	default: // KindDCGM
		d, err := o.dcgm(src, opt)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("gpu: telemetry dcgm: %w", err), src.Close())
		}
		logf("using dcgm: memory, utilization and processes from NVML, SMACT/SMOCC/DRAMA from dcgmi dmon")
		return d, nil
	}
}

// nvml opens the NVML source. With GPM it takes a first reading at once: if
// that fails (a GPM that probes fine but cannot be read), the source is
// reopened reading utilization only, and its note starts with a warning
// saying why, rather than every later reading failing.
func (o opener) nvml(kind string, opt Options, noGPM bool) (*nvmlSource, error) {
	open := func(noGPM bool) (*nvmlSource, error) {
		lib, err := o.lib()
		if err != nil {
			return nil, fmt.Errorf("gpu: telemetry %s: %w", kind, err)
		}
		src, err := newNVMLSource(lib, nvmlConfig{gpus: opt.GPUs, noGPM: noGPM, now: o.now})
		if err != nil {
			return nil, fmt.Errorf("gpu: telemetry %s: %w", kind, err)
		}
		return src, nil
	}
	src, err := open(noGPM)
	if err != nil || !src.gpm {
		return src, err
	}
	_, first := src.Sample(context.Background())
	if first == nil {
		return src, nil
	}
	if err := src.Close(); err != nil {
		return nil, fmt.Errorf("gpu: telemetry %s: closing after a failed first GPM reading (%v): %w", kind, first, err)
	}
	if src, err = open(true); err != nil {
		return nil, fmt.Errorf("%w (after a failed first GPM reading: %v)", err, first)
	}
	src.note = fmt.Sprintf("WARNING: the first GPM reading failed (%v), so no pressure signals: utilization only, Pressure false", first)
	return src, nil
}

// dcgm starts dcgmi for base's devices and waits for its first reading of
// each. On failure dcgmi is stopped and base is left open.
func (o opener) dcgm(base *nvmlSource, opt Options) (Source, error) {
	devs, err := base.Devices()
	if err != nil {
		return nil, err
	}
	gpus := make([]int, len(devs))
	for k, d := range devs {
		gpus[k] = d.Index
	}
	r, stop, err := o.dcgmi(opt.DCGMI, gpus)
	if err != nil {
		return nil, err
	}
	s := newDCGMSource(base, r, stop, o.now)
	wait := opt.DCGMWait
	if wait == 0 {
		wait = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := s.waitFirst(ctx, gpus); err != nil {
		return nil, errors.Join(err, s.abort())
	}
	return s, nil
}

// ParseList parses a comma-separated list of GPU indices such as "0,2,3"
// (the executor's --gpus). Empty means every GPU (nil). Indices must be
// non-negative and distinct.
func ParseList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("gpu list %q: %q is not a GPU index (want e.g. 0,1,2)", s, f)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("gpu list %q: GPU %d listed twice", s, n)
		}
		out = append(out, n)
	}
	return out, nil
}
