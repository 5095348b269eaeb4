package measured

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// SignalNames are the DCGM signals compared, in the order of Signals'
// arrays.
var SignalNames = [3]string{"smact", "smocc", "drama"}

// Signals summarise SMACT, SMOCC and DRAMA over a run's GPU-seconds (every
// GPU's 1 Hz samples, idle ones included): mean, median and 95th
// percentile, indexed as SignalNames.
type Signals struct {
	Mean, P50, P95 [3]float64
}

// stats are Signals' statistics by the names the testbed's files use.
var stats = []string{"mean", "p50", "p95"}

func (s *Signals) at(stat string) *[3]float64 {
	switch stat {
	case "mean":
		return &s.Mean
	case "p50":
		return &s.P50
	}
	return &s.P95
}

// SignalsOf summarises a run's telemetry.
func SignalsOf(t *runfiles.Telemetry) Signals {
	var xs [3][]float64
	for _, g := range t.S {
		for _, x := range g {
			xs[0], xs[1], xs[2] = append(xs[0], x.SMACT), append(xs[1], x.SMOCC), append(xs[2], x.DRAMA)
		}
	}
	var s Signals
	for k := range xs {
		s.Mean[k], s.P50[k], s.P95[k] = policies.Mean(xs[k]), policies.Quantile(xs[k], 0.5), policies.Quantile(xs[k], 0.95)
	}
	return s
}

// MeanAbsError is the mean |a − b| over the three signals and three
// statistics.
func MeanAbsError(a, b Signals) float64 {
	var sum float64
	for _, st := range stats {
		x, y := a.at(st), b.at(st)
		for k := range x {
			d := x[k] - y[k]
			if d < 0 {
				d = -d
			}
			sum += d
		}
	}
	return sum / 9
}

// ReadDCGM reads one run's signal distributions from the testbed's
// dcgm_run_distributions.csv (columns trace, raw_label, metric, stat,
// value): the rows of trace and label. Every signal's mean, p50 and p95
// must be there.
func ReadDCGM(name string, r io.Reader, trace, label string) (Signals, error) {
	var s Signals
	t, err := runfiles.ParseTable(name, r, "trace", "raw_label", "metric", "stat", "value")
	if err != nil {
		return s, err
	}
	seen := map[string]bool{}
	for i := range t.Len() {
		if t.String(i, "trace") != trace || t.String(i, "raw_label") != label {
			continue
		}
		m, st := t.String(i, "metric"), t.String(i, "stat")
		k := slices.Index(SignalNames[:], m)
		if k < 0 || !slices.Contains(stats, st) {
			continue
		}
		v, err := t.Float(i, "value")
		if err != nil {
			return s, err
		}
		s.at(st)[k] = v
		seen[m+" "+st] = true
	}
	for _, m := range SignalNames {
		for _, st := range stats {
			if !seen[m+" "+st] {
				return s, fmt.Errorf("%s: no %s %s row for trace %q, run %q", name, m, st, trace, label)
			}
		}
	}
	return s, nil
}

// DepthRow is what a run's GPUs read with Depth jobs on them: the share of
// GPU-seconds at that depth, the mean of each signal there, and the share
// of those seconds whose reading is over the pressure rule (SMACT ≥ τ1
// and (SMOCC ≥ τ2 or DRAMA ≥ τ3)).
type DepthRow struct {
	Depth    int // MaxDepth: that many or more
	Share    float64
	Mean     [3]float64
	OverRule float64
}

// MaxDepth is the deepest row of Depths; deeper GPUs count there.
const MaxDepth = 8

// Depths tabulates runs' telemetry by the number of jobs on the GPU (from
// each run's attempts, failed ones included while they ran), pooled over
// the runs. tau is the rule's thresholds.
func Depths(tels []*runfiles.Telemetry, atts [][]runfiles.Attempt, tau [3]float64) []DepthRow {
	type acc struct {
		n, over float64
		sum     [3]float64
	}
	var by [MaxDepth + 1]acc
	total := 0.0
	for r, t := range tels {
		for g, samples := range t.S {
			depth := make([]int, len(samples)+1)
			for _, a := range atts[r] {
				if !slices.Contains(a.GPUs, g) {
					continue
				}
				end := a.End
				if end < 0 {
					end = float64(len(samples))
				}
				for k := max(0, ceil(a.Start)); k < len(samples) && float64(k) < end; k++ {
					depth[k]++
				}
			}
			for k, x := range samples {
				d := min(depth[k], MaxDepth)
				b := &by[d]
				b.n++
				b.sum[0], b.sum[1], b.sum[2] = b.sum[0]+x.SMACT, b.sum[1]+x.SMOCC, b.sum[2]+x.DRAMA
				if x.SMACT >= tau[0] && (x.SMOCC >= tau[1] || x.DRAMA >= tau[2]) {
					b.over++
				}
				total++
			}
		}
	}
	var rows []DepthRow
	for d, b := range by {
		if b.n == 0 {
			continue
		}
		rows = append(rows, DepthRow{Depth: d, Share: b.n / total, Mean: [3]float64{b.sum[0] / b.n, b.sum[1] / b.n, b.sum[2] / b.n},
			OverRule: b.over / b.n})
	}
	return rows
}

// ceil is the first whole second at or after t.
func ceil(t float64) int {
	k := int(t)
	if float64(k) < t {
		k++
	}
	return k
}

// Readings are the telemetry side of a comparison: the measured run's DCGM
// distributions (nil when not given), ours per seed, and what our GPUs
// read by depth (pooled over the seeds) under the rule's thresholds Tau.
type Readings struct {
	Measured *Signals
	Ours     []Signals
	Depth    []DepthRow
	Tau      [3]float64
}

// WriteMarkdown writes the readings as Markdown tables.
func (r *Readings) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("\nWhat the GPUs read, over all GPU-seconds of the run (idle ones included)")
	if r.Measured != nil {
		b.WriteString(": measured (DCGM) / ours (mean over the seeds)")
	}
	b.WriteString(":\n\n| signal | mean | p50 | p95 |\n|---|---|---|---|\n")
	var ours Signals
	for _, s := range r.Ours {
		for _, st := range stats {
			o, x := ours.at(st), s.at(st)
			for k := range o {
				o[k] += x[k] / float64(len(r.Ours))
			}
		}
	}
	for k, m := range SignalNames {
		fmt.Fprintf(&b, "| %s |", m)
		for _, st := range stats {
			if r.Measured != nil {
				fmt.Fprintf(&b, " %.3f / %.3f |", r.Measured.at(st)[k], ours.at(st)[k])
			} else {
				fmt.Fprintf(&b, " %.3f |", ours.at(st)[k])
			}
		}
		b.WriteString("\n")
	}
	if r.Measured != nil {
		fmt.Fprintf(&b, "\nMean |ours − measured| over the three signals and statistics: %.3f.\n", MeanAbsError(*r.Measured, ours))
	}
	fmt.Fprintf(&b, "\nOurs by the number of jobs on the GPU: share of GPU-seconds, mean signals, and the share of seconds "+
		"whose reading is over the pressure rule (SMACT ≥ %g and (SMOCC ≥ %g or DRAMA ≥ %g)):\n\n", r.Tau[0], r.Tau[1], r.Tau[2])
	b.WriteString("| jobs on the GPU | share | SMACT | SMOCC | DRAMA | over the rule |\n|---|---|---|---|---|---|\n")
	for _, d := range r.Depth {
		name := fmt.Sprint(d.Depth)
		if d.Depth == MaxDepth {
			name += " or more"
		}
		fmt.Fprintf(&b, "| %s | %.3f | %.2f | %.2f | %.2f | %.2f |\n", name, d.Share, d.Mean[0], d.Mean[1], d.Mean[2], d.OverRule)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
