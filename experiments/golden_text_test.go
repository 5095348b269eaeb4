package experiments

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/policies"
)

// goldenTextEvents is how many lines of events.jsonl the text goldens keep.
const goldenTextEvents = 40

// TestGoldenText keeps, beside the hashes of TestGoldenHashes, readable
// goldens of a few cells: summary.csv whole and the first
// goldenTextEvents lines of events.jsonl, under testdata/golden/, so that a
// change of outputs shows as a diff. They are rewritten with
//
//	go test ./experiments -run 'TestGolden' -update
func TestGoldenText(t *testing.T) {
	for _, c := range []struct {
		trace, policy, sets string
		seed                uint64
	}{
		{"demo", "exclusive", "", 1},
		{"philly", "aegis", "", 1},
		{"saturn", "lucid", "variant=paper", 2},
		{"venus", "horus", "variant=original", 42},
	} {
		name := fmt.Sprintf("%s.%s.%s.%d", c.trace, c.policy, orDefault(c.sets), c.seed)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			params, err := policies.ParseSets(splitSets(c.sets))
			require.NoError(t, err)
			files := runFiles(t, c.trace, c.policy, params, c.seed)
			for file, b := range map[string][]byte{
				"summary.csv":  files["summary.csv"],
				"events.jsonl": headLines(files["events.jsonl"], goldenTextEvents),
			} {
				golden.File(t, filepath.Join("testdata", "golden", name+"."+file), b)
			}
		})
	}
}

// headLines returns the first n lines of b.
func headLines(b []byte, n int) []byte {
	i := 0
	for range n {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b
		}
		i += j + 1
	}
	return b[:i]
}
