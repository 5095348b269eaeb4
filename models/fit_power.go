package models

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/aegis-sched/aegis/internal/csvhead"
	"github.com/aegis-sched/aegis/policies"
)

// PowerRun is one measured run's power summary: its GPU-seconds split into
// those with an active job and idle ones, the mean power of each, and the
// activity means over the active ones (idle seconds have no activity).
type PowerRun struct {
	// Name identifies the run (trace/configuration); Group is what the
	// cross-group error holds out together (the trace).
	Name, Group string
	GPUs        int
	DurationS   float64
	// EnergyJ is the run's measured energy over all its GPUs, joules.
	EnergyJ float64
	// ActiveFrac is the fraction of GPU-seconds with activity.
	ActiveFrac float64
	// IdleW and ActiveW are the mean power over idle and active
	// GPU-seconds.
	IdleW, ActiveW float64
	// Active holds the activity means over the active GPU-seconds.
	Active Activity
}

// PowerTerms are the activity terms a power model may keep, in the order
// FitPower tries them.
var PowerTerms = []string{"smact", "drama", "smocc", "mem"}

// term is run r's active mean of a term.
func (r *PowerRun) term(t string) float64 {
	switch t {
	case "smact":
		return r.Active.SMACT
	case "drama":
		return r.Active.DRAMA
	case "smocc":
		return r.Active.SMOCC
	case "mem":
		return r.Active.MemGiB
	}
	panic("unknown power term " + t) // callers pass PowerTerms only
}

// powerRunColumns are the columns ReadPowerRuns needs: DCGM run summaries
// (the testbed's dcgm_run_summary.csv layout).
var powerRunColumns = []string{"trace", "raw_label", "window_duration_s", "active_row_fraction",
	"power_trace_mean_w", "power_active_mean_w", "total_gpu_energy_j", "energy_gpu_count",
	"smact_active_mean", "smocc_active_mean", "drama_active_mean", "used_gpu_memory_active_mean_gb"}

// ReadPowerRuns reads DCGM run summaries, one row per run (the testbed's
// dcgm_run_summary.csv layout): trace and raw_label name the run;
// window_duration_s, energy_gpu_count and total_gpu_energy_j (J over the
// GPUs, from DCGM's energy counter) give its energy; active_row_fraction,
// power_trace_mean_w and power_active_mean_w the split of its GPU-seconds
// and their mean power; smact_, smocc_, drama_active_mean (fractions) and
// used_gpu_memory_active_mean_gb (GB) the activity over the active ones.
// Other columns are ignored. name is the file as errors name it.
func ReadPowerRuns(r io.Reader, name string) ([]PowerRun, error) {
	cr, err := csvhead.NewReader(csv.NewReader(r), name, powerRunColumns...)
	if err != nil {
		return nil, err
	}
	var runs []PowerRun
	err = cr.Each(func() error {
		v := map[string]float64{}
		for _, c := range powerRunColumns[2:] {
			x, err := strconv.ParseFloat(cr.Get(c), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return fmt.Errorf("%s:%d: %s: %q: want a non-negative number", name, cr.Line, c, cr.Get(c))
			}
			v[c] = x
		}
		run := PowerRun{Name: cr.Get("trace") + "/" + cr.Get("raw_label"), Group: cr.Get("trace"),
			DurationS: v["window_duration_s"], EnergyJ: v["total_gpu_energy_j"], ActiveFrac: v["active_row_fraction"],
			ActiveW: v["power_active_mean_w"],
			Active: Activity{Busy: true, SMACT: v["smact_active_mean"], SMOCC: v["smocc_active_mean"],
				DRAMA: v["drama_active_mean"], MemGiB: v["used_gpu_memory_active_mean_gb"]}}
		n := v["energy_gpu_count"]
		if n < 1 || n != math.Trunc(n) {
			return fmt.Errorf("%s:%d: energy_gpu_count: %v: want a whole number of GPUs", name, cr.Line, n)
		}
		run.GPUs = int(n)
		f := run.ActiveFrac
		if !(f > 0 && f < 1) {
			return fmt.Errorf("%s:%d: active_row_fraction: %v: want in (0, 1) (a run with idle and active seconds)", name, cr.Line, f)
		}
		if run.DurationS <= 0 || run.EnergyJ <= 0 {
			return fmt.Errorf("%s:%d: window_duration_s and total_gpu_energy_j: want positive", name, cr.Line)
		}
		// The trace mean is the active and idle means weighted by their
		// shares of the GPU-seconds.
		run.IdleW = (v["power_trace_mean_w"] - f*run.ActiveW) / (1 - f)
		if run.IdleW <= 0 {
			return fmt.Errorf("%s:%d: power_trace_mean_w %v and power_active_mean_w %v imply idle power %.1f W: want positive",
				name, cr.Line, v["power_trace_mean_w"], run.ActiveW, run.IdleW)
		}
		runs = append(runs, run)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no runs", name)
	}
	return runs, nil
}

// PredictEnergy is run r's energy under model m: its GPU-seconds at idle
// power and, for its active share, at the power of its mean activity.
func (m *PowerModel) PredictEnergy(r *PowerRun) float64 {
	return float64(r.GPUs) * r.DurationS * ((1-r.ActiveFrac)*m.IdleW + r.ActiveFrac*m.Power(r.Active))
}

// fitPowerTerms fits idle power (the mean of the runs' idle power) and the
// busy offset and terms' coefficients (least squares of the runs' active
// power above idle on their active activity means).
func fitPowerTerms(runs []PowerRun, terms []string, boardW float64) (*PowerModel, error) {
	if len(runs) < len(terms)+2 {
		return nil, fmt.Errorf("power fit: %d runs for %d parameters", len(runs), len(terms)+2)
	}
	m := &PowerModel{BoardW: boardW}
	for i := range runs {
		m.IdleW += runs[i].IdleW / float64(len(runs))
	}
	a := mat.NewDense(len(runs), len(terms)+1, nil)
	y := mat.NewVecDense(len(runs), nil)
	for i := range runs {
		a.Set(i, 0, 1)
		for j, t := range terms {
			a.Set(i, j+1, runs[i].term(t))
		}
		y.SetVec(i, runs[i].ActiveW-m.IdleW)
	}
	var b mat.VecDense
	if err := b.SolveVec(a, y); err != nil {
		return nil, fmt.Errorf("power fit (terms %s): %w", strings.Join(terms, ", "), err)
	}
	m.BusyW = b.AtVec(0)
	for j, t := range terms {
		c := b.AtVec(j + 1)
		switch t {
		case "smact":
			m.SMACTW = c
		case "drama":
			m.DRAMAW = c
		case "smocc":
			m.SMOCCW = c
		case "mem":
			m.MemWPerGiB = c
		}
	}
	return m, nil
}

// PowerTermSet is one choice of terms and its errors of run energy
// (fractions): leaving one run out, in sample, and fitting on one group
// (trace) while predicting the others.
type PowerTermSet struct {
	Terms                     []string
	LeaveOneRunOut, InSample  []float64
	CrossGroup                []float64
	IdleW, FullW              float64 // the in-sample fit's idle and full-load power
	Physical                  bool    // the in-sample fit is inside the bounds
	LOOMedian, LOOMax, CrossM float64
}

// evalTerms fits runs with terms in sample, leaving each run out and across
// groups.
func evalTerms(runs []PowerRun, terms []string, boardW, memGiB float64) (PowerTermSet, error) {
	s := PowerTermSet{Terms: terms}
	m, err := fitPowerTerms(runs, terms, boardW)
	if err != nil {
		return s, err
	}
	s.IdleW, s.FullW, s.Physical = m.IdleW, m.FullLoadW(memGiB), m.Check(memGiB) == nil
	for i := range runs {
		s.InSample = append(s.InSample, ape(m.PredictEnergy(&runs[i]), runs[i].EnergyJ))
		rest := slices.Concat(runs[:i:i], runs[i+1:])
		mi, err := fitPowerTerms(rest, terms, boardW)
		if err != nil {
			return s, err
		}
		s.LeaveOneRunOut = append(s.LeaveOneRunOut, ape(mi.PredictEnergy(&runs[i]), runs[i].EnergyJ))
	}
	for _, g := range groups(runs) {
		var on, off []PowerRun
		for _, r := range runs {
			if r.Group == g {
				on = append(on, r)
			} else {
				off = append(off, r)
			}
		}
		mg, err := fitPowerTerms(on, terms, boardW)
		if err != nil || len(off) == 0 {
			continue // too few runs in the group to fit these terms
		}
		for i := range off {
			s.CrossGroup = append(s.CrossGroup, ape(mg.PredictEnergy(&off[i]), off[i].EnergyJ))
		}
	}
	s.LOOMedian, s.LOOMax = median(s.LeaveOneRunOut), slices.Max(s.LeaveOneRunOut)
	s.CrossM = math.NaN()
	if len(s.CrossGroup) > 0 {
		s.CrossM = median(s.CrossGroup)
	}
	return s, nil
}

func median(xs []float64) float64 { return policies.Quantile(xs, 0.5) }

func groups(runs []PowerRun) []string {
	var gs []string
	for _, r := range runs {
		if !slices.Contains(gs, r.Group) {
			gs = append(gs, r.Group)
		}
	}
	return gs
}

// MinPowerGain is the least drop of the median leave-one-run-out error of
// run energy (a fraction: 0.1 percentage point) a term must bring to be
// kept.
const MinPowerGain = 0.001

// PowerFit is FitPower's result: the model and every term set tried.
type PowerFit struct {
	Model *PowerModel
	// Sets holds every subset of PowerTerms with its errors; Chosen is
	// the model's.
	Sets   []PowerTermSet
	Chosen PowerTermSet
}

// FitPower fits a GPU type's power model on measured runs. Idle and busy
// power are always fitted; activity terms are added forward, each time the
// one that lowers the median leave-one-run-out error of run energy most,
// while it lowers it by at least MinPowerGain and the fit stays physical
// (PowerModel.Check with memGiB of memory full). boardW is the card's
// power limit (a datasheet figure).
func FitPower(runs []PowerRun, gpu, source string, boardW, memGiB float64) (*PowerFit, error) {
	fit := &PowerFit{}
	for mask := range 1 << len(PowerTerms) {
		var terms []string
		for i, t := range PowerTerms {
			if mask&(1<<i) != 0 {
				terms = append(terms, t)
			}
		}
		if len(runs) < len(terms)+3 { // leave one out still fits
			continue
		}
		s, err := evalTerms(runs, terms, boardW, memGiB)
		if err != nil {
			continue // these runs cannot tell the terms apart (a singular fit)
		}
		fit.Sets = append(fit.Sets, s)
	}
	find := func(terms []string) PowerTermSet {
		for _, s := range fit.Sets {
			if slices.Equal(s.Terms, terms) {
				return s
			}
		}
		return PowerTermSet{LOOMedian: math.Inf(1)}
	}
	cur := find(nil)
	if len(cur.Terms) == 0 && math.IsInf(cur.LOOMedian, 1) {
		return nil, fmt.Errorf("power fit: %d runs: want at least 3", len(runs))
	}
	for {
		best := cur
		for _, t := range PowerTerms {
			if slices.Contains(cur.Terms, t) {
				continue
			}
			var terms []string
			for _, u := range PowerTerms { // PowerTerms' order
				if u == t || slices.Contains(cur.Terms, u) {
					terms = append(terms, u)
				}
			}
			s := find(terms)
			if s.Physical && s.LOOMedian <= best.LOOMedian-MinPowerGain {
				best = s
			}
		}
		if len(best.Terms) == len(cur.Terms) {
			break
		}
		cur = best
	}
	m, err := fitPowerTerms(runs, cur.Terms, boardW)
	if err != nil {
		return nil, err
	}
	m.GPU, m.Source = gpu, source
	m.Fit = &PowerFitRecord{Runs: len(runs), Terms: slices.Clone(cur.Terms),
		LeaveOneRunOut: apeOf(cur.LeaveOneRunOut), InSample: apeOf(cur.InSample)}
	if m.Fit.Terms == nil {
		m.Fit.Terms = []string{}
	}
	if err := m.Check(memGiB); err != nil {
		return nil, fmt.Errorf("power fit: %w", err)
	}
	fit.Model, fit.Chosen = m, cur
	return fit, nil
}
