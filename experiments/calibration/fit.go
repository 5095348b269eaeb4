package calibration

import (
	"errors"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
)

// Candidate values of the N-way speed parameters searched jointly on pairs
// and stacks: the power-mean exponent ρ and the SM-activity capacity κ.
var (
	rhoGrid   = steps(0.2, 2, 0.1)
	kappaGrid = steps(0.8, 1.5, 0.05)
)

// Candidate values of the telemetry combination: the rate weight α and the
// saturation duty u0 (0 = no saturation).
var (
	alphaGrid = []float64{0, 0.5, 1}
	u0Grid    = append([]float64{0}, steps(1, 3, 0.1)...)
)

func steps(lo, hi, d float64) []float64 {
	var out []float64
	for i := 0; ; i++ {
		x := math.Round((lo+float64(i)*d)*1e6) / 1e6
		if x > hi+1e-9 {
			return out
		}
		out = append(out, x)
	}
}

// speedTable holds, per candidate (ρ, κ), the pair loss and each
// sequence's stack loss (squared log ratios of simulated to measured
// makespan, mean and max slowdown, summed).
type speedTable struct {
	params []models.PressureParams
	pair   []float64
	stack  [][]float64 // [candidate][sequence index in seqs]
	seqs   []string
	// maxSlow is each candidate's simulated max slowdown per sequence;
	// measMax the measured one.
	maxSlow [][]float64
	measMax []float64
}

func newSpeedTable(base models.PressureParams, pairs []models.PairRun, cat *models.Catalog, d *stacking.Data, seeds int) (*speedTable, error) {
	t := &speedTable{}
	var seqs []stacking.Sequence
	var targets []stacking.Target
	for _, s := range d.Sequences {
		if tg, ok := d.Target(s.Name, "no_deferral"); ok {
			seqs, targets = append(seqs, s), append(targets, tg)
			t.seqs = append(t.seqs, s.Name)
			t.measMax = append(t.measMax, tg.MaxSlowdown)
		}
	}
	tel := models.TelemetryParams{}
	for _, rho := range rhoGrid {
		for _, kappa := range kappaGrid {
			p := base
			p.NWayExponent, p.Capacity = rho, kappa
			t.params = append(t.params, p)
		}
	}
	t.pair = make([]float64, len(t.params))
	t.stack = make([][]float64, len(t.params))
	t.maxSlow = make([][]float64, len(t.params))
	err := parallel(len(t.params), func(c int) error {
		m := &models.PressureModel{P: t.params[c]}
		if len(pairs) > 0 {
			t.pair[c] = models.PairLoss(m, cat, pairs)
		}
		row := make([]float64, len(seqs))
		t.maxSlow[c] = make([]float64, len(seqs))
		for i, s := range seqs {
			r, err := replayMean(s, Model{Interference: m, Telemetry: tel}, seeds)
			if err != nil {
				return err
			}
			tg := targets[i]
			t.maxSlow[c][i] = r.SimMaxSlowdown
			for _, q := range [][2]float64{{r.SimMakespanS, tg.MakespanS}, {r.SimMeanSlowdown, tg.MeanSlowdown}, {r.SimMaxSlowdown, tg.MaxSlowdown}} {
				l := math.Log(q[0] / q[1])
				row[i] += l * l
			}
		}
		t.stack[c] = row
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// best returns the candidate minimizing the pair loss plus the mean stack
// loss over the sequences in train (ties: the first candidate); a sequence
// listed k times (a bootstrap draw) counts k times.
func (t *speedTable) best(train []string) models.PressureParams {
	bi, bl := 0, math.Inf(1)
	for c := range t.params {
		var sl float64
		n := 0
		for i, s := range t.seqs {
			for _, x := range train {
				if x == s {
					sl += t.stack[c][i]
					n++
				}
			}
		}
		l := t.pair[c]
		if n > 0 {
			l += sl / float64(n)
		}
		if l < bl-1e-12 {
			bi, bl = c, l
		}
	}
	return t.params[bi]
}

// SpeedReach says what the searched speed form can reach on the stacks'
// max slowdown at all, whatever the fit picks.
type SpeedReach struct {
	// Candidates is the number of (ρ, κ) searched; BestWithin10 the most
	// sequences any of them gets within 10 % of the measured max slowdown.
	Candidates, BestWithin10 int
	// Orders compares, per workload set with several launch orders, how
	// much the max slowdown differs between the orders.
	Orders []OrderSpread
}

// OrderSpread is, for the launch orders of one set of jobs, the spread
// (largest minus smallest) of the max slowdown across the orders: measured,
// under the fitted model (set by Run) and the largest over every candidate
// (ρ, κ) of the search.
type OrderSpread struct {
	Sequences                 []string
	Measured, Fitted, Largest float64
}

// reach computes a SpeedReach (without the fitted spreads).
func (t *speedTable) reach(sets [][]string) SpeedReach {
	r := SpeedReach{Candidates: len(t.params)}
	for c := range t.params {
		n := 0
		for i := range t.seqs {
			if ape(t.maxSlow[c][i], t.measMax[i]) <= 0.10 {
				n++
			}
		}
		r.BestWithin10 = max(r.BestWithin10, n)
	}
	spread := func(xs []float64, idx []int) float64 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range idx {
			lo, hi = min(lo, xs[i]), max(hi, xs[i])
		}
		return hi - lo
	}
	for _, set := range sets {
		if len(set) < 2 {
			continue
		}
		var idx []int
		for _, name := range set {
			if i := slices.Index(t.seqs, name); i >= 0 {
				idx = append(idx, i)
			}
		}
		o := OrderSpread{Sequences: set, Measured: spread(t.measMax, idx)}
		for c := range t.params {
			o.Largest = max(o.Largest, spread(t.maxSlow[c], idx))
		}
		r.Orders = append(r.Orders, o)
	}
	return r
}

// telemetryTable holds, per candidate combination, each grid sequence's
// count of settings whose first rejected position the no-filter replays
// predict right (summed over seeds) and their summed position error.
type telemetryTable struct {
	params []models.TelemetryParams
	right  [][]int
	perr   [][]float64
	seqs   []string
}

func newTelemetryTable(inter models.Interference, d *stacking.Data, seeds int) (*telemetryTable, error) {
	t := &telemetryTable{seqs: sequenceNames(d.Grid)}
	for _, a := range alphaGrid {
		for _, u0 := range u0Grid {
			t.params = append(t.params, models.TelemetryParams{RateWeight: a, Saturation: u0})
		}
	}
	t.right = make([][]int, len(t.params))
	t.perr = make([][]float64, len(t.params))
	err := parallel(len(t.params), func(c int) error {
		p := t.params[c]
		right := make([]int, len(t.seqs))
		perr := make([]float64, len(t.seqs))
		for i, name := range t.seqs {
			s, _ := d.Sequence(name)
			var err error
			if right[i], perr[i], err = admissions(s, d.Grid, inter, p, seeds); err != nil {
				return err
			}
		}
		t.right[c], t.perr[c] = right, perr
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// admissions replays s without filter under seeds 1..seeds and counts the
// grid settings of s whose first rejected position the replays predict
// right, and the summed position error ("never" ranks after the last
// position).
func admissions(s stacking.Sequence, grid []stacking.GridRun, inter models.Interference, p models.TelemetryParams, seeds int) (int, float64, error) {
	right, perr := 0, 0.0
	miss := len(s.Jobs) + 1
	for seed := 1; seed <= seeds; seed++ {
		r, err := stacking.Replay(s, stacking.Config{NoFilter: true, Interference: inter, Telemetry: &p, Seed: uint64(seed)})
		if err != nil {
			return 0, 0, err
		}
		for _, g := range grid {
			if g.Sequence != s.Name {
				continue
			}
			got, want := r.FirstRejectedAt(g.Thresholds), g.FirstRejected
			if got == want {
				right++
			}
			if got == 0 {
				got = miss
			}
			if want == 0 {
				want = miss
			}
			perr += math.Abs(float64(got - want))
		}
	}
	return right, perr, nil
}

// Candidate factors of a workload's telemetry scale, per signal.
var scaleGrid = []float64{0.5, 0.7, 0.85, 1, 1.25, 1.5, 2, 2.5, 3}

// scaleTraining returns the grid sequences named in train that d holds and
// the workloads some training decision's window holds (every position but
// the last), in order of first appearance.
func scaleTraining(d *stacking.Data, train []string) (seqs []stacking.Sequence, ids []string) {
	for _, name := range train {
		s, ok := d.Sequence(name)
		if !ok {
			continue
		}
		seqs = append(seqs, s)
		for _, j := range s.Jobs[:len(s.Jobs)-1] {
			if !slices.Contains(ids, j.Workload) {
				ids = append(ids, j.Workload)
			}
		}
	}
	return seqs, ids
}

// fitScales fits per-workload telemetry scales (models.TelemetryParams.
// Scale) on the grid sequences in train, the speed model and the rest of
// the combination (base) fixed. Coordinate descent from no correction:
// for each workload some training decision's window holds (every position
// but the last) and each signal, the factor of scaleGrid that predicts the
// most first rejections right over the seeds (ties: the smaller summed
// position error, else the current factor); two sweeps; then every factor
// is reset to 1 where that loses no right prediction (the simpler model).
// Any scales in base are replaced, not refined.
func fitScales(inter models.Interference, base models.TelemetryParams, d *stacking.Data, train []string, seeds int) (map[string]models.SignalScale, error) {
	seqs, ids := scaleTraining(d, train)
	scale := map[string]models.SignalScale{}
	with := func(id string, f models.SignalScale) models.TelemetryParams {
		p := base
		p.Scale = maps.Clone(scale)
		if f == (models.SignalScale{SMACT: 1, SMOCC: 1, DRAMA: 1}) {
			delete(p.Scale, id)
		} else {
			p.Scale[id] = f
		}
		return p
	}
	// score sums the sequences holding id (the others do not change).
	score := func(id string, p models.TelemetryParams) (int, float64, error) {
		r, e := 0, 0.0
		for _, s := range seqs {
			if !slices.ContainsFunc(s.Jobs[:len(s.Jobs)-1], func(j stacking.Job) bool { return j.Workload == id }) {
				continue
			}
			ri, ei, err := admissions(s, d.Grid, inter, p, seeds)
			if err != nil {
				return 0, 0, err
			}
			r, e = r+ri, e+ei
		}
		return r, e, nil
	}
	get := func(id string) models.SignalScale {
		if f, ok := scale[id]; ok {
			return f
		}
		return models.SignalScale{SMACT: 1, SMOCC: 1, DRAMA: 1}
	}
	set := func(f *models.SignalScale, sig int, v float64) {
		*[3]*float64{&f.SMACT, &f.SMOCC, &f.DRAMA}[sig] = v
	}
	put := func(id string, f models.SignalScale) { scale = with(id, f).Scale }
	for range 2 {
		for _, id := range ids {
			for sig := range 3 {
				cur := get(id)
				rights := make([]int, len(scaleGrid))
				errs := make([]float64, len(scaleGrid))
				err := parallel(len(scaleGrid), func(i int) error {
					f := cur
					set(&f, sig, scaleGrid[i])
					var err error
					rights[i], errs[i], err = score(id, with(id, f))
					return err
				})
				if err != nil {
					return nil, err
				}
				curV := [3]float64{cur.SMACT, cur.SMOCC, cur.DRAMA}[sig]
				bi := slices.Index(scaleGrid, curV)
				for i := range scaleGrid {
					if rights[i] > rights[bi] || (rights[i] == rights[bi] && errs[i] < errs[bi]-1e-9) {
						bi = i
					}
				}
				set(&cur, sig, scaleGrid[bi])
				put(id, cur)
			}
		}
	}
	for _, id := range ids {
		for sig := range 3 {
			cur := get(id)
			if [3]float64{cur.SMACT, cur.SMOCC, cur.DRAMA}[sig] == 1 {
				continue
			}
			r0, _, err := score(id, with(id, cur))
			if err != nil {
				return nil, err
			}
			f := cur
			set(&f, sig, 1)
			r1, _, err := score(id, with(id, f))
			if err != nil {
				return nil, err
			}
			if r1 >= r0 {
				put(id, f)
			}
		}
	}
	if len(scale) == 0 {
		return nil, nil
	}
	return scale, nil
}

// parallel calls f(0..n-1) on up to GOMAXPROCS goroutines and returns the
// first error by index. Callers store results by index, so the outcome
// does not depend on scheduling.
func parallel(n int, f func(int) error) error {
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// best returns the candidate with the most right first rejections over the
// grid sequences in train (ties: the smaller summed position error, then
// the first candidate, i.e. the simpler one).
func (t *telemetryTable) best(train []string) models.TelemetryParams {
	bi, br, be := 0, -1, math.Inf(1)
	for c := range t.params {
		r, e := 0, 0.0
		for i, s := range t.seqs {
			if slices.Contains(train, s) {
				r += t.right[c][i]
				e += t.perr[c][i]
			}
		}
		if r > br || (r == br && e < be-1e-9) {
			bi, br, be = c, r, e
		}
	}
	return t.params[bi]
}

// without returns names less the excluded ones.
func without(names []string, out ...string) []string {
	var r []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			r = append(r, n)
		}
	}
	return r
}
