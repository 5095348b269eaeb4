package measured

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results"
)

// Step is a step function of time: the value V[i] holds from T[i] until
// T[i+1] (the last until the run's end).
type Step struct {
	T []float64
	V []int
}

// Running is the number of jobs running at once over time: each job counts
// from the launch of the attempt that completed to its completion (failed
// attempts do not count; the testbed's notes count the same way). A job
// that ends when another starts is counted once.
func (r *Run) Running() Step {
	type edge struct {
		t float64
		d int
	}
	es := make([]edge, 0, 2*len(r.Jobs))
	for _, j := range r.Jobs {
		es = append(es, edge{j.Last, 1}, edge{j.Finish, -1})
	}
	slices.SortStableFunc(es, func(a, b edge) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return a.d - b.d // ends first
	})
	var s Step
	n := 0
	for k, e := range es {
		n += e.d
		if k+1 < len(es) && es[k+1].t == e.t {
			continue
		}
		if len(s.V) > 0 && s.V[len(s.V)-1] == n {
			continue
		}
		s.T, s.V = append(s.T, e.t), append(s.V, n)
	}
	return s
}

// Metrics are a run's figures that the comparison sets side by side.
type Metrics struct {
	MaxRunning  int     // most jobs running at once
	MeanRunning float64 // jobs running at once, time-weighted over the makespan
	Makespan    float64 // first submission to last completion, s
	MeanSpan    float64 // mean execution span (first launch to completion), s
	P95Span     float64
	MeanQueue   float64 // mean wait, s
	P95Queue    float64
	MeanJCT     float64 // mean completion − submission, s
	Failed      int     // failed attempts
	// The dispatch timeline: the gaps between consecutive first launches
	// (jobs in launch order), s: the least and the 10th percentile (0
	// with fewer than two jobs), and the hold cycle, the median of those
	// gaps of at least HoldCycleMin during which a job waited (the later
	// one was submitted before the earlier launched) and no job completed
	// (0 when there is none; a completion logged up to CompletionSlack
	// after the later launch counts): how long a placement kept the next one
	// waiting (docs/measured.md).
	LaunchGapMin, LaunchGapP10, HoldCycle float64
}

// HoldCycleMin is the least gap between consecutive first launches that
// Metrics.HoldCycle counts: shorter gaps are launches in one round (the
// testbed's loop placed one job per 2-4 s), not a hold ending.
const HoldCycleMin = 20.0

// CompletionSlack is how long after a launch a completion may be logged
// and still count as the one that let it start: the testbed's files log a
// job's completion up to 0.5 s after its scheduler saw the process exit and
// launched the next job (its Exclusive runs).
const CompletionSlack = 2.0

// timeline computes the dispatch timeline's figures of m from r's jobs.
func (r *Run) timeline(m *Metrics) {
	if len(r.Jobs) < 2 {
		return
	}
	js := slices.Clone(r.Jobs)
	slices.SortStableFunc(js, func(a, b Job) int { return cmp.Compare(a.Start, b.Start) })
	ends := make([]float64, len(r.Jobs))
	for i, j := range r.Jobs {
		ends[i] = j.Finish
	}
	slices.Sort(ends)
	var gaps, cycles []float64
	for i := 1; i < len(js); i++ {
		a, b := js[i-1], js[i]
		g := b.Start - a.Start
		gaps = append(gaps, g)
		if g < HoldCycleMin || b.Submit >= a.Start {
			continue
		}
		// A completion in (a.Start, b.Start + CompletionSlack] may have
		// freed what b took.
		if k := sort.SearchFloat64s(ends, math.Nextafter(a.Start, math.Inf(1))); k < len(ends) && ends[k] <= b.Start+CompletionSlack {
			continue
		}
		cycles = append(cycles, g)
	}
	m.LaunchGapMin, m.LaunchGapP10 = slices.Min(gaps), policies.Quantile(gaps, 0.1)
	if len(cycles) > 0 {
		m.HoldCycle = policies.Quantile(cycles, 0.5)
	}
}

// Metrics computes r's metrics.
func (r *Run) Metrics() Metrics {
	var m Metrics
	if len(r.Jobs) == 0 {
		return m
	}
	var spans, queues, jcts []float64
	end := 0.0
	for _, j := range r.Jobs {
		spans, queues = append(spans, j.Span()), append(queues, j.Queue)
		jcts = append(jcts, j.Finish-j.Submit)
		end = max(end, j.Finish)
		m.Failed += j.Failed
	}
	m.Makespan = end
	m.MeanSpan, m.P95Span = policies.Mean(spans), policies.Quantile(spans, 0.95)
	m.MeanQueue, m.P95Queue = policies.Mean(queues), policies.Quantile(queues, 0.95)
	m.MeanJCT = policies.Mean(jcts)
	s := r.Running()
	var area float64
	for i, v := range s.V {
		m.MaxRunning = max(m.MaxRunning, v)
		next := end
		if i+1 < len(s.T) {
			next = s.T[i+1]
		}
		area += float64(v) * (next - s.T[i])
	}
	if end > 0 {
		m.MeanRunning = area / end
	}
	r.timeline(&m)
	return m
}

// JobError is how far one simulated run's per-job execution spans are from
// the measured ones: over the jobs, ratio = ours ÷ measured.
type JobError struct {
	MedianRatio float64 // median of the ratios (bias)
	MedianAbs   float64 // median |ratio − 1|
	P90Abs      float64 // 90th percentile of |ratio − 1|
	Ratios      []float64
}

// MismatchError says that a simulated run's jobs do not match the measured
// run's: the trace replayed is not the one measured.
type MismatchError struct {
	Job                   int // position in submission order
	Measured, Simulated   string
	MeasuredN, SimulatedN int
}

func (e *MismatchError) Error() string {
	if e.MeasuredN != e.SimulatedN {
		return fmt.Sprintf("the measured run has %d jobs, the simulated trace %d: not the same trace", e.MeasuredN, e.SimulatedN)
	}
	return fmt.Sprintf("job %d (in submission order) is %s in the measured run and %s in the simulated trace: not the same trace",
		e.Job, e.Measured, e.Simulated)
}

// Errors pairs the jobs of meas and sim by submission order (the trace's job
// order) and returns the per-job span error. A job whose workload both runs
// name must have the same one; the runs must have the same number of jobs.
func Errors(meas, sim *Run) (JobError, error) {
	if len(meas.Jobs) != len(sim.Jobs) {
		return JobError{}, &MismatchError{MeasuredN: len(meas.Jobs), SimulatedN: len(sim.Jobs)}
	}
	var e JobError
	var abs []float64
	for i, m := range meas.Jobs {
		s := sim.Jobs[i]
		if m.Workload != "" && s.Workload != "" && m.Workload != s.Workload {
			return e, &MismatchError{Job: i, Measured: m.Workload, Simulated: s.Workload, MeasuredN: len(meas.Jobs), SimulatedN: len(sim.Jobs)}
		}
		if m.Span() <= 0 {
			continue
		}
		r := s.Span() / m.Span()
		e.Ratios = append(e.Ratios, r)
		abs = append(abs, math.Abs(r-1))
	}
	e.MedianRatio = policies.Quantile(e.Ratios, 0.5)
	e.MedianAbs, e.P90Abs = policies.Quantile(abs, 0.5), policies.Quantile(abs, 0.9)
	return e, nil
}

// Comparison is a measured run beside simulated runs of the same trace and
// configuration, one per seed.
type Comparison struct {
	Measured *Run
	Sims     []*Run // one per seed
	Seeds    []uint64
	M        Metrics
	S        []Metrics
	E        []JobError
	// Floor is the per-job span error between the seeds' own runs
	// (Floor): what E's medians are read against.
	Floor SeedFloor
	// Readings, when not nil, is what the GPUs read (WriteMarkdown adds
	// it).
	Readings *Readings
}

// Compare sets meas beside sims (one per seed, in the order of seeds).
func Compare(meas *Run, sims []*Run, seeds []uint64) (*Comparison, error) {
	if len(sims) == 0 || len(sims) != len(seeds) {
		return nil, fmt.Errorf("measured: %d simulated runs for %d seeds", len(sims), len(seeds))
	}
	c := &Comparison{Measured: meas, Sims: sims, Seeds: seeds, M: meas.Metrics()}
	for _, s := range sims {
		e, err := Errors(meas, s)
		if err != nil {
			return nil, err
		}
		c.S, c.E = append(c.S, s.Metrics()), append(c.E, e)
	}
	c.Floor = Floor(sims)
	return c, nil
}

// Stat is a simulated metric over the seeds (mean ± 95 % CI).
func (c *Comparison) Stat(f func(Metrics) float64) results.Stat {
	xs := make([]float64, len(c.S))
	for i, m := range c.S {
		xs[i] = f(m)
	}
	return results.StatOf(xs)
}

// ErrStat is a per-job error figure over the seeds (mean ± 95 % CI).
func (c *Comparison) ErrStat(f func(JobError) float64) results.Stat {
	xs := make([]float64, len(c.E))
	for i, e := range c.E {
		xs[i] = f(e)
	}
	return results.StatOf(xs)
}

// SeedFloor is the per-job execution span error between our own seeds, the
// floor a per-job error against one measured run cannot go under: for each
// pair of seeds (a, b), a before b in the order given, N·(N−1)/2 pairs of
// N seeds, the median over the jobs both ran (matched by id) of
// |span_b ÷ span_a − 1|; Median is the median over the pairs, Min and Max
// their range. With fewer than two seeds Pairs is 0 and the figures NaN.
type SeedFloor struct {
	Pairs            int
	Median, Min, Max float64
}

// Floor computes the seed floor of sims, one run per seed
// (docs/measured.md): deterministic, from the runs alone.
func Floor(sims []*Run) SeedFloor {
	f := SeedFloor{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	var meds []float64
	for i, a := range sims {
		for _, b := range sims[i+1:] {
			if abs := pairErrors(a, b); len(abs) > 0 {
				meds = append(meds, policies.Quantile(abs, 0.5))
			}
		}
	}
	if f.Pairs = len(meds); f.Pairs > 0 {
		f.Median, f.Min, f.Max = policies.Quantile(meds, 0.5), slices.Min(meds), slices.Max(meds)
	}
	return f
}

// pairErrors is |span_b ÷ span_a − 1| over the jobs of b that a ran too
// (matched by id, a's span positive), in b's order.
func pairErrors(a, b *Run) []float64 {
	spans := make(map[string]float64, len(a.Jobs))
	for _, j := range a.Jobs {
		spans[j.ID] = j.Span()
	}
	var abs []float64
	for _, j := range b.Jobs {
		if s, ok := spans[j.ID]; ok && s > 0 {
			abs = append(abs, math.Abs(j.Span()/s-1))
		}
	}
	return abs
}
