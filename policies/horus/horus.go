// Package horus is the Horus baseline: utilization-driven GPU collocation
// from profiled figures, in two variants. "paper" is Horus as the AEGIS
// paper re-implemented it (admit while the summed profiled utilization stays
// within 100 %, lowest projected utilization wins); "original" follows the
// Horus design (look ahead several queued jobs, cap jobs per GPU, keep a
// memory headroom and rank GPUs by a memory-plus-utilization cost). Both run
// under the shared machinery of package colloc and read only profiles,
// never measurements of the truth.
package horus

import (
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
)

// Variants.
const (
	// Paper is Horus as the AEGIS paper re-implemented it.
	Paper = "paper"
	// Original is Horus as its authors designed it.
	Original = "original"
)

// Config is the Horus policy's configuration.
type Config struct {
	colloc.Config
	// Variant is Paper or Original.
	Variant string
	// UtilCapPct bounds the summed profiled utilization of a GPU's jobs
	// and the candidate (Paper only).
	UtilCapPct float64
	// MaxJobs bounds the jobs on a GPU after placement (Original only).
	MaxJobs int
	// HeadroomMiB is the memory that must stay free over the summed
	// profiled peaks after placement (Original only).
	HeadroomMiB float64
	// MemWeight weighs the memory fraction after placement in the cost,
	// OverWeight the utilization beyond 100 % (Original only).
	MemWeight, OverWeight float64
}

// DefaultConfig returns the configuration of a variant: the paper's loop
// (strict FIFO, 30 s hold) for Paper, a lookahead of 5 queued jobs for
// Original.
func DefaultConfig(variant string) Config {
	c := Config{Config: colloc.DefaultConfig(), Variant: variant, UtilCapPct: 100,
		MaxJobs: 3, HeadroomMiB: 500, MemWeight: 1.3, OverWeight: 1.6}
	if variant == Original {
		c.Lookahead = 5
	}
	return c
}

// Rule is Horus's admission and scoring rule, which colloc.Scheduler
// applies. It keeps no state: everything it decides on is in the View.
type Rule struct{ Config }

// New builds the Horus policy from key=value parameters (see ReadConfig):
// its Rule under the shared machinery, a colloc.Reader (the rule reads
// profiles and the GPUs' job lists only, and writes into no job).
func New(params map[string]string) (*colloc.Reader, error) {
	c, err := ReadConfig(policies.NewParams(params))
	if err != nil {
		return nil, err
	}
	return &colloc.Reader{Scheduler: colloc.New("horus", c.Config, &Rule{c})}, nil
}

// ReadConfig reads a configuration from p: variant
// (paper|original), util_cap, max_jobs, headroom_mib, and the machinery's
// hold, tick, lookahead and recovery.
// Unknown keys and bad values are errors.
func ReadConfig(p *policies.Params) (Config, error) {
	variant := p.String("variant", Paper, "Horus variant", Paper, Original)
	def := DefaultConfig(variant)
	c := def
	c.Config = colloc.ReadParams(p, def.Config)
	c.UtilCapPct = p.Float("util_cap", def.UtilCapPct, 0, 1e4, "paper: max summed profiled utilization, percent")
	c.MaxJobs = p.Int("max_jobs", def.MaxJobs, 1, 64, "original: max jobs per GPU after placement")
	c.HeadroomMiB = p.Float("headroom_mib", def.HeadroomMiB, 0, 1e6, "original: MiB kept free over summed profiled peaks")
	if err := p.Done("policy horus"); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Admit implements colloc.Rule. Paper: the summed profiled utilization of
// GPU g's jobs and j must be at most UtilCapPct. Original: after placement
// GPU g holds at most MaxJobs jobs and its summed profiled peaks plus
// HeadroomMiB fit its capacity.
func (r *Rule) Admit(v *policies.View, j *policies.Job, g int) colloc.Reason {
	if r.Variant != Original {
		if !colloc.AtMost(colloc.Projected(v, j, g, colloc.UtilPct), r.UtilCapPct) {
			return DeferUtilization
		}
		return colloc.Admitted
	}
	if len(v.GPUs[g].Jobs)+1 > r.MaxJobs {
		return colloc.DeferJobs
	}
	if !colloc.AtMost(colloc.Projected(v, j, g, colloc.PeakMiB)+r.HeadroomMiB, v.GPUs[g].CapacityMiB) {
		return colloc.DeferMemory
	}
	return colloc.Admitted
}

// DeferUtilization is the deferral reason of Horus's rule (paper) besides
// colloc's (original: DeferJobs, DeferMemory): the summed profiled
// utilization would exceed UtilCapPct.
const DeferUtilization colloc.Reason = "utilization"

// Score implements colloc.Rule. Paper: the projected utilization (percent).
// Original: the cost
//
//	MemWeight·m + d + n
//
// where m is the summed profiled peak memory after placement as a fraction
// of capacity, n the number of jobs running on the GPU before placement,
// and d the distance of the projected utilization u (percent) from 100 %:
// (100−u)/100 below it and OverWeight·(u−100)/100 above it.
func (r *Rule) Score(v *policies.View, j *policies.Job, g int) float64 {
	u := colloc.Projected(v, j, g, colloc.UtilPct)
	if r.Variant != Original {
		return u
	}
	m := colloc.Projected(v, j, g, colloc.PeakMiB) / v.GPUs[g].CapacityMiB
	d := (100 - u) / 100
	if u > 100 {
		d = r.OverWeight * (u - 100) / 100
	}
	return r.MemWeight*m + d + float64(len(v.GPUs[g].Jobs))
}

// ChangesAt implements colloc.Horizon: the rule reads only profiles and the
// GPUs' job lists, which change only with events.
func (Rule) ChangesAt(*policies.View, *policies.Job, int) time.Duration { return colloc.Never }

// EventsOnly implements colloc.EventsOnly: ChangesAt is always Never.
func (Rule) EventsOnly() {}

// GPULocal implements colloc.GPULocal: Admit(v, j, g) reads only j and
// GPU g: profiles (utilization, peak memory), the GPU's capacity and its job list.
func (Rule) GPULocal() {}

// Stateless implements colloc.Stateless: the rule keeps no state and reads
// only the job, the GPUs and their jobs' profiles.
func (Rule) Stateless() {}
