package experiments

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/sim"
)

// StackingSpec makes a spec replay the progressive stacking protocol
// (package stacking: jobs stacked on one GPU, each next one admitted after
// the newest one's activity + 30 s if the pressure thresholds pass) instead
// of simulating traces: one cell per sequence, sweep point and seed. The
// sweep may set thresholds (τ1,τ2,τ3), filter (pressure or nf), truth.KEY
// and model.nway_exponent.
type StackingSpec struct {
	// Data is the folder of the measured stacking data set (relative to
	// the spec's directory); empty for the shared data folder's
	// calibration/aegis/nway.
	Data string `yaml:"data" json:"data,omitempty"`
	// Sequences names the sequences replayed; empty for all.
	Sequences []string `yaml:"sequences" json:"sequences,omitempty"`
}

// StackingColumns is the header of thresholds.csv (Figure 7): per
// threshold point and sequence, and per point over all sequences (sequence
// "mean"), the throughput gain Σ solo / makespan, the mean and max
// slowdown, the deferrals (seconds a job waited on the filter), and knee = 1
// on the mean row of the knee point.
var StackingColumns = []string{"tau1", "tau2", "tau3", "sequence", "throughput_gain", "mean_slowdown", "max_slowdown",
	"deferrals", rundir.MakespanS, "first_rejected", "knee"}

// ErrNoSharedData is wrapped by a spec's error when what the spec needs is
// in the shared data folder (models.SharedDir), which was not found: on a
// fresh clone, aegis run skips such a spec among several.
var ErrNoSharedData = errors.New("the shared data folder was not found")

// noSharedData is a spec error caused by the absent shared data folder.
type noSharedData struct{ error }

func (e noSharedData) Unwrap() []error { return []error{e.error, ErrNoSharedData} }

// resolveStacking checks a stacking spec, loads its sequences (a trace of
// each in s.Traces) and makes its plan replaying them under model inter.
func (s *resolved) resolveStacking(a at, inter models.Interference) (*stackPlan, error) {
	p := &stackPlan{resolved: s, inter: inter}
	for _, k := range []struct {
		key string
		set bool
	}{{"traces", len(s.Traces) > 0}, {"configs", len(s.Configs) > 0}, {"normalize", s.Normalize != ""},
		{"table", s.Table != ""}, {"telemetry", s.Telemetry}} {
		if k.set {
			return nil, a.errf([]any{k.key}, "a stacking spec replays sequences; it has no %s", k.key)
		}
	}
	if s.server.GPUs != 1 {
		return nil, a.errf([]any{"server"}, "the stacking protocol runs on one GPU; want TYPE:1")
	}
	dir := s.Stacking.Data
	if dir == "" {
		d, ok := stacking.DefaultDir()
		if !ok {
			return nil, noSharedData{a.errf([]any{"stacking"}, "needs the measured stacking sequences (calibration/aegis/nway of the shared data folder): %v; or give stacking.data", models.SharedDirError())}
		}
		dir = d
	} else {
		dir = s.resolve(dir)
	}
	d, err := stacking.Load(dir)
	if err != nil {
		return nil, a.errf([]any{"stacking", "data"}, "%v", err)
	}
	names := s.Stacking.Sequences
	if len(names) == 0 {
		for _, q := range d.Sequences {
			names = append(names, q.Name)
		}
	}
	for i, n := range names {
		q, ok := d.Sequence(n)
		if !ok {
			var have []string
			for _, q := range d.Sequences {
				have = append(have, q.Name)
			}
			return nil, a.errf([]any{"stacking", "sequences", i}, "unknown sequence %q (have %s)", n, strings.Join(have, ", "))
		}
		if j := slices.Index(names, n); j < i {
			return nil, a.errf([]any{"stacking", "sequences", i}, "%q repeats sequences[%d]", n, j)
		}
		p.seqs = append(p.seqs, q)
		b, _ := json.Marshal(q)
		s.Traces = append(s.Traces, TraceSource{Name: q.Name, Trace: "stacking:" + n})
		p.hashes = append(p.hashes, hashBytes(b))
	}
	p.dir = dir
	if len(s.Seeds) == 0 {
		return nil, a.errf([]any{"seeds"}, "missing: list at least one seed")
	}
	// A stacking sweep's axes are checked as a trace spec's, swept
	// hardware included (then refused below), resolving into no plan.
	if err := (&tracePlan{resolved: s}).checkSweep(a); err != nil {
		return nil, err
	}
	for k, ax := range s.Sweep {
		switch {
		case ax.Param == "thresholds", ax.Param == "filter", ax.Param == modelRho, strings.HasPrefix(ax.Param, truthPrefix):
		default:
			return nil, a.errf([]any{"sweep", k, "param"}, "%q: a stacking sweep sets thresholds, filter, truth.KEY or %s", ax.Param, modelRho)
		}
	}
	for _, pt := range s.Points() {
		if _, err := p.stackConfig(pt, 0); err != nil {
			if k, ok := pt.axisOf(err); ok {
				return nil, a.errf([]any{"sweep", k}, "%v", err)
			}
			return nil, a.errf([]any{"sweep"}, "at sweep point %s: %v", pt, err)
		}
	}
	return p, nil
}

// stackConfig is the replay configuration at a sweep point.
func (s *stackPlan) stackConfig(pt Point, seed uint64) (stacking.Config, error) {
	cfg := stacking.Config{GPU: s.server.Type, Seed: seed, Thresholds: [3]float64{0.65, 0.35, 0.50}}
	truth := map[string]string{}
	inter := s.inter
	for _, kv := range pt {
		switch {
		case kv.Param == "thresholds":
			parts := strings.Split(kv.Value, ",")
			if len(parts) != 3 {
				return cfg, &axisError{kv.Param, fmt.Errorf("thresholds=%q: want τ1,τ2,τ3", kv.Value)}
			}
			for i, p := range parts {
				v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
				if err != nil || !(v >= 0 && v <= 1) {
					return cfg, &axisError{kv.Param, fmt.Errorf("thresholds=%q: want three numbers in [0, 1]", kv.Value)}
				}
				cfg.Thresholds[i] = v
			}
		case kv.Param == "filter":
			switch kv.Value {
			case "pressure":
			case "nf":
				cfg.NoFilter = true
			default:
				return cfg, &axisError{kv.Param, fmt.Errorf("filter=%q: want pressure or nf", kv.Value)}
			}
		case kv.Param == modelRho:
			rho, err := strconv.ParseFloat(kv.Value, 64)
			if err != nil {
				return cfg, &axisError{kv.Param, fmt.Errorf("%s=%q: not a number", kv.Param, kv.Value)}
			}
			if inter, err = withExponent(inter, rho); err != nil {
				return cfg, &axisError{kv.Param, fmt.Errorf("%s: %w", kv.Param, err)}
			}
		default:
			truth[strings.TrimPrefix(kv.Param, truthPrefix)] = kv.Value
		}
	}
	tr, err := sim.ParseTruth(truth)
	if err != nil {
		return cfg, err
	}
	cfg.Truth, cfg.Interference = &tr, inter
	return cfg, nil
}

// cells expands a stacking spec: sequence, sweep point, seed.
func (s *stackPlan) cells() []Cell {
	var cells []Cell
	for qi, q := range s.seqs {
		for pi, pt := range s.Points() {
			for _, seed := range s.Seeds {
				id := cellDir(q.Name) + pointDir(pt, pi) + ".s" + strconv.FormatUint(seed, 10)
				cells = append(cells, Cell{Index: len(cells), ID: id, Trace: q.Name, Config: "stacking", Policy: "aegis",
					Point: pt, Seed: seed, trace: qi, point: pi})
			}
		}
	}
	return cells
}

// runStackCell replays cell c and returns its files.
func (s *stackPlan) runStackCell(c Cell) (map[string][]byte, error) {
	cfg, err := s.stackConfig(c.Point, c.Seed)
	if err != nil {
		return nil, err
	}
	res, err := stacking.Replay(s.seqs[c.trace], cfg)
	if err != nil {
		return nil, err
	}
	solo := 0.0
	for _, j := range res.Jobs {
		solo += j.SoloS
	}
	out := stackRow{Tau: cfg.Thresholds, NoFilter: cfg.NoFilter, Gain: solo / res.MakespanS, Mean: res.MeanSlowdown,
		Max: res.MaxSlowdown, Deferrals: float64(res.Deferrals), Makespan: res.MakespanS, First: float64(res.FirstRejected)}
	b, err := json.MarshalIndent(struct {
		Summary stackRow
		Result  *stacking.Result
	}{out, res}, "", "  ")
	if err != nil {
		return nil, err
	}
	return map[string][]byte{StackResultFile: append(b, '\n')}, nil
}

// StackResultFile is a stacking cell's result.
const StackResultFile = "result.json"

// stackRow is a stacking cell's summary.
type stackRow struct {
	Tau       [3]float64 `json:"thresholds"`
	NoFilter  bool       `json:"no_filter"`
	Gain      float64    `json:"throughput_gain"`
	Mean      float64    `json:"mean_slowdown"`
	Max       float64    `json:"max_slowdown"`
	Deferrals float64    `json:"deferrals"`
	Makespan  float64    `json:"makespan_s"`
	First     float64    `json:"first_rejected"`
}

func (r stackRow) values() []float64 {
	return []float64{r.Gain, r.Mean, r.Max, r.Deferrals, r.Makespan, r.First}
}

// combine writes thresholds.csv from a stacking run's cells: one row
// per sweep point and sequence (means over seeds), then per point the mean
// over sequences, the knee marked there.
func (*stackPlan) combine(dir string, m *Meta) (map[string][]byte, error) {
	type key struct {
		point string
		seq   string
	}
	var points []string
	var seqs []string
	rows := map[key][]stackRow{}
	for _, c := range m.Cells {
		b, err := os.ReadFile(filepath.Join(dir, "cells", c.ID, StackResultFile))
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.ID, err)
		}
		var r struct{ Summary stackRow }
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.ID, err)
		}
		p := c.Point.String()
		if !slices.Contains(points, p) {
			points = append(points, p)
		}
		if !slices.Contains(seqs, c.Trace) {
			seqs = append(seqs, c.Trace)
		}
		rows[key{p, c.Trace}] = append(rows[key{p, c.Trace}], r.Summary)
	}
	mean := func(rs []stackRow) stackRow {
		out := rs[0]
		acc := make([]float64, 6)
		for _, r := range rs {
			for i, v := range r.values() {
				acc[i] += v / float64(len(rs))
			}
		}
		out.Gain, out.Mean, out.Max, out.Deferrals, out.Makespan, out.First = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
		return out
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(StackingColumns)
	means := make([]stackRow, len(points))
	for pi, p := range points {
		var all []stackRow
		for _, q := range seqs {
			r := mean(rows[key{p, q}])
			all = append(all, r)
		}
		means[pi] = mean(all)
	}
	knee := knee(means)
	tau := func(r stackRow) []string {
		if r.NoFilter {
			return []string{"", "", ""}
		}
		return []string{fmtNum(r.Tau[0]), fmtNum(r.Tau[1]), fmtNum(r.Tau[2])}
	}
	for pi, p := range points {
		for _, q := range seqs {
			r := mean(rows[key{p, q}])
			w.Write(append(tau(r), q, fmtNum(r.Gain), fmtNum(r.Mean), fmtNum(r.Max), fmtNum(r.Deferrals), fmtNum(r.Makespan), fmtNum(r.First), ""))
		}
		r := means[pi]
		k := ""
		if pi == knee {
			k = "1"
		}
		w.Write(append(tau(r), "mean", fmtNum(r.Gain), fmtNum(r.Mean), fmtNum(r.Max), fmtNum(r.Deferrals), fmtNum(r.Makespan), fmtNum(r.First), k))
	}
	w.Flush()
	return map[string][]byte{rundir.Thresholds: b.Bytes()}, nil
}

// knee returns the index of the knee of the throughput-gain vs mean-slowdown
// trade-off: with both scaled to [0, 1] over the points, the point whose
// gain most exceeds its slowdown (the farthest above the diagonal through
// the extremes); the first such point on ties, -1 for none.
func knee(rows []stackRow) int {
	if len(rows) == 0 {
		return -1
	}
	gLo, gHi, sLo, sHi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		gLo, gHi = min(gLo, r.Gain), max(gHi, r.Gain)
		sLo, sHi = min(sLo, r.Mean), max(sHi, r.Mean)
	}
	scale := func(v, lo, hi float64) float64 {
		if hi <= lo {
			return 0
		}
		return (v - lo) / (hi - lo)
	}
	best, bestV := -1, math.Inf(-1)
	for i, r := range rows {
		v := scale(r.Gain, gLo, gHi) - scale(r.Mean, sLo, sHi)
		if v > bestV+1e-12 {
			best, bestV = i, v
		}
	}
	return best
}
