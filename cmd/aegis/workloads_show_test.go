package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// runShow runs the show subcommand on its own (the lead attaches it under
// aegis workloads).
func runShow(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := newWorkloadsShowCmd()
	var out bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&out)
	c.SetArgs(args)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.Execute()
	return out.String(), err
}

func TestWorkloadsShow(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"a100", []string{"resnet50_imagenet_bs64_1gpu"}, []string{
			"workload       resnet50_imagenet_bs64_1gpu", "GPU type       a100-40gb, 40960 MiB, pressure telemetry: yes",
			"solo time      1951.05 s (32.5 min)", "startup        9s to first GPU activity", "Lucid class    jumbo",
			"  peakmem      7118 MiB", "  est-free     no per-job estimate", "  analytical   14910 MiB", "  gpumemnet    16000 MiB",
			"  faketensor   5337 MiB", "peak MiB    7118", "SMACT mean  0.6855", "SMACT p95  0.7310", "DRAMA mean  0.4709", "util %    78.9",
			"slowdown ×2", "slowdown ×4"}},
		{"two GPUs", []string{"gpt2_large_wiki_bs8_2gpu"}, []string{"GPUs           2", "gpu 0   gpu 1", "peak MiB   28330   16458", "slowdown ×2    1.61    1.36",
			"  analytical   unavailable (exclusive placement only)"}},
		{"legacy", []string{"--gpu-type", "legacy-11gb", "resnet50_imagenet_bs64_1gpu"}, []string{
			"legacy-11gb, 11264 MiB, pressure telemetry: no", "solo time      5466.45 s", "  gpumemnet    16000 MiB (more than the GPU)"}},
		{"h200", []string{"--gpu-type", "h200-141gb", "resnet50_imagenet_bs64_1gpu"}, []string{"h200-141gb, 143771 MiB", "solo time      1951.05 s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runShow(t, tc.args...)
			require.NoError(t, err)
			for _, w := range tc.want {
				require.Contains(t, out, w)
			}
		})
	}
}

func TestWorkloadsShowGPUTypeFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cat.csv"), []byte("workload,gpus,gpu,solo_s,peak_mib,smact_mean,smact_p95,smocc_mean,smocc_p95,drama_mean,drama_p95,util_pct,analytical_mib,faketensor_mib,gpumemnet_mib,lucid_class\n"+
		"toy_1gpu,1,0,100,1000,0.5,0.6,0.2,0.3,0.1,0.2,60,2000,0,8000,tiny\n"), 0o644))
	gt := filepath.Join(dir, "gpu.yaml")
	require.NoError(t, os.WriteFile(gt, []byte("name: toy-8gb\nmemory_mib: 8192\npressure: true\ncatalog: cat.csv\n"), 0o644))
	out, err := runShow(t, "--gpu-type", gt, "toy_1gpu")
	require.NoError(t, err)
	require.Contains(t, out, "toy-8gb, 8192 MiB, pressure telemetry: yes")
	require.Contains(t, out, "  faketensor   unavailable")

	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown key", "name: x\nmemory_mib: 8192\npressure: true\ncolour: red\n",
			`bad.yaml:4: unknown key "colour"; valid keys: name, memory_mib, pressure, catalog, interference, speeds`},
		{"typo", "name: x\nmemory_mib: 8192\npresure: true\n",
			`bad.yaml:3: unknown key "presure"; valid keys: name, memory_mib, pressure, catalog, interference, speeds, power (did you mean pressure?)`},
		{"built-in name", "name: a100-40gb\nmemory_mib: 8192\npressure: true\n",
			`bad.yaml:1: name: "a100-40gb" is a built-in GPU type (built-in: a100-40gb, h200-141gb, legacy-11gb)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.yaml")
			require.NoError(t, os.WriteFile(bad, []byte(tc.yaml), 0o644))
			_, err := runShow(t, "--gpu-type", bad, "toy_1gpu")
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "models.", "no Go type names")
		})
	}
}

func TestWorkloadsShowErrors(t *testing.T) {
	_, err := runShow(t, "resnet50_imagenet_bs48_1gpu")
	require.ErrorContains(t, err, `workload "resnet50_imagenet_bs48_1gpu" is not in the a100-40gb catalog`)
	require.ErrorContains(t, err, "did you mean resnet50_imagenet_bs128_1gpu")
	var u usageError
	require.False(t, errors.As(err, &u), "an unknown workload is bad input (exit 1), not a usage error")
	_, err = runShow(t, "--gpu-type", "tpu", "x")
	require.ErrorContains(t, err, `unknown GPU type "tpu"`)
	_, err = runShow(t, "gpt2_xl_wiki_bs2_1gpu", "--gpu-type", "legacy-11gb")
	require.ErrorContains(t, err, "not in the legacy-11gb catalog")
	_, err = runShow(t)
	require.Error(t, err)
}
