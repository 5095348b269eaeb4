package experiments

import (
	"context"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/policies/colloc"
)

// PlacementDecision is one collocation decision of an AEGIS run: the head
// job, which had no idle GPUs enough, and the GPUs eligible for it
// (running jobs, out of hold, admitted by memory and the filter), with the
// GPU each placement rule ranks first among them: MU the lowest SMACT
// window score, MFM the most usable free memory (ties: the lower index).
type PlacementDecision struct {
	At       time.Duration
	Job      policies.JobID
	GPUs     int // GPUs the job needs
	Eligible []int
	MU, MFM  int
}

// Differs reports whether the two rules would place the job differently: a
// job that needs every eligible GPU gets the same ones under both.
func (d PlacementDecision) Differs() bool {
	return d.MU != d.MFM && len(d.Eligible) > d.GPUs
}

// PlacementDecisions runs r under the AEGIS policy (r.Params, any
// placement) and returns, for every decision whose head job could be
// collocated, what MU and MFM would choose. It explains when the two rules
// can give different runs: only where a decision has more eligible GPUs
// than the job needs and their rankings disagree. The run's event log goes
// to events when it is not nil (watching changes nothing in the run).
func PlacementDecisions(ctx context.Context, r assemble.Run, events io.Writer) ([]PlacementDecision, error) {
	if r.Policy != "aegis" {
		return nil, fmt.Errorf("placement decisions: policy %s: want aegis", r.Policy)
	}
	params := maps.Clone(r.Params)
	if params == nil {
		params = map[string]string{}
	}
	params["placement"] = aegis.MU
	mu, err := aegis.New(params)
	if err != nil {
		return nil, err
	}
	var out []PlacementDecision
	r.Wrap = func(p policies.Policy) policies.Policy {
		return &placementProbe{Policy: p, mu: mu, out: &out}
	}
	if _, err := assemble.Simulate(ctx, r, events); err != nil {
		return nil, err
	}
	return out, nil
}

// placementProbe records PlacementDecisions before each decision of the
// policy it wraps.
type placementProbe struct {
	policies.Policy
	mu  *aegis.Policy
	out *[]PlacementDecision
}

// Observe passes events on to the wrapped policy.
func (p *placementProbe) Observe(e policies.Event) {
	if o, ok := p.Policy.(policies.Observer); ok {
		o.Observe(e)
	}
}

// Validate passes the wrapped policy's requirements on.
func (p *placementProbe) Validate(v *policies.View) error {
	if val, ok := p.Policy.(policies.Validator); ok {
		return val.Validate(v)
	}
	return nil
}

// Schedule records the head job's collocation options, then decides.
func (p *placementProbe) Schedule(v *policies.View) []policies.Action {
	if len(v.Failed) == 0 && v.Queue.Len() > 0 {
		j := v.Job(v.Queue.At(0))
		idle := 0
		for g := range v.GPUs {
			if len(v.GPUs[g].Jobs) == 0 {
				idle++
			}
		}
		if idle < j.GPUs {
			p.mu.Schedule(v) // fresh window scores for this view; its actions are not applied
			d := PlacementDecision{At: v.Now, Job: j.ID, GPUs: j.GPUs, MU: -1, MFM: -1}
			for g := range v.GPUs {
				if len(v.GPUs[g].Jobs) > 0 && !colloc.Held(v, g, p.mu.Config().Hold) && p.mu.Admit(v, j, g) == "" {
					d.Eligible = append(d.Eligible, g)
					if d.MU < 0 || p.mu.Score(v, j, g) < p.mu.Score(v, j, d.MU) {
						d.MU = g
					}
					if d.MFM < 0 || colloc.UsableFree(&v.GPUs[g]) > colloc.UsableFree(&v.GPUs[d.MFM]) {
						d.MFM = g
					}
				}
			}
			if len(d.Eligible) > 0 && len(d.Eligible)+idle >= j.GPUs {
				*p.out = append(*p.out, d)
			}
		}
	}
	return p.Policy.Schedule(v)
}
