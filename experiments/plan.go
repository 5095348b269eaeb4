package experiments

import (
	"context"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
)

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
	// traceHashes are the content hashes of what the cells run (keys).
	traceHashes() ([]string, error)
	// describe adds what the cells run to run.json's m (catalog: the
	// first GPU type's catalog hash).
	describe(m *Meta, keys *keyInputs, catalog string) error
}

// tracePlan is a trace spec's plan: the spec resolved by prepare, seen as
// what runs.
type tracePlan struct{ *Spec }

// stackPlan is a stacking spec's plan: the sequences it replays, their
// content hashes and data folder, and the interference model.
type stackPlan struct {
	*Spec
	seqs   []stacking.Sequence
	hashes []string
	dir    string
	inter  models.Interference
}

// plan is the spec's plan.
func (s *Spec) plan() plan {
	switch {
	case s.stack != nil:
		return s.stack
	case s.Stacking != nil:
		// A spec read back from run.json (ReadMeta, Merge): its cells
		// combine; it was not resolved to run them.
		return &stackPlan{Spec: s}
	}
	return tracePlan{s}
}
