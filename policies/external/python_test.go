package external_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies/external"
)

// python3 returns the Python interpreter's own path (not a launcher such
// as a pyenv shim, which takes seconds to start on a loaded machine),
// skipping the test (with the reason) where there is none; CI has one.
func python3(t testing.TB) string {
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found on PATH: the Python policy module (policies/external/python) is not tested here")
	}
	out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// The Python example policy gives the same run, byte for byte, as the Go
// one on the three paper traces (and with a parameter set).
func TestPythonBestFitIsTheGoOne(t *testing.T) {
	cmd := strconv.Quote(python3(t)) + " python/bestfit.py"
	for _, tc := range []struct {
		trace  string
		params map[string]string
	}{{"philly", nil}, {"saturn", nil}, {"venus", nil}, {"philly", map[string]string{"util_cap": "150", "guard_mib": "2048"}}} {
		t.Run(tc.trace, func(t *testing.T) {
			want, wo, err := simulate(t, tc.trace, "bestfit", tc.params)
			require.NoError(t, err)
			params := map[string]string{"command": cmd}
			for k, v := range tc.params {
				params[k] = v
			}
			got, o, err := simulate(t, tc.trace, "external", params)
			require.NoError(t, err)
			require.Equal(t, wo.Summary, o.Summary)
			require.Equal(t, wo.Jobs, o.Jobs)
			require.Equal(t, want, got, "events.jsonl")
		})
	}
}

// The Python module's own tests (python3 -m unittest).
func TestPythonModule(t *testing.T) {
	py := python3(t)
	c := exec.Command(py, "-m", "unittest", "discover", "-s", "python", "-p", "test_*.py")
	c.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// An exception in a Python policy stops the run with its message, the
// decision's time and the traceback.
func TestPythonException(t *testing.T) {
	py := python3(t)
	dir := t.TempDir()
	abs, err := filepath.Abs("python")
	require.NoError(t, err)
	script := filepath.Join(dir, "broken.py")
	require.NoError(t, os.WriteFile(script, []byte(`import sys
sys.path.insert(0, `+"\""+abs+"\""+`)
from aegis_policy import Policy, run

class Broken(Policy):
    def schedule(self, v):
        if v.now > 100:
            return 1 / 0
        return []

run(Broken())
`), 0o644))
	_, o, err := simulate(t, "demo", "external", map[string]string{"command": strconv.Quote(py) + " " + script})
	require.Nil(t, o)
	require.ErrorIs(t, err, external.ErrReported)
	require.ErrorContains(t, err, "ZeroDivisionError: division by zero")
	require.ErrorContains(t, err, "decision at t=")
}
