package traces

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/models"
)

func TestDemoTraceIsGeneratorOutput(t *testing.T) {
	tr, err := GenerateMixed(models.A100(), demoJobs, demoGap, demoP2, demoSeed)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, tr))
	golden.File(t, "data/demo.csv", buf.Bytes())
	require.Equal(t, buf.String(), string(demoCSV), "the embedded demo trace is data/demo.csv")
	loaded, err := Load("demo")
	require.NoError(t, err)
	require.Len(t, loaded.Jobs, demoJobs)
	cat := models.A100()
	for _, j := range loaded.Jobs {
		w, ok := cat.Get(j.Workload)
		require.True(t, ok, j.Workload)
		require.Equal(t, w.GPUs, j.GPUs)
	}
}
