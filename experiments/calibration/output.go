package calibration

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
)

// JSON is the --json form of a Result.
type JSON struct {
	Model            string                 `json:"model"`
	HeldOutMedianAPE float64                `json:"heldout_median_ape"`
	HeldOutP90APE    float64                `json:"heldout_p90_ape"`
	Baselines        map[string]APEJSON     `json:"baselines"`
	InSample         InSampleJSON           `json:"in_sample"`
	Pairs            int                    `json:"pairs"`
	Folds            int                    `json:"folds"`
	Params           models.PressureParams  `json:"params"`
	Telemetry        models.TelemetryParams `json:"telemetry"`
	// LOWO is present with --lowo only.
	LOWO *LOWOJSON `json:"leave_one_workload_out,omitempty"`
	// Stacks is present when the stacking data were used.
	Stacks *StacksJSON `json:"stacks,omitempty"`
	// Speeds is present for the legacy server: its GPUs' fitted speed
	// classes and their errors.
	Speeds *models.Speeds `json:"speeds,omitempty"`
}

// LOWOJSON is the leave-one-workload-out part of JSON: the pressure model's
// errors and the baselines', as at the top level.
type LOWOJSON struct {
	Model            string             `json:"model"`
	HeldOutMedianAPE float64            `json:"heldout_median_ape"`
	HeldOutP90APE    float64            `json:"heldout_p90_ape"`
	Baselines        map[string]APEJSON `json:"baselines"`
	Workloads        int                `json:"workloads"`
	Predictions      int                `json:"predictions"`
}

// APEJSON is a held-out median and p90 APE.
type APEJSON struct {
	HeldOutMedianAPE float64 `json:"heldout_median_ape"`
	HeldOutP90APE    float64 `json:"heldout_p90_ape"`
}

// InSampleJSON is the in-sample median and p90 APE.
type InSampleJSON struct {
	MedianAPE float64 `json:"median_ape"`
	P90APE    float64 `json:"p90_ape"`
}

// StacksJSON holds the N-way errors: before (the embedded model), in-sample
// and per validation, keyed by name.
type StacksJSON struct {
	Sequences int                `json:"sequences"`
	Settings  int                `json:"grid_settings"`
	Errors    map[string]Summary `json:"errors"`
	// ScalesAdopted says whether the per-workload telemetry scales were
	// adopted (see ScaleTrial).
	ScalesAdopted bool `json:"workload_scales_adopted"`
}

// JSON returns the Result's --json form.
func (r *Result) JSON() JSON {
	c := r.Pairs
	j := JSON{Model: c.HeldOut[0].Model, HeldOutMedianAPE: c.HeldOut[0].MedianAPE, HeldOutP90APE: c.HeldOut[0].P90APE,
		Baselines: map[string]APEJSON{}, InSample: InSampleJSON{c.InSample.MedianAPE, c.InSample.P90APE},
		Pairs: c.Pairs, Folds: c.Folds, Params: r.Params, Telemetry: r.Telemetry}
	for _, b := range c.HeldOut[1:] {
		j.Baselines[b.Model] = APEJSON{b.MedianAPE, b.P90APE}
	}
	if c.LOWO != nil {
		l := &LOWOJSON{Model: c.LOWO[0].Model, HeldOutMedianAPE: c.LOWO[0].MedianAPE, HeldOutP90APE: c.LOWO[0].P90APE,
			Baselines: map[string]APEJSON{}, Workloads: c.Workloads, Predictions: c.LOWO[0].N}
		for _, b := range c.LOWO[1:] {
			l.Baselines[b.Model] = APEJSON{b.MedianAPE, b.P90APE}
		}
		j.LOWO = l
	}
	if r.Stacks != nil {
		s := &StacksJSON{Sequences: r.After.Sequences, Settings: r.After.Settings, Errors: map[string]Summary{
			"before": r.Before.Summary, "in_sample": r.After.Summary}}
		for _, v := range r.Validations {
			s.Errors[v.Name] = v.Summary
		}
		if tr := r.Scales; tr != nil {
			other := "with workload scales"
			if tr.Adopted {
				other = "without workload scales"
			}
			s.Errors[other+", in_sample"] = tr.InSample
			for _, v := range tr.Validations {
				s.Errors[other+", "+v.Name] = v.Summary
			}
			s.ScalesAdopted = tr.Adopted
		}
		j.Stacks = s
	}
	return j
}

// WriteText writes the Result as aligned tables.
func (r *Result) WriteText(out io.Writer) error {
	c := r.Pairs
	fmt.Fprintf(out, "%d co-runs, %d-fold cross-validation grouped by catalog workload pair\n\n", c.Pairs, c.Folds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\theld-out median APE\theld-out p90 APE\tpredictions")
	for _, m := range c.HeldOut {
		fmt.Fprintf(tw, "%s\t%.1f %%\t%.1f %%\t%d\n", m.Model, 100*m.MedianAPE, 100*m.P90APE, m.N)
	}
	fmt.Fprintf(tw, "pressure (in-sample)\t%.1f %%\t%.1f %%\t%d\n", 100*c.InSample.MedianAPE, 100*c.InSample.P90APE, c.InSample.N)
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.LOWO != nil {
		fmt.Fprintf(out, "\nleave-one-workload-out: %d workloads, each refitted without its co-runs and tested on all of them\n\n", c.Workloads)
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "model\tunseen-workload median APE\tunseen-workload p90 APE\tpredictions")
		for _, m := range c.LOWO {
			fmt.Fprintf(tw, "%s\t%.1f %%\t%.1f %%\t%d\n", m.Model, 100*m.MedianAPE, 100*m.P90APE, m.N)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if r.Stacks != nil {
		fmt.Fprintf(out, "\nstacks: %d sequences of 4-5 jobs on one GPU (no-deferral runs), %d threshold-grid runs (%s)\n\n",
			r.After.Sequences, r.After.Settings, r.Options.StacksDir)
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "model\tmakespan median APE\tmean slowdown median APE\tmax slowdown within 10 %\tfirst rejected right\tdeferrals Spearman\tgrid makespan median APE")
		row := func(name string, s Summary) {
			fmt.Fprintf(tw, "%s\t%.1f %%\t%.1f %%\t%d of %d\t%.1f %% (%d/%d)\t%.2f\t%.1f %%\n", name, 100*s.MakespanMedianAPE, 100*s.MeanSlowdownAPE,
				s.MaxSlowdownWithin10, s.Sequences, 100*float64(s.FirstRight)/float64(max(1, s.Settings)), s.FirstRight, s.Settings,
				s.DeferralsSpearman, 100*s.GridMakespanMedianAPE)
		}
		row("embedded model (as shipped)", r.Before.Summary)
		row("fitted, in-sample", r.After.Summary)
		for _, v := range r.Validations {
			row("fitted, "+v.Name, v.Summary)
		}
		if tr := r.Scales; tr != nil {
			other := "with workload scales"
			if tr.Adopted {
				other = "without workload scales"
			}
			if tr.Adopted || len(tr.Fitted) > 0 {
				row(other+", in-sample", tr.InSample)
			}
			for _, v := range tr.Validations {
				row(other+", "+v.Name, v.Summary)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := r.writeScales(out); err != nil {
			return err
		}
		if err := r.writeLimits(out); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nparameters fitted without the held-out sequences:\n\n")
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "validation\theld out\tnway_exponent\tcapacity\trate_weight\tsaturation")
		for _, v := range r.Validations {
			for _, f := range v.Folds {
				fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.3f\t%.1f\t%.1f\n", v.Name, strings.Join(f.HeldOut, " "), f.Speed.NWayExponent, f.Speed.Capacity,
					f.Telemetry.RateWeight, f.Telemetry.Saturation)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	p := r.Params
	fmt.Fprintf(out, "\nfitted parameters (all data):\n")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	kv := []struct {
		k string
		v float64
	}{{"intercept", p.Intercept}, {"co_smact", p.CoSMACT}, {"co_drama", p.CoDRAMA}, {"co_mem_per_10gib", p.CoMem},
		{"self_smact", p.SelfSMACT}, {"self_drama", p.SelfDRAMA}, {"self_mem_per_10gib", p.SelfMem},
		{"capacity", p.Capacity}, {"nway_exponent", p.NWayExponent}}
	if r.Stacks != nil {
		kv = append(kv, struct {
			k string
			v float64
		}{"telemetry.rate_weight", r.Telemetry.RateWeight}, struct {
			k string
			v float64
		}{"telemetry.saturation", r.Telemetry.Saturation}, struct {
			k string
			v float64
		}{"telemetry.steady_saturation", r.Telemetry.SteadySaturation})
	}
	for _, e := range kv {
		fmt.Fprintf(tw, "  %s\t%.4f\n", e.k, e.v)
	}
	return tw.Flush()
}

// writeLimits writes what bounds the unmet stack and admission measures:
// the best any searched (ρ, κ) reaches on max slowdown, how much launch
// order moves it, and what the deferral counts' ranking follows.
func (r *Result) writeLimits(out io.Writer) error {
	rc := r.Reach
	fmt.Fprintf(out, "\nlimits:\n  max slowdown within 10 %%: at most %d of %d sequences for any of the %d (nway_exponent, capacity) searched\n",
		rc.BestWithin10, r.After.Sequences, rc.Candidates)
	for _, o := range rc.Orders {
		fmt.Fprintf(out, "  max slowdown across the launch orders of one job set (largest - smallest), %s: measured %.2f, fitted %.2f, at most %.2f for any searched\n",
			strings.Join(o.Sequences, " "), o.Measured, o.Fitted, o.Largest)
	}
	s := r.After.Summary
	fmt.Fprintf(out, "  deferral counts ranked by the first rejected position alone (in-sample): Spearman %.2f with the measured positions, %.2f with the simulated (the simulated counts: %.2f)\n",
		s.MeasPositionSpearman, s.SimPositionSpearman, s.DeferralsSpearman)
	fmt.Fprintf(out, "  grid runs that deferred a job only 1-%d times (rejected, then admitted within seconds): measured %d, replayed %d (in-sample)\n",
		briefMax, s.BriefDeferrals, s.SimBriefDeferrals)
	per := func(s Summary) string {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(s.FirstRightPer)) {
			parts = append(parts, fmt.Sprintf("%s %d", name, s.FirstRightPer[name]))
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(out, "  first rejected right per grid sequence: in-sample %s\n", per(s))
	for _, v := range r.Validations {
		fmt.Fprintf(out, "  first rejected right per grid sequence: %s %s\n", v.Name, per(v.Summary))
	}
	if tr := r.Scales; tr != nil {
		other := "with workload scales"
		if tr.Adopted {
			other = "without workload scales"
		}
		for _, v := range tr.Validations {
			fmt.Fprintf(out, "  first rejected right per grid sequence: %s, %s %s\n", other, v.Name, per(v.Summary))
		}
	}
	return nil
}

// writeScales writes the per-workload telemetry scales fitted on all the
// grid and per fold, and whether they were adopted.
func (r *Result) writeScales(out io.Writer) error {
	tr := r.Scales
	if tr == nil {
		return nil
	}
	with, without := tr.Validations[0].FirstRight, r.Validations[0].FirstRight
	verdict := "not adopted"
	if tr.Adopted {
		verdict, with, without = "adopted", without, with
	}
	fmt.Fprintf(out, "\nworkload telemetry scales (smact/smocc/drama factors fitted on the grid): %s; leave one sequence out, first rejected right %d with them, %d without\n",
		verdict, with, without)
	fmt.Fprintf(out, "  all grid sequences: %s\n", formatScales(tr.Fitted))
	vals := tr.Validations
	if tr.Adopted {
		vals = r.Validations
	}
	for _, v := range vals {
		for _, f := range v.Folds {
			fmt.Fprintf(out, "  %s, without %s: %s\n", v.Name, strings.Join(f.HeldOut, " "), formatScales(f.Telemetry.Scale))
		}
	}
	return nil
}

// formatScales lists scales by workload ID ("none" when empty).
func formatScales(sc map[string]models.SignalScale) string {
	if len(sc) == 0 {
		return "none"
	}
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(sc)) {
		f := sc[id]
		parts = append(parts, fmt.Sprintf("%s %g/%g/%g", id, f.SMACT, f.SMOCC, f.DRAMA))
	}
	return strings.Join(parts, ", ")
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// File returns the fitted model as an interference model file and its
// comment.
func (r *Result) File() (*models.InterferenceFile, string) {
	c := r.Pairs
	rec := &models.FitRecord{Source: filepath.Base(r.Options.PairsPath), Pairs: c.Pairs, Folds: c.Folds,
		HeldOut:  map[string]models.APE{},
		InSample: models.APE{Median: round6(c.InSample.MedianAPE), P90: round6(c.InSample.P90APE)}}
	for _, m := range c.HeldOut {
		rec.HeldOut[m.Model] = models.APE{Median: round6(m.MedianAPE), P90: round6(m.P90APE)}
	}
	if c.LOWO != nil {
		rec.LOWO = map[string]models.APE{}
		for _, m := range c.LOWO {
			rec.LOWO[m.Model] = models.APE{Median: round6(m.MedianAPE), P90: round6(m.P90APE)}
		}
	}
	f := &models.InterferenceFile{Model: "pressure", GPU: r.Options.GPU, Params: r.Params, Fit: rec}
	comment := "Interference truth model fitted by `aegis calibrate` (models.PressureModel).\n" +
		"Data: the AEGIS artifact's measured co-runs (" + rec.Source + ", see NOTICE)\n" +
		"and the workloads' solo pressure profiles from the catalog. Errors are absolute\n" +
		"percentage errors of co-run time (fractions); heldout = k-fold cross-validation\n" +
		"grouped by catalog workload pair.\n"
	if rec.LOWO != nil {
		comment += "leave_one_workload_out = one refit per workload without its co-runs (--lowo).\n"
	}
	if r.Stacks != nil {
		tel := r.Telemetry
		f.Telemetry = &tel
		var loso *Validation
		for i := range r.Validations {
			if r.Validations[i].Name == "leave one sequence out" {
				loso = &r.Validations[i]
			}
		}
		if loso != nil {
			s := loso.Summary
			rec.Stacks = &models.StackRecord{Source: "nway/" + "progressive_*.csv", Sequences: s.Sequences,
				MakespanMedianAPE: round6(s.MakespanMedianAPE), MeanSlowdownAPE: round6(s.MeanSlowdownAPE), MaxSlowdownWithin: s.MaxSlowdownWithin10}
			rec.Admissions = &models.AdmissionRecord{Settings: s.Settings, FirstRejectedRight: round6(float64(s.FirstRight) / float64(max(1, s.Settings))),
				DeferralsSpearman: round6(s.DeferralsSpearman), GridMakespanMedianAPE: round6(s.GridMakespanMedianAPE)}
		}
		comment += "capacity and nway_exponent are fitted jointly on the pairs and the progressive\n" +
			"stacks (nway/), telemetry on the threshold grid's admissions; stacks and\n" +
			"admissions = leave-one-sequence-out errors (see docs/nway.md).\n" +
			"telemetry.steady_saturation (jobs past their first 200 s, which the grid never\n" +
			"reaches) is fitted on the testbed's Philly runs' DCGM distributions and checked\n" +
			"on Saturn's (models.SteadySaturationA100, docs/crowding.md).\n" +
			"telemetry.depth_overlap (GPUs with more than 5 jobs, deeper than any measured\n" +
			"stack) is fitted on the same Philly runs' peaks, failed attempts and DCGM\n" +
			"distributions and checked on Saturn's (models.DepthOverlapA100).\n"
	}
	if r.Options.GPU == LegacyGPU {
		comment += "Legacy server: the activity feature read as SMACT is nvidia-smi utilization (no DCGM\n" +
			"there; catalog_legacy11gb.csv), DRAM activity unmeasured (its coefficients 0); memory\n" +
			"coefficients held at 0 (52 noisy pairs fit them to extremes, docs/legacy.md); no stacks,\n" +
			"so nway_exponent is 1 and capacity the largest summed utilization of the pairs.\n" +
			"Regenerate: go run ./cmd/aegis calibrate --gpu legacy-11gb --out models/data/interference_legacy11gb.yaml"
		return f, comment
	}
	comment += "Regenerate: go run ./cmd/aegis calibrate --out models/data/interference_a100.yaml"
	return f, comment
}

// WriteModel writes the fitted model as YAML (the format of
// models/data/interference_a100.yaml), all or nothing: on error path is
// left as it was.
func (r *Result) WriteModel(path string) error {
	f, comment := r.File()
	if err := results.WriteFile(path, func(w io.Writer) error {
		return models.WriteInterference(w, f, comment)
	}); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// WriteReport writes a Report as Markdown: the per-sequence comparison, the
// summary and, per grid sequence, every setting's first rejected position
// and deferral count.
func WriteReport(w io.Writer, rep *Report) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "| sequence | jobs | makespan sim / measured (s) | mean slowdown sim / measured | max slowdown sim / measured | makespan sd sim / measured (s) |\n|---|---|---|---|---|---|\n")
	for _, s := range rep.Seqs {
		fmt.Fprintf(&b, "| %s | %d | %.0f / %.0f | %.2f / %.2f | %.2f / %.2f | %.1f / %.1f |\n", s.Sequence, s.Jobs, s.SimMakespanS, s.MeasMakespanS,
			s.SimMeanSlowdown, s.MeasMeanSlowdown, s.SimMaxSlowdown, s.MeasMaxSlowdown, s.SimMakespanSDS, s.MeasMakespanSDS)
	}
	s := rep.Summary
	fmt.Fprintf(&b, "\n| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| stacks: makespan median APE | %.1f %% |\n", 100*s.MakespanMedianAPE)
	fmt.Fprintf(&b, "| stacks: mean slowdown median APE | %.1f %% |\n", 100*s.MeanSlowdownAPE)
	fmt.Fprintf(&b, "| stacks: max slowdown within 10 %% | %d of %d |\n", s.MaxSlowdownWithin10, s.Sequences)
	fmt.Fprintf(&b, "| grid: first rejected position right | %.1f %% (%d of %d) |\n", 100*float64(s.FirstRight)/float64(max(1, s.Settings)), s.FirstRight, s.Settings)
	fmt.Fprintf(&b, "| grid: replay defers, testbed never did | %d (earlier %d, later %d, replay never but testbed did %d) |\n", s.SimOnly, s.Earlier, s.Later, s.MeasOnly)
	fmt.Fprintf(&b, "| grid: deferral counts' Spearman | %.2f |\n", s.DeferralsSpearman)
	fmt.Fprintf(&b, "| grid: measured counts' Spearman with the first rejected position alone, simulated / measured | %.2f / %.2f |\n", s.SimPositionSpearman, s.MeasPositionSpearman)
	fmt.Fprintf(&b, "| grid: makespan median APE | %.1f %% |\n", 100*s.GridMakespanMedianAPE)
	var measured []stacking.GridRun
	for _, g := range rep.Grid {
		measured = append(measured, g.GridRun)
	}
	if rows, pairs := Contradictions(measured); len(measured) > 0 {
		var parts []string
		for _, name := range sequenceNames(measured) {
			parts = append(parts, fmt.Sprintf("%s %d", name, rows[name]))
		}
		fmt.Fprintf(&b, "| grid: measured runs contradicted by another run of their sequence | %s |\n", strings.Join(parts, ", "))
		fmt.Fprintf(&b, "| grid: disjoint contradicting pairs (so at most this share is reachable) | %d (%.1f %%) |\n", pairs, 100*(1-float64(pairs)/float64(len(measured))))
	}
	var seqs []string
	for _, g := range rep.Grid {
		if indexOf(seqs, g.Sequence) < 0 {
			seqs = append(seqs, g.Sequence)
		}
	}
	for _, name := range seqs {
		fmt.Fprintf(&b, "\n%s, per threshold setting (first rejected position, `-` = none; deferrals):\n\n", name)
		fmt.Fprintf(&b, "| τ1/τ2/τ3 | first rejected measured | sim | deferrals measured | sim |\n|---|---|---|---|---|\n")
		for _, g := range rep.Grid {
			if g.Sequence != name {
				continue
			}
			t := g.Thresholds
			fmt.Fprintf(&b, "| %g/%g/%g | %s | %s | %d | %d |\n", t[0], t[1], t[2], position(g.FirstRejected), position(g.SimFirstRejected), g.Deferrals, g.SimDeferrals)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
