package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

func sharedDir(t *testing.T) string {
	shared, ok := models.SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the legacy traces are not checked against their sources")
	}
	return shared
}

// TestRegenerate checks the embedded legacy traces are this generator's
// output on the shared measurements.
func TestRegenerate(t *testing.T) {
	shared := sharedDir(t)
	dir := t.TempDir()
	require.NoError(t, run(shared, dir))
	for _, n := range []string{"philly", "saturn", "venus"} {
		got, err := os.ReadFile(filepath.Join(dir, "legacy_"+n+"_60jobs.csv"))
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join("..", "..", "data", "legacy_"+n+"_60jobs.csv"))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "regenerate with go run ./traces/internal/genlegacy -shared ../shared -out traces/data")
	}
}

// manifest is what the test reads of a mapper manifest.
type manifest struct {
	Mapping struct {
		Usage map[string]int `json:"workload_usage"`
	} `json:"mapping"`
	Selection struct {
		Span float64 `json:"selected_arrival_span_s"`
		Rep  struct {
			Profile struct {
				P50  float64 `json:"interarrival_p50_s"`
				P95  float64 `json:"interarrival_p95_s"`
				Zero float64 `json:"zero_interarrival_fraction"`
			} `json:"selected_profile"`
		} `json:"representativeness"`
	} `json:"selection"`
}

// TestManifestStatistics checks each legacy trace against its mapper
// manifest: the same workload counts, arrival span and inter-arrival
// p50, p95 and zero fraction (the mapper's definition: 60 gaps, the first
// job's 0 included). Venus is compared with its shortened gap restored to
// what the manifest's span leaves for it (about 5.9 h).
func TestManifestStatistics(t *testing.T) {
	shared := sharedDir(t)
	for _, n := range []string{"philly", "saturn", "venus"} {
		t.Run(n, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(shared, "traces", "aegis-legacy", n+"_legacy_manifest.json"))
			require.NoError(t, err)
			var m manifest
			require.NoError(t, json.Unmarshal(b, &m))
			tr, err := traces.Load("legacy-" + n)
			require.NoError(t, err)
			usage := map[string]int{}
			gaps := []float64{0}
			for i, j := range tr.Jobs {
				usage[j.Workload]++
				if i > 0 {
					gaps = append(gaps, (j.Submit - tr.Jobs[i-1].Submit).Seconds())
				}
			}
			require.Equal(t, m.Mapping.Usage, usage)
			span := tr.Jobs[len(tr.Jobs)-1].Submit.Seconds()
			if n == "venus" {
				for i, g := range gaps {
					if g == 600 {
						gaps[i] = m.Selection.Span - (span - 600)
						require.InDelta(t, 5.9*3600, gaps[i], 0.05*3600)
					}
				}
				span = m.Selection.Span
			}
			require.Equal(t, m.Selection.Span, span)
			p := m.Selection.Rep.Profile
			require.InDelta(t, p.P50, policies.Quantile(gaps, 0.5), 1e-9)
			require.InDelta(t, p.P95, policies.Quantile(gaps, 0.95), 1e-9)
			zero := 0
			for _, g := range gaps {
				if g == 0 {
					zero++
				}
			}
			require.InDelta(t, p.Zero, float64(zero)/float64(len(gaps)), 1e-9)
		})
	}
}
