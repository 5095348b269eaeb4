package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSimulateClusterErrors: every bad --cluster is a usage error that says
// what is wrong.
func TestSimulateClusterErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--cluster", ""}, `--cluster: cluster "": want TYPE:GPUSxSERVERS`},
		{[]string{"--cluster", "a100-40gb:8"}, `size "8": want GPUSxSERVERS, e.g. 8x16`},
		{[]string{"--cluster", "v100:8x2"}, `unknown GPU type "v100"`},
		{[]string{"--cluster", "a100-40gb:0x2"}, `GPUs per server "0" is not a whole number in 1..1024`},
		{[]string{"--cluster", "a100-40gb:8x0"}, `server count "0" is not a whole number in 1..16384`},
		{[]string{"--cluster", "a100-40gb:8x8,h200:8x4"}, `cluster group "h200:8x4": GPU type: unknown GPU type "h200"`},
		{[]string{"--cluster", "a100-40gb:8x8,legacy-11gb:8x4", "--policy", "aegis"}, "policy aegis on legacy-11gb"},
		{[]string{"--cluster", "a100-40gb:8x8,legacy-11gb:8x4", "--truth", "context_mib=20000"}, "want at most the legacy-11gb GPU's 11264 MiB"},
		{[]string{"--cluster", "a100-40gb:8x2", "--server", "a100-40gb:8"}, "--cluster and --server: give one"},
		{[]string{"--cluster", "a100-40gb:8x2", "--set", "dispatch=worst"}, `"worst"`},
		{[]string{"--cluster", "a100-40gb:8x2", "--policy", "aegis", "--set", "hold=x"}, "hold"},
		{[]string{"--cluster", "legacy-11gb:8x2", "--policy", "aegis"}, "legacy-11gb"},
		{[]string{"--set", "dispatch=bestfit"}, "dispatch"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errs := aegis(append([]string{"simulate", "--trace", "demo"}, tc.args...)...)
			require.Equal(t, 2, code, errs)
			require.Contains(t, errs, tc.msg)
		})
	}
}

// TestSimulateCluster: a cluster run's jobs.csv has a server column (and a
// plain run's has none).
func TestSimulateCluster(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := aegis("simulate", "--trace", "demo", "--cluster", "a100-40gb:2x2", "--set", "dispatch=leastloaded", "--out", filepath.Join(dir, "c"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "on cluster a100-40gb:2x2 (2 servers, 4 GPUs)")
	b, err := os.ReadFile(filepath.Join(dir, "c", "jobs.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.True(t, strings.HasSuffix(lines[0], ",norm_jct,server"), lines[0])
	servers := map[string]bool{}
	for _, l := range lines[1:] {
		servers[l[strings.LastIndex(l, ",")+1:]] = true
	}
	require.Equal(t, map[string]bool{"0": true, "1": true}, servers)

	code, _, errs = aegis("simulate", "--trace", "demo", "--server", "a100-40gb:4", "--out", filepath.Join(dir, "s"))
	require.Equal(t, 0, code, errs)
	b, err = os.ReadFile(filepath.Join(dir, "s", "jobs.csv"))
	require.NoError(t, err)
	require.NotContains(t, string(b), "server")

	code, out, errs = aegis("simulate", "--trace", "demo", "--cluster", "a100-40gb:2x1,h200-141gb:2x1", "--out", filepath.Join(dir, "m"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "on cluster a100-40gb:2x1,h200-141gb:2x1 (2 servers, 4 GPUs)")
	b, err = os.ReadFile(filepath.Join(dir, "m", "jobs.csv"))
	require.NoError(t, err)
	lines = strings.Split(strings.TrimSpace(string(b)), "\n")
	require.True(t, strings.HasSuffix(lines[0], ",norm_jct,server,gpu_type"), lines[0])
	for _, l := range lines[1:] {
		require.Regexp(t, `,(0,a100-40gb|1,h200-141gb)$`, l)
	}
}

// TestPoliciesListsDispatcher: aegis policies lists the dispatcher's
// parameters, read from its code.
func TestPoliciesListsDispatcher(t *testing.T) {
	code, out, errs := aegis("policies")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "cluster dispatcher (aegis simulate --cluster")
	require.Regexp(t, `dispatch +bestfit +bestfit\|firstfit\|leastloaded`, out)
	require.Regexp(t, `route_depth +16 `, out)
}
