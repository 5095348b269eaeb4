package calibration

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
)

func TestSummarizeCategories(t *testing.T) {
	g := func(meas, sim int) GridRow {
		return GridRow{GridRun: stacking.GridRun{FirstRejected: meas, Deferrals: 10 * meas, MakespanS: 100}, SimFirstRejected: sim, SimDeferrals: 10 * sim, SimMakespanS: 110}
	}
	s := summarize([]SeqRow{{SimMakespanS: 110, MeasMakespanS: 100, SimMeanSlowdown: 1, MeasMeanSlowdown: 1, SimMaxSlowdown: 1.2, MeasMaxSlowdown: 1}},
		[]GridRow{g(2, 2), g(0, 3), g(3, 2), g(2, 4), g(4, 0)})
	require.Equal(t, Summary{Sequences: 1, MakespanMedianAPE: 0.1, MeanSlowdownAPE: 0, MaxSlowdownWithin10: 0, Settings: 5, FirstRight: 1,
		SimOnly: 1, Earlier: 1, Later: 1, MeasOnly: 1, DeferralsSpearman: s.DeferralsSpearman, GridMakespanMedianAPE: 0.1,
		SimPositionSpearman: s.SimPositionSpearman, MeasPositionSpearman: s.MeasPositionSpearman,
		FirstRightPer: map[string]int{"": 1}, BriefDeferrals: 0, SimBriefDeferrals: 0}, s)
}

// seq is a synthetic launch sequence of embedded-catalog workloads.
func seq(name string) stacking.Sequence {
	return stacking.Sequence{Name: name, Jobs: []stacking.Job{
		{Position: 1, Run: "a", Workload: "mobilenet_cifar100_bs64_20e_1gpu", SoloS: 300},
		{Position: 2, Run: "b", Workload: "resnet50_imagenet_bs64_1gpu", SoloS: 200},
		{Position: 3, Run: "c", Workload: "xception_imagenet_bs32_1gpu", SoloS: 160},
		{Position: 4, Run: "d", Workload: "efficientnet_imagenet_bs64_1gpu", SoloS: 170},
	}}
}

// synthetic measures the sequence under a known truth: its no-deferral
// outcome and a threshold grid's first rejections and deferrals.
func synthetic(t *testing.T, truth Model) *stacking.Data {
	t.Helper()
	s := seq("s")
	d := &stacking.Data{Sequences: []stacking.Sequence{s}}
	row, err := replayMean(s, truth, 1)
	require.NoError(t, err)
	d.Targets = []stacking.Target{{Sequence: "s", Group: "no_deferral", Runs: 1, Jobs: 4, MakespanS: row.SimMakespanS,
		MeanSlowdown: row.SimMeanSlowdown, MaxSlowdown: row.SimMaxSlowdown}}
	for _, t1 := range []float64{0.3, 0.5, 0.6, 0.7, 0.8, 0.9} {
		for _, t2 := range []float64{0.2, 0.35, 0.5} {
			for _, t3 := range []float64{0.2, 0.4, 0.6} {
				th := [3]float64{t1, t2, t3}
				r, err := stacking.Replay(s, stacking.Config{Thresholds: th, Interference: truth.Interference, Telemetry: &truth.Telemetry, Seed: 1})
				require.NoError(t, err)
				d.Grid = append(d.Grid, stacking.GridRun{Sequence: "s", Thresholds: th, FirstRejected: r.FirstRejected,
					Deferrals: r.Deferrals, MakespanS: r.MakespanS, MeanSlowdown: r.MeanSlowdown, MaxSlowdown: r.MaxSlowdown})
			}
		}
	}
	return d
}

// The telemetry fit recovers a combination that reproduces every
// admission decision of a known one, and the known one is among the best.
func TestTelemetryFitRecoversTruth(t *testing.T) {
	truth := Model{Interference: models.DefaultInterference(), Telemetry: models.TelemetryParams{Saturation: 1.1}}
	d := synthetic(t, truth)
	tt, err := newTelemetryTable(truth.Interference, d, 1)
	require.NoError(t, err)
	got := tt.best([]string{"s"})
	rep, err := Evaluate(d, Model{Interference: truth.Interference, Telemetry: got}, 1)
	require.NoError(t, err)
	require.Equal(t, len(d.Grid), rep.FirstRight, "fitted %+v", got)
	sum, err := Evaluate(d, Model{Interference: truth.Interference}, 1)
	require.NoError(t, err)
	require.Less(t, sum.FirstRight, len(d.Grid), "the plain sum does not reproduce them: the test can fail")
}

// The workload-scale fit recovers telemetry scales that reproduce every
// admission decision measured under known ones, and resets to 1 the
// factors that do not matter.
func TestScaleFitRecoversTruth(t *testing.T) {
	base := models.TelemetryParams{Saturation: 1.1}
	truth := base
	truth.Scale = map[string]models.SignalScale{"mobilenet_cifar100_bs64_20e_1gpu": {SMACT: 3, SMOCC: 3, DRAMA: 1}}
	d := synthetic(t, Model{Interference: models.DefaultInterference(), Telemetry: truth})
	plain, err := Evaluate(d, Model{Interference: models.DefaultInterference(), Telemetry: base}, 1)
	require.NoError(t, err)
	require.Less(t, plain.FirstRight, len(d.Grid), "without the scale the admissions differ: the test can fail")
	got, err := fitScales(models.DefaultInterference(), base, d, []string{"s"}, 1)
	require.NoError(t, err)
	require.Contains(t, got, "mobilenet_cifar100_bs64_20e_1gpu")
	require.NotContains(t, got, "efficientnet_imagenet_bs64_1gpu", "the last job's telemetry is never seen by a decision")
	fitted := base
	fitted.Scale = got
	rep, err := Evaluate(d, Model{Interference: models.DefaultInterference(), Telemetry: fitted}, 1)
	require.NoError(t, err)
	require.Equal(t, len(d.Grid), rep.FirstRight, "fitted %v", got)
	d = synthetic(t, Model{Interference: models.DefaultInterference(), Telemetry: base})
	none, err := fitScales(models.DefaultInterference(), base, d, []string{"s"}, 1)
	require.NoError(t, err)
	require.Empty(t, none, "nothing to correct when the catalog profiles are the truth")
}

// The speed fit recovers ρ and κ from stacks measured under known ones.
func TestSpeedFitRecoversTruth(t *testing.T) {
	p := models.DefaultPressureParams()
	p.NWayExponent, p.Capacity = 1.3, 0.9
	d := synthetic(t, Model{Interference: &models.PressureModel{P: p}})
	st, err := newSpeedTable(models.DefaultPressureParams(), nil, models.A100(), d, 1)
	require.NoError(t, err)
	got := st.best([]string{"s"})
	require.InDelta(t, 1.3, got.NWayExponent, 0.11)
	require.InDelta(t, 0.9, got.Capacity, 0.051)
	// The truth is among the candidates, so one reaches the measured max
	// slowdown; a measured spread across launch orders is compared with
	// the largest any candidate gives.
	r := seq("r")
	slices.Reverse(r.Jobs)
	d.Sequences = append(d.Sequences, r)
	d.Targets = append(d.Targets, stacking.Target{Sequence: "r", Group: "no_deferral", Runs: 1, Jobs: 4, MakespanS: d.Targets[0].MakespanS,
		MeanSlowdown: d.Targets[0].MeanSlowdown, MaxSlowdown: d.Targets[0].MaxSlowdown + 1})
	st, err = newSpeedTable(models.DefaultPressureParams(), nil, models.A100(), d, 1)
	require.NoError(t, err)
	reach := st.reach([][]string{{"s", "r"}, {"x"}})
	require.Equal(t, len(rhoGrid)*len(kappaGrid), reach.Candidates)
	require.Equal(t, 1, reach.BestWithin10, "s is reachable; r's max slowdown is 1 higher than s's, out of reach")
	require.Len(t, reach.Orders, 1, "a set with one order has no spread")
	require.InDelta(t, 1, reach.Orders[0].Measured, 1e-9)
	require.Greater(t, reach.Orders[0].Largest, 0.0)
	require.Less(t, reach.Orders[0].Largest, 1.0)
}

// The measured counts' rank correlation with the first rejected position
// alone: 1 when counts fall with the position (none lowest), and the
// simulated positions' correlation follows them.
func TestPositionSpearman(t *testing.T) {
	g := func(meas, deferrals, sim int) GridRow {
		return GridRow{GridRun: stacking.GridRun{FirstRejected: meas, Deferrals: deferrals, MakespanS: 1}, SimFirstRejected: sim, SimMakespanS: 1}
	}
	s := summarize(nil, []GridRow{g(2, 300, 2), g(3, 200, 3), g(4, 100, 4), g(0, 0, 0)})
	require.InDelta(t, 1, s.MeasPositionSpearman, 1e-12)
	require.InDelta(t, 1, s.SimPositionSpearman, 1e-12)
	brief := GridRow{GridRun: stacking.GridRun{Sequence: "b", FirstRejected: 3, Deferrals: 4, MakespanS: 1}, SimFirstRejected: 3, SimDeferrals: 11, SimMakespanS: 1}
	s = summarize(nil, []GridRow{brief, g(2, 300, 2), {GridRun: stacking.GridRun{Sequence: "b", FirstRejected: 2, Deferrals: 10, MakespanS: 1}, SimFirstRejected: 3, SimDeferrals: 1, SimMakespanS: 1}})
	require.Equal(t, 2, s.BriefDeferrals, "1-10 deferrals measured")
	require.Equal(t, 1, s.SimBriefDeferrals)
	require.Equal(t, map[string]int{"b": 1, "": 1}, s.FirstRightPer)
	s = summarize(nil, []GridRow{g(2, 300, 0), g(3, 200, 4), g(4, 100, 3), g(0, 0, 2)})
	require.InDelta(t, 1, s.MeasPositionSpearman, 1e-12)
	require.InDelta(t, -1, s.SimPositionSpearman, 1e-12)
}

func TestSharedDataRun(t *testing.T) {
	if _, ok := stacking.DefaultDir(); !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
	dir, _ := stacking.DefaultDir()
	d, err := stacking.Load(dir)
	require.NoError(t, err)
	sets := workloadSets(d)
	require.Len(t, sets, 2, "the 4-job orders share one set, the 5-job orders another")
	require.Len(t, sets[0], 3)
	require.Len(t, sets[1], 2)
	var b bytes.Buffer
	rep := &Report{Seqs: []SeqRow{{Sequence: "x", Jobs: 4, SimMakespanS: 1, MeasMakespanS: 1}},
		Grid: []GridRow{{GridRun: stacking.GridRun{Sequence: "x", Thresholds: [3]float64{0.5, 0.2, 0.3}, FirstRejected: 2, Deferrals: 7}}}}
	require.NoError(t, WriteReport(&b, rep))
	require.Contains(t, b.String(), "| 0.5/0.2/0.3 | 2 | - | 7 | 0 |")
}

// The --json form carries the stacks part under "stacks" with one error
// summary per validation.
func TestResultJSON(t *testing.T) {
	sum := Summary{Sequences: 5, Settings: 366, FirstRight: 200}
	r := &Result{Pairs: &models.Calibration{HeldOut: []models.ModelError{{Model: "pressure", MedianAPE: 0.04}, {Model: "none"}, {Model: "flat20"}}, Pairs: 219, Folds: 5},
		Stacks: &stacking.Data{}, Before: &Report{Summary: sum}, After: &Report{Summary: sum},
		Validations: []Validation{{Name: "leave one sequence out", Summary: sum}}, Telemetry: models.TelemetryParams{Saturation: 1}}
	b, err := json.Marshal(r.JSON())
	require.NoError(t, err)
	for _, want := range []string{`"stacks":{"sequences":5,"grid_settings":366,"errors":{`, `"before":{`, `"in_sample":{`, `"leave one sequence out":{`,
		`"FirstRight":200`, `"telemetry":{"rate_weight":0,"saturation":1}`, `"heldout_median_ape":0.04`} {
		require.Contains(t, string(b), want)
	}
	f, comment := r.File()
	require.Equal(t, &models.TelemetryParams{Saturation: 1}, f.Telemetry)
	require.Contains(t, comment, "telemetry on the threshold grid's admissions")
	require.InDelta(t, 200.0/366, f.Fit.Admissions.FirstRejectedRight, 1e-6)
}

func TestContradictions(t *testing.T) {
	g := func(seq string, t1, t2, t3 float64, first int) stacking.GridRun {
		return stacking.GridRun{Sequence: seq, Thresholds: [3]float64{t1, t2, t3}, FirstRejected: first}
	}
	rows, pairs := Contradictions([]stacking.GridRun{
		g("a", 0.1, 0.1, 0.4, 0), // lower thresholds, never rejected ...
		g("a", 0.5, 0.2, 0.4, 2), // ... while higher ones rejected position 2
		g("a", 0.5, 0.2, 0.3, 2), // not comparable with the first (τ3 lower)
		g("a", 0.9, 0.9, 0.9, 0),
		g("b", 0.5, 0.5, 0.5, 3),
		g("b", 0.6, 0.5, 0.5, 2), // contradicts the run above
		g("b", 0.4, 0.5, 0.5, 4), // contradicts both above
	})
	require.Equal(t, map[string]int{"a": 2, "b": 3}, rows)
	require.Equal(t, 2, pairs)
}
