package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.Contains(t, errs, "bad.yaml:5: configs[0].params: exclusive: unknown parameter \"hold\"")
	code, _, errs = aegis("validate")
	require.Equal(t, 2, code, errs)
}
