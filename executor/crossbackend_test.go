package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/sim"
)

// starts records the order of placements.
type starts struct{ order [][2]int }

func (s *starts) Event(e policies.Event) {
	if st, ok := e.(policies.JobStarted); ok {
		s.order = append(s.order, [2]int{int(st.Job), st.Attempt})
	}
}
func (s *starts) Action(policies.Action) {}

// crossTolerance bounds the relative makespan difference between the
// simulator and the emulated executor on the same trace, policy, truth and
// seed. The executor's events come later than the model's by the wall-clock
// latency of signals, process exits, fsyncs and 1 Hz polling, multiplied by
// the speedup: at 50×, 20 ms of wall-clock latency (a loaded 2-core
// machine) is 1 s of run time per event, a few seconds over the chain of
// five jobs of a 160 s makespan; 10 % leaves room for a slower machine.
const crossTolerance = 0.10

// The same trace on the simulator and on the emulated executor: the same
// jobs finish, in the same placement order, and the makespans agree within
// crossTolerance.
func TestCrossBackend(t *testing.T) {
	jobs := small()
	srv, err := models.ParseServer("a100-40gb:2")
	require.NoError(t, err)
	inter, err := models.InterferenceFor(srv.Type)
	require.NoError(t, err)
	s, err := sim.New(sim.Config{Server: srv, Catalog: models.A100(), Interference: inter, Truth: sim.DefaultTruth(), Seed: 1}, jobs)
	require.NoError(t, err)
	simOrder := &starts{}
	simCol := results.NewCollector(s.Jobs(), simOrder)
	require.NoError(t, loop.Run(s, newAegis(), simCol))
	simSum := results.Summarize(simCol.Jobs(), nil)

	dir := t.TempDir()
	killLeftovers(t, dir)
	cfg, err := emulatedConfig(dir, self(t), jobs, 2, 50)
	require.NoError(t, err)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	res, err := executor.Execute(context.Background(), x, newAegis())
	require.NoError(t, err)

	var simDone, exeDone []string
	for i := range jobs {
		if simCol.Jobs()[i].State == policies.Done {
			simDone = append(simDone, jobs[i].Name)
		}
		if res.Jobs[i].State == policies.Done {
			exeDone = append(exeDone, jobs[i].Name)
		}
	}
	require.Equal(t, simDone, exeDone, "finished jobs")
	require.Len(t, exeDone, len(jobs))
	var exeOrder [][2]int
	events := readEvents(t, cfg.Dir)
	for _, e := range events {
		if e["event"] == "started" {
			exeOrder = append(exeOrder, [2]int{int(e["job"].(float64)), int(e["attempt"].(float64))})
		}
	}
	require.Equal(t, simOrder.order, exeOrder, "placement order")
	t.Logf("makespan: simulator %.1f s, emulated executor %.1f s", simSum.MakespanS, res.Summary.MakespanS)
	if raceEnabled {
		t.Log("race detector on: processes start too slowly for the makespan tolerance; not checked")
		return
	}
	require.InEpsilon(t, simSum.MakespanS, res.Summary.MakespanS, crossTolerance)
}
