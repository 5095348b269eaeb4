package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestContentIDOfThisTest(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	id, ok := ContentID(self)
	require.True(t, ok, "the test binary, linked by the go command, has a Go build ID")
	require.Len(t, id, 20)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to read the build ID with: %v", err)
	}
	out, err := exec.Command(goTool, "tool", "buildid", self).Output()
	require.NoError(t, err)
	full := strings.TrimSpace(string(out))
	require.Equal(t, full[strings.LastIndexByte(full, '/')+1:], id, "go tool buildid's last part")
}

func TestContentIDOfFiles(t *testing.T) {
	const id = "UFN4oQa6LM_wD3H4xJ3t"
	text := func(s string) []byte {
		return append(make([]byte, 4096), "\xff Go build ID: \""+s+"\"\n \xff"...)
	}
	for _, c := range []struct {
		name string
		file []byte
		want string // "" for none
	}{
		{"the linker's text", text("a1/b2/c3/" + id), id},
		{"two parts", text("actionIDactionID12/" + id), id},
		{"one part: not the go command's form", text(id), ""},
		{"a short last part", text("a/b/c/short"), ""},
		{"not base64", text("a/b/c/UFN4oQa6LM wD3H4xJ3t"), ""},
		{"no end", []byte("\xff Go build ID: \"a/b/c/" + id), ""},
		{"none", []byte("#!/bin/sh\necho hi\n"), ""},
		{"empty", nil, ""},
		{"past the first 32 kB", append(make([]byte, 40<<10), text("a/b/c/"+id)...), ""},
		{"an ELF header cut short", []byte("\x7fELF\x02\x01\x01"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bin")
			require.NoError(t, os.WriteFile(p, c.file, 0o644))
			got, ok := ContentID(p)
			require.Equal(t, c.want != "", ok)
			require.Equal(t, c.want, got)
		})
	}
	_, ok := ContentID(filepath.Join(t.TempDir(), "missing"))
	require.False(t, ok)
}

// FuzzContentID feeds ContentID arbitrary files: an ID or none, never a
// panic, and an ID only of the go command's form.
func FuzzContentID(f *testing.F) {
	f.Add([]byte("\xff Go build ID: \"a/b/c/UFN4oQa6LM_wD3H4xJ3t\"\n \xff"))
	f.Add([]byte("\x7fELF\x02\x01\x01\x00"))
	f.Add([]byte{})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "bin")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		if id, ok := ContentID(p); ok {
			_, ok2 := contentPart("x/" + id)
			require.True(t, ok2)
		}
	})
}
