package rundir

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// ReadSimulate and ReadExec read what the writers wrote; a directory
// without the file says so (fs.ErrNotExist), a damaged file names itself.
func TestReadMeta(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadSimulate(dir)
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = ReadExec(dir)
	require.ErrorIs(t, err, fs.ErrNotExist)

	require.NoError(t, os.WriteFile(filepath.Join(dir, SimulateFile),
		[]byte(`{"tool": {"module": "m", "version": "v1"}, "trace": {"name": "philly", "jobs": 3}, "server": "a100-40gb:3", "policy": "aegis", "seed": 2}`), 0o644))
	m, err := ReadSimulate(dir)
	require.NoError(t, err)
	require.Equal(t, SimulateMeta{Tool: Tool{Module: "m", Version: "v1"}, Trace: TraceInfo{Name: "philly", Jobs: 3},
		Server: "a100-40gb:3", Policy: "aegis", Seed: 2}, *m)
	require.Equal(t, "m v1, commit `unknown`, build sha256 `unknown`", m.Tool.Line())

	require.NoError(t, os.WriteFile(filepath.Join(dir, ExecFile), []byte(`{"gpus": 3}`), 0o644))
	_, err = ReadExec(dir)
	require.ErrorContains(t, err, filepath.Join(dir, ExecFile)+": json")
}
