package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

// TestCalibratePower fits the shared runs, writes the model and reads it
// back as a GPU type's power: file; it equals the embedded one.
func TestCalibratePower(t *testing.T) {
	sharedOrSkip(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "power.yaml")
	code, stdout, errOut := runCalibrate(t, "power", "--out", out)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "terms kept: mem")
	require.Contains(t, stdout, "leave one run out median 1.13 %")
	m, err := models.LoadPowerModel(out)
	require.NoError(t, err)
	require.Equal(t, *models.A100Power(), *m)
	gt := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(gt, []byte("name: mine\nmemory_mib: 40960\npressure: true\npower: power.yaml\n"), 0o644))
	typ, err := models.ResolveGPUType(gt)
	require.NoError(t, err)
	pm, err := models.PowerFor(typ)
	require.NoError(t, err)
	require.Equal(t, m.IdleW, pm.IdleW)
}

func TestCalibratePowerErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "runs.csv")
	require.NoError(t, os.WriteFile(bad, []byte("trace,raw_label\n"), 0o644))
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"power", "--runs", bad}, `header: missing column "window_duration_s"`},
		{[]string{"power", "--runs", bad, "--gpu", "h200-141gb"}, "--board-w: the power limit of h200-141gb is not known"},
		{[]string{"power", "--runs", filepath.Join(dir, "none.csv")}, "no such file"},
		{[]string{"power", "--exec", dir}, filepath.Join(dir, "telemetry.csv")},
		{[]string{"power", "--exec", dir, "--runs", bad}, "--runs and --exec: give one of them"},
	} {
		code, _, errOut := runCalibrate(t, tc.args...)
		require.NotEqual(t, 0, code)
		require.Contains(t, errOut, tc.err)
	}
}
