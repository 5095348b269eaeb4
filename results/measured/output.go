package measured

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/plots"
)

// FigureSeeds is how many seeds' lines the concurrency figure draws beside
// the measured one.
const FigureSeeds = 3

// Figure draws jobs running at once over time: the measured run's line
// (black and thicker, the colour of no policy) and the first FigureSeeds
// seeds' lines in policy's colour (AEGIS blue, as in every figure), one
// dash pattern per seed. title names what was compared.
func (c *Comparison) Figure(title, policy string) (*plots.Figure, error) {
	line := func(name string, r *Run) plots.Series {
		s := r.Running()
		x, y := make([]float64, len(s.T)), make([]float64, len(s.V))
		for i := range s.T {
			x[i], y[i] = s.T[i]/3600, float64(s.V[i])
		}
		return plots.Series{Name: name, X: x, Y: y}
	}
	m := line("measured", c.Measured)
	m.Reference = true
	ln := plots.Lines{Title: "jobs running at once", XLabel: "hours since the first submission", YLabel: "jobs", Steps: true,
		Series: []plots.Series{m}}
	for i, s := range c.Sims[:min(len(c.Sims), FigureSeeds)] {
		l := line(fmt.Sprintf("%s, seed %d", policy, c.Seeds[i]), s)
		l.Style, l.Variant = policy, i
		ln.Series = append(ln.Series, l)
	}
	return plots.LinePanels(nil, title, ln)
}

// row is one line of the side-by-side table.
type row struct {
	key    string // summary.csv's name
	name   string
	m      float64
	f      func(Metrics) float64
	digits int
	rel    bool // show the difference in percent
}

func (c *Comparison) rows() []row {
	return []row{
		{"max_running", "jobs running at once, max", float64(c.M.MaxRunning), func(m Metrics) float64 { return float64(m.MaxRunning) }, 1, false},
		{"mean_running", "jobs running at once, time-weighted mean", c.M.MeanRunning, func(m Metrics) float64 { return m.MeanRunning }, 2, false},
		{"makespan_s", "makespan, s", c.M.Makespan, func(m Metrics) float64 { return m.Makespan }, 0, true},
		{"span_mean_s", "execution span mean, s", c.M.MeanSpan, func(m Metrics) float64 { return m.MeanSpan }, 0, true},
		{"span_p95_s", "execution span p95, s", c.M.P95Span, func(m Metrics) float64 { return m.P95Span }, 0, true},
		{"queue_mean_s", "queue mean, s", c.M.MeanQueue, func(m Metrics) float64 { return m.MeanQueue }, 0, true},
		{"queue_p95_s", "queue p95, s", c.M.P95Queue, func(m Metrics) float64 { return m.P95Queue }, 0, true},
		{"jct_mean_s", "JCT mean, s", c.M.MeanJCT, func(m Metrics) float64 { return m.MeanJCT }, 0, true},
		{"failed_attempts", "failed attempts", float64(c.M.Failed), func(m Metrics) float64 { return float64(m.Failed) }, 1, false},
		{"launch_gap_min_s", "first launches, least gap, s", c.M.LaunchGapMin, func(m Metrics) float64 { return m.LaunchGapMin }, 1, false},
		{"launch_gap_p10_s", "first launches, gap p10, s", c.M.LaunchGapP10, func(m Metrics) float64 { return m.LaunchGapP10 }, 1, false},
		{"hold_cycle_median_s", "hold cycle median, s", c.M.HoldCycle, func(m Metrics) float64 { return m.HoldCycle }, 1, false},
	}
}

// seedList is "1, 2, 3".
func seedList(seeds []uint64) string {
	s := make([]string, len(seeds))
	for i, v := range seeds {
		s[i] = strconv.FormatUint(v, 10)
	}
	return strings.Join(s, ", ")
}

// WriteMarkdown writes the comparison as Markdown: the side-by-side table,
// the per-job span error and the jobs furthest off. what names the
// simulated configuration.
func (c *Comparison) WriteMarkdown(w io.Writer, what string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured: %s (%d jobs). Ours: %s, seeds %s; mean ± 95 %% CI over the seeds.\n\n",
		c.Measured.Name, len(c.Measured.Jobs), what, seedList(c.Seeds))
	b.WriteString("| measure | measured | ours | ours − measured |\n|---|---|---|---|\n")
	for _, r := range c.rows() {
		st := c.Stat(r.f)
		d := st.Mean - r.m
		diff := fmt.Sprintf("%+.*f", r.digits, d)
		if r.rel && r.m != 0 {
			diff = fmt.Sprintf("%+.1f %%", 100*d/r.m)
		}
		fmt.Fprintf(&b, "| %s | %.*f | %s | %s |\n", r.name, min(r.digits, 2), r.m, statText(st, r.digits), diff)
		if r.key == "failed_attempts" {
			fmt.Fprintf(&b, "| failed attempts per seed | %d | %s | |\n", c.M.Failed, c.failedPerSeed())
		}
	}
	b.WriteString("\nPer job, execution span (first launch to completion) ours ÷ measured, jobs paired in submission order:\n\n")
	b.WriteString("| per-job error | ours |\n|---|---|\n")
	for _, x := range []struct {
		name string
		f    func(JobError) float64
	}{
		{"median ratio", func(e JobError) float64 { return e.MedianRatio }},
		{"median \\|ratio − 1\\|", func(e JobError) float64 { return e.MedianAbs }},
		{"p90 \\|ratio − 1\\|", func(e JobError) float64 { return e.P90Abs }},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", x.name, statText(c.ErrStat(x.f), 3))
	}
	b.WriteString(c.floorText())
	b.WriteString("\nThe jobs furthest off (ratio: median over the seeds):\n\n| job | workload | measured span, s | ratio |\n|---|---|---|---|\n")
	for _, k := range c.worst(5) {
		j := c.Measured.Jobs[k.i]
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.2f |\n", j.ID, j.Workload, j.Span(), k.r)
	}
	if c.Readings != nil {
		if err := c.Readings.WriteMarkdown(&b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// floorText is the seed floor's row of the per-job table and the sentence
// that reads the per-job error against it.
func (c *Comparison) floorText() string {
	f := c.Floor
	if f.Pairs == 0 {
		return "| seed floor: median \\|ratio − 1\\| between two of our seeds | needs two seeds (--seeds) |\n"
	}
	return fmt.Sprintf("| seed floor: median \\|ratio − 1\\| between two of our seeds, median over the %d %s (range) | %.3f (%.3f–%.3f) |\n\n"+
		"Read against the seed floor: a per-job median |error| of %.3f vs a seed floor of %.3f. Our own seeds' spans differ per job by "+
		"the floor, so even a model whose runs were draws of the measured one would score about the floor against a single measured run.\n",
		f.Pairs, plural(f.Pairs, "pair of seeds", "pairs of seeds"), f.Median, f.Min, f.Max,
		c.ErrStat(func(e JobError) float64 { return e.MedianAbs }).Mean, f.Median)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// failedPerSeed lists the seeds' failed attempts as integers.
func (c *Comparison) failedPerSeed() string {
	s := make([]string, len(c.S))
	for i, m := range c.S {
		s[i] = strconv.Itoa(m.Failed)
	}
	return strings.Join(s, ", ")
}

func statText(s results.Stat, digits int) string {
	if s.N > 1 {
		return fmt.Sprintf("%.*f ± %.*f", digits, s.Mean, digits, s.CI95)
	}
	return fmt.Sprintf("%.*f", digits, s.Mean)
}

type jobRatio struct {
	i int
	r float64
}

// medianRatios is each measured job's span ratio, median over the seeds
// (NaN for a job of zero measured span).
func (c *Comparison) medianRatios() []float64 {
	out := make([]float64, len(c.Measured.Jobs))
	for i, j := range c.Measured.Jobs {
		if j.Span() <= 0 {
			out[i] = math.NaN()
			continue
		}
		var rs []float64
		for _, s := range c.Sims {
			rs = append(rs, s.Jobs[i].Span()/j.Span())
		}
		out[i] = policies.Quantile(rs, 0.5)
	}
	return out
}

// worst is the n jobs with the largest |median ratio − 1|.
func (c *Comparison) worst(n int) []jobRatio {
	var ks []jobRatio
	for i, r := range c.medianRatios() {
		if !math.IsNaN(r) {
			ks = append(ks, jobRatio{i, r})
		}
	}
	slices.SortStableFunc(ks, func(a, b jobRatio) int {
		da, db := math.Abs(a.r-1), math.Abs(b.r-1)
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	return ks[:min(n, len(ks))]
}

// jobFloor is job i's span error between our seeds: the median over the
// pairs of seeds (a before b) of |span_b ÷ span_a − 1| (NaN with one seed,
// or where no pair has a positive span_a).
func (c *Comparison) jobFloor(i int) float64 {
	var abs []float64
	for k, a := range c.Sims {
		for _, b := range c.Sims[k+1:] {
			if s := a.Jobs[i].Span(); s > 0 {
				abs = append(abs, math.Abs(b.Jobs[i].Span()/s-1))
			}
		}
	}
	if len(abs) == 0 {
		return math.NaN()
	}
	return policies.Quantile(abs, 0.5)
}

// WriteJobsCSV writes one row per job: its measured submission, launches,
// completion, span and failed attempts, and ours: span and failed attempts
// per seed, the median span ratio, and the job's span error between our
// seeds (jobFloor; empty with one seed).
func (c *Comparison) WriteJobsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"job", "workload", "submit_s", "start_s", "last_start_s", "finish_s", "span_s", "queue_s", "failed_attempts"}
	for _, s := range c.Seeds {
		head = append(head, fmt.Sprintf("ours_span_s_seed%d", s), fmt.Sprintf("ours_failed_seed%d", s))
	}
	head = append(head, "span_ratio_median", "seed_pair_abs_err_median")
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	ratios := c.medianRatios()
	for i, j := range c.Measured.Jobs {
		rec := []string{j.ID, j.Workload, f(j.Submit), f(j.Start), f(j.Last), f(j.Finish), f(j.Span()), f(j.Queue), strconv.Itoa(j.Failed)}
		for _, s := range c.Sims {
			rec = append(rec, f(s.Jobs[i].Span()), strconv.Itoa(s.Jobs[i].Failed))
		}
		r := ""
		if !math.IsNaN(ratios[i]) {
			r = strconv.FormatFloat(ratios[i], 'f', 4, 64)
		}
		p := ""
		if x := c.jobFloor(i); !math.IsNaN(x) {
			p = strconv.FormatFloat(x, 'f', 4, 64)
		}
		if err := cw.Write(append(rec, r, p)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// SummaryColumns is summary.csv's header (WriteSummaryCSV): aegis plot
// recognises an aegis measured --out directory by it.
var SummaryColumns = []string{"measure", "measured", "ours_mean", "ours_ci95", "seeds"}

// FloorKey is summary.csv's row of the seed floor (Floor): ours_mean the
// median over the pairs of seeds, ours_ci95 empty; ours_mean empty too with
// one seed.
const FloorKey = "job_span_abs_err_seed_floor"

// WriteSummaryCSV writes the comparison's figures, one row each: key,
// measured, ours (mean and 95 % CI half-width over the seeds), seeds. The
// per-job span errors have no measured value (empty); the last row is the
// seed floor (FloorKey).
func (c *Comparison) WriteSummaryCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	n := strconv.Itoa(len(c.Seeds))
	if err := cw.Write(SummaryColumns); err != nil {
		return err
	}
	for _, r := range c.rows() {
		st := c.Stat(r.f)
		if err := cw.Write([]string{r.key, f(r.m), f(st.Mean), f(st.CI95), n}); err != nil {
			return err
		}
	}
	for _, x := range []struct {
		key string
		f   func(JobError) float64
	}{
		{"job_span_ratio_median", func(e JobError) float64 { return e.MedianRatio }},
		{"job_span_abs_err_median", func(e JobError) float64 { return e.MedianAbs }},
		{"job_span_abs_err_p90", func(e JobError) float64 { return e.P90Abs }},
	} {
		st := c.ErrStat(x.f)
		if err := cw.Write([]string{x.key, "", f(st.Mean), f(st.CI95), n}); err != nil {
			return err
		}
	}
	// The seed floor: a median over the pairs of seeds, no CI; empty with
	// one seed.
	floor := ""
	if c.Floor.Pairs > 0 {
		floor = f(c.Floor.Median)
	}
	if err := cw.Write([]string{FloorKey, "", floor, "", n}); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
