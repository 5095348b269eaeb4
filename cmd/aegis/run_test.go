package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/results/page"
)

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("name: g\nserver: a100-40gb:3\ntraces: [{trace: demo}]\nseeds: [1, 2]\n"+
		"configs: [{label: E, policy: exclusive}, {label: A, policy: aegis}]\n"), 0o644))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: b\nserver: a100-40gb:3\ntraces: [{trace: demo}]\nseeds: [1]\n"+
		"configs: [{label: E, policy: exclusive, params: {hold: 3s}}]\n"), 0o644))
	code, out, errs := aegis("validate", good)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "good.yaml: ok: g, 4 cells (1 traces, 2 configs, 1 sweep points, 2 seeds)")
	code, _, errs = aegis("validate", good, bad)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "bad.yaml:5: configs[0].params: policy exclusive: unknown parameter \"hold\"")
	b, err := os.ReadFile(good)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(good, append(b, "model_uncertainty: {refits: 20}\n"...), 0o644))
	code, out, errs = aegis("validate", good)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "good.yaml: ok: g, 84 cells (1 traces, 2 configs, 1 sweep points, 2 seeds, each also under 20 model refits)")
	require.NoError(t, os.WriteFile(good, append(b, "model_uncertainty: {refits: 40}\n"...), 0o644))
	code, _, errs = aegis("validate", good)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "good.yaml:6: model_uncertainty.refits: 40: want 1 to 20")
	code, _, errs = aegis("validate")
	require.Equal(t, 2, code, errs)
}

func TestRunAndMerge(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("name: s\nserver: a100-40gb:2\ntraces: [{like: saturn, jobs: 6, seed: 1}]\nseeds: [1]\n"+
		"configs: [{label: E, policy: exclusive}, {label: A, policy: aegis}]\nnormalize: E\ntable: normalized\n"), 0o644))
	code, out, errs := aegis("run", spec, "--out", filepath.Join(dir, "whole"), "--jobs", "2")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "2 cells (2 run, 0 already done)")
	require.NotContains(t, out, "\r", "no progress bar when stdout is not a terminal")
	for _, sh := range []string{"0/2", "1/2"} {
		code, _, errs = aegis("run", spec, "--out", filepath.Join(dir, "part"+sh[:1]), "--shard", sh)
		require.Equal(t, 0, code, errs)
	}
	code, out, errs = aegis("merge", filepath.Join(dir, "part0"), filepath.Join(dir, "part1"), "--out", filepath.Join(dir, "all"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "merged 2 shard directories")
	a, err := os.ReadFile(filepath.Join(dir, "whole", "table.md"))
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "all", "table.md"))
	require.NoError(t, err)
	require.Equal(t, string(a), string(b))
	a, err = os.ReadFile(filepath.Join(dir, "whole", "README.md"))
	require.NoError(t, err)
	b, err = os.ReadFile(filepath.Join(dir, "all", "README.md"))
	require.NoError(t, err)
	require.Equal(t, string(a), string(b), "a merge's page is the whole run's")
	requireLinksEntries(t, filepath.Join(dir, "all"), b)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", spec}, 2, "--out DIR is required"},
		{[]string{"run", spec, "--out", dir, "--shard", "2/2"}, 2, "want I/N with 0 <= I < N"},
		{[]string{"run", spec, "--out", dir, "--shard", "x"}, 2, "want I/N"},
		{[]string{"run", "--out", dir}, 2, "give at least one spec"},
		{[]string{"merge", filepath.Join(dir, "nope"), "--out", dir}, 1, "no run.json"},
	} {
		code, _, errs := aegis(tc.args...)
		require.Equal(t, tc.code, code, errs)
		require.Contains(t, errs, tc.msg)
	}
	// Several specs go to OUT/NAME each; two with one name would collide.
	spec2 := filepath.Join(dir, "s2.yaml")
	b2, err := os.ReadFile(spec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(spec2, []byte(strings.Replace(string(b2), "name: s\n", "name: s2\n", 1)), 0o644))
	code, _, errs = aegis("run", spec, spec2, "--out", filepath.Join(dir, "many"))
	require.Equal(t, 0, code, errs)
	require.FileExists(t, filepath.Join(dir, "many", "s", "table.md"))
	require.FileExists(t, filepath.Join(dir, "many", "s2", "table.md"))
	index, err := os.ReadFile(filepath.Join(dir, "many", "README.md"))
	require.NoError(t, err)
	require.Equal(t, []string{"s/README.md", "s2/README.md", "s/README.md", "s2/README.md"}, page.Links(index),
		"the index links each run's page; a spec file outside the working directory is named (run.json: its base name), not linked")
	code, _, errs = aegis("run", spec, spec, "--out", filepath.Join(dir, "dup"))
	require.Equal(t, 1, code)
	require.Contains(t, errs, `are both named "s"`)
	code, out, _ = aegis("--version")
	require.Equal(t, 0, code)
	require.Contains(t, out, "aegis ")
	require.Contains(t, out, "go1.")
}

// TestRunSkipsSpecsWithoutSharedData: on a fresh clone (no shared data
// folder), run and validate skip a spec that needs it among several, naming
// it and what it needs, and run the others; alone it is an error.
func TestRunSkipsSpecsWithoutSharedData(t *testing.T) {
	t.Setenv("AEGIS_SHARED", t.TempDir())
	dir := t.TempDir()
	stack := filepath.Join(dir, "stack.yaml")
	require.NoError(t, os.WriteFile(stack, []byte("name: stack\nserver: a100-40gb:1\nstacking: {}\nseeds: [1]\n"), 0o644))
	ok := filepath.Join(dir, "ok.yaml")
	require.NoError(t, os.WriteFile(ok, []byte("name: ok\nserver: a100-40gb:3\ntraces: [{trace: demo}]\nseeds: [1]\n"+
		"configs: [{label: E, policy: exclusive}]\n"), 0o644))
	const skipped = "stack.yaml:3: stacking: needs the measured stacking sequences (calibration/aegis/nway of the shared data folder)"
	out := filepath.Join(dir, "res")
	code, stdout, errs := aegis("run", stack, ok, "--out", out)
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, "skipped "+stack+" (an earlier run of it is left as it is): "+stack[:len(stack)-len("stack.yaml")]+skipped)
	require.Contains(t, stdout, "ok.yaml: 1 cells (1 run, 0 already done)")
	require.FileExists(t, filepath.Join(out, "ok", "cells.csv"))
	require.NoDirExists(t, filepath.Join(out, "stack"))
	code, stdout, errs = aegis("validate", stack, ok)
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, skipped)
	require.Contains(t, stdout, "ok.yaml: ok: ok")
	for _, args := range [][]string{{"run", stack, "--out", filepath.Join(dir, "alone")}, {"validate", stack}, {"validate", stack, stack}} {
		code, _, errs = aegis(args...)
		require.Equal(t, 1, code, errs)
		require.Contains(t, errs, skipped)
		require.NoDirExists(t, filepath.Join(dir, "alone"))
	}
}

// TestBuildSourceKeysCells: make build stamps the sha256 of the source, and
// cells are keyed by it: a rebuild of the same source under another commit
// reuses every cell, a binary of other source reruns them.
func TestBuildSourceKeysCells(t *testing.T) {
	if testing.Short() {
		t.Skip("builds aegis three times")
	}
	dir := t.TempDir()
	build := func(name, commit, source string) string {
		bin := filepath.Join(dir, name)
		ld := "-X github.com/aegis-sched/aegis/internal/buildinfo.commit=" + commit +
			" -X github.com/aegis-sched/aegis/internal/buildinfo.source=" + source
		out, err := exec.Command("go", "build", "-trimpath", "-ldflags", ld, "-o", bin, ".").CombinedOutput()
		require.NoError(t, err, "%s", out)
		return bin
	}
	spec := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("name: s\nserver: a100-40gb:3\ntraces: [{trace: demo}]\nseeds: [1]\n"+
		"configs:\n  - {label: Exclusive, policy: exclusive}\n"), 0o644))
	out := filepath.Join(dir, "out")
	runWith := func(bin string) string {
		b, err := exec.Command(bin, "run", spec, "--out", out).CombinedOutput()
		require.NoError(t, err, "%s", b)
		return string(b)
	}
	src := strings.Repeat("a", 64)
	require.Contains(t, runWith(build("one", "c1", src)), "1 run")
	meta, err := os.ReadFile(filepath.Join(out, "run.json"))
	require.NoError(t, err)
	require.Contains(t, string(meta), `"build_sha256": "`+src+`"`)
	require.Contains(t, runWith(build("two", "c2", src)), "0 run, 1 already done", "same source, another commit")
	require.Contains(t, runWith(build("three", "c2", strings.Repeat("b", 64))), "1 run", "other source")
}

// TestFidelityKeepsPublishedReport: without the published values, aegis
// fidelity leaves a report that has them as it is (make reproduce on a
// fresh clone must not rewrite results/paper/fidelity.md with every paper
// value "unavailable"), says so and exits 0; --out writes elsewhere, and a
// report without them is rewritten.
func TestFidelityKeepsPublishedReport(t *testing.T) {
	shared := t.TempDir()
	t.Setenv("AEGIS_SHARED", shared)
	dir := t.TempDir()
	report := filepath.Join(dir, "fidelity.md")
	const kept = "# Fidelity\n\nPublished values: shared:paper/published_tables.csv (read at report time).\n"
	require.NoError(t, os.WriteFile(report, []byte(kept), 0o644))
	code, out, errs := aegis("fidelity", dir)
	require.Equal(t, 0, code, errs)
	require.Empty(t, out)
	require.Contains(t, errs, report+" left as it is: it sets ours beside the published values, which are unavailable")
	// The folder $AEGIS_SHARED names, and what it lacks (was: "no shared
	// data folder" for an empty one).
	require.Contains(t, errs, "unavailable: the shared data folder has no paper/published_tables.csv (the folder is AEGIS_SHARED="+shared+")")
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	require.Equal(t, kept, string(b))
	require.NoFileExists(t, filepath.Join(dir, "README.md"), "nor is the index rewritten")
	other := filepath.Join(dir, "other.md")
	code, out, errs = aegis("fidelity", dir, "--out", other)
	require.Equal(t, 0, code, errs)
	require.Equal(t, other+"\n", out)
	require.NoError(t, os.Remove(report))
	for range 2 { // a report without them is rewritten
		code, out, errs = aegis("fidelity", dir)
		require.Equal(t, 0, code, errs)
		require.Equal(t, report+"\n", out)
	}
}
