package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

// TestRegenerate checks the embedded derived catalogs are this generator's
// output on the shared source tables.
func TestRegenerate(t *testing.T) {
	shared, ok := models.SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
	src := filepath.Join(shared, "calibration", "aegis")
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		gen  func(out string) error
		want string
	}{
		{"a100", func(out string) error { return run(filepath.Join(src, "workload_catalog_a100.csv"), out) }, "../../data/catalog_a100.csv"},
		{"legacy", func(out string) error {
			return runLegacy(filepath.Join(src, "legacy_11gb_workload_catalog.csv"), filepath.Join(src, "legacy", "solo_features_legacy.csv"), out)
		}, "../../data/catalog_legacy11gb.csv"},
		{"windows", func(out string) error { return runWindows(filepath.Join(src, "solo_windows"), out) }, "../../data/windows_a100.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".csv")
			require.NoError(t, tc.gen(out))
			got, err := os.ReadFile(out)
			require.NoError(t, err)
			want, err := os.ReadFile(tc.want)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "regenerate with go run ./models/internal/gencatalog (see its doc)")
		})
	}
}

func TestRunLegacyErrors(t *testing.T) {
	dir := t.TempDir()
	features := filepath.Join(dir, "features.csv")
	require.NoError(t, os.WriteFile(features, []byte("spec_key,horus_gpu_util_mean,horus_gpu_util_p95\nmnist_bs32_1gpu.yaml,10.2,13\ngpt2_large_wiki_bs8_2gpu.yaml,1,1\nbad_1gpu.yaml,x,1\n"), 0o644))
	head := "workload_id,num_gpus,gpu_memory_requirement_mib,solo_runtime_s,profile_peak_memory_mib,horus_mib,faketensor_mib,gpumemnet_mib,lucid_class,lucid_ss\n"
	for _, tc := range []struct{ name, in, want string }{
		{"unknown workload", head + "nope_1gpu,1,1,1,1,1,1,1,tiny,0\n", `row 2: workload "nope_1gpu" is not in`},
		{"two GPUs", head + "gpt2_large_wiki_bs8_2gpu,2,1,1,1,1,1,1,tiny,0\n", `num_gpus "2"`},
		{"empty", head, "no rows"},
		{"bad utilization", head + "bad_1gpu,1,1,1,1,1,1,1,tiny,0\n", `utilization "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, "in.csv")
			require.NoError(t, os.WriteFile(in, []byte(tc.in), 0o644))
			require.ErrorContains(t, runLegacy(in, features, filepath.Join(dir, "out.csv")), tc.want)
		})
	}
	require.Error(t, runLegacy(filepath.Join(dir, "missing.csv"), features, filepath.Join(dir, "out.csv")))
}
