package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxLines is the house limit on a function's length (developer guide).
const maxLines = 100

// allowed are the functions still over the limit while their owners split
// them (issue 20 item 6), by file (from the module root) and name. An entry
// whose function is no longer long fails the test, so the list only shrinks.
var allowed = map[string]bool{}

// TestNoLongFuncs holds the whole module to the limit.
func TestNoLongFuncs(t *testing.T) {
	root := filepath.Join("..", "..")
	long, err := LongFuncs(root, maxLines)
	require.NoError(t, err)
	var msg []string
	seen := map[string]bool{}
	for _, f := range long {
		rel, err := filepath.Rel(root, f.File)
		require.NoError(t, err)
		k := filepath.ToSlash(rel) + " " + f.Name
		if seen[k] = true; !allowed[k] {
			msg = append(msg, f.String())
		}
	}
	require.Empty(t, msg, "functions over %d lines (split them by their sections):\n%s", maxLines, strings.Join(msg, "\n"))
	for k := range allowed {
		require.True(t, seen[k], "%s is no longer over %d lines: remove it from allowed", k, maxLines)
	}
}

// body returns n statement lines.
func body(n int) string { return strings.Repeat("\t_ = 0\n", n) }

// TestLongFuncs checks the counting: func line to closing brace, methods
// named with their receiver, cobra help literals counted as no lines,
// other long strings counted, test files skipped.
func TestLongFuncs(t *testing.T) {
	help := "`" + strings.Repeat("help\n", 50) + "`"
	for _, tc := range []struct {
		name, src string
		want      []string // Name:Lines of the long functions
	}{
		{"at the limit", "func f() {\n" + body(98) + "}\n", nil},
		{"over the limit", "func f() {\n" + body(99) + "}\n", []string{"f:101"}},
		{"method", "type T struct{}\nfunc (t *T) m() {\n" + body(99) + "}\n", []string{"T.m:101"}},
		{"help text free", "type C struct{ Long, Example string }\nfunc f() *C {\n" + body(50) +
			"\treturn &C{\n\t\tLong: " + help + ",\n\t\tExample: \"a\" +\n\t\t\t\"b\",\n\t}\n}\n", nil},
		{"other strings count", "type C struct{ Short string }\nfunc f() *C {\n" + body(50) +
			"\treturn &C{\n\t\tShort: " + help + ",\n\t}\n}\n", []string{"f:105"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "package p\n\n" + tc.src
			require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(src), 0o644))
			long, err := LongFuncs(dir, maxLines)
			require.NoError(t, err)
			var got []string
			for _, f := range long {
				got = append(got, fmt.Sprintf("%s:%d", f.Name, f.Lines))
			}
			require.Equal(t, tc.want, got)
		})
	}
}
