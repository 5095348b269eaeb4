package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// text returns n numbered lines, line changed (1-based) reading "new".
func text(n, changed int) []byte {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i == changed {
			fmt.Fprintf(&b, "line %d new\n", i)
			continue
		}
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return []byte(b.String())
}

func TestDiff(t *testing.T) {
	require.Empty(t, Diff(text(10, 0), text(10, 0)))
	d := Diff(text(10, 0), text(10, 5))
	require.Contains(t, d, "first difference at line 5 (golden: 10 lines, now: 10)")
	require.Contains(t, d, ">    5  line 5\n")
	require.Contains(t, d, ">    5  line 5 new\n")
	require.Contains(t, d, "     2  line 2\n", "context before")
	require.NotContains(t, d, "line 1\n", "only a few lines of context")
	d = Diff(text(10, 0), text(12, 0))
	require.Contains(t, d, "first difference at line 11 (golden: 10 lines, now: 12)")
	require.Contains(t, d, ">   11  line 11\n")
	require.Contains(t, Diff([]byte("a\n"), []byte("a")), "a (no newline at end)")
}

// withUpdate runs f as under -update.
func withUpdate(t *testing.T, f func()) {
	old := *update
	*update = true
	defer func() { *update = old }()
	f()
}

// A hash golden written under -update reads back; a changed text is
// reported with its first differing block of lines as it is now, a
// missing key and a key no test produced are reported too.
func TestHashes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hashes.txt")
	withUpdate(t, func() {
		h := OpenHashes(t, path, "hashes of a test\nregenerate: -update")
		require.Empty(t, h.check("b 1", text(36, 0)))
		require.Empty(t, h.check("a 2", text(20, 0)))
		require.Empty(t, h.check("empty", nil))
		h.Close(t)
	})
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	require.Equal(t, []string{"# hashes of a test", "# regenerate: -update"}, lines[:2])
	require.True(t, strings.HasPrefix(lines[2], "a 2  "), "sorted: %q", lines[2])
	require.Regexp(t, `^empty  [0-9a-f]{64}  0  -$`, lines[4])

	h := OpenHashes(t, path, "")
	require.Empty(t, h.check("a 2", text(20, 0)))
	require.Empty(t, h.check("empty", nil))
	msg := h.check("b 1", text(36, 20))
	require.Contains(t, msg, "b 1 changed")
	require.Contains(t, msg, "golden: 36 lines, now: 36; the first difference is in lines 17-32, now:")
	require.Contains(t, msg, "   20  line 20 new\n")
	require.NotContains(t, msg, "line 16\n", "the first block is the same")
	require.Contains(t, h.check("c", nil), "no golden hash for c")
	require.Contains(t, h.check("a  b", nil), "no double spaces")
	require.Empty(t, h.stale())
	h = OpenHashes(t, path, "")
	h.check("a 2", nil)
	require.Equal(t, []string{"b 1", "empty"}, h.stale())
}

// File writes under -update and reports the first differing lines.
func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.txt")
	withUpdate(t, func() { File(t, path, text(5, 0)) })
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, text(5, 0), b)
	File(t, path, text(5, 0))
}
