package experiments

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// muSpec is smallSpec without its sweep: Exclusive and AEGIS on two small
// generated traces, two seeds (18 lines).
var muSpec = strings.Replace(strings.Replace(smallSpec, "    sweep: false\n", "", 1),
	"sweep:\n  - param: hold\n    values: [10s, 30s]\n", "", 1)

// TestModelUncertainty: model_uncertainty runs every cell also under each
// refit (directories .mRR, keys of their own) and leaves the calibrated
// model's cells and combined CSVs as they are without it; table.csv gains
// KEY_model columns equal to the half-range, over the calibrated model and
// the refits, of the seed-mean of the GeoMean-normalized metric, computed
// here from the cells' summary.csv; shards merge to the whole run.
func TestModelUncertainty(t *testing.T) {
	const refits = 3
	plain := loadSmall(t, muSpec)
	s := loadSmall(t, muSpec+"model_uncertainty: {refits: 3}\n")
	base, all := plain.Cells(), s.Cells()
	require.Len(t, all, (1+refits)*len(base))
	a, b := t.TempDir(), t.TempDir()
	_, err := RunPlan(context.Background(), plain, RunOptions{Out: a, Build: "test"})
	require.NoError(t, err)
	_, err = RunPlan(context.Background(), s, RunOptions{Out: b, Build: "test"})
	require.NoError(t, err)
	ma, err := ReadMeta(a)
	require.NoError(t, err)
	mb, err := ReadMeta(b)
	require.NoError(t, err)
	require.Nil(t, ma.Refits)
	require.Len(t, mb.Refits.Models, refits)
	keys := map[string]bool{}
	for i, c := range mb.Cells {
		if i < len(base) {
			require.Equal(t, ma.Cells[i], c, "the calibrated model's cells are the spec's without model_uncertainty")
		} else {
			r := i / len(base)
			require.Equal(t, r, c.Refit)
			require.Equal(t, ma.Cells[i%len(base)].ID+".m0"+strconv.Itoa(r), c.ID)
		}
		require.False(t, keys[c.Key], "cell %s: every refit's cell has its own key", c.ID)
		keys[c.Key] = true
	}
	fa, fb := files(t, a), files(t, b)
	for _, f := range []string{"cells.csv", "jobs.csv", "normalized.csv"} {
		require.Equal(t, fa[f], fb[f], f)
	}
	require.Contains(t, fb["table.md"], "bootstrap refits of its speed model, steady saturation u1 and depth term δ", "the note says u1 and δ are refitted too")
	require.NotContains(t, fa, "refits.csv")
	require.NotContains(t, fa["table.csv"], "_model")

	// An independent computation of the spread from the cells' summaries.
	tab, err := runfiles.ReadTable(filepath.Join(b, "table.csv"))
	require.NoError(t, err)
	require.Equal(t, 1, tab.Len(), "one row: AEGIS")
	spread := 0.0
	for k, metric := range []string{"makespan", "jct_mean", "jct_p95", "queue_mean", "queue_p95", "exec_mean", "exec_p95"} {
		var means []float64
		for r := range 1 + refits {
			var perSeed []float64
			for _, seed := range s.Seeds {
				logSum := 0.0
				for _, tr := range []string{"philly-8-s1", "venus-8-s2"} {
					id := func(cfg string) string {
						id := tr + "." + cfg + ".s" + strconv.FormatUint(seed, 10)
						if r > 0 {
							id += ".m0" + strconv.Itoa(r)
						}
						return id
					}
					col := NormalizedColumns[k]
					logSum += math.Log(summaryValue(t, b, id("AEGIS"), col) / summaryValue(t, b, id("Exclusive"), col))
				}
				perSeed = append(perSeed, math.Exp(logSum/2))
			}
			means = append(means, (perSeed[0]+perSeed[1])/2)
		}
		want := (slices.Max(means) - slices.Min(means)) / 2
		got, err := tab.Float(0, metric+"_model")
		require.NoError(t, err, metric)
		require.InDelta(t, want, got, 5e-5, metric)
		mean, err := tab.Float(0, metric)
		require.NoError(t, err)
		require.InDelta(t, means[0], mean, 5e-5, "%s: the table's mean is the calibrated model's", metric)
		spread += want
	}
	require.Positive(t, spread, "the refits change the results")
	require.Contains(t, fb["table.md"], " ± m ")
	byModel, err := runfiles.ReadTable(filepath.Join(b, "refits.csv"), "model")
	require.NoError(t, err)
	require.Equal(t, 1+refits, byModel.Len())
	require.Equal(t, "0", byModel.String(0, "model"))
	require.Equal(t, tab.String(0, "makespan"), byModel.String(0, "makespan"))

	// Shards of the run merge to the whole run.
	root := t.TempDir()
	var parts []string
	for i := range 2 {
		p := filepath.Join(root, "part"+strconv.Itoa(i))
		_, err := RunPlan(context.Background(), s, RunOptions{Out: p, Build: "test", Shard: i, Shards: 2})
		require.NoError(t, err)
		parts = append(parts, p)
	}
	merged := filepath.Join(root, "all")
	_, err = Merge(parts, merged)
	require.NoError(t, err)
	require.Equal(t, fb, files(t, merged))
}

// summaryValue reads one metric of a cell's summary.csv.
func summaryValue(t *testing.T, dir, id, col string) float64 {
	t.Helper()
	sum, err := runfiles.ReadTable(filepath.Join(dir, "cells", id, "summary.csv"))
	require.NoError(t, err)
	v, err := sum.Float(0, col)
	require.NoError(t, err, "%s: %s", id, col)
	return v
}

func TestBadModelUncertainty(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"no refits", muSpec + "model_uncertainty: {}\n", "m.yaml:19: model_uncertainty.refits: 0: want 1 to 20 (the refits of models/data/refits_a100.yaml)"},
		{"too many", muSpec + "model_uncertainty: {refits: 21}\n", "m.yaml:19: model_uncertainty.refits: 21: want 1 to 20"},
		{"unknown key", muSpec + "model_uncertainty: {refit: 3}\n", `m.yaml:19: unknown key "refit" in model_uncertainty; valid keys: refits`},
		{"wrong kind", muSpec + "model_uncertainty: 3\n", "m.yaml:19: model_uncertainty:"},
		{"own model", strings.Replace(muSpec, "    policy: aegis\n", "    policy: aegis\n    model: m.yaml\n", 1) + "model_uncertainty: {refits: 2}\n",
			`m.yaml:17: configs[1].model: "m.yaml": model_uncertainty refits the GPU type's built-in model`},
		{"swept type with its own model", strings.Replace(muSpec, "normalize:", "sweep: [{param: server, values: [\"a100-40gb:2\", \"g.yaml:2\"]}]\nnormalize:", 1) + "model_uncertainty: {refits: 2}\n",
			`m.yaml:17: sweep[0].values[1]: server "g.yaml:2": model_uncertainty runs the refits of a100-40gb's model (models/data/refits_a100.yaml); this GPU type runs another model`},
		{"cluster", strings.Replace(muSpec, "server: a100-40gb:2", "cluster: a100-40gb:2x2", 1) + "model_uncertainty: {refits: 2}\n",
			"m.yaml:19: model_uncertainty: runs on a server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// A valid model file, so that only model_uncertainty is at fault.
			require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(mustReadString(t, filepath.Join("..", "models", "data", "interference_a100.yaml"))), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "g.yaml"), []byte("name: mygpu\nmemory_mib: 40960\npressure: true\ninterference: m.yaml\n"), 0o644))
			_, err := ParseSpec([]byte(tc.spec), filepath.Join(dir, "m.yaml"))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRefitsCarrySteadySaturation: a refit's cells combine telemetry at the
// refit's steady saturation u1 and depth term δ
// (models.RefitsFile.SteadySaturation, DepthOverlap), the calibrated
// model's cells at the GPU type's; run.json lists the u1s and δs, and two
// refits that differ only in u1, or only in δ, get different keys.
func TestRefitsCarrySteadySaturation(t *testing.T) {
	const refits = 15 // through refit 14, the first whose δ differs (0.1)
	s := loadSmall(t, muSpec+"model_uncertainty: {refits: 15}\n")
	set, _, err := models.RefitsFor(s.server.Type)
	require.NoError(t, err)
	require.Len(t, set.SteadySaturation, len(set.Refits))
	require.Equal(t, models.SteadySaturationA100, set.SteadySaturation[0], "refit 0: u1 as fitted")
	require.Greater(t, slices.Max(set.SteadySaturation[1:refits+1]), slices.Min(set.SteadySaturation[1:refits+1]),
		"the refits vary u1 (else this test checks nothing)")
	require.Len(t, set.DepthOverlap, len(set.Refits))
	require.Equal(t, models.DepthOverlapA100, set.DepthOverlap[0], "refit 0: δ as fitted")
	require.Greater(t, slices.Max(set.DepthOverlap[1:refits+1]), slices.Min(set.DepthOverlap[1:refits+1]),
		"the refits vary δ (else this test checks nothing)")
	for _, c := range s.Cells() {
		r, err := s.p.(*tracePlan).runOf(c)
		require.NoError(t, err)
		if c.Refit == 0 {
			require.Nil(t, r.Combine, c.ID)
			continue
		}
		require.NotNil(t, r.Combine, c.ID)
		require.Equal(t, set.SteadySaturation[c.Refit], r.Combine.SteadySaturation, c.ID)
		require.Equal(t, set.DepthOverlap[c.Refit], r.Combine.DepthOverlap, c.ID)
		want := models.DefaultTelemetry()
		want.SteadySaturation = set.SteadySaturation[c.Refit]
		want.DepthOverlap = set.DepthOverlap[c.Refit]
		require.Equal(t, want, *r.Combine, "%s: only u1 and δ differ from the GPU type's combination", c.ID)
	}
	keys, err := s.keyInputs("test")
	require.NoError(t, err)
	m, err := s.meta(RunOptions{Build: "test"}, keys)
	require.NoError(t, err)
	require.Equal(t, set.SteadySaturation[1:refits+1], m.Refits.SteadySaturation)
	require.Equal(t, set.DepthOverlap[1:refits+1], m.Refits.DepthOverlap)

	// Same speed refit, another u1: another key.
	c := s.Cells()[len(s.Cells())-1]
	k1, err := s.cellKey(keys, c)
	require.NoError(t, err)
	s.p.(*tracePlan).refitSteady = slices.Clone(s.p.(*tracePlan).refitSteady)
	s.p.(*tracePlan).refitSteady[c.Refit-1] += 0.5
	k2, err := s.cellKey(keys, c)
	require.NoError(t, err)
	require.NotEqual(t, k1, k2)
	// Same speed refit and u1, another δ: another key.
	s.p.(*tracePlan).refitDepth = slices.Clone(s.p.(*tracePlan).refitDepth)
	s.p.(*tracePlan).refitDepth[c.Refit-1] += 0.5
	k3, err := s.cellKey(keys, c)
	require.NoError(t, err)
	require.NotEqual(t, k2, k3)
}
