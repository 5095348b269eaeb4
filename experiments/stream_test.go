package experiments

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/traces"
)

// TestStreamedJobsCSV: a run that streams jobs.csv (Run.Jobs) writes the
// bytes of the run that holds its jobs and writes them at the end, on a
// server and on a cluster (server column), with the same summary and
// event log.
func TestStreamedJobsCSV(t *testing.T) {
	tr, err := traces.Load("philly")
	require.NoError(t, err)
	cl, err := models.ParseCluster("a100-40gb:2x2")
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	for _, c := range []struct {
		name    string
		policy  string
		cluster *models.Cluster
	}{{"server/aegis", "aegis", nil}, {"server/exclusive", "exclusive", nil}, {"cluster/lucid", "lucid", &cl}} {
		t.Run(c.name, func(t *testing.T) {
			r := Run{Trace: tr, Server: srv, Policy: c.policy, Seed: 3, Cluster: c.cluster}
			var ev1, ev2, jobs bytes.Buffer
			held, err := Simulate(r, &ev1)
			require.NoError(t, err)
			files, err := held.Files(ev1.Bytes())
			require.NoError(t, err)
			r.Jobs = &jobs
			streamed, err := Simulate(r, &ev2)
			require.NoError(t, err)
			require.Equal(t, string(files["jobs.csv"]), jobs.String())
			require.Equal(t, held.Summary, streamed.Summary)
			require.Equal(t, ev1.String(), ev2.String())
			require.Empty(t, streamed.Jobs)
		})
	}
}
