package traces

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestDemoTraceIsGeneratorOutput(t *testing.T) {
	tr, err := GenerateMixed(models.A100(), demoJobs, demoGap, demoP2, demoSeed)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, tr))
	if *update {
		require.NoError(t, os.WriteFile("data/demo.csv", buf.Bytes(), 0o644))
	}
	require.Equal(t, buf.String(), string(demoCSV), "run go test ./traces -run TestDemo -update")
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
