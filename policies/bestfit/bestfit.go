// Package bestfit is the example policy of docs/own-policy.md: strict FIFO,
// each job on the GPUs it fits most tightly by profiled memory, with a cap
// on the GPUs' summed profiled utilization. It reads only profiles, the
// GPUs' capacity and which jobs run where, never telemetry: it needs no
// wake-up, events bring every decision. policies/external/python/bestfit.py is
// the same policy in Python, run through policy external; a test holds the
// two to identical results.
package bestfit

import (
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Policy is best-fit by memory with a utilization cap.
type Policy struct {
	utilCap, guard float64
	mem, util      []float64 // per GPU, in a decision: profiled peaks and utilization placed on it
	taken          []bool    // per GPU, in a decision: given to a job
}

// New returns the policy with params util_cap and guard_mib.
func New(params map[string]string) (*Policy, error) {
	p := policies.NewParams(params)
	x := &Policy{}
	x.read(p)
	return x, p.Done("policy bestfit")
}

// ReadConfig declares and checks the parameters (aegis policies).
func ReadConfig(p *policies.Params) error {
	(&Policy{}).read(p)
	return p.Done("policy bestfit")
}

func (x *Policy) read(p *policies.Params) {
	x.utilCap = p.Float("util_cap", 100, 1, 1000, "most summed profiled utilization (percent) of a shared GPU")
	x.guard = p.Float("guard_mib", 512, 0, 1<<20, "memory kept free on a shared GPU beyond the summed profiled peaks")
}

// Name implements policies.Policy.
func (*Policy) Name() string { return "bestfit" }

// Tick implements policies.Ticker. The policy never wakes itself, but a
// grid makes deferrals count in seconds, not decisions, so that the
// decisions Wants skips (and a cluster dispatcher's) change no output.
func (*Policy) Tick() time.Duration { return time.Second }

// Wants implements policies.Selective: a job's start (the policy's own
// placement) and its first activity change nothing it reads.
func (*Policy) Wants(e policies.Event) bool {
	return e.Kind != policies.JobStarted && e.Kind != policies.JobActive
}

// Schedule implements policies.Policy. A job whose last attempt failed is
// stopped unless it failed with OOM while sharing a GPU; then it is retried
// on idle GPUs only. The queue is placed in order until a job does not fit
// (it blocks those behind it): an idle GPU takes any job; a shared one a
// job whose peak fits beside the peaks already there with guard_mib to
// spare, if the summed utilization stays within util_cap. Among the GPUs
// that fit, the tightest (least memory left after placing) come first,
// ties to the lower index.
func (x *Policy) Schedule(v *policies.View) []policies.Action {
	var acts []policies.Action
	n := len(v.GPUs)
	x.mem, x.util, x.taken = resize(x.mem, n), resize(x.util, n), slices.Grow(x.taken[:0], n)[:n]
	for g := range v.GPUs {
		x.mem[g], x.util[g], x.taken[g] = 0, 0, false
		for _, id := range v.GPUs[g].Jobs {
			x.mem[g] += v.Job(id).PeakMiB
			x.util[g] += v.Job(id).UtilPct
		}
	}
	for _, id := range v.Queue.All() {
		j := v.Job(id)
		if j.LastFailure != policies.NoFailure && (j.LastFailure != policies.OOM || !j.FailedShared) {
			acts = append(acts, policies.Action{Kind: policies.Stop, Job: id, Reason: "failed alone: " + j.LastFailure.String()})
			continue
		}
		gpus, defers := x.fit(v, j)
		if gpus == nil {
			return append(acts, defers...) // head-of-line blocking
		}
		for _, g := range gpus {
			x.mem[g] += j.PeakMiB
			x.util[g] += j.UtilPct
			x.taken[g] = true
		}
		acts = append(acts, policies.Action{Kind: policies.Place, Job: id, GPUs: gpus})
	}
	return acts
}

// fit returns the GPUs for j, or nil and a deferral for each GPU that
// refused it.
func (x *Policy) fit(v *policies.View, j *policies.Job) ([]int, []policies.Action) {
	var fits []int
	var defers []policies.Action
	for g := range v.GPUs {
		idle := len(v.GPUs[g].Jobs) == 0 && !x.taken[g]
		reason := ""
		switch {
		case idle:
		case j.LastFailure != policies.NoFailure:
			reason = "exclusive"
		case x.mem[g]+j.PeakMiB+x.guard > v.GPUs[g].CapacityMiB:
			reason = "memory"
		case x.util[g]+j.UtilPct > x.utilCap:
			reason = "utilization"
		}
		if reason != "" {
			defers = append(defers, policies.Action{Kind: policies.Defer, Job: j.ID, GPU: g, Reason: reason})
			continue
		}
		fits = append(fits, g)
	}
	if len(fits) < j.GPUs {
		return nil, defers
	}
	left := func(g int) float64 { return v.GPUs[g].CapacityMiB - (x.mem[g] + j.PeakMiB) }
	slices.SortStableFunc(fits, func(a, b int) int {
		switch la, lb := left(a), left(b); {
		case la < lb:
			return -1
		case la > lb:
			return 1
		}
		return a - b
	})
	gpus := slices.Clone(fits[:j.GPUs])
	slices.Sort(gpus)
	return gpus, nil
}

func resize(xs []float64, n int) []float64 { return slices.Grow(xs[:0], n)[:n] }

// ReadsJobsOnly implements policies.JobsReader: best-fit writes into no job
// of its view (its placements are GPU lists of its own), so the loop hands
// it the backend's jobs instead of a copy of every job
// (TestJobsReadersWriteNoJob).
func (*Policy) ReadsJobsOnly() {}
