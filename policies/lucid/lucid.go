// Package lucid is the Lucid baseline: collocation by profiled sharing
// class and peak memory, in two variants. "paper" is Lucid as the AEGIS
// paper re-implemented it (at most two jobs per GPU, summed sharing class at
// most 2, summed profiled peaks within capacity less a guard); "original"
// adds the pairing rules of Lucid's design (ASPLOS'23): only jobs with equal
// GPU counts pair up, a job joins a partner only if its priority is at most
// a given multiple of the partner's, and only tiny or medium jobs join a
// running job. Both run under the shared machinery of package colloc and
// read only profiles, never measurements of the truth.
package lucid

import (
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
)

// Variants.
const (
	// Paper is Lucid as the AEGIS paper re-implemented it.
	Paper = "paper"
	// Original is Lucid as its authors designed it, as far as the paper
	// alone describes it.
	Original = "original"
)

// Config is the Lucid policy's configuration.
type Config struct {
	colloc.Config
	// Variant is Paper or Original.
	Variant string
	// MaxJobs bounds the jobs on a GPU after placement (2: pairs).
	MaxJobs int
	// ClassCap bounds the summed sharing class of a GPU's jobs after
	// placement.
	ClassCap int
	// GuardMiB is the memory kept free below capacity: the summed profiled
	// peaks after placement must be at most capacity − GuardMiB.
	GuardMiB float64
	// PriorityRatio bounds a joining job's priority (profiled GPU time) as
	// a multiple of its partner's (Original only).
	PriorityRatio float64
	// JoinClassMax is the largest sharing class that may join a running job
	// (Original only: tiny and medium jobs join, jumbo jobs do not).
	JoinClassMax int
}

// DefaultConfig returns the configuration of a variant under the paper's
// loop (strict FIFO, 30 s hold).
func DefaultConfig(variant string) Config {
	c := Config{Config: colloc.DefaultConfig(), Variant: variant, MaxJobs: 2, ClassCap: 2,
		GuardMiB: 512, PriorityRatio: 2, JoinClassMax: 1}
	// Lucid pairs whole jobs: a multi-GPU job shares exactly its partner's GPUs.
	c.WholePartners = variant == Original
	return c
}

// Rule is Lucid's admission and scoring rule, which colloc.Scheduler
// applies. It keeps no state: everything it decides on is in the View.
type Rule struct{ Config }

// New builds the Lucid policy from key=value parameters (see ReadConfig):
// its Rule under the shared machinery, a colloc.Reader (the rule reads
// profiles and the GPUs' job lists only, and writes into no job).
func New(params map[string]string) (*colloc.Reader, error) {
	c, err := ReadConfig(policies.NewParams(params))
	if err != nil {
		return nil, err
	}
	return &colloc.Reader{Scheduler: colloc.New("lucid", c.Config, &Rule{c})}, nil
}

// ReadConfig reads a configuration from p: variant
// (paper|original), guard_mib, priority_ratio, and the machinery's hold,
// tick, lookahead and recovery.
// Unknown keys and bad values are errors.
func ReadConfig(p *policies.Params) (Config, error) {
	variant := p.String("variant", Paper, "Lucid variant", Paper, Original)
	def := DefaultConfig(variant)
	c := def
	c.Config = colloc.ReadParams(p, def.Config)
	c.GuardMiB = p.Float("guard_mib", def.GuardMiB, 0, 1e6, "MiB kept free below capacity over summed profiled peaks")
	c.PriorityRatio = p.Float("priority_ratio", def.PriorityRatio, 1, 1e6,
		"original: max joining job's GPU time as a multiple of its partner's")
	if err := p.Done("policy lucid"); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Priority is Lucid's job priority as this package defines it: the
// profiled GPU time, solo runtime in seconds × GPUs. Lucid orders and pairs
// jobs by their estimated duration and size; the profiled solo time stands
// in for its learned duration estimate.
func Priority(j *policies.Job) float64 { return j.SoloS * float64(j.GPUs) }

// Admit implements colloc.Rule. Both variants: after placement GPU g holds
// at most MaxJobs jobs, their summed sharing class is at most ClassCap and
// their summed profiled peaks are at most capacity − GuardMiB. Original
// also: j is tiny or medium (class ≤ JoinClassMax), every job on g needs as
// many GPUs as j, and Priority(j) ≤ PriorityRatio × Priority(partner) for
// every job on g.
func (r *Rule) Admit(v *policies.View, j *policies.Job, g int) colloc.Reason {
	gpu := &v.GPUs[g]
	if len(gpu.Jobs)+1 > r.MaxJobs {
		return colloc.DeferJobs
	}
	if !colloc.AtMost(colloc.Projected(v, j, g, colloc.LucidClass), float64(r.ClassCap)) {
		return DeferClass
	}
	if !colloc.AtMost(colloc.Projected(v, j, g, colloc.PeakMiB), gpu.CapacityMiB-r.GuardMiB) {
		return colloc.DeferMemory
	}
	if r.Variant != Original {
		return colloc.Admitted
	}
	if j.Lucid > r.JoinClassMax {
		return DeferClassJoin
	}
	for _, id := range gpu.Jobs {
		partner := v.Job(id)
		if partner.GPUs != j.GPUs {
			return DeferGPUCount
		}
		if !colloc.AtMost(Priority(j), r.PriorityRatio*Priority(partner)) {
			return DeferPriority
		}
	}
	return colloc.Admitted
}

// Deferral reasons of Lucid's rule, besides colloc's (DeferJobs: MaxJobs
// reached; DeferMemory: summed profiled peaks over capacity less GuardMiB).
const (
	// DeferClass: the summed sharing class would exceed ClassCap.
	DeferClass colloc.Reason = "class"
	// DeferClassJoin: (original) the job is larger than JoinClassMax.
	DeferClassJoin colloc.Reason = "class-join"
	// DeferGPUCount: (original) a job on the GPU needs another GPU count.
	DeferGPUCount colloc.Reason = "gpu-count"
	// DeferPriority: (original) the job's priority exceeds PriorityRatio
	// times a partner's.
	DeferPriority colloc.Reason = "priority"
)

// Score implements colloc.Rule: the projected sharing score (summed class
// after placement) first, then the projected summed profiled peak memory.
// The score is class + m/2 with m the memory as a fraction of capacity; m
// is at most 1 on every admitted GPU, so memory only breaks ties between
// equal class sums.
func (r *Rule) Score(v *policies.View, j *policies.Job, g int) float64 {
	return colloc.Projected(v, j, g, colloc.LucidClass) +
		colloc.Projected(v, j, g, colloc.PeakMiB)/v.GPUs[g].CapacityMiB/2
}

// ChangesAt implements colloc.Horizon: the rule reads only profiles and the
// GPUs' job lists, which change only with events.
func (Rule) ChangesAt(*policies.View, *policies.Job, int) time.Duration { return colloc.Never }

// EventsOnly implements colloc.EventsOnly: ChangesAt is always Never.
func (Rule) EventsOnly() {}

// GPULocal implements colloc.GPULocal: Admit(v, j, g) reads only j and
// GPU g: profiles (class, peak memory, solo time, GPU count), the GPU's capacity and its job list.
func (Rule) GPULocal() {}

// Stateless implements colloc.Stateless: the rule keeps no state and reads
// only the job, the GPUs and their jobs' profiles.
func (Rule) Stateless() {}
