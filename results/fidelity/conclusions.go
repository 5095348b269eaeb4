package fidelity

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aegis-sched/aegis/results/stats"
)

// Verdict is a conclusion checked on one side's values.
type Verdict struct {
	// OK is false when the side lacks a value the check needs.
	OK, Holds bool
	// Shown is the compared values, e.g. "0.553 → 0.541".
	Shown string
	// Close names comparisons whose difference lies within the seeds'
	// combined 95 % CI (sqrt(ci_a² + ci_b²)): the verdict could flip
	// with other seeds.
	Close []string
}

// Conclusion is one of the paper's conclusions the report checks.
type Conclusion struct {
	ID, Claim string
	// Tables are the tables it reads.
	Tables []int
	Check  func(Values) Verdict
	// Why says in a sentence, from the values, what the measured cause is
	// when ours does not hold; it is shown only then.
	Why func(ours, paper Values) string
	// WhyMeasured, when set, says it from the testbed's own runs instead
	// (Report.Measured); "" when they do not hold what it reads, and Why
	// is shown.
	WhyMeasured func(runs []MeasuredRun) string
}

// pair is one "a < b" comparison of a metric between two rows.
type pair struct {
	a, b Key
	m    string
}

// less checks every a < b, showing each pair as "a → b" when arrow is set
// (a change from a to b) or "a vs b".
func less(v Values, cs []pair, name func(pair) string) Verdict {
	r := Verdict{OK: true, Holds: true}
	var shown []string
	for _, c := range cs {
		sa, oka := v[c.a][c.m]
		sb, okb := v[c.b][c.m]
		if !oka || !okb {
			return Verdict{}
		}
		if sa.Mean >= sb.Mean {
			r.Holds = false
		}
		if ci := math.Hypot(sa.CI95, sb.CI95); ci > 0 && math.Abs(sb.Mean-sa.Mean) <= ci {
			r.Close = append(r.Close, name(c))
		}
		shown = append(shown, fmt.Sprintf("%s %.3f vs %.3f", name(c), sa.Mean, sb.Mean))
	}
	r.Shown = strings.Join(shown, "; ")
	return r
}

// lowest checks that config has the lowest m of table t among others.
func lowest(v Values, t int, config string, others []string, m string) Verdict {
	var cs []pair
	for _, o := range others {
		cs = append(cs, pair{Key{Table: t, Config: config}, Key{Table: t, Config: o}, m})
	}
	return less(v, cs, func(c pair) string { return c.a.Config + " < " + c.b.Config })
}

// headlineVs are Table 2's baselines AEGIS's headline reductions are
// measured against, in the order the paper's reductions grow.
var headlineVs = []string{"Lucid", "Horus", "Exclusive"}

// headline is AEGIS Est-free's makespan reduction against each baseline:
// one minus the GeoMean over Table 2's traces of the makespan ratios.
func headline(v Values) ([]float64, bool) {
	var out []float64
	for _, b := range headlineVs {
		var ratios []float64
		for _, tr := range []string{"philly", "saturn", "venus"} {
			a, oka := v.get(Key{2, "AEGIS Est-free", tr}, "makespan")
			x, okb := v.get(Key{2, b, tr}, "makespan")
			if !oka || !okb || x <= 0 || a <= 0 {
				return nil, false
			}
			ratios = append(ratios, a/x)
		}
		out = append(out, 1-stats.GeoMean(ratios))
	}
	return out, true
}

func checkHeadline(v Values) Verdict {
	r, ok := headline(v)
	if !ok {
		return Verdict{}
	}
	holds := r[0] > 0 && r[0] < r[1] && r[1] < r[2]
	var s []string
	for i, b := range headlineVs {
		s = append(s, fmt.Sprintf("vs %s −%.0f %%", b, 100*r[i]))
	}
	return Verdict{OK: true, Holds: holds, Shown: strings.Join(s, ", ")}
}

// execCause is a Why stating a measured cause (a format with two %s) with
// the exec mean of table t's config here and in the paper.
func execCause(t int, config, cause string) func(o, p Values) string {
	return func(o, p Values) string {
		k := Key{Table: t, Config: config}
		return fmt.Sprintf(cause, metricOf(o, k, "exec_mean"), metricOf(p, k, "exec_mean"))
	}
}

// metricOf formats one metric of a row: "1.582" or "n/a".
func metricOf(v Values, k Key, m string) string {
	x, ok := v.get(k, m)
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", x)
}

// Conclusions are the paper's conclusions the report checks (issue 18):
// each holds on the published values; the report says whether it holds on
// ours. Why states the measured cause (docs/crowding.md, docs/legacy.md)
// with the values it rests on.
var Conclusions = []Conclusion{
	{
		ID:     "table3-peakmem",
		Tables: []int{3},
		Claim:  "Table 3: PeakMem has the lowest makespan",
		Check: func(v Values) Verdict {
			return lowest(v, 3, "PeakMem", []string{"Est-free", "AnalyticalMem", "GPUMemNet", "FakeTensor"}, "makespan")
		},
		Why: execCause(3, "Est-free", "Est-free's failed attempts cost less here than on the testbed (exec mean %s here, %s in the paper): a crowded A100 runs faster in the simulator than it did (docs/crowding.md)."),
	},
	{
		ID:     "table5-nf",
		Tables: []int{5},
		Claim:  "Table 5: turning the filter off (NF) raises mean JCT for MFM and MU",
		Check: func(v Values) Verdict {
			return less(v, []pair{
				{Key{Table: 5, Config: "MFM"}, Key{Table: 5, Config: "MFM-NF"}, "jct_mean"},
				{Key{Table: 5, Config: "MU"}, Key{Table: 5, Config: "MU-NF"}, "jct_mean"},
			}, func(c pair) string { return c.a.Config + " → " + c.b.Config })
		},
		Why:         execCause(5, "MFM-NF", "Crowding without the filter costs less here than on the testbed (MFM-NF exec mean %s here, %s in the paper; docs/crowding.md)."),
		WhyMeasured: filterCause,
	},
	{
		ID:     "table6-memonly",
		Tables: []int{6},
		Claim:  "Table 6: AEGIS Mem-only has the worst makespan",
		Check: func(v Values) Verdict {
			others := []string{"AEGIS U70%", "Horus", "Lucid"}
			var cs []pair
			for _, x := range others {
				cs = append(cs, pair{Key{Table: 6, Config: x}, Key{Table: 6, Config: "AEGIS Mem-only"}, "makespan"})
			}
			return less(v, cs, func(c pair) string { return c.a.Config + " < Mem-only" })
		},
		Why: execCause(6, "AEGIS Mem-only", "Co-location on the legacy server costs less here than on the testbed (Mem-only exec mean %s here, %s in the paper): its pairs fit two jobs per GPU and no legacy stacks measure three or more (docs/legacy.md)."),
	},
	{
		ID:     "headline",
		Tables: []int{2},
		Claim:  "Headline: AEGIS cuts makespan vs Lucid < vs Horus < vs Exclusive (Table 2, GeoMean over traces)",
		Check:  checkHeadline,
		Why: func(o, p Values) string {
			return "AEGIS Est-free's makespan is not below every baseline's in the order the paper reports; see Table 2 below for the traces that differ."
		},
	},
}

// filterCause is Table 5's cause read off the testbed's own runs: per
// trace and placement with both a filtered and an NF run, how many more
// jobs ran at once at the peak without the filter and how much longer
// execution took (NF ÷ filter exec span mean), there and here. "" without
// such a pair.
func filterCause(runs []MeasuredRun) string {
	by := map[string]MeasuredRun{}
	for _, r := range runs {
		by[r.Name] = r
	}
	var n int
	var peakT, peakO, ratioT, ratioO float64
	var depths []float64
	var same, differ []string // pairs whose two testbed runs ran one code version, or two
	var sameT, sameO float64  // the NF ÷ filter exec ratios of the same pairs, summed
	for _, r := range runs {
		base, ok := strings.CutSuffix(r.Name, "_thresholded")
		if !ok || !measuredAEGIS(r.Name) {
			continue
		}
		nf, ok := by[base+"_no_thresholds"]
		if !ok {
			continue
		}
		vals := []float64{r.Measured["max_running"], nf.Measured["max_running"], r.Ours["max_running"].Mean, nf.Ours["max_running"].Mean,
			r.Measured["span_mean_s"], nf.Measured["span_mean_s"], r.Ours["span_mean_s"].Mean, nf.Ours["span_mean_s"].Mean}
		if slices.ContainsFunc(vals, func(x float64) bool { return math.IsNaN(x) || x <= 0 }) {
			continue
		}
		n++
		peakT += vals[1] - vals[0]
		peakO += vals[3] - vals[2]
		ratioT += vals[5] / vals[4]
		ratioO += vals[7] / vals[6]
		depths = append(depths, vals[0], vals[1])
		switch {
		case r.Version == "" || nf.Version == "":
		case r.Version == nf.Version:
			same = append(same, pairName(base))
			sameT, sameO = sameT+vals[5]/vals[4], sameO+vals[7]/vals[6]
		default:
			differ = append(differ, pairName(base))
		}
	}
	if n == 0 {
		return ""
	}
	k := float64(n)
	peakT, peakO, ratioT, ratioO = peakT/k, peakO/k, ratioT/k, ratioO/k
	holds := "holds back fewer jobs"
	if peakO >= peakT {
		holds = "holds back as many jobs or more"
	}
	costs := "crowding costs less"
	if ratioO >= ratioT {
		costs = "crowding costs as much or more"
	}
	return fmt.Sprintf("The testbed's own runs (docs/crowding.md, %d trace–placement pairs): turning the filter off let %s jobs run at once at the peak "+
		"and made execution %.2f× as long (NF ÷ filter exec span mean); here %s and %.2f×. Our filter %s, and %s, at the depths those runs reached "+
		"(peaks of %.0f–%.0f jobs on 3 GPUs).", n, moreOrFewer(peakT), ratioT, moreOrFewer(peakO), ratioO, holds, costs, slices.Min(depths), slices.Max(depths)) +
		versionsText(same, differ, sameT/float64(len(same)), sameO/float64(len(same)))
}

// versionsText says which trace–placement pairs compare one code version
// of the testbed's artifact (runs.csv's git_commit) and which do not, with
// the mean NF ÷ filter exec ratio of the former, there and here, when both
// kinds are there; "" where no pair's versions are known.
func versionsText(same, differ []string, ratioT, ratioO float64) string {
	switch {
	case len(same) == 0 && len(differ) == 0:
		return ""
	case len(differ) == 0:
		return " On the testbed each pair's two runs ran one code version (runs.csv's git_commit)."
	case len(same) == 0:
		return fmt.Sprintf(" On the testbed no pair's two runs ran one code version (runs.csv's git_commit): in %s the filtered and NF runs ran different ones.",
			joinAnd(differ))
	}
	verb := "compare"
	if len(same) == 1 {
		verb = "compares"
	}
	return fmt.Sprintf(" On the testbed only %s %s one code version (runs.csv's git_commit; NF ÷ filter exec span mean %.2f× there, %.2f× here); "+
		"in %s the filtered and NF runs ran different ones.", joinAnd(same), verb, ratioT, ratioO, joinAnd(differ))
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// pairName names a trace–placement pair from its runs' folder name without
// the filter's suffix: "philly-aegis_magm" is "Philly MFM".
func pairName(base string) string {
	trace, cfg, _ := strings.Cut(base, "-")
	if trace != "" {
		trace = strings.ToUpper(trace[:1]) + trace[1:]
	}
	switch cfg {
	case "aegis_magm":
		cfg = "MFM"
	case "aegis_lug":
		cfg = "MU"
	}
	return strings.TrimSpace(trace + " " + cfg)
}

// moreOrFewer says a change in a count of jobs: "1.8 more", "0.2 fewer".
func moreOrFewer(d float64) string {
	if d < 0 {
		return fmt.Sprintf("%.1f fewer", -d)
	}
	return fmt.Sprintf("%.1f more", d)
}
