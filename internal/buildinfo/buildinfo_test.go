package buildinfo

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	stamped := func(kv ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}}
			for i := 0; i+1 < len(kv); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tc := range []struct {
		name, stamp string
		read        func() (*debug.BuildInfo, bool)
		commit      string
		version     string
	}{
		{"link-time stamp wins", "744a880-dirty", stamped("vcs.revision", "abc", "vcs.modified", "false"), "744a880-dirty", "(devel)"},
		{"toolchain's VCS stamp", "", stamped("vcs.revision", "abc", "vcs.modified", "false"), "abc", "(devel)"},
		{"modified checkout", "", stamped("vcs.revision", "abc", "vcs.modified", "true"), "abc-dirty", "(devel)"},
		{"-buildvcs=false, no stamp", "", stamped(), "", "(devel)"},
		{"no build info", "744a880", none, "744a880", "(unknown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := read(tc.stamp, tc.read)
			require.Equal(t, tc.commit, in.Commit)
			require.Equal(t, tc.version, in.Version)
			require.Equal(t, Module, in.Module)
			require.NotEmpty(t, in.GoVersion)
		})
	}
}

// The Makefile stamps this package's commit variable: a renamed package or
// variable would leave every build without its commit.
func TestMakefileStampsCommit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	require.Contains(t, string(b), "-X "+Module+"/internal/buildinfo.commit=")
	require.Contains(t, string(b), "git describe --always --dirty")
	require.Contains(t, string(b), "-X "+Module+"/internal/buildinfo.source=")
}
