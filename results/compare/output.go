package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/results/stats"
)

// Table lays the comparison out: per row the trace (and configuration),
// the metric and what it pairs over, each side's mean ± 95 % CI, then per
// other side its difference to the reference (± 95 % CI), the difference
// in percent of the reference and the p-value, and the test. Times are in
// hours.
func (res *Result) Table() *results.Table {
	groups := false
	for _, r := range res.Rows {
		groups = groups || r.Group != ""
	}
	t := &results.Table{Title: strings.Join(res.Sides[1:], ", ") + " vs " + res.Sides[0]}
	t.Columns = []results.Column{{Name: "Trace"}}
	if groups {
		t.Columns = append(t.Columns, results.Column{Name: "Config"})
	}
	t.Columns = append(t.Columns, results.Column{Name: "Metric"}, results.Column{Name: "n"})
	for _, s := range res.Sides {
		t.Columns = append(t.Columns, results.Column{Name: s, Keys: []string{s}, Digits: 3})
	}
	for _, s := range res.Sides[1:] {
		t.Columns = append(t.Columns, results.Column{Name: "Δ " + s, Keys: []string{"delta " + s}, Digits: 3},
			results.Column{Name: "Δ % " + s}, results.Column{Name: "p " + s})
	}
	t.Columns = append(t.Columns, results.Column{Name: "test"})
	for _, r := range res.Rows {
		t.Rows = append(t.Rows, res.tableRow(r, groups))
	}
	t.Note = "Mean ± 95 % CI (Student t). Run metrics: over the seeds every side has (n), Δ paired by seed with a paired t-test (none with one pair: no test, no p). " +
		perJobName + ": the jobs that finished, Δ paired by seed and job with a Wilcoxon signed-rank test (exact up to " +
		fmt.Sprint(stats.ExactMax) + " pairs without ties, else normal approximation with tie and continuity corrections). Δ % is of the reference " +
		res.Sides[0] + "'s mean. Times in hours."
	return t
}

func (res *Result) tableRow(r Row, groups bool) []results.Cell {
	scale := 1.0
	name := plots.MetricName(r.Metric)
	if strings.HasSuffix(r.Metric, "_s") {
		scale, name = 3600, name+" (h)"
	}
	n := count(r.Seeds, "seed")
	if r.Runs {
		n = count(r.Seeds, "run")
	}
	if r.Signed != nil {
		name = perJobName
		if len(r.Signed) > 1 {
			n = count(r.Delta[1].N, "job")
		}
	}
	row := []results.Cell{{Text: traceName(r.Trace)}}
	if groups {
		row = append(row, results.Cell{Text: r.Group})
	}
	row = append(row, results.Cell{Text: name}, results.Cell{Text: n})
	for _, v := range r.Values {
		row = append(row, results.Cell{Stats: []results.Stat{{Mean: v.Mean / scale, CI95: v.CI95 / scale, N: v.N}}})
	}
	for k := 1; k < len(r.Values); k++ {
		d := r.Delta[k]
		st := results.Stat{Mean: d.Mean / scale, CI95: d.CI95 / scale, N: d.N}
		if d.N > 1 && math.IsNaN(d.CI95) {
			st.CI95 = 0
		}
		rel := ""
		if ref := r.Values[0].Mean; ref != 0 && d.N > 0 && !math.IsNaN(d.Mean) {
			rel = fmt.Sprintf("%+.1f", 100*d.Mean/ref)
		}
		row = append(row, results.Cell{Stats: []results.Stat{st}}, results.Cell{Text: rel}, results.Cell{Text: formatP(r.P(k))})
	}
	test := "paired t"
	if pairs := r.pairs(); pairs < 2 {
		test = "none (" + count(pairs, "pair") + ")" // no spread to test against
	}
	if r.Signed != nil {
		test = "Wilcoxon"
		if len(r.Signed) > 1 && r.Signed[1].Exact {
			test += " (exact)"
		}
	}
	return append(row, results.Cell{Text: test})
}

// pairs is the fewest pairs a side's difference to the reference has.
func (r Row) pairs() int {
	n := r.Seeds
	for _, d := range r.Delta[1:] {
		n = min(n, d.N)
	}
	return n
}

// perJobName names the per-job row in tables.
const perJobName = "JCT / solo runtime, per job"

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func traceName(t string) string {
	if t == "" {
		return "(run)"
	}
	return t
}

// formatP shows a p-value with two significant digits ("n/a" when the
// test had too few pairs).
func formatP(p float64) string {
	if math.IsNaN(p) {
		return "n/a"
	}
	return fmt.Sprintf("%.2g", p)
}

// Figure overlays each side's per-job JCT / solo runtime CDF, a panel per
// trace (and configuration).
func (res *Result) Figure() (*plots.Figure, error) {
	names := res.Sides
	if res.Legends != nil {
		names = res.Legends
	}
	var panels []plots.CDF
	for _, p := range res.Jobs {
		title := "trace " + p.Trace
		if p.Trace == "" {
			title = "all jobs"
		}
		c := plots.CDF{Title: title, XLabel: "JCT / solo runtime (log scale)", YLabel: "fraction of jobs ≤ x", LogX: true}
		if p.Group != "" {
			c.Title += ", " + p.Group
		}
		for k, v := range p.Values {
			if len(v) > 0 {
				c.Series = append(c.Series, plots.Dist{Name: names[k], Values: v})
			}
		}
		if len(c.Series) > 0 {
			panels = append(panels, c)
		}
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("compare: no finished job to draw")
	}
	return plots.CDFs(plots.NewStyles(names...), "per-job slowdown: "+strings.Join(res.Sides, " vs "), 3, panels...)
}
