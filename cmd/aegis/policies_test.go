package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies/registry"
)

// aegis policies lists each policy's parameters from the code that reads
// them: every listed default is accepted back, and the keys are exactly the
// ones an unknown key's error names as valid.
func TestPoliciesListsParameters(t *testing.T) {
	code, out, errs := aegis("policies")
	require.Equal(t, 0, code, errs)
	for _, name := range registry.Names() {
		require.Contains(t, out, name+": "+registry.Summary(name))
		if name == "external" {
			continue // it needs its program (TestPoliciesExternal)
		}
		defs, err := registry.Params(name, nil)
		require.NoError(t, err)
		keys := map[string]bool{}
		for _, d := range defs {
			keys[d.Key] = true
			require.Regexp(t, `(?m)^  `+d.Key+` +`+regexpQuote(d.Default), out)
			_, err := registry.New(name, map[string]string{d.Key: d.Default})
			require.NoError(t, err, "%s: default %s=%s refused", name, d.Key, d.Default)
		}
		_, err = registry.New(name, map[string]string{"no_such_key": "1"})
		require.Error(t, err)
		valid := err.Error()[strings.Index(err.Error(), "valid: ")+len("valid: "):]
		if len(keys) == 0 {
			require.Equal(t, "none", valid)
			continue
		}
		var named []string
		for _, part := range strings.Split(valid, ", ") {
			if k, _, ok := strings.Cut(part, " ("); ok && !strings.Contains(k, " ") {
				named = append(named, k)
			}
		}
		require.Equal(t, slices.Sorted(maps.Keys(keys)), named, name)
	}
	// A variant's different defaults are shown next to the default's.
	require.Regexp(t, `(?m)^  lookahead +1 \(original: 5\)`, out)
	require.Contains(t, out, "simulator truth (aegis simulate --truth key=value):")
	require.Regexp(t, `(?m)^  context_mib +500 `, out)

	code, out, _ = aegis("policies", "horus")
	require.Equal(t, 0, code)
	require.Contains(t, out, "horus: ")
	require.NotContains(t, out, "aegis: ")
	code, _, errs = aegis("policies", "magic")
	require.Equal(t, 2, code)
	require.Contains(t, errs, `unknown policy "magic"`)

	code, out, _ = aegis("simulate", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "aegis policies lists both with their defaults")
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(`.`, `\.`, `(`, `\(`, `)`, `\)`, `|`, `\|`, `+`, `\+`)
	return r.Replace(s)
}

// aegis policies external --set command=... lists what the program
// declares, after policy external's own parameters.
func TestPoliciesExternal(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found on PATH: policy external with the Python example is not tested here")
	}
	code, out, errs := aegis("policies", "external", "--set", "command="+py+" ../../policies/external/python/bestfit.py")
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `(?m)^  command +`, out)
	require.Regexp(t, `(?m)^  util_cap +100 +number in \[1, 1000\] +most summed profiled utilization`, out)
	require.Regexp(t, `(?m)^  guard_mib +512 `, out)

	code, _, errs = aegis("policies", "--set", "command=x")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "--set needs a policy")
}
