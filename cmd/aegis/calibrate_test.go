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
		t.Skip("shared calibration data not found (set AEGIS_SHARED or place shared/ beside the repo)")
	}
}

// TestCalibrateJSON runs the fit on the shipped data and checks the JSON
// shape and the acceptance criteria.
func TestCalibrateJSON(t *testing.T) {
	sharedOrSkip(t)
	code, out, errOut := runCalibrate(t, "--json")
	require.Equal(t, 0, code, errOut)
	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &raw))
	for _, k := range []string{"model", "heldout_median_ape", "heldout_p90_ape", "baselines", "params", "in_sample"} {
		require.Contains(t, raw, k)
	}
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
		"\npressure ", "\nnone ", "\nflat20 ", "co_smact", "wrote " + path} {
		require.Contains(t, out, want)
	}
	m, err := models.LoadInterference(path)
	require.NoError(t, err)
	got, want := m.(*models.PressureModel).P, models.DefaultPressureParams()
	require.InDelta(t, want.CoSMACT, got.CoSMACT, 1e-4)
	require.InDelta(t, want.Intercept, got.Intercept, 1e-4)
	require.Equal(t, want.Capacity, got.Capacity)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "# Interference truth model fitted by `aegis calibrate`"))
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
		{"bad pair line", []string{"--pairs", pairs, "--catalog", cat}, 1, "pairs.csv:3: column solo_time_b_s"},
		{"missing pairs", []string{"--pairs", filepath.Join(dir, "nope.csv"), "--catalog", cat}, 1, "nope.csv"},
		{"missing catalog", []string{"--pairs", pairs, "--catalog", filepath.Join(dir, "nope.csv")}, 1, "catalog:"},
		{"too few pairs for folds", []string{"--pairs", few, "--catalog", cat}, 1, "of 5 is empty"},
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
