package stacking

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/aegis-sched/aegis/internal/csvhead"
	"github.com/aegis-sched/aegis/models"
)

// File names of the measured stacking data set in its folder.
const (
	SequencesFile = "progressive_sequences.csv"
	TargetsFile   = "progressive_targets.csv"
	GridFile      = "threshold_grid.csv"
)

// DefaultDir is where the measured stacking data set lives in the shared
// data folder (see models.SharedDir): calibration/aegis/nway.
func DefaultDir() (string, bool) {
	s, ok := models.SharedDir()
	if !ok {
		return "", false
	}
	return filepath.Join(s, "calibration", "aegis", "nway"), true
}

// Target is one row of progressive_targets.csv: a sequence's measured
// outcome over the repeated runs of one group ("no_deferral": every job
// admitted as soon as the protocol allowed; "serial": thresholds 0/0/0, one
// job after another).
type Target struct {
	Sequence string
	Group    string
	Runs     int // repetitions
	Jobs     int
	// Means over the runs (seconds; slowdowns are run time / solo time).
	MakespanS, MeanSlowdown, MaxSlowdown float64
	// Spread over the runs.
	MakespanMinS, MakespanMaxS, MakespanSDS float64
	// LongestJobS is the mean run time of the longest job.
	LongestJobS float64
}

// GridRun is one row of threshold_grid.csv: one measured run of a sequence
// under thresholds τ1 (SMACT), τ2 (SMOCC), τ3 (DRAMA).
type GridRun struct {
	Sequence   string
	Thresholds [3]float64
	// FirstRejected is the position of the first job the rule deferred,
	// 0 when it deferred none.
	FirstRejected int
	// Deferrals counts rejections in the whole run, one per second waited.
	Deferrals                            int
	MakespanS, MeanSlowdown, MaxSlowdown float64
}

// Data is the measured stacking data set.
type Data struct {
	Sequences []Sequence
	Targets   []Target
	Grid      []GridRun
}

// Sequence returns the sequence with the given name.
func (d *Data) Sequence(name string) (Sequence, bool) {
	for _, s := range d.Sequences {
		if s.Name == name {
			return s, true
		}
	}
	return Sequence{}, false
}

// Target returns the target of a sequence's group ("no_deferral", "serial").
func (d *Data) Target(seq, group string) (Target, bool) {
	for _, t := range d.Targets {
		if t.Sequence == seq && t.Group == group {
			return t, true
		}
	}
	return Target{}, false
}

// Load reads the three files of the stacking data set from dir and checks
// that targets and grid runs name known sequences.
func Load(dir string) (*Data, error) {
	var d Data
	var err error
	read := func(name string, f func(io.Reader, string) error) {
		if err != nil {
			return
		}
		p := filepath.Join(dir, name)
		fh, e := os.Open(p)
		if e != nil {
			err = fmt.Errorf("stacking data: %w", e)
			return
		}
		defer fh.Close()
		err = f(fh, p)
	}
	read(SequencesFile, func(r io.Reader, p string) (e error) { d.Sequences, e = ReadSequences(r, p); return })
	read(TargetsFile, func(r io.Reader, p string) (e error) { d.Targets, e = ReadTargets(r, p); return })
	read(GridFile, func(r io.Reader, p string) (e error) { d.Grid, e = ReadGrid(r, p); return })
	if err != nil {
		return nil, err
	}
	for _, t := range d.Targets {
		if _, ok := d.Sequence(t.Sequence); !ok {
			return nil, fmt.Errorf("%s: sequence %q is not in %s", filepath.Join(dir, TargetsFile), t.Sequence, SequencesFile)
		}
	}
	for _, g := range d.Grid {
		s, ok := d.Sequence(g.Sequence)
		if !ok {
			return nil, fmt.Errorf("%s: sequence %q is not in %s", filepath.Join(dir, GridFile), g.Sequence, SequencesFile)
		}
		if g.FirstRejected > len(s.Jobs) {
			return nil, fmt.Errorf("%s: sequence %s: first rejected position %d beyond its %d jobs", filepath.Join(dir, GridFile), g.Sequence, g.FirstRejected, len(s.Jobs))
		}
	}
	return &d, nil
}

// table reads a CSV file by column name (csvhead): a header naming at
// least the given columns, then records read with next and the getters
// below.
type table struct{ *csvhead.Reader }

func newTable(r io.Reader, name string, cols ...string) (*table, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	h, err := csvhead.NewReader(cr, name, cols...)
	if err != nil {
		return nil, err
	}
	return &table{h}, nil
}

// next reads the next record; it returns false at the end.
func (t *table) next() (bool, error) { return t.Next() }

func (t *table) str(c string) (string, error) {
	s := t.Get(c)
	if s == "" {
		return "", fmt.Errorf("%s:%d: column %s: empty", t.Name, t.Line, c)
	}
	return s, nil
}

// num reads a number in [lo, hi].
func (t *table) num(c string, lo, hi float64) (float64, error) {
	s := t.Get(c)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= lo && v <= hi) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s:%d: column %s: %q is not a number in [%g, %g]", t.Name, t.Line, c, s, lo, hi)
	}
	return v, nil
}

// count reads a whole number in [lo, hi]; empty reads as 0 when empty0.
func (t *table) count(c string, lo, hi int, empty0 bool) (int, error) {
	s := t.Get(c)
	if s == "" && empty0 {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s:%d: column %s: %q is not a whole number in [%d, %d]", t.Name, t.Line, c, s, lo, hi)
	}
	return v, nil
}

// ReadSequences reads progressive_sequences.csv: one row per job
// (sequence, position, run_name, catalog_id, solo_runtime_s), positions of a
// sequence 1, 2, ... in order. Errors name the file, line and column.
func ReadSequences(r io.Reader, name string) ([]Sequence, error) {
	t, err := newTable(r, name, "sequence", "position", "run_name", "catalog_id", "solo_runtime_s")
	if err != nil {
		return nil, err
	}
	var out []Sequence
	idx := map[string]int{}
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		var j Job
		var seq string
		if seq, err = t.str("sequence"); err != nil {
			return nil, err
		}
		if j.Position, err = t.count("position", 1, 1000, false); err != nil {
			return nil, err
		}
		if j.Run, err = t.str("run_name"); err != nil {
			return nil, err
		}
		if j.Workload, err = t.str("catalog_id"); err != nil {
			return nil, err
		}
		if j.SoloS, err = t.num("solo_runtime_s", 1e-3, 1e7); err != nil {
			return nil, err
		}
		i, seen := idx[seq]
		if !seen {
			i = len(out)
			idx[seq] = i
			out = append(out, Sequence{Name: seq})
		}
		if want := len(out[i].Jobs) + 1; j.Position != want {
			return nil, fmt.Errorf("%s:%d: column position: sequence %s: got %d, want %d (rows in launch order)", name, t.Line, seq, j.Position, want)
		}
		out[i].Jobs = append(out[i].Jobs, j)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no sequences", name)
	}
	return out, nil
}

// ReadTargets reads progressive_targets.csv (see Target). Errors name the
// file, line and column.
func ReadTargets(r io.Reader, name string) ([]Target, error) {
	t, err := newTable(r, name, "sequence", "runs", "n_runs", "jobs", "makespan_mean_s", "makespan_min_s",
		"makespan_max_s", "makespan_sd_s", "longest_job_mean_s", "mean_slowdown_mean", "max_slowdown_mean")
	if err != nil {
		return nil, err
	}
	var out []Target
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		var g Target
		for _, f := range []struct {
			c  string
			p  *float64
			lo float64
		}{{"makespan_mean_s", &g.MakespanS, 1e-3}, {"makespan_min_s", &g.MakespanMinS, 1e-3},
			{"makespan_max_s", &g.MakespanMaxS, 1e-3}, {"makespan_sd_s", &g.MakespanSDS, 0},
			{"longest_job_mean_s", &g.LongestJobS, 1e-3}, {"mean_slowdown_mean", &g.MeanSlowdown, 1e-3},
			{"max_slowdown_mean", &g.MaxSlowdown, 1e-3}} {
			if *f.p, err = t.num(f.c, f.lo, 1e7); err != nil {
				return nil, err
			}
		}
		if g.Sequence, err = t.str("sequence"); err != nil {
			return nil, err
		}
		if g.Group, err = t.str("runs"); err != nil {
			return nil, err
		}
		if g.Runs, err = t.count("n_runs", 1, 1e6, false); err != nil {
			return nil, err
		}
		if g.Jobs, err = t.count("jobs", 1, 1000, false); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// ReadGrid reads threshold_grid.csv (see GridRun). Errors name the file,
// line and column.
func ReadGrid(r io.Reader, name string) ([]GridRun, error) {
	t, err := newTable(r, name, "sequence", "tau_smact", "tau_smocc", "tau_drama", "first_rejected_position",
		"deferrals", "makespan_s", "mean_slowdown", "max_slowdown")
	if err != nil {
		return nil, err
	}
	var out []GridRun
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		var g GridRun
		if g.Sequence, err = t.str("sequence"); err != nil {
			return nil, err
		}
		for i, c := range []string{"tau_smact", "tau_smocc", "tau_drama"} {
			if g.Thresholds[i], err = t.num(c, 0, 1); err != nil {
				return nil, err
			}
		}
		if g.FirstRejected, err = t.count("first_rejected_position", 1, 1000, true); err != nil {
			return nil, err
		}
		if g.Deferrals, err = t.count("deferrals", 0, 1e9, false); err != nil {
			return nil, err
		}
		if g.MakespanS, err = t.num("makespan_s", 1e-3, 1e7); err != nil {
			return nil, err
		}
		if g.MeanSlowdown, err = t.num("mean_slowdown", 1e-3, 1e3); err != nil {
			return nil, err
		}
		if g.MaxSlowdown, err = t.num("max_slowdown", 1e-3, 1e3); err != nil {
			return nil, err
		}
		if g.FirstRejected == 1 {
			return nil, fmt.Errorf("%s:%d: column first_rejected_position: 1 (the first job starts on an idle GPU and cannot be deferred)", name, t.Line)
		}
		if (g.FirstRejected == 0) != (g.Deferrals == 0) {
			return nil, fmt.Errorf("%s:%d: columns first_rejected_position and deferrals disagree (%q, %d)", name, t.Line, t.Get("first_rejected_position"), g.Deferrals)
		}
		out = append(out, g)
	}
	return out, nil
}
