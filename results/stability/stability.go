// Package stability measures how well AEGIS's activity-anchored telemetry
// window estimates the pressure of a new mix of jobs on a GPU, as a
// function of its length (the paper's Figure 6): the weighted mean absolute
// error of the window scores for windows of 10–120 s against the score of a
// 200 s window anchored at the same first activity.
//
// Definitions. An anchor is a job attempt's first activity on one of its
// GPUs: the instant AEGIS's window restarts. The anchor's mix (the set of
// active jobs on the GPU) lasts until the next activity, finish or failure
// on that GPU; only anchors whose mix lasts at least the reference length
// count, so both windows see one mix. The window of length W is what the
// AEGIS policy would score at anchor + W (policies.Window, anchored), scored
// by policies.Score, per signal; the reference is the same at anchor + 200 s.
// Each anchor's absolute error is weighted by how long its mix lasted (a
// placement decision made on it stands that long). Utilization is scored
// as a fraction (percent / 100) so all signals share one scale.
package stability

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// Columns is the header of stability.csv; window_s, signal and wmae are the
// contract's, anchors the number of anchors behind each value.
var Columns = []string{"window_s", "signal", "wmae", "anchors"}

// Signals are the scored signals, in output order.
var Signals = []string{"smact", "smocc", "drama", "util"}

// Config sets the window lengths compared and the reference length.
type Config struct {
	Windows   []int // seconds; the paper's 10, 20, …, 120 by default
	Reference int   // seconds; 200 by default
}

// DefaultConfig is the paper's Figure 6 setting.
func DefaultConfig() Config {
	var w []int
	for s := 10; s <= 120; s += 10 {
		w = append(w, s)
	}
	return Config{Windows: w, Reference: 200}
}

// Run is one run's telemetry and job attempts.
type Run struct {
	Name     string // for errors
	Tel      *runfiles.Telemetry
	Attempts []runfiles.Attempt
}

// ReadRun reads a run directory's telemetry.csv and events.jsonl (as
// `aegis simulate --telemetry --out DIR` writes them).
func ReadRun(dir string) (Run, error) {
	tel, err := runfiles.ReadTelemetry(filepath.Join(dir, "telemetry.csv"))
	if err != nil {
		return Run{}, err
	}
	path := filepath.Join(dir, "events.jsonl")
	evs, err := runfiles.ReadEvents(path)
	if err != nil {
		return Run{}, err
	}
	atts, err := runfiles.Attempts(path, evs)
	if err != nil {
		return Run{}, err
	}
	return Run{Name: dir, Tel: tel, Attempts: atts}, nil
}

// Point is one row of stability.csv.
type Point struct {
	WindowS int
	Signal  string
	WMAE    float64 // NaN when no anchor qualified
	Anchors int
}

// anchor is a mix's start on a GPU and how long the mix lasted.
type anchor struct {
	gpu       int
	at, lasts float64 // seconds
}

// anchors lists a run's anchors whose mix lasted at least ref seconds.
func anchors(r Run, ref float64) []anchor {
	end := 0.0
	for _, s := range r.Tel.S {
		end = max(end, float64(len(s)))
	}
	changes := map[int][]float64{}
	for _, a := range r.Attempts {
		for _, g := range a.GPUs {
			if a.Active >= 0 {
				changes[g] = append(changes[g], a.Active)
			}
			if a.End >= 0 {
				changes[g] = append(changes[g], a.End)
			}
		}
	}
	var out []anchor
	for g := range r.Tel.GPUs() {
		seen := map[float64]bool{}
		for _, a := range r.Attempts {
			if a.Active < 0 || !slices.Contains(a.GPUs, g) || seen[a.Active] {
				continue
			}
			seen[a.Active] = true
			next := end
			for _, c := range changes[g] {
				if c > a.Active {
					next = min(next, c)
				}
			}
			if next-a.Active >= ref {
				out = append(out, anchor{gpu: g, at: a.Active, lasts: next - a.Active})
			}
		}
	}
	return out
}

// recorded serves a run's recorded samples as policies.Telemetry.
type recorded struct {
	tel *runfiles.Telemetry
	now time.Duration
}

// Samples implements policies.Telemetry.
func (r recorded) Samples(dst []policies.Sample, g, n int) []policies.Sample {
	last := int(r.now / time.Second)
	for k := max(last-n+1, 0); k <= last; k++ {
		var x policies.Sample
		if g < len(r.tel.S) && k < len(r.tel.S[g]) {
			x = r.tel.S[g][k]
		}
		// The anchored window places samples by their time (Sample.At).
		x.At = time.Duration(k) * time.Second
		dst = append(dst, x)
	}
	return dst
}

// scores returns the anchored window's score of each signal at anchor +
// window seconds, through the policy's own window and score code.
func scores(tel *runfiles.Telemetry, a anchor, window int, buf []policies.Sample) [4]float64 {
	at := time.Duration(math.Round(a.at * 1e9))
	now := at + time.Duration(window)*time.Second
	v := &policies.View{Now: now, GPUs: make([]policies.GPU, tel.GPUs()),
		Jobs:      []policies.Job{{ID: 0, State: policies.Running, On: []int{a.gpu}, Active: true, ActiveAt: at}},
		Telemetry: recorded{tel: tel, now: now}}
	v.GPUs[a.gpu].Jobs = []policies.JobID{0}
	win := policies.Window(v, a.gpu, window, true, buf)
	var out [4]float64
	xs := make([]float64, len(win))
	for sig := range out {
		for k, x := range win {
			xs[k] = [4]float64{x.SMACT, x.SMOCC, x.DRAMA, x.UtilPct / 100}[sig]
		}
		out[sig] = policies.Score(xs, nil)
	}
	return out
}

// Compute returns one point per window length and signal, over the anchors
// of all runs.
func Compute(c Config, runs ...Run) ([]Point, error) {
	if c.Reference <= 0 || len(c.Windows) == 0 {
		return nil, errors.New("stability: need window lengths and a positive reference length")
	}
	for _, w := range c.Windows {
		if w <= 0 || w > c.Reference {
			return nil, fmt.Errorf("stability: window %d s: want 1 to the reference's %d s", w, c.Reference)
		}
	}
	type acc struct{ sum, weight float64 }
	errs := make([][4]acc, len(c.Windows))
	n := 0
	var buf []policies.Sample
	for _, r := range runs {
		if r.Tel == nil || r.Tel.GPUs() == 0 {
			return nil, fmt.Errorf("stability: run %s has no telemetry", r.Name)
		}
		for _, a := range anchors(r, float64(c.Reference)) {
			n++
			ref := scores(r.Tel, a, c.Reference, buf)
			for i, w := range c.Windows {
				s := scores(r.Tel, a, w, buf)
				for sig := range s {
					errs[i][sig].sum += a.lasts * math.Abs(s[sig]-ref[sig])
					errs[i][sig].weight += a.lasts
				}
			}
		}
	}
	var pts []Point
	for i, w := range c.Windows {
		for sig, name := range Signals {
			e := errs[i][sig]
			v := math.NaN()
			if e.weight > 0 {
				v = e.sum / e.weight
			}
			pts = append(pts, Point{WindowS: w, Signal: name, WMAE: v, Anchors: n})
		}
	}
	return pts, nil
}

// WriteCSV writes points as stability.csv (Columns); a NaN error is an
// empty cell.
func WriteCSV(w io.Writer, pts []Point) error {
	cw := csv.NewWriter(w)
	cw.Write(Columns)
	for _, p := range pts {
		v := ""
		if !math.IsNaN(p.WMAE) {
			v = strconv.FormatFloat(p.WMAE, 'f', 6, 64)
		}
		cw.Write([]string{strconv.Itoa(p.WindowS), p.Signal, v, strconv.Itoa(p.Anchors)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteDir computes the stability over the runs in runDirs (each with
// telemetry.csv and events.jsonl) and writes outDir/stability.csv.
func WriteDir(outDir string, c Config, runDirs ...string) error {
	var runs []Run
	for _, d := range runDirs {
		r, err := ReadRun(d)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	pts, err := Compute(c, runs...)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, pts); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(outDir, "stability.csv"), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("stability: %w", err)
	}
	return nil
}
