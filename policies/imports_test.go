package policies_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/aegis-sched/aegis/"

// imports returns the imports of the non-test Go files under dir.
func imports(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			out[path] = p
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// The architecture's import rules: policies are pure decision code that
// never see the simulator or the real executor, and the backends never
// depend on a concrete policy.
func TestImportRules(t *testing.T) {
	for path, file := range imports(t, ".") {
		for _, banned := range []string{module + "sim", module + "executor", "github.com/NVIDIA/go-nvml", module + "models", module + "experiments"} {
			require.False(t, path == banned || strings.HasPrefix(path, banned+"/"), "%s imports %s", file, path)
		}
		if !strings.HasPrefix(path, module) && strings.Contains(path, ".") {
			t.Errorf("%s imports %s: policies use the standard library and their own packages only", file, path)
		}
	}
	for _, backend := range []string{"../sim", "../executor"} {
		if _, err := os.Stat(backend); err != nil {
			continue
		}
		for path, file := range imports(t, backend) {
			if strings.HasPrefix(path, module+"policies/") && path != module+"policies/loop" {
				t.Errorf("%s imports the concrete policy %s", file, path)
			}
		}
	}
}
