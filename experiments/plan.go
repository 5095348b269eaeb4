package experiments

import (
	"context"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/traces"
)

// A plan is what a spec runs, apart from the YAML schema that describes
// it: its cells, what makes a cell's key, how a cell runs, and how the
// cells combine into the run's files. A trace spec's plan (tracePlan)
// simulates its traces under its configs; a stacking spec's (stackPlan)
// replays the stacking sequences. The runner, the keys and the combiner
// ask the plan, not whether the spec has a stacking section. Plan is the
// exported, compiled form.
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

// tracePlan is a trace spec's plan: what compile resolved, seen as what
// runs: the traces, each config's model, the refits of model_uncertainty
// and the servers or clusters a sweep runs on.
type tracePlan struct {
	*resolved
	trs []*traces.Trace
	// swept are the servers of a server sweep, by value.
	swept map[string]models.Server
	// sweptClusters are the clusters of a cluster sweep, by value.
	sweptClusters map[string]models.Cluster
	models        []*modelFile // by config

	// refits are the models of ModelUncertainty's refits 1..N (index
	// r-1), refitFile the embedded set they come from.
	refits    []models.Interference
	refitFile string
	// refitSteady are the refits' steady saturations u1 (index r-1;
	// none when the set has none: the GPU type's telemetry).
	refitSteady []float64
	// refitDepth are the refits' depth terms δ (index r-1; none when the
	// set has none: the GPU type's δ).
	refitDepth []float64
}

// stackPlan is a stacking spec's plan: the sequences it replays, their
// content hashes and data folder, and the interference model.
type stackPlan struct {
	*resolved
	seqs   []stacking.Sequence
	hashes []string
	dir    string
	inter  models.Interference
}

// Plan is a compiled spec (Spec.Compile, LoadPlan): its own copy of the
// spec, resolved, and what runs it. RunPlan runs it.
type Plan struct {
	*resolved
	p plan
}

// resolved is a compiled spec's copy of the spec with what every plan
// resolves first: its server or cluster. Plan and its trace or stacking
// plan share it.
type resolved struct {
	*Spec
	server models.Server
	// cluster is the resolved Cluster (nil without one); server is then
	// its Server().
	cluster *models.Cluster
}

// Cells expands the plan into its cells, in a fixed order: trace, config,
// sweep point, seed (a stacking spec: sequence, sweep point, seed), then
// the same under each refit of model_uncertainty.
func (p *Plan) Cells() []Cell { return p.p.cells() }

// ServerSpec is the resolved server (a cluster spec's: its cluster's
// Server).
func (p *Plan) ServerSpec() models.Server { return p.server }

// plan is the plan of a spec read back from run.json (ReadMeta, Merge):
// its cells combine (Combine); it was not compiled to run them.
func (s *Spec) plan() plan {
	r := &resolved{Spec: s}
	if s.Stacking != nil {
		return &stackPlan{resolved: r}
	}
	return &tracePlan{resolved: r}
}
