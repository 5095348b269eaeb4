package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// compareP runs aegis compare A B --out and returns compare.csv's p-values
// of B by metric.
func compareP(t *testing.T, a, b string) map[string]float64 {
	name := filepath.Base(b)
	t.Helper()
	out := t.TempDir()
	code, stdout, errs := aegis("compare", a, b, "--out", out)
	require.Equal(t, 0, code, errs)
	require.Contains(t, stdout, "| Trace | Metric | n | A | "+name+" | Δ "+name+" | Δ % "+name+" | p "+name+" | test |")
	f, err := os.Open(filepath.Join(out, "compare.csv"))
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	col := func(name string) int {
		for i, h := range recs[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q in %v", name, recs[0])
		return -1
	}
	ps := map[string]float64{}
	for _, r := range recs[1:] {
		p, err := strconv.ParseFloat(r[col("p "+name)], 64)
		require.NoError(t, err, r)
		ps[r[col("Metric")]] = p
	}
	_, err = os.Stat(filepath.Join(out, "compare-cdf.svg"))
	require.NoError(t, err)
	md := readPage(t, out)
	require.Contains(t, md, "## Deltas\n\n### "+name+" vs A\n")
	require.Contains(t, md, "![compare-cdf](compare-cdf.svg)")
	return ps
}

// Two runs that differ only in one parameter: AEGIS's placement (rr vs
// the default mfm) makes a real difference; skip=off (deciding at every
// tick) by design none.
func TestCompareRuns(t *testing.T) {
	dir := t.TempDir()
	quick := func(name string, extra ...string) string {
		out := filepath.Join(dir, name)
		args := append([]string{"run", "--trace", "philly", "--policy", "aegis", "--seeds", "1-5", "--out", out}, extra...)
		code, _, errs := aegis(args...)
		require.Equal(t, 0, code, errs)
		return out
	}
	a, b, c := quick("A"), quick("B", "--set", "placement=rr"), quick("C", "--set", "skip=off")
	real := compareP(t, a, b)
	require.Less(t, real["JCT / solo runtime, per job"], 0.001, "Wilcoxon over 300 (seed, job) pairs")
	require.Less(t, real["p95 JCT (h)"], 0.01, "paired t over 5 seeds")
	// rr fails about twice as many attempts (13.6 against 6.2 per seed,
	// p 0.011 over 5 seeds: mfm's counts are 4, 6, 11, 6, 4).
	require.Less(t, real["failed attempts"], 0.05)
	none := compareP(t, a, filepath.Join(c))
	require.Len(t, none, 8, "the six default metrics, energy_kwh (A100 runs meter it) and the per-job row")
	for m, p := range none {
		require.Equal(t, 1.0, p, m)
	}
}

// A quick run of several policies is an ordinary run directory; compare
// takes it alone, its policies as the sides; simulate directories too.
func TestComparePoliciesAndSimulateDirs(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := aegis("run", "--trace", "demo", "--policy", "exclusive,aegis", "--seeds", "1,2", "--out", dir)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "command line: 4 cells (4 run, 0 already done)")
	for _, f := range []string{"run.json", "cells.csv", "table.md", "jct-cdf.svg", "seeds-cdf.svg"} {
		require.FileExists(t, filepath.Join(dir, f))
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "| spec | `run` from the command line (`aegis run --trace ... --policy ...`), sha256 `")
	requireLinksEntries(t, dir, readme)
	code, out, errs = aegis("compare", dir)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "### aegis vs exclusive")
	require.Contains(t, out, "| demo | makespan (h) | 2 seeds |")

	var sims []string
	for _, p := range []string{"exclusive", "lucid"} {
		d := filepath.Join(t.TempDir(), p)
		code, _, errs := aegis("simulate", "--trace", "demo", "--policy", p, "--out", d)
		require.Equal(t, 0, code, errs)
		sims = append(sims, d)
	}
	code, out, errs = aegis("compare", sims[0], sims[1])
	require.Equal(t, 0, code, errs)
	// The trace by its name in simulate.json, and no test over one pair.
	require.Regexp(t, `\| demo \| makespan \(h\) \| 1 run \|[^\n]*\| n/a \| none \(1 pair\) \|\n`, out)
	require.NotContains(t, out, "(run)")
	require.Regexp(t, `\| demo \| JCT / solo runtime, per job \|[^\n]*\| Wilcoxon \|\n`, out)
}

func TestCompareAndQuickRunErrors(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"compare nothing", []string{"compare"}, 2, "give the results directories to compare"},
		{"compare an empty dir", []string{"compare", empty, empty}, 1, "neither cells.csv"},
		{"compare a bad metric", []string{"compare", empty, "--metric", "speed"}, 2, `--metric "speed": want summary.csv columns`},
		{"compare a bad format", []string{"compare", empty, "--format", "gif"}, 2, `plot format "gif"`},
		{"run nothing", []string{"run", "--out", empty}, 2, "give at least one spec file, or --trace and --policy"},
		{"run spec and flags", []string{"run", "x.yaml", "--policy", "aegis", "--out", empty}, 2, "give spec files or --trace/--policy/--seeds, not both"},
		{"policy without trace", []string{"run", "--policy", "aegis", "--out", empty}, 2, "--trace and --policy: give both"},
		{"bad seeds", []string{"run", "--trace", "demo", "--policy", "aegis", "--seeds", "5-1", "--out", empty}, 2, `--seeds "5-1"`},
		{"unknown policy", []string{"run", "--trace", "demo", "--policy", "nope", "--out", empty}, 1, `aegis: flags: configs[0].policy: unknown policy "nope"`},
		{"bad parameter", []string{"run", "--trace", "demo", "--policy", "aegis", "--set", "hold=lots", "--out", empty}, 1, "aegis: flags: configs[0].params: policy aegis: parameter hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := aegis(tc.args...)
			require.Equal(t, tc.code, code, errs)
			require.Contains(t, errs, tc.want)
		})
	}
}

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint64
	}{{"1", []uint64{1}}, {"1-5", []uint64{1, 2, 3, 4, 5}}, {"1,3,7", []uint64{1, 3, 7}}, {"1-3,9", []uint64{1, 2, 3, 9}}} {
		got, err := parseSeeds(tc.in)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "a", "3-1", "1-", "0-20000", "-1"} {
		_, err := parseSeeds(bad)
		require.Error(t, err, bad)
	}
}
