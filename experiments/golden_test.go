package experiments

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/traces"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenPath holds one line per (trace, config, seed, file): the SHA-256 of
// that output file.
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

func readGolden(t *testing.T) map[string]string {
	f, err := os.Open(goldenPath)
	require.NoError(t, err, "run go test ./experiments -run TestGoldenHashes -update")
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "  ")
		require.True(t, ok, "%s: bad line %q", goldenPath, line)
		m[k] = v
	}
	require.NoError(t, sc.Err())
	return m
}

// TestGoldenHashes pins every output file of the built-in traces under
// every policy configuration of goldenConfigs, so that speed work keeps
// results byte-identical. A legitimate change of outputs is recorded with
//
//	go test ./experiments -run TestGoldenHashes -update
//
// and explained in the commit message.
func TestGoldenHashes(t *testing.T) {
	var want map[string]string
	if !*update {
		want = readGolden(t)
	}
	var mu sync.Mutex
	got := map[string]string{}
	t.Run("cells", func(t *testing.T) {
		for _, trace := range []string{"demo", "philly", "saturn", "venus"} {
			for _, c := range goldenConfigs() {
				for _, seed := range c.seeds {
					name := fmt.Sprintf("%s/%s/%s/%d", trace, c.policy, c.sets, seed)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						params, err := policies.ParseSets(splitSets(c.sets))
						require.NoError(t, err)
						files := runFiles(t, trace, c.policy, params, seed)
						for file, b := range files {
							key := fmt.Sprintf("%s %s %s %d %s", trace, c.policy, orDefault(c.sets), seed, file)
							sum := fmt.Sprintf("%x", sha256.Sum256(b))
							mu.Lock()
							got[key] = sum
							mu.Unlock()
							if want != nil {
								w, ok := want[key]
								require.True(t, ok, "%s: no golden hash for %s (run with -update)", goldenPath, key)
								require.Equal(t, w, sum, "%s changed", key)
							}
						}
					})
				}
			}
		}
	})
	if *update {
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("# SHA-256 of every output file: trace policy sets seed file  hash\n")
		b.WriteString("# regenerate: go test ./experiments -run TestGoldenHashes -update\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "%s  %s\n", k, got[k])
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(goldenPath), 0o755))
		require.NoError(t, os.WriteFile(goldenPath, []byte(b.String()), 0o644))
		return
	}
	if !t.Failed() {
		require.Len(t, got, len(want), "%s has hashes of cells no longer run", goldenPath)
	}
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
