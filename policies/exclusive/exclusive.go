// Package exclusive is the Exclusive baseline: strict FIFO with head-of-line
// blocking, each job on idle GPUs only.
package exclusive

import "github.com/aegis-sched/aegis/policies"

// Policy is the Exclusive baseline. The head of the queue takes the
// lowest-indexed idle GPUs when enough are idle (a multi-GPU job all at
// once); otherwise everything waits. A job that fails even alone is stopped.
type Policy struct {
	taken []bool // scratch of Schedule: GPUs given in this decision (all false between decisions)
}

// New returns the Exclusive policy. It takes no parameters.
func New(params map[string]string) (*Policy, error) {
	return &Policy{}, ReadConfig(policies.NewParams(params))
}

// ReadConfig checks p: Exclusive reads no parameter, so any key is an error.
func ReadConfig(p *policies.Params) error { return p.Done("exclusive") }

// Name implements policies.Policy.
func (*Policy) Name() string { return "exclusive" }

// Schedule implements policies.Policy.
func (p *Policy) Schedule(v *policies.View) []policies.Action {
	var acts []policies.Action
	if len(p.taken) != len(v.GPUs) {
		p.taken = make([]bool, len(v.GPUs))
	}
	taken := p.taken
	for _, id := range v.Queue {
		j := v.Job(id)
		if j.Attempts > 0 && j.LastFailure != policies.NoFailure {
			// It already failed while alone on its GPUs: retrying cannot help.
			acts = append(acts, policies.Stop{Job: id, Reason: "failed exclusively: " + j.LastFailure.String()})
			continue
		}
		gpus := v.IdleGPUs(taken, j.GPUs)
		if gpus == nil {
			break // head-of-line blocking
		}
		for _, g := range gpus {
			taken[g] = true
		}
		acts = append(acts, policies.Place{Job: id, GPUs: gpus})
	}
	for _, a := range acts { // leave taken all false for the next decision
		if pl, ok := a.(policies.Place); ok {
			for _, g := range pl.GPUs {
				taken[g] = false
			}
		}
	}
	return acts
}
