// Package gpu reads telemetry from the GPUs of the machine the executor runs
// on: per-GPU memory, utilization, the processes using each GPU and, where the
// hardware and software allow it, the pressure signals AEGIS schedules by (SM
// activity, SM occupancy, DRAM bandwidth utilization).
//
// A Source is one way of reading them: NVML with GPM metrics ("nvml+gpm"),
// NVML utilization only ("nvml"), DCGM ("dcgm"), or a scripted Fake for tests.
package gpu

import (
	"context"
	"time"
)

// Device is one GPU as the executor sees it.
type Device struct {
	// Index is the device's NVML index (the order nvidia-smi lists it in).
	Index int
	// UUID is the device's stable identifier, as CUDA_VISIBLE_DEVICES accepts it.
	UUID string
	// Name is the product name, e.g. "NVIDIA H200".
	Name string
	// TotalMiB is the device's memory capacity in MiB.
	TotalMiB float64
}

// Proc is a process using a GPU.
type Proc struct {
	// PID is the process id as the host (not a container) sees it.
	PID int
	// UsedMiB is the GPU memory the process holds on this GPU, in MiB.
	UsedMiB float64
}

// Sample is one reading of one GPU.
type Sample struct {
	// GPU is the Device.Index the sample was read from.
	GPU int
	// At is when the sample was read (wall clock; the executor converts it
	// to its own run time).
	At time.Time
	// UsedMiB and TotalMiB are the device's used and total memory in MiB.
	UsedMiB, TotalMiB float64
	// UtilPct is nvidia-smi style utilization: the percentage of the last
	// sample period during which at least one kernel ran (0..100).
	UtilPct float64
	// Pressure reports whether SMACT, SMOCC and DRAMA are valid (read via
	// GPM or DCGM). When false they are zero and only UtilPct is meaningful.
	Pressure bool
	// SMACT is SM activity, SMOCC SM occupancy and DRAMA DRAM bandwidth
	// utilization, each a fraction 0..1 over the sample interval.
	SMACT, SMOCC, DRAMA float64
	// Dropped, in a source that reads pressure signals, says why this
	// sample has none (a GPM metric NVML could not compute or read out of
	// range): a missed sample for the pressure filter, while memory,
	// utilization and processes stand. Empty otherwise.
	Dropped string
	// Procs are the compute processes running on the GPU.
	Procs []Proc
	// ProcsUnknown reports that the source cannot list the GPU's processes
	// (a driver whose process list is unsafe to read): Procs is empty
	// whatever runs, and first activity must be read from memory.
	ProcsUnknown bool
	// HasPower reports whether PowerW was read: the board's power draw in
	// watts (NVML's power usage, or an emulated GPU's power model). When
	// false, NoPower says why (an unsupported or failed reading); it is
	// empty for a source that reads no power at all.
	HasPower bool
	PowerW   float64
	NoPower  string
}

// FromPressureSource reports whether s was read by a source that reads the
// pressure signals: it has them, or they were dropped from this reading.
func (s Sample) FromPressureSource() bool { return s.Pressure || s.Dropped != "" }

// Source reads GPU telemetry.
type Source interface {
	// Name names the source and its mode: "nvml+gpm", "nvml", "dcgm", "fake", ...
	Name() string
	// Devices lists the GPUs the source reads.
	Devices() ([]Device, error)
	// Sample reads every device once and returns one sample per device,
	// in the order Devices lists them.
	Sample(ctx context.Context) ([]Sample, error)
	// Close releases the source's resources.
	Close() error
}
