package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// aegis exec runs an external policy (the Python example) on emulated
// GPUs. One that fails mid-run stops the launches and leaves a directory
// that a resume, once the program is mended, completes.
func TestExecExternalPolicy(t *testing.T) {
	py := python3(t, "aegis exec with the Python example policy")
	t.Setenv(selfEnv, "1")
	lib, err := filepath.Abs("../../policies/external/python")
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "run")
	killGroups(t, out)
	code := run([]string{"exec", "--emulate", "a100-40gb:2", "--trace", smallTrace(t), "--speedup", "400", "--out", out,
		"--policy", "external", "--set", "command=" + py + " " + filepath.Join(lib, "bestfit.py")}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "3 finished, 0 stopped, 3 total")

	// A policy that raises at its first decision with a job running (an
	// arrival or a finish: when the arrivals come is a matter of the wall
	// clock at this speed). It is asked at every decision (SKIP_EMPTY
	// off): with bestfit's skip_empty a run whose arrivals all came before
	// its first start asked it nothing more, and ended with rc 0.
	script := filepath.Join(t.TempDir(), "mine.py")
	write := func(body string) {
		require.NoError(t, os.WriteFile(script, []byte("import sys\nsys.path.insert(0, "+strconvQuote(lib)+")\n"+body), 0o644))
	}
	write(`from bestfit import BestFit
from aegis_policy import run
class Broken(BestFit):
    SKIP_EMPTY = False
    def schedule(self, v):
        if any(g.jobs for g in v.gpus):
            raise RuntimeError("broken on purpose")
        return super().schedule(v)
run(Broken())
`)
	out = filepath.Join(t.TempDir(), "run")
	killGroups(t, out)
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"exec", "--emulate", "a100-40gb:2", "--trace", smallTrace(t), "--speedup", "400", "--out", out,
		"--policy", "external", "--set", "command=" + py + " " + script}, &stdout, &stderr)
	require.Equal(t, 1, code, "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	require.Contains(t, stderr.String(), "RuntimeError: broken on purpose")
	require.Contains(t, stderr.String(), "continue with aegis exec --resume "+out)
	j, err := os.ReadFile(filepath.Join(out, "journal.jsonl"))
	require.NoError(t, err)
	require.NotContains(t, string(j), `"type":"interrupted"`, "the running attempt was left to end")
	require.Contains(t, string(j), `"type":"finished"`)

	write("from bestfit import BestFit\nfrom aegis_policy import run\nrun(BestFit())\n")
	stdout.Reset()
	require.Equal(t, 0, run([]string{"exec", "--resume", out}, &stdout, &stderr), stderr.String())
	require.Contains(t, stdout.String(), "3 finished, 0 stopped, 3 total")
}

func strconvQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// python3 is the Python interpreter's own path (not a launcher such as a
// pyenv shim: faster to start), skipping the test where there is none,
// saying what is then not tested.
func python3(t *testing.T, what string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 not found on PATH: %s is not tested here", what)
	}
	b, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
