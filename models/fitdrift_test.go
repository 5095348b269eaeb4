package models

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
)

// fitPredictionsFile holds the embedded model's predictions at its fit's
// design points; see fitPredictionsHead.
var fitPredictionsFile = filepath.Join("testdata", "embedded_fit_predictions.csv")

const fitPredictionsHead = `# The embedded interference model (models/data/interference_a100.yaml) at the
# design points of its fit: each of the 219 measured co-runs of
# shared/calibration/aegis/pairwise_a100_lucid_calibration.csv (the AEGIS
# artifact, see NOTICE), as the catalog workloads the model sees and their
# solo times, with the co-run times the model predicts for them. Derived:
# no measured co-run time is here. TestEmbeddedFitPredictions checks, without
# the shared data, that the catalog and the co-run simulation still give
# these predictions (else the embedded fit is stale), and with the data that
# these are its design points. Written by
#   go test ./models -run TestEmbeddedFitPredictions -update
# (needs the shared data).
line,workload_a,workload_b,solo_a_s,solo_b_s,model_pair_a_s,model_pair_b_s
`

// fitPrediction is one row of fitPredictionsFile.
type fitPrediction struct {
	Line         int
	A, B         string
	SoloA, SoloB float64
	PairA, PairB float64
}

// predictFit is the embedded model's prediction for co-runs like ps.
func predictFit(t *testing.T, ps []fitPrediction) []fitPrediction {
	t.Helper()
	m := DefaultInterference()
	cat := A100()
	out := make([]fitPrediction, len(ps))
	for i, p := range ps {
		for _, id := range []string{p.A, p.B} {
			_, ok := cat.Get(id)
			require.True(t, ok, "%s:%d: workload %s is no longer in the A100 catalog", fitPredictionsFile, p.Line, id)
		}
		got := simulateCoRun(m, []coRunJob{{Profile: profileOf(cat, p.A), SoloS: p.SoloA}, {Profile: profileOf(cat, p.B), SoloS: p.SoloB}})
		p.PairA, p.PairB = got[0], got[1]
		out[i] = p
	}
	return out
}

func readFitPredictions(t *testing.T) []fitPrediction {
	t.Helper()
	data, err := os.ReadFile(fitPredictionsFile)
	require.NoError(t, err)
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	recs, err := r.ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(recs), 1)
	var out []fitPrediction
	for _, rec := range recs[1:] {
		var v [5]float64
		for i, s := range append([]string{rec[0]}, rec[3:]...) {
			v[i], err = strconv.ParseFloat(s, 64)
			require.NoError(t, err, "%s: %q", fitPredictionsFile, rec)
		}
		out = append(out, fitPrediction{Line: int(v[0]), A: rec[1], B: rec[2], SoloA: v[1], SoloB: v[2], PairA: v[3], PairB: v[4]})
	}
	return out
}

// TestEmbeddedFitPredictions is the embedded model's drift test that runs
// without the shared data: at the fit's design points the model must
// predict what it predicted when it was fitted. A change to the A100
// catalog's profiles, to the pressure model or to the co-run simulation
// moves the predictions, and the embedded fit no longer is the fit.
func TestEmbeddedFitPredictions(t *testing.T) {
	if dir, ok := SharedDir(); ok {
		ps := sharedPairs(t)
		design := make([]fitPrediction, len(ps))
		for i, p := range ps {
			design[i] = fitPrediction{Line: p.Line, A: p.A.ID, B: p.B.ID, SoloA: p.A.SoloS, SoloB: p.B.SoloS}
		}
		if golden.Update() {
			var b bytes.Buffer
			b.WriteString(fitPredictionsHead)
			for _, p := range predictFit(t, design) {
				fmt.Fprintf(&b, "%d,%s,%s,%s,%s,%s,%s\n", p.Line, p.A, p.B, fstr(p.SoloA), fstr(p.SoloB), fstr(p.PairA), fstr(p.PairB))
			}
			require.NoError(t, os.WriteFile(fitPredictionsFile, b.Bytes(), 0o644))
		}
		got := readFitPredictions(t)
		for i := range got {
			got[i].PairA, got[i].PairB = 0, 0
		}
		require.Equal(t, design, got, "%s: not the design points of %s; regenerate with -update", fitPredictionsFile, dir)
	}
	want := readFitPredictions(t)
	require.Len(t, want, 219)
	for i, got := range predictFit(t, want) {
		w := want[i]
		require.InEpsilon(t, w.PairA, got.PairA, 1e-9, "%s:%d: %s beside %s: the embedded model's prediction moved; refit it (see docs/models.md) and regenerate with -update", fitPredictionsFile, w.Line, w.A, w.B)
		require.InEpsilon(t, w.PairB, got.PairB, 1e-9, "%s:%d: %s beside %s: the embedded model's prediction moved; refit it (see docs/models.md) and regenerate with -update", fitPredictionsFile, w.Line, w.B, w.A)
	}
}

func fstr(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
