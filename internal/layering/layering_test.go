package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/aegis-sched/aegis/"

// rules says which of the module's packages each package may import (non-test
// files). A key or an entry ending in "/..." covers a package and every
// package below it; a package follows its longest matching key; "..."
// alone allows anything. docs/layering.md draws this table: change both.
var rules = map[string][]string{
	// The contract and the policies: pure decision code, standard library only.
	// internal/suggest (did-you-mean for unknown names) and
	// internal/jobslots (a slot per job id) are themselves standard library
	// only.
	"policies":          {"internal/suggest"},
	"policies/loop":     {"policies"},
	"policies/colloc":   {"internal/jobslots", "policies"},
	"policies/dispatch": {"policies"},
	"policies/...":      {"policies", "policies/colloc"}, // the concrete policies
	// The policies by name: every concrete policy and the dispatcher, none
	// of the truth or the backends.
	"policies/registry": {"internal/suggest", "policies", "policies/..."},
	// The truth and the inputs.
	"models":     {"internal/suggest", "policies"},
	"models/...": {"models", "policies"},
	"traces":     {"internal/suggest", "models", "policies"},
	"traces/...": {"traces", "models", "policies"},
	// The backends: each sees the contract, the truth and the jobs, never
	// the other, and no concrete policy.
	"sim":              {"models", "policies", "traces"},
	"executor/gpu":     {},
	"executor":         {"executor/gpu", "models", "policies", "policies/loop", "results", "traces"},
	"executor/emulate": {"executor", "executor/gpu", "models", "policies", "sim", "traces"},
	// Results: metrics and files over the contract's events.
	// results/rundir is the layout of a results directory (file and column
	// names, run metadata): standard library only, so every writer and
	// reader names them from it.
	"results/rundir":   {},
	"results":          {"internal/jobslots", "policies", "results/rundir"},
	"results/stats":    {},
	"results/runfiles": {"policies", "results"},
	// results/plots marks AEGIS's default thresholds (aegis.DefaultConfig)
	// in the τ sweep figure.
	"results/plots":     {"policies", "policies/aegis", "results", "results/rundir", "results/runfiles"},
	"results/stability": {"policies", "results/runfiles"},
	"results/...":       {"policies", "results", "results/..."},
	// The composition: one run, then specs of many runs.
	"experiments/assemble": {"internal/suggest", "models", "policies/...", "results", "results/rundir", "sim", "traces"},
	"experiments/stacking": {"models", "policies/...", "sim", "traces"},
	// experiments/calibration also reads aegis exec run directories (the
	// power fit of one's own GPUs).
	"experiments/calibration": {"experiments/stacking", "models", "policies", "results", "results/rundir", "results/runfiles", "sim"},
	"experiments": {"experiments/assemble", "experiments/stacking", "internal/buildinfo", "internal/suggest", "models", "policies/...",
		"results/...", "sim", "traces"},
	// The command line and the tools (cmd/growthplot) on top of everything.
	"cmd/...": {"..."},
	// Small helpers (atomicfile, buildinfo, csvhead, jobslots, strictyaml, suggest): libraries
	// only, importing nothing of ours but each other, so anyone may use
	// them.
	"internal/...": {},
	"docs":         {"..."},
}

// thirdParty says which packages may import a module outside this one
// (by import path prefix); others may, except the policies (standard
// library only).
var thirdParty = map[string][]string{
	"github.com/NVIDIA/go-nvml": {"executor/gpu"},
	"gonum.org/v1/plot":         {"results/plots"},
}

// covers reports whether pattern (a package or "P/...") covers package p.
func covers(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// ruleOf is the key of rules that package p follows: the one for p itself,
// else the longest P/... that covers it.
func ruleOf(p string) (string, bool) {
	if _, ok := rules[p]; ok {
		return p, true
	}
	best, found := "", false
	for k := range rules {
		if covers(k, p) && len(k) > len(best) {
			best, found = k, true
		}
	}
	return best, found
}

// packages returns each package of the tree (relative to the module) with
// the imports of its non-test Go files, mapped to a file that has each.
func packages(t *testing.T, root string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "shared" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if out[pkg] == nil {
			out[pkg] = map[string]string{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			out[pkg][p] = path
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// The layering of the whole tree: every package has a rule, imports only
// what its rule allows of this module, and only the packages named in
// thirdParty import those modules; the policies use the standard library
// only.
func TestLayering(t *testing.T) {
	pkgs := packages(t, "../..")
	require.Contains(t, pkgs, "policies", "the walk found the tree")
	var names []string
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		rule, ok := ruleOf(p)
		if !ok {
			t.Errorf("package %s has no rule: add it to rules in internal/layering/layering_test.go and docs/layering.md", p)
			continue
		}
		for im, file := range pkgs[p] {
			if dep, ok := strings.CutPrefix(im, module); ok {
				// A helper under internal/ with no rule of its own imports
				// nothing of ours (its rule says so), so anyone may use it.
				if r, _ := ruleOf(dep); r == "internal/..." {
					continue
				}
				if !allowed(rules[rule], dep) {
					t.Errorf("%s imports %s: package %s (rule %q) may import only %v (docs/layering.md)", file, dep, p, rule, rules[rule])
				}
				continue
			}
			if !strings.Contains(strings.Split(im, "/")[0], ".") {
				continue // the standard library
			}
			if covers("policies/...", p) {
				t.Errorf("%s imports %s: policies use the standard library and their own packages only", file, im)
			}
			for mod, who := range thirdParty {
				if covers(mod+"/...", im) && !allowed(who, p) {
					t.Errorf("%s imports %s: only %v may", file, im, who)
				}
			}
		}
	}
}

func allowed(patterns []string, p string) bool {
	for _, a := range patterns {
		if covers(a, p) {
			return true
		}
	}
	return false
}

// The rules bite: a made-up import of each kind the layering forbids is
// refused, and an allowed one passes.
func TestRulesRefuse(t *testing.T) {
	for _, tc := range []struct {
		pkg, imports string
		ok           bool
	}{
		{"policies", "policies/colloc", false},
		{"policies", "internal/suggest", true},
		{"policies/aegis", "sim", false},
		{"policies/aegis", "models", false},
		{"policies/aegis", "policies/colloc", true},
		{"sim", "executor", false},
		{"sim", "policies/aegis", false},
		{"executor", "sim", false},
		{"executor", "policies/loop", true},
		{"executor", "policies/lucid", false},
		{"executor/emulate", "sim", true},
		{"experiments/assemble", "experiments", false},
		{"experiments/assemble", "results/plots", false},
		{"experiments/assemble", "policies/dispatch", true},
		{"traces", "sim", false},
		{"models", "traces", false},
		{"results/compare", "results/plots", true},
		{"cmd/aegis", "experiments", true},
	} {
		rule, ok := ruleOf(tc.pkg)
		require.True(t, ok, tc.pkg)
		require.Equal(t, tc.ok, allowed(rules[rule], tc.imports), "%s imports %s (rule %q)", tc.pkg, tc.imports, rule)
	}
}

// internal/ holds libraries only: a program goes beside the commands under
// cmd/, so that nothing under internal/ imports upwards to run.
func TestInternalHoldsLibraries(t *testing.T) {
	files, err := filepath.Glob("../*/*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files, "the glob found internal/'s packages")
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		require.NoError(t, err)
		require.NotEqual(t, "main", f.Name.Name, "%s is a program: move it to cmd/", path)
	}
}
