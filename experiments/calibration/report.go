package calibration

import (
	"fmt"
	"math"
	"slices"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/sim"
	"gonum.org/v1/gonum/stat"
)

// Model is the part of the truth the stacking data tests: how fast
// co-located jobs run and what telemetry they show together.
type Model struct {
	Interference models.Interference
	Telemetry    models.TelemetryParams
	// Truth overrides the simulator's default truth settings when not nil
	// (e.g. speed_jitter, to compare the spread over seeds with the
	// testbed's run-to-run spread).
	Truth *sim.Truth
}

// SeqRow compares one sequence's no-deferral runs with their replay (the
// replay averaged over seeds).
type SeqRow struct {
	Sequence                          string
	Jobs                              int
	SimMakespanS, MeasMakespanS       float64
	SimMeanSlowdown, MeasMeanSlowdown float64
	SimMaxSlowdown, MeasMaxSlowdown   float64
	// Makespan standard deviation over the seeds and over the measured runs.
	SimMakespanSDS, MeasMakespanSDS float64
}

// GridRow compares one measured run of the threshold grid with its replay
// under the same thresholds (first seed).
type GridRow struct {
	stacking.GridRun
	SimFirstRejected, SimDeferrals int
	SimMakespanS                   float64
}

// Summary condenses a Report.
type Summary struct {
	// Stacks: median absolute percentage errors (fractions) of makespan and
	// mean slowdown over the sequences, and how many sequences have their
	// max slowdown within 10 %.
	Sequences                          int
	MakespanMedianAPE, MeanSlowdownAPE float64
	MaxSlowdownWithin10                int
	// Admissions: grid settings, how many got the first rejected position
	// right, where the replay deferred although the testbed never did,
	// deferred earlier or later than it, or never deferred although it did.
	Settings, FirstRight              int
	SimOnly, Earlier, Later, MeasOnly int
	// DeferralsSpearman is the rank correlation of simulated and measured
	// deferral counts; GridMakespanMedianAPE the grid runs' makespan error.
	DeferralsSpearman, GridMakespanMedianAPE float64
	// What the counts' ranking follows: the rank correlation of the
	// measured counts with the simulated first rejected position alone
	// (earlier ranks higher, none lowest) and with the measured one (what
	// a model right on every position would reach by position alone).
	SimPositionSpearman, MeasPositionSpearman float64
	// FirstRightPer is FirstRight per grid sequence.
	FirstRightPer map[string]int
	// BriefDeferrals and SimBriefDeferrals count the grid runs that
	// deferred 1 to 10 times (rejected, then admitted within seconds),
	// measured and replayed.
	BriefDeferrals, SimBriefDeferrals int
}

// briefMax is the most deferrals a run counts as brief.
const briefMax = 10

// Report compares a model's replays with the stacking measurements.
type Report struct {
	Seqs []SeqRow
	Grid []GridRow
	Summary
}

// replayMean replays a sequence without filter under seeds 1..seeds and
// averages makespan and slowdowns.
func replayMean(seq stacking.Sequence, m Model, seeds int) (SeqRow, error) {
	row := SeqRow{Sequence: seq.Name, Jobs: len(seq.Jobs)}
	var ms []float64
	for s := 1; s <= seeds; s++ {
		r, err := stacking.Replay(seq, stacking.Config{NoFilter: true, Interference: m.Interference, Telemetry: &m.Telemetry, Truth: m.Truth, Seed: uint64(s)})
		if err != nil {
			return row, err
		}
		ms = append(ms, r.MakespanS)
		row.SimMakespanS += r.MakespanS / float64(seeds)
		row.SimMeanSlowdown += r.MeanSlowdown / float64(seeds)
		row.SimMaxSlowdown += r.MaxSlowdown / float64(seeds)
	}
	if seeds > 1 {
		row.SimMakespanSDS = stat.StdDev(ms, nil)
	}
	return row, nil
}

// Evaluate replays every sequence of d without filter (averaged over seeds
// 1..seeds) and every grid run with its thresholds (seed 1), and compares
// them with the measurements.
func Evaluate(d *stacking.Data, m Model, seeds int) (*Report, error) {
	rep := &Report{}
	for _, s := range d.Sequences {
		t, ok := d.Target(s.Name, "no_deferral")
		if !ok {
			continue
		}
		row, err := replayMean(s, m, seeds)
		if err != nil {
			return nil, err
		}
		row.MeasMakespanS, row.MeasMeanSlowdown, row.MeasMaxSlowdown = t.MakespanS, t.MeanSlowdown, t.MaxSlowdown
		row.MeasMakespanSDS = t.MakespanSDS
		rep.Seqs = append(rep.Seqs, row)
	}
	for _, g := range d.Grid {
		s, _ := d.Sequence(g.Sequence)
		r, err := stacking.Replay(s, stacking.Config{Thresholds: g.Thresholds, Interference: m.Interference, Telemetry: &m.Telemetry, Truth: m.Truth, Seed: 1})
		if err != nil {
			return nil, err
		}
		rep.Grid = append(rep.Grid, GridRow{GridRun: g, SimFirstRejected: r.FirstRejected, SimDeferrals: r.Deferrals, SimMakespanS: r.MakespanS})
	}
	rep.Summary = summarize(rep.Seqs, rep.Grid)
	return rep, nil
}

func summarize(seqs []SeqRow, grid []GridRow) Summary {
	var s Summary
	var ms, mean []float64
	for _, r := range seqs {
		ms = append(ms, ape(r.SimMakespanS, r.MeasMakespanS))
		mean = append(mean, ape(r.SimMeanSlowdown, r.MeasMeanSlowdown))
		if ape(r.SimMaxSlowdown, r.MeasMaxSlowdown) <= 0.10 {
			s.MaxSlowdownWithin10++
		}
	}
	s.Sequences = len(seqs)
	s.MakespanMedianAPE, s.MeanSlowdownAPE = median(ms), median(mean)
	var sim, meas, gm, simPos, measPos []float64
	for _, g := range grid {
		simPos = append(simPos, positionRank(g.SimFirstRejected))
		measPos = append(measPos, positionRank(g.FirstRejected))
		if g.Deferrals >= 1 && g.Deferrals <= briefMax {
			s.BriefDeferrals++
		}
		if g.SimDeferrals >= 1 && g.SimDeferrals <= briefMax {
			s.SimBriefDeferrals++
		}
		s.Settings++
		if s.FirstRightPer == nil {
			s.FirstRightPer = map[string]int{}
		}
		if _, ok := s.FirstRightPer[g.Sequence]; !ok {
			s.FirstRightPer[g.Sequence] = 0
		}
		switch p, q := g.SimFirstRejected, g.FirstRejected; {
		case p == q:
			s.FirstRight++
			s.FirstRightPer[g.Sequence]++
		case q == 0:
			s.SimOnly++
		case p == 0:
			s.MeasOnly++
		case p < q:
			s.Earlier++
		default:
			s.Later++
		}
		sim = append(sim, float64(g.SimDeferrals))
		meas = append(meas, float64(g.Deferrals))
		gm = append(gm, ape(g.SimMakespanS, g.MakespanS))
	}
	s.DeferralsSpearman = models.Spearman(sim, meas)
	s.SimPositionSpearman = models.Spearman(simPos, meas)
	s.MeasPositionSpearman = models.Spearman(measPos, meas)
	s.GridMakespanMedianAPE = median(gm)
	return s
}

// positionRank orders first rejected positions by how long a run defers:
// the earlier the first rejection the more (position 1 highest), none (0)
// the fewest.
func positionRank(p int) float64 {
	if p == 0 {
		return 0
	}
	return 1 / float64(p)
}

func ape(sim, meas float64) float64 { return math.Abs(sim-meas) / meas }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return policies.Quantile(xs, 0.5)
}

// position prints a first rejected position ("-" for none).
func position(p int) string {
	if p == 0 {
		return "-"
	}
	return fmt.Sprint(p)
}

// sequenceNames lists the distinct sequences of grid rows, in order.
func sequenceNames(grid []stacking.GridRun) []string {
	var out []string
	for _, g := range grid {
		if !slices.Contains(out, g.Sequence) {
			out = append(out, g.Sequence)
		}
	}
	return out
}

// Contradictions counts, per sequence of a threshold grid, the runs that
// contradict another run of the same sequence: lower thresholds (all three
// at most the other's) can only make the rule reject at the same or an
// earlier position, so a run with lower thresholds that rejected later (or
// never) and the other run cannot both be predicted by a model that gives
// each position fixed window scores. Pairs is the size of a greedy set of
// disjoint contradicting pairs: at least that many runs are mispredicted
// by any such model.
func Contradictions(grid []stacking.GridRun) (rows map[string]int, pairs int) {
	rows = map[string]int{}
	pos := func(g stacking.GridRun) int {
		if g.FirstRejected == 0 {
			return math.MaxInt
		}
		return g.FirstRejected
	}
	for _, name := range sequenceNames(grid) {
		var rs []stacking.GridRun
		for _, g := range grid {
			if g.Sequence == name {
				rs = append(rs, g)
			}
		}
		bad := make([]bool, len(rs))
		used := make([]bool, len(rs))
		for i, a := range rs {
			for j, b := range rs {
				if a.Thresholds[0] <= b.Thresholds[0] && a.Thresholds[1] <= b.Thresholds[1] && a.Thresholds[2] <= b.Thresholds[2] && pos(a) > pos(b) {
					bad[i], bad[j] = true, true
					if !used[i] && !used[j] {
						used[i], used[j] = true, true
						pairs++
					}
				}
			}
		}
		for _, b := range bad {
			if b {
				rows[name]++
			}
		}
	}
	return rows, pairs
}
