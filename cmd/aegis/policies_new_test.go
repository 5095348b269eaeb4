package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// aegis policies new writes a policy of one's own that runs as it is: the
// Python starter's tests pass, the Go starter builds against this checkout
// and its tests pass, both run a trace under policy external, to the same
// results (the same rule in two languages), and aegis policies lists their
// parameter. Existing files are never overwritten; a bad name, a language
// other than python and go, and a Go starter outside a checkout are refused.
func TestPoliciesNew(t *testing.T) {
	py := python3(t, "aegis policies new")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found on PATH: the Go starter is not built here")
	}
	dir := t.TempDir()
	pyDir, goDir := filepath.Join(dir, "mine"), filepath.Join(dir, "minego")
	code, out, errs := aegis("policies", "new", "mine", "--out", pyDir)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "python3 -m unittest discover -s "+pyDir)
	script := filepath.Join(pyDir, "mine.py")
	require.Contains(t, out, `{label: mine, policy: external, params: {command: "python3 `+script+`", mem_share: 1}}`)

	// The spec the output proposes runs, the policy beside AEGIS.
	spec := filepath.Join(dir, "spec.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("name: mine\nserver: a100-40gb:3\ntraces: [{trace: demo}]\nseeds: [1]\nconfigs:\n"+
		"  - {label: AEGIS, policy: aegis}\n  - {label: mine, policy: external, params: {command: \""+py+" "+script+"\", mem_share: 1}}\n"), 0o644))
	code, _, errs = aegis("run", spec, "--out", filepath.Join(dir, "spec-out"))
	require.Equal(t, 0, code, errs)
	for _, f := range []string{"mine.py", "test_mine.py", "aegis_policy.py"} {
		require.FileExists(t, filepath.Join(pyDir, f))
	}
	c := exec.Command(py, "-m", "unittest", "discover", "-s", pyDir)
	c.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	b, err := c.CombinedOutput()
	require.NoError(t, err, "%s", b)

	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	code, _, errs = aegis("policies", "new", "minego", "--lang", "go", "--out", goDir, "--aegis", root)
	require.Equal(t, 0, code, errs)
	// Offline: the modules aegis needs come from the module cache.
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-o", "minego", "."}, {"test", "."}} {
		c := exec.Command(goBin, args...)
		c.Dir = goDir
		c.Env = append(os.Environ(), "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
		b, err := c.CombinedOutput()
		require.NoError(t, err, "go %s: %s", strings.Join(args, " "), b)
	}

	simulate := func(command string) string {
		out := filepath.Join(t.TempDir(), "run")
		code, _, errs := aegis("simulate", "--trace", "philly", "--seed", "1", "--policy", "external", "--set", "command="+command, "--out", out)
		require.Equal(t, 0, code, errs)
		b, err := os.ReadFile(filepath.Join(out, "events.jsonl"))
		require.NoError(t, err)
		return string(b)
	}
	pyRun := simulate(py + " " + filepath.Join(pyDir, "mine.py"))
	require.Contains(t, pyRun, `"event":"finished"`)
	require.Equal(t, pyRun, simulate(filepath.Join(goDir, "minego")), "the Python and Go starters are one rule")
	for _, cmd := range []string{py + " " + filepath.Join(pyDir, "mine.py"), filepath.Join(goDir, "minego")} {
		code, out, errs := aegis("policies", "external", "--set", "command="+cmd)
		require.Equal(t, 0, code, errs)
		require.Regexp(t, `(?m)^  mem_share +1 +number in \[0\.1, 1\] +share of a GPU's memory`, out)
	}

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"mine", "--out", pyDir}, "already there: nothing written"},
		{[]string{"Mine", "--out", filepath.Join(dir, "x")}, `policy name "Mine": want a lower-case identifier`},
		{[]string{"aegis_policy", "--out", filepath.Join(dir, "x")}, "not aegis_policy"},
		{[]string{"mine", "--lang", "rust", "--out", filepath.Join(dir, "x")}, `language "rust": want python or go`},
		{[]string{"mine", "--lang", "go", "--out", filepath.Join(dir, "x"), "--aegis", dir}, "not an aegis checkout"},
	} {
		code, _, errs := aegis(append([]string{"policies", "new"}, tc.args...)...)
		require.NotEqual(t, 0, code)
		require.Contains(t, errs, tc.err)
	}
	_, err = os.Stat(filepath.Join(dir, "x"))
	require.ErrorIs(t, err, os.ErrNotExist, "a refused starter writes nothing")
}
