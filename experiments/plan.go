package experiments

import "context"

// A plan is what a spec runs, apart from the YAML schema that describes
// it: its cells, what makes a cell's key, how a cell runs, and how the
// cells combine into the run's files. A trace spec's plan (tracePlan)
// simulates its traces under its configs; a stacking spec's (stackPlan)
// replays the stacking sequences. The runner, the keys and the combiner
// ask the spec's plan, not whether it has a stacking section.
type plan interface {
	cells() []Cell
	key(k *keyInputs, c Cell) (string, error)
	// run runs cell c: its files and its record (cell.json).
	run(ctx context.Context, c Cell) (map[string][]byte, cellRecord, error)
	// combine lays out the run's combined files from its cells in dir.
	combine(dir string, m *Meta) (map[string][]byte, error)
}

// tracePlan is a trace spec's plan; stackPlan a stacking spec's. Each is
// the spec resolved by prepare, seen as what runs.
type (
	tracePlan struct{ *Spec }
	stackPlan struct{ *Spec }
)

// plan is the spec's plan.
func (s *Spec) plan() plan {
	if s.Stacking != nil {
		return stackPlan{s}
	}
	return tracePlan{s}
}
