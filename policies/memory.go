package policies

import "fmt"

// MemoryInput names where a policy takes a job's per-GPU memory figure
// from: the AEGIS paper's memory inputs (its Table 3). It is defined here,
// next to the Profile it reads, so that the policies and the models share
// one definition.
type MemoryInput string

// Memory inputs.
const (
	// MemPeak is the profiled solo peak (an oracle a profiling run gives).
	MemPeak MemoryInput = "peakmem"
	// MemEstFree uses no per-job estimate: admission only asks for a fixed
	// amount of usable free memory (5120 MiB in the paper). The default.
	MemEstFree MemoryInput = "est-free"
	// MemAnalytical is Horus's analytical formula.
	MemAnalytical MemoryInput = "analytical"
	// MemGPUMemNet is the GPUMemNet classifier's estimate (8 GB bins).
	MemGPUMemNet MemoryInput = "gpumemnet"
	// MemFakeTensor is PyTorch FakeTensorMode tracing.
	MemFakeTensor MemoryInput = "faketensor"
)

// MemoryInputs lists the memory inputs in the paper's order.
func MemoryInputs() []MemoryInput {
	return []MemoryInput{MemPeak, MemEstFree, MemAnalytical, MemGPUMemNet, MemFakeTensor}
}

// EstimateStatus says what kind of answer a memory input gives for a job.
type EstimateStatus int

// Estimate statuses.
const (
	// EstimateKnown: MiB is the per-GPU estimate.
	EstimateKnown EstimateStatus = iota
	// EstimateNone: the input makes no per-job estimate (Est-free); the
	// policy applies its free-memory floor instead.
	EstimateNone
	// EstimateUnavailable: the estimator failed on (or capped out at) this
	// workload; the paper then allows exclusive placement only.
	EstimateUnavailable
)

// String names the status: known, none or unavailable.
func (s EstimateStatus) String() string {
	switch s {
	case EstimateKnown:
		return "known"
	case EstimateNone:
		return "none"
	case EstimateUnavailable:
		return "unavailable"
	}
	return fmt.Sprintf("EstimateStatus(%d)", int(s))
}

// MemEstimate is a memory input's answer for one job.
type MemEstimate struct {
	Status EstimateStatus
	MiB    float64 // per-GPU estimate when Status is EstimateKnown
}

// Estimate returns the memory figure input in gives for a job with profile
// p: its profiled per-GPU peak for MemPeak, the estimator's value for the
// three estimators (0 means unavailable), and EstimateNone for MemEstFree.
// An unknown input is treated as unavailable.
func (in MemoryInput) Estimate(p *Profile) MemEstimate {
	var v float64
	switch in {
	case MemEstFree:
		return MemEstimate{Status: EstimateNone}
	case MemPeak:
		v = p.PeakMiB
	case MemAnalytical:
		v = p.Analytical
	case MemGPUMemNet:
		v = p.GPUMemNet
	case MemFakeTensor:
		v = p.FakeTensor
	}
	if !(v > 0) {
		return MemEstimate{Status: EstimateUnavailable}
	}
	return MemEstimate{Status: EstimateKnown, MiB: v}
}
