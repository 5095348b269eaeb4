package fidelity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEnergyBesideTestbed sets a measured run's energy beside ours: the
// seeds' mean kWh of the same trace and config, and the error.
func TestEnergyBesideTestbed(t *testing.T) {
	shared, dir := t.TempDir(), t.TempDir()
	tb := filepath.Join(shared, filepath.FromSlash(TestbedEnergyPath))
	require.NoError(t, os.MkdirAll(filepath.Dir(tb), 0o755))
	require.NoError(t, os.WriteFile(tb, []byte("trace,raw_label,total_gpu_energy_j,window_duration_s,energy_gpu_count\n"+
		"philly,exclusive,36000000,50000,3\nphilly,aegis_lug_thresholded,30000000,40000,3\nphilly,other,1,1,3\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "table2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "table2", "cells.csv"), []byte("spec,trace,config,policy,seed,energy_kwh,mean_gpu_power_w\n"+
		"table2,philly,Exclusive,exclusive,1,10.5,230\ntable2,philly,Exclusive,exclusive,2,10.5,230\ntable2,saturn,Exclusive,exclusive,1,3,1\n"), 0o644))
	rows, note, err := loadEnergy(dir, shared)
	require.NoError(t, err)
	require.Empty(t, note)
	require.Len(t, rows, 2)
	require.InDelta(t, 10.0, rows[0].MeasuredKWh, 1e-9)
	require.InDelta(t, 240.0, rows[0].MeasuredW, 1e-9)
	require.InDelta(t, 10.5, rows[0].Ours.Mean, 1e-9)
	r := &Report{Energy: rows}
	var b strings.Builder
	r.writeEnergy(&b)
	require.Contains(t, b.String(), "| philly | exclusive | Table 2, Exclusive | 10.00 | 10.50 ± 0.00 | +5.0 % | 240.0 | 230.0 ± 0.0 |")
	require.Contains(t, b.String(), "| philly | aegis_lug_thresholded | Table 5, MU | 8.33 | - | - |")
	require.Contains(t, b.String(), "Median |error| of energy over the 1 runs: 5.0 %")
}
