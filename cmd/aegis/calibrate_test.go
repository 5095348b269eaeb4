package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

func runCalibrate(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"calibrate"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func sharedOrSkip(t *testing.T) {
	t.Helper()
	if _, ok := models.SharedDir(); !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
}

// TestCalibrateJSON runs the fit on the shipped data and checks the JSON
// shape and the acceptance criteria.
func TestCalibrateJSON(t *testing.T) {
	sharedOrSkip(t)
	code, out, errOut := runCalibrate(t, "--json", "--no-stacks")
	require.Equal(t, 0, code, errOut)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, k := range []string{"model", "heldout_median_ape", "heldout_p90_ape", "baselines", "params", "in_sample"} {
		require.Contains(t, raw, k)
	}
	require.NotContains(t, raw, "leave_one_workload_out", "only with --lowo")
	require.NotContains(t, raw, "stacks", "--no-stacks (the stacks part: calibration.TestResultJSON)")
	var j struct {
		Model     string  `json:"model"`
		Median    float64 `json:"heldout_median_ape"`
		P90       float64 `json:"heldout_p90_ape"`
		Baselines map[string]struct {
			Median float64 `json:"heldout_median_ape"`
			P90    float64 `json:"heldout_p90_ape"`
		} `json:"baselines"`
		Pairs int `json:"pairs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	require.Equal(t, "pressure", j.Model)
	require.Equal(t, 219, j.Pairs)

	require.LessOrEqual(t, j.Median, 0.10)
	require.Len(t, j.Baselines, 2)
	for _, name := range []string{"none", "flat20"} {
		b, ok := j.Baselines[name]
		require.True(t, ok, name)
		require.Less(t, j.Median, b.Median, name)
		require.Less(t, j.P90, b.P90, name)
	}
}

// TestCalibrateOut checks the table output and that --out writes what the
// binary embeds.
func TestCalibrateOut(t *testing.T) {
	sharedOrSkip(t)
	path := filepath.Join(t.TempDir(), "model.yaml")
	code, out, errOut := runCalibrate(t, "--out", path, "--folds", "5")
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"219 co-runs, 5-fold cross-validation", "model                 held-out median APE  held-out p90 APE",
		"\npressure ", "\nnone ", "\nflat20 ", "co_smact", "wrote " + path,
		"stacks: 5 sequences of 4-5 jobs on one GPU", "fitted, leave one sequence out", "fitted, leave one workload set out", "telemetry.saturation",
		"with workload scales, leave one sequence out", "workload telemetry scales (smact/smocc/drama factors fitted on the grid): not adopted",
		"limits:\n  max slowdown within 10 %: at most 3 of 5 sequences"} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "leave-one-workload-out", "only with --lowo")
	m, err := models.LoadInterference(path)
	require.NoError(t, err)
	got, want := m.(*models.PressureModel).P, models.DefaultPressureParams()
	require.InDelta(t, want.CoSMACT, got.CoSMACT, 1e-4)
	require.InDelta(t, want.Intercept, got.Intercept, 1e-4)
	require.Equal(t, want.Capacity, got.Capacity)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "# Interference truth model fitted by `aegis calibrate`"))
	require.NotContains(t, string(data), "leave_one_workload_out", "only with --lowo")

	// The embedded model is this output: same comment, same fit record
	// (held-out errors), parameters equal to fit precision.
	embPath := filepath.Join("..", "..", "models", "data", "interference_a100.yaml")
	embData, err := os.ReadFile(embPath)
	require.NoError(t, err)
	comments := func(b []byte) []string {
		var c []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "#") {
				c = append(c, l)
			}
		}
		return c
	}
	require.Equal(t, comments(embData), comments(data), "regenerate with go run ./cmd/aegis calibrate --out models/data/interference_a100.yaml")
	emb, err := models.ReadInterference(embData, embPath)
	require.NoError(t, err)
	gotFile, err := models.ReadInterference(data, path)
	require.NoError(t, err)
	require.Equal(t, emb.Fit, gotFile.Fit, "regenerate with go run ./cmd/aegis calibrate --out models/data/interference_a100.yaml")
	require.Equal(t, emb.Telemetry, gotFile.Telemetry, "regenerate with go run ./cmd/aegis calibrate --out models/data/interference_a100.yaml")
	require.Equal(t, emb.Model, gotFile.Model)
	require.Equal(t, emb.GPU, gotFile.GPU)
}

// calibrateSubset writes the shared co-runs among the ImageNet CNNs at batch
// 64 and 128 and U-Net (58 co-runs, 11 catalog workloads; the same subset as
// models.TestCalibrateLOWOShared) to a file, so that
// leave-one-workload-out stays quick in tests.
func calibrateSubset(t *testing.T) string {
	t.Helper()
	shared, _ := models.SharedDir()
	data, err := os.ReadFile(filepath.Join(shared, "calibration", "aegis", "pairwise_a100_lucid_calibration.csv"))
	require.NoError(t, err)
	keep := func(name string) bool {
		return strings.Contains(name, "imagenet_bs64") || strings.Contains(name, "imagenet_bs128") || strings.HasPrefix(name, "unet_voc_1gpu")
	}
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n")), "\n")
	out := []string{lines[0]}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if keep(f[0]) && keep(f[1]) {
			out = append(out, l)
		}
	}
	require.Len(t, out, 59)
	path := filepath.Join(t.TempDir(), "subset.csv")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644))
	return path
}

// TestCalibrateLOWO: --lowo adds leave-one-workload-out errors, in the
// table, in --json (key leave_one_workload_out, the top-level keys
// unchanged) and in --out; without --lowo none of them appear
// (TestCalibrateJSON, TestCalibrateOut).
func TestCalibrateLOWO(t *testing.T) {
	sharedOrSkip(t)
	pairs := calibrateSubset(t)
	out := filepath.Join(t.TempDir(), "m.yaml")
	var stdout string
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"table and out", []string{"--lowo", "--out", out}, []string{"58 co-runs, 5-fold cross-validation grouped by catalog workload pair",
			"leave-one-workload-out: 11 workloads", "model     unseen-workload median APE  unseen-workload p90 APE  predictions",
			"\npressure  ", "\nnone      ", "\nflat20    ", "  232\n", "wrote " + out}},
		{"json", []string{"--lowo", "--json"}, []string{`"leave_one_workload_out": {`, `"workloads": 11`, `"predictions": 232`,
			`"heldout_median_ape"`, `"baselines"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, o, errOut := runCalibrate(t, append([]string{"--pairs", pairs, "--no-stacks"}, tc.args...)...)
			require.Equal(t, 0, code, errOut)
			for _, w := range tc.want {
				require.Contains(t, o, w)
			}
			stdout = o
		})
	}

	var j struct {
		Model     string  `json:"model"`
		Median    float64 `json:"heldout_median_ape"`
		P90       float64 `json:"heldout_p90_ape"`
		Baselines map[string]struct {
			Median float64 `json:"heldout_median_ape"`
			P90    float64 `json:"heldout_p90_ape"`
		} `json:"baselines"`
		LOWO struct {
			Model     string  `json:"model"`
			Median    float64 `json:"heldout_median_ape"`
			P90       float64 `json:"heldout_p90_ape"`
			Baselines map[string]struct {
				Median float64 `json:"heldout_median_ape"`
				P90    float64 `json:"heldout_p90_ape"`
			} `json:"baselines"`
			Workloads   int `json:"workloads"`
			Predictions int `json:"predictions"`
		} `json:"leave_one_workload_out"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	require.Equal(t, "pressure", j.Model)
	require.Equal(t, "pressure", j.LOWO.Model)
	require.Len(t, j.LOWO.Baselines, 2)
	for _, name := range []string{"none", "flat20"} {
		b, ok := j.LOWO.Baselines[name]
		require.True(t, ok, name)
		require.Less(t, j.LOWO.Median, b.Median, name)
		require.Greater(t, b.P90, 0.0, name)
	}
	require.Greater(t, j.LOWO.Median, 0.0)
	require.GreaterOrEqual(t, j.LOWO.P90, j.LOWO.Median)

	f, err := models.ReadInterference(mustRead(t, out), out)
	require.NoError(t, err)
	require.Len(t, f.Fit.LOWO, 3)
	require.InDelta(t, j.LOWO.Median, f.Fit.LOWO["pressure"].Median, 1e-6)
	require.InDelta(t, j.LOWO.Baselines["none"].P90, f.Fit.LOWO["none"].P90, 1e-6)
	require.Contains(t, string(mustRead(t, out)), "# leave_one_workload_out = one refit per workload")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func TestCalibrateErrors(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "cat.csv")
	require.NoError(t, os.WriteFile(cat, []byte("workload,gpus,gpu,solo_s,peak_mib,smact_mean,smact_p95,smocc_mean,smocc_p95,drama_mean,drama_p95,util_pct,analytical_mib,faketensor_mib,gpumemnet_mib,lucid_class\n"+
		"a_1gpu,1,0,100,1000,0.5,0.6,0.2,0.3,0.1,0.2,60,2000,500,8000,tiny\n"+
		"b_1gpu,1,0,100,9000,0.8,0.9,0.4,0.5,0.4,0.5,90,0,0,0,jumbo\n"), 0o644))
	pairs := filepath.Join(dir, "pairs.csv")
	head := "workload_a,workload_b,solo_time_a_s,solo_time_b_s,pair_time_a_s,pair_time_b_s\n"
	require.NoError(t, os.WriteFile(pairs, []byte(head+"a_1gpu,b_1gpu,100,100,150,110\na_1gpu,b_1gpu,100,-5,150,110\n"), 0o644))
	few := filepath.Join(dir, "few.csv")
	require.NoError(t, os.WriteFile(few, []byte(head+"a_1gpu,b_1gpu,100,100,150,110\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad pair line", []string{"--no-stacks", "--pairs", pairs, "--catalog", cat}, 1, "pairs.csv:3: column solo_time_b_s"},
		{"missing pairs", []string{"--no-stacks", "--pairs", filepath.Join(dir, "nope.csv"), "--catalog", cat}, 1, "nope.csv"},
		{"missing catalog", []string{"--no-stacks", "--pairs", pairs, "--catalog", filepath.Join(dir, "nope.csv")}, 1, "catalog:"},
		{"too few pairs for folds", []string{"--no-stacks", "--pairs", few, "--catalog", cat}, 1, "of 5 is empty"},
		{"missing stacks", []string{"--stacks", dir, "--pairs", few, "--catalog", cat}, 1, "progressive_sequences.csv"},
		{"nway with stacks", []string{"--nway-exponent", "1.2", "--pairs", pairs, "--catalog", cat}, 2, "ρ is fitted"},
		{"model without report", []string{"--model", "m.yaml"}, 2, "--model and --truth are read by --report only"},
		{"seeds", []string{"--seeds", "0"}, 2, "--seeds 0"},
		{"folds", []string{"--folds", "1", "--pairs", pairs, "--catalog", cat}, 2, "--folds 1"},
		{"nway", []string{"--nway-exponent", "0", "--pairs", pairs, "--catalog", cat}, 2, "--nway-exponent 0"},
		{"unknown flag", []string{"--bogus"}, 2, "unknown flag"},
		{"positional", []string{"x"}, 2, "accepts 0 arg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCalibrate(t, tc.args...)
			require.Equal(t, tc.code, code, errOut)
			require.Contains(t, errOut, tc.want)
		})
	}
}

// Without the shared data and without --pairs, calibrate explains where
// the measured data come from and their formats.
func TestCalibrateExplainsData(t *testing.T) {
	t.Setenv("AEGIS_SHARED", t.TempDir())
	t.Chdir(t.TempDir())
	code, _, errOut := runCalibrate(t)
	require.Equal(t, 2, code)
	for _, want := range []string{"shared calibration data not found", "Where the data come from", "AEGIS artifact",
		"workload_a,workload_b,solo_time_a_s,solo_time_b_s,pair_time_a_s,pair_time_b_s", "progressive_sequences.csv", "threshold_grid.csv"} {
		require.Contains(t, errOut, want)
	}
}

// --report compares a model file with every stack and grid measurement.
func TestCalibrateReport(t *testing.T) {
	sharedOrSkip(t)
	code, out, errOut := runCalibrate(t, "--report", "--seeds", "1", "--model", filepath.Join("..", "..", "experiments", "calibration", "testdata", "interference_a100_before.yaml"))
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"| mixed_imagenet_cifar_llama_4jobs | 4 | 709 / 699 | 1.17 / 1.23 |", "| grid: first rejected position right | 39.9 % (146 of 366) |",
		"imagenet_diverse_5jobs, per threshold setting", "| 0.1/0.05/0.05 | 2 | 2 |"} {
		require.Contains(t, out, want)
	}
}

// TestCalibrateLegacy: --gpu legacy-11gb fits the legacy server on its own
// data and writes what the binary embeds: the pressure model of its 52
// co-runs (held-out median APE at most 8 %, better than no interference)
// and its GPUs' speed classes (the slow class better than none, leaving
// one job out).
func TestCalibrateLegacy(t *testing.T) {
	sharedOrSkip(t)
	dir := t.TempDir()
	model, speeds := filepath.Join(dir, "model.yaml"), filepath.Join(dir, "speeds.yaml")
	code, out, errOut := runCalibrate(t, "--gpu", "legacy-11gb", "--out", model, "--speeds-out", speeds)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"52 co-runs, 5-fold cross-validation", "co_drama            0.0000", "co_mem_per_10gib    0.0000",
		"GPU speed class fast (GPUs [0 1 2 3])", "GPU speed class slow (GPUs [4 5 6 7])", "leave one job out", "wrote " + speeds} {
		require.Contains(t, out, want)
	}
	got, err := os.ReadFile(speeds)
	require.NoError(t, err)
	emb, err := os.ReadFile(filepath.Join("..", "..", "models", "data", "speeds_legacy11gb.yaml"))
	require.NoError(t, err)
	require.Equal(t, string(emb), string(got), "regenerate with go run ./cmd/aegis calibrate --gpu legacy-11gb --speeds-out models/data/speeds_legacy11gb.yaml")
	sp, err := models.ReadSpeeds(got, speeds)
	require.NoError(t, err)
	slow := sp.Classes[1].Fit
	require.Less(t, slow.LeaveOneJobOut.Median, slow.None.Median/2, "GPUs 4-7 are slower than profiled")

	data, err := os.ReadFile(model)
	require.NoError(t, err)
	f, err := models.ReadInterference(data, model)
	require.NoError(t, err)
	embData, err := os.ReadFile(filepath.Join("..", "..", "models", "data", "interference_legacy11gb.yaml"))
	require.NoError(t, err)
	e, err := models.ReadInterference(embData, "interference_legacy11gb.yaml")
	require.NoError(t, err)
	require.Equal(t, e.Fit, f.Fit, "regenerate with go run ./cmd/aegis calibrate --gpu legacy-11gb --out models/data/interference_legacy11gb.yaml")
	require.Equal(t, "legacy-11gb", f.GPU)
	require.InDelta(t, e.Params.CoSMACT, f.Params.CoSMACT, 1e-4)
	require.InDelta(t, e.Params.Intercept, f.Params.Intercept, 1e-4)
	require.InDelta(t, e.Params.SelfSMACT, f.Params.SelfSMACT, 1e-4)
	require.Zero(t, f.Params.CoDRAMA, "no DRAM activity measured there")
	require.Zero(t, f.Params.SelfMem, "memory terms held at 0")
	code, out, errOut = runCalibrate(t, "--gpu", "legacy-11gb", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"speeds": {`)
	require.Contains(t, out, `"leave_one_job_out": {`)
	require.Contains(t, out, `"median_ape": 0.077724`)
	held := f.Fit.HeldOut["pressure"]
	require.LessOrEqual(t, held.Median, 0.08)
	require.Less(t, held.Median, f.Fit.HeldOut["none"].Median)
	require.Less(t, held.P90, f.Fit.HeldOut["none"].P90)
}

// TestCalibrateBootstrap: --bootstrap prints the refits' spread and
// --bootstrap-out writes one model file per refit that a spec can load;
// refit 0 is the embedded model's fit.
func TestCalibrateBootstrap(t *testing.T) {
	code, _, errs := runCalibrate(t, "--bootstrap", "201")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "--bootstrap 201: want 1..200")
	sharedOrSkip(t)
	dir := t.TempDir()
	code, out, errs := runCalibrate(t, "--no-stacks", "--bootstrap", "2", "--bootstrap-out", dir)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "Bootstrap: 2 refits")
	require.Regexp(t, `co_smact\s+4\.1162`, out)
	require.Regexp(t, `steady_sat u1\s+1\.2000`, out)
	require.Regexp(t, `depth δ\s+0\.2000`, out)
	emb, _, err := models.RefitsFor(models.GPUType{Name: "a100-40gb"})
	require.NoError(t, err)
	for i, n := range []string{"refit-00.yaml", "refit-01.yaml"} {
		data := mustRead(t, filepath.Join(dir, n))
		f, err := models.ReadInterference(data, n)
		require.NoError(t, err)
		require.Equal(t, 1.3, f.Params.NWayExponent)
		require.Equal(t, emb.SteadySaturation[i], f.Telemetry.SteadySaturation, "%s: the refit's u1, as embedded", n)
		require.Equal(t, emb.DepthOverlap[i], f.Telemetry.DepthOverlap, "%s: the refit's δ, as embedded", n)
	}
}
