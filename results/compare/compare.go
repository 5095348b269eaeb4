package compare

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/stats"
)

// DefaultMetrics are the summary.csv columns compared when none are named;
// EnergyMetric follows them when every directory metered energy.
var DefaultMetrics = []string{rundir.MakespanS, rundir.MeanJCTS, rundir.P95JCTS, rundir.MeanQueueS, rundir.MeanExecS, "failed_attempts"}

// EnergyMetric is the energy to solution compared by default where every
// side has it (GPU types with a power model; docs/energy.md).
const EnergyMetric = "energy_kwh"

// PerJob names the per-job row's metric: each job's JCT / solo runtime.
const PerJob = "norm_jct (per job)"

// Result is a comparison: its sides (side 0 the reference the others are
// compared with) and one row per group, trace and metric.
type Result struct {
	Sides []string
	// Legends name the sides in the figure where they are simulate
	// directories: "aegis, seed 1 (DIR)", the policy first for its colour;
	// nil otherwise (the side names).
	Legends []string
	// Metrics are the run metrics compared.
	Metrics []string
	Rows    []Row
	// Jobs holds, per group and trace, each side's per-job JCT / solo
	// runtimes (paired seeds), for the overlaid CDFs.
	Jobs []JobPanel
}

// Row compares one metric of one trace (and configuration, when the
// directories hold several) across the sides.
type Row struct {
	Group, Trace, Metric string
	// Values are each side's mean and 95 % CI over the paired seeds (over
	// the finished jobs for the per-job row).
	Values []results.Stat
	// Delta[k] is side k minus side 0, paired by seed (by seed and job for
	// the per-job row), with a paired t-test; Delta[0] is unset.
	Delta []stats.Paired
	// Signed[k] is the Wilcoxon signed-rank test of side k against side 0
	// over (seed, job) pairs; set on the per-job row only.
	Signed []stats.Signed
	// Seeds is the number of seeds present on every side.
	Seeds int
	// Runs marks the rows of simulate directories: one run a side, paired
	// whatever its seed.
	Runs bool
}

// P is the p-value of side k against side 0: the Wilcoxon test's on the
// per-job row, the paired t-test's otherwise.
func (r Row) P(k int) float64 {
	if r.Signed != nil {
		return r.Signed[k].P
	}
	return r.Delta[k].P
}

// JobPanel is one group's and trace's per-job values, by side.
type JobPanel struct {
	Group, Trace string
	Values       [][]float64
}

// side is one side of a group: runs by (trace, seed).
type side struct {
	name  string
	units map[[2]string]*unit
	order []*unit
}

// group is what one block of rows compares.
type group struct {
	name  string
	sides []side
}

// Dirs compares results directories. With one directory its
// configurations (config label plus sweep point) are the sides, the first
// the reference. With several, the directories are the sides, the first
// the reference: configurations present in all of them are compared one
// by one, or, when each directory holds a single configuration, those are
// compared whatever their names. Runs pair by trace and seed, jobs by ID.
func Dirs(dirs []string, metrics []string) (*Result, error) {
	if len(metrics) == 0 {
		metrics = slices.Clone(DefaultMetrics)
		if allHave(dirs, EnergyMetric) {
			metrics = append(metrics, EnergyMetric)
		}
	}
	var srcs []*source
	for _, d := range dirs {
		s, err := load(d, metrics)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, s)
	}
	names := sideNames(dirs)
	for i := range srcs {
		srcs[i].name = names[i]
	}
	groups, err := grouped(srcs)
	if err != nil {
		return nil, err
	}
	res := &Result{Metrics: metrics}
	for _, s := range groups[0].sides {
		res.Sides = append(res.Sides, s.name)
	}
	if len(srcs) > 1 {
		for _, s := range srcs {
			if s.run == "" {
				res.Legends = nil
				break
			}
			res.Legends = append(res.Legends, s.run+" ("+s.name+")")
		}
	}
	for _, g := range groups {
		if err := res.add(g, metrics); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// sideNames names directories by their base names, or by their paths when
// base names repeat.
func sideNames(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Base(filepath.Clean(d)))
	}
	for i, n := range out {
		if slices.Index(out, n) != i {
			for k := range dirs {
				out[k] = filepath.Clean(dirs[k])
			}
			break
		}
	}
	return out
}

// grouped pairs the sources' runs into groups of sides.
func grouped(srcs []*source) ([]group, error) {
	pick := func(s *source, variant string, name string) side {
		sd := side{name: name, units: map[[2]string]*unit{}}
		for _, u := range s.units {
			if variant == "*" || u.variant == variant {
				sd.units[[2]string{u.trace, u.seed}] = u
				sd.order = append(sd.order, u)
			}
		}
		return sd
	}
	if len(srcs) == 1 {
		vs := srcs[0].variants()
		if len(vs) < 2 {
			return nil, fmt.Errorf("%s holds one configuration: give two or more directories, or a run of several configurations", srcs[0].name)
		}
		g := group{}
		for _, v := range vs {
			g.sides = append(g.sides, pick(srcs[0], v, v))
		}
		return []group{g}, nil
	}
	same, single := true, true
	for _, s := range srcs {
		same = same && slices.Equal(s.variants(), srcs[0].variants())
		single = single && len(s.variants()) == 1
	}
	switch {
	case same:
		var gs []group
		for _, v := range srcs[0].variants() {
			g := group{name: v}
			for _, s := range srcs {
				g.sides = append(g.sides, pick(s, v, s.name))
			}
			gs = append(gs, g)
		}
		if len(gs) == 1 {
			gs[0].name = ""
		}
		return gs, nil
	case single:
		g := group{}
		for _, s := range srcs {
			g.sides = append(g.sides, pick(s, "*", s.name+" ("+s.variants()[0]+")"))
		}
		return []group{g}, nil
	}
	var have []string
	for _, s := range srcs {
		have = append(have, s.name+": "+strings.Join(s.variants(), ", "))
	}
	return nil, fmt.Errorf("the directories hold different configurations (%s): compare needs the same ones in each, or one each", strings.Join(have, "; "))
}

// add appends group g's rows: per trace of its reference side, each metric
// over the seeds every side has, then the per-job row.
func (res *Result) add(g group, metrics []string) error {
	var traces []string
	for _, u := range g.sides[0].order {
		if !slices.Contains(traces, u.trace) {
			traces = append(traces, u.trace)
		}
	}
	for _, tr := range traces {
		var seeds []string
		for _, u := range g.sides[0].order {
			if u.trace != tr {
				continue
			}
			all := true
			for _, s := range g.sides[1:] {
				all = all && s.units[[2]string{tr, u.seed}] != nil
			}
			if all {
				seeds = append(seeds, u.seed)
			}
		}
		if len(seeds) == 0 {
			return fmt.Errorf("trace %q%s: no seed that every side has (%s)", tr, groupNote(g.name), strings.Join(res.Sides, ", "))
		}
		runs := make([][]*unit, len(g.sides))
		for k, s := range g.sides {
			for _, sd := range seeds {
				runs[k] = append(runs[k], s.units[[2]string{tr, sd}])
			}
		}
		shown := shownTrace(tr, runs)
		for _, m := range metrics {
			r := metricRow(g.name, shown, m, runs)
			r.Runs = tr == ""
			res.Rows = append(res.Rows, r)
		}
		row, panel := jobRow(g.name, shown, runs)
		row.Runs = tr == ""
		res.Rows, res.Jobs = append(res.Rows, row), append(res.Jobs, panel)
	}
	return nil
}

// shownTrace names trace tr in tables and figures: simulate directories'
// runs (tr "") by the traces their simulate.json names ("philly", or
// "philly vs venus" when the sides differ), "" when none does.
func shownTrace(tr string, runs [][]*unit) string {
	if tr != "" {
		return tr
	}
	var names []string
	for _, side := range runs {
		for _, u := range side {
			if u.shown != "" && !slices.Contains(names, u.shown) {
				names = append(names, u.shown)
			}
		}
	}
	return strings.Join(names, " vs ")
}

func groupNote(g string) string {
	if g == "" {
		return ""
	}
	return ", " + g
}

// metricRow compares metric m over the paired runs (runs[k][i]: side k's
// run of the i-th seed).
func metricRow(g, tr, m string, runs [][]*unit) Row {
	r := Row{Group: g, Trace: tr, Metric: m, Seeds: len(runs[0])}
	for k := range runs {
		var xs, d []float64
		for i, u := range runs[k] {
			xs = append(xs, u.metrics[m])
			d = append(d, u.metrics[m]-runs[0][i].metrics[m])
		}
		r.Values = append(r.Values, results.StatOf(xs))
		if k == 0 {
			r.Delta = append(r.Delta, stats.Paired{})
			continue
		}
		r.Delta = append(r.Delta, stats.PairedT(finiteOnly(d)))
	}
	return r
}

// jobRow compares the jobs' JCT / solo runtime, paired by seed and job ID
// (jobs finished on both sides).
func jobRow(g, tr string, runs [][]*unit) (Row, JobPanel) {
	r := Row{Group: g, Trace: tr, Metric: PerJob, Seeds: len(runs[0])}
	p := JobPanel{Group: g, Trace: tr}
	for k := range runs {
		var xs, d []float64
		for i, u := range runs[k] {
			ref := runs[0][i]
			for _, id := range sortedIDs(u.jobs) {
				v := u.jobs[id]
				if !finite(v) {
					continue
				}
				xs = append(xs, v)
				if w, ok := ref.jobs[id]; ok && finite(w) {
					d = append(d, v-w)
				}
			}
		}
		p.Values = append(p.Values, xs)
		r.Values = append(r.Values, results.StatOf(xs))
		if k == 0 {
			r.Delta, r.Signed = append(r.Delta, stats.Paired{}), append(r.Signed, stats.Signed{})
			continue
		}
		r.Delta, r.Signed = append(r.Delta, stats.PairedT(d)), append(r.Signed, stats.Wilcoxon(d))
	}
	return r, p
}

func sortedIDs(m map[string]float64) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func finiteOnly(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if finite(x) {
			out = append(out, x)
		}
	}
	return out
}
