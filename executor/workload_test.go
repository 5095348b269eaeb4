package executor

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func TestParseWorkloads(t *testing.T) {
	good := `workloads:
  - id: a
    command: [python3, train.py]
    env: {X: "1"}
    dir: /tmp
    oom_exit_code: 3
  - id: b
    command: [sh, -c, "exit 0"]
`
	ws, err := ParseWorkloads([]byte(good), "w.yaml")
	require.NoError(t, err)
	require.Equal(t, []string{"python3", "train.py"}, ws["a"].Command)
	require.Equal(t, 3, *ws["a"].OOMExitCode)
	require.Nil(t, ws["b"].OOMExitCode)
	for _, tc := range []struct{ name, yaml, err string }{
		{"empty", "", "w.yaml"},
		{"no list", "workloads: []\n", "no workloads"},
		{"unknown key", "workloads:\n  - id: a\n    command: [x]\n    cmd: [y]\n", "w.yaml:4"},
		{"no id", "workloads:\n  - command: [x]\n", "w.yaml:2: workload 1: field id"},
		{"no command", "workloads:\n  - id: a\n", "w.yaml:2: workload a: field command"},
		{"empty argv0", "workloads:\n  - id: a\n    command: ['']\n", "field command"},
		{"twice", "workloads:\n  - id: a\n    command: [x]\n  - id: a\n    command: [y]\n", "w.yaml:4: workload a: field id: given twice"},
		{"bad exit code", "workloads:\n  - id: a\n    command: [x]\n    oom_exit_code: 300\n", "oom_exit_code: 300"},
		{"reserved env", "workloads:\n  - id: a\n    command: [x]\n    env: {CUDA_VISIBLE_DEVICES: '0'}\n", "set by the executor"},
		{"bad env name", "workloads:\n  - id: a\n    command: [x]\n    env: {'A=B': '0'}\n", "bad variable name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWorkloads([]byte(tc.yaml), "w.yaml")
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func FuzzParseWorkloads(f *testing.F) {
	f.Add([]byte("workloads:\n  - id: a\n    command: [x]\n"))
	f.Add([]byte("workloads:\n  - id: a\n    command: [x]\n    oom_exit_code: 3\n    env: {A: b}\n"))
	f.Add([]byte("workloads: 7\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ws, err := ParseWorkloads(b, "f.yaml")
		if err == nil {
			for id, w := range ws {
				if id == "" || len(w.Command) == 0 {
					t.Fatalf("accepted workload %q with command %v", id, w.Command)
				}
			}
		}
	})
}
