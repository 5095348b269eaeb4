package experiments

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/traces"
)

// goldenPath holds one line per (trace, config, seed, file): the SHA-256 of
// that output file (golden.Hashes).
const goldenPath = "testdata/golden_hashes.txt"

// goldenConfig is one policy configuration pinned by the golden hashes.
type goldenConfig struct {
	policy string
	sets   string // key=value,... in the order given; "" for the defaults
	seeds  []uint64
}

// goldenConfigs are the four policies with their variants and the AEGIS
// paper's Table 3-5 variants (memory inputs, placements, no filter).
func goldenConfigs() []goldenConfig {
	seeds := []uint64{1, 2, 42}
	return []goldenConfig{
		{"exclusive", "", seeds},
		{"horus", "variant=paper", seeds},
		{"horus", "variant=original", seeds},
		{"lucid", "variant=paper", seeds},
		{"lucid", "variant=original", seeds},
		{"aegis", "", seeds},
		{"aegis", "memory=peakmem", seeds},
		{"aegis", "memory=analytical", seeds},
		{"aegis", "memory=gpumemnet", seeds},
		{"aegis", "memory=faketensor", seeds},
		{"aegis", "placement=rr", seeds},
		{"aegis", "placement=mu", seeds},
		{"aegis", "filter=nf,placement=mfm", seeds},
		{"aegis", "filter=nf,placement=mu", seeds},
	}
}

// runFiles runs one cell and returns its four output files by name, the
// bytes `aegis simulate --out` writes.
func runFiles(t testing.TB, trace, policy string, params map[string]string, seed uint64) map[string][]byte {
	tr, err := traces.Load(trace)
	require.NoError(t, err)
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(t, err)
	var ev, jb, sm, df bytes.Buffer
	o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: policy, Params: params, Seed: seed}, &ev)
	require.NoError(t, err)
	require.NoError(t, results.WriteJobsCSV(&jb, o.Jobs))
	require.NoError(t, results.WriteSummaryCSV(&sm, o.Summary))
	require.NoError(t, results.WriteDeferralsCSV(&df, o.Summary))
	return map[string][]byte{"jobs.csv": jb.Bytes(), "summary.csv": sm.Bytes(),
		"deferrals.csv": df.Bytes(), "events.jsonl": ev.Bytes()}
}

// TestGoldenHashes pins every output file of the built-in traces under
// every policy configuration of goldenConfigs, so that speed work keeps
// results byte-identical; a changed file is reported with its first
// differing lines as they are now (internal/golden). A legitimate change
// of outputs is recorded with
//
//	go test ./experiments -run TestGoldenHashes -update
//
// and explained in the commit message.
func TestGoldenHashes(t *testing.T) {
	h := golden.OpenHashes(t, goldenPath, "SHA-256 of every output file, its line count and hashes of its 16-line blocks:\n"+
		"trace policy sets seed file  sha256  lines  blocks\n"+
		"regenerate: go test ./experiments -run TestGoldenHashes -update")
	t.Run("cells", func(t *testing.T) {
		for _, trace := range []string{"demo", "philly", "saturn", "venus"} {
			for _, c := range goldenConfigs() {
				for _, seed := range c.seeds {
					name := fmt.Sprintf("%s/%s/%s/%d", trace, c.policy, c.sets, seed)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						params, err := policies.ParseSets(splitSets(c.sets))
						require.NoError(t, err)
						for file, b := range runFiles(t, trace, c.policy, params, seed) {
							h.Check(t, fmt.Sprintf("%s %s %s %d %s", trace, c.policy, orDefault(c.sets), seed, file), b)
						}
					})
				}
			}
		}
	})
	h.Close(t)
}

func splitSets(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}
