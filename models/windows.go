package models

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/internal/csvhead"
)

// Solo telemetry windows: what a job alone shows the pressure filter.
//
// The AEGIS artifact ran 50 one-GPU and 3 two-GPU workloads alone on the
// A100 of the stacking runs and summarised SMACT, SMOCC and DRAMA over the
// 200 s after each job's first GPU activity, as the policy reads them
// (../shared/calibration/aegis/solo_windows/). Over the 46 fully profiled
// workloads the window's median matches the catalog's full-run mean (SMACT:
// slope 0.97, rms 0.022) while its mean is far lower (slope 1.39): about a
// third of a heavy CNN's SMACT and SMOCC samples sit near zero (VGG16: mean
// 0.54, median 0.82, p95 0.83), so its window score is lower than its
// profile says; DRAMA has no such low mode (mean and median agree). A
// Window keeps each signal's window mean and p95 and the share of
// low samples, Idle = 1 − mean/median, so that draws from it have the
// window's mean, median and p95 (see Stat).

// Window is a workload's measured solo telemetry over the policy's window:
// one Stat per signal (SMACT, SMOCC, DRAMA), nil where the window gives no
// usable level (the catalog profile is shown then).
type Window [3]*Stat

// windowSignals are the window file's signal names, in Window's order.
var windowSignals = [3]string{"smact", "smocc", "drama"}

// signal is p's Stat of signal i in Window's order.
func (p *Profile) signal(i int) *Stat {
	return [3]*Stat{&p.SMACT, &p.SMOCC, &p.DRAMA}[i]
}

// sourceWindowCols are the columns DeriveWindows reads from the artifact's
// solo_1gpu_windows.csv / solo_2gpu_windows.csv.
var sourceWindowCols = []string{"run_id", "finish_status", "base_metric", "mean_w200s", "median_w200s", "p95_w200s"}

// windowCols is the derived windows format (models/data/windows_a100.csv).
var windowCols = []string{"workload", "signal", "mean", "p95", "idle"}

// DeriveWindows converts the artifact's solo window summaries (one row per
// run and signal) into the derived windows format, appending to sb (the
// header is written when sb is empty). Per (workload, signal), from the 200-s
// window: mean and p95 as measured, idle = 1 − mean/median (0 when the mean
// is not below the median). A signal is left out when its p95 is below its
// median (a run that ended before the window was complete; the files'
// README names mnist_bs32_1gpu and resnet18_cifar100_bs128_20e_1gpu) or its
// median is 0 (no busy level: DLRM's bursty SMACT and SMOCC, which the
// catalog's two-level draw already models), and when the run did not
// complete. The workload is the run_id without its "solo_NNNN_" prefix and
// its hash suffix.
func DeriveWindows(sb *strings.Builder, r io.Reader, name string) error {
	t, err := readTable(r, name, sourceWindowCols)
	if err != nil {
		return err
	}
	if sb.Len() == 0 {
		sb.WriteString(strings.Join(windowCols, ",") + "\n")
	}
	for _, row := range t {
		id, err := windowWorkload(row["run_id"])
		if err != nil {
			return fmt.Errorf("%s:%s: %w", name, row["line"], err)
		}
		if row["finish_status"] != "completed" {
			continue
		}
		var v [3]float64
		for i, c := range []string{"mean_w200s", "median_w200s", "p95_w200s"} {
			x, err := strconv.ParseFloat(row[c], 64)
			if err != nil || !(x >= 0 && x <= 1) {
				return fmt.Errorf("%s:%s: column %s: %q is not a number in [0, 1]", name, row["line"], c, row[c])
			}
			v[i] = x
		}
		mean, med, p95 := v[0], v[1], v[2]
		if p95 < med || med == 0 {
			continue
		}
		idle := max(0, 1-mean/med)
		fmt.Fprintf(sb, "%s,%s,%.4f,%.4f,%.4f\n", id, row["base_metric"], mean, p95, idle)
	}
	return nil
}

// windowWorkload is the workload of an artifact solo run id
// ("solo_0003_dlrm_criteo_bs32768_1gpu_12f420cd" → "dlrm_criteo_bs32768_1gpu").
func windowWorkload(run string) (string, error) {
	f := strings.Split(run, "_")
	if len(f) < 4 || f[0] != "solo" {
		return "", fmt.Errorf("run_id %q: want solo_NNNN_<workload>_<hash>", run)
	}
	return strings.Join(f[2:len(f)-1], "_"), nil
}

// readTable reads a CSV with a header into one map per row (column → value,
// trimmed), plus "line" → the row's line number, checking that cols exist.
func readTable(r io.Reader, name string, cols []string) ([]map[string]string, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	t, err := csvhead.NewReader(cr, name, cols...)
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	err = t.Each(func() error {
		m := map[string]string{"line": strconv.Itoa(t.Line)}
		for _, c := range cols {
			m[c] = t.Get(c)
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// ReadWindows parses the derived windows format. Errors name the file, line
// and column.
func ReadWindows(r io.Reader, name string) (map[string]Window, error) {
	t, err := readTable(r, name, windowCols)
	if err != nil {
		return nil, err
	}
	out := map[string]Window{}
	for _, row := range t {
		id := row["workload"]
		if id == "" {
			return nil, fmt.Errorf("%s:%s: column workload: empty", name, row["line"])
		}
		sig := -1
		for i, s := range windowSignals {
			if row["signal"] == s {
				sig = i
			}
		}
		if sig < 0 {
			return nil, fmt.Errorf("%s:%s: column signal: %q is not smact, smocc or drama", name, row["line"], row["signal"])
		}
		var v [3]float64
		for i, c := range windowCols[2:] {
			x, err := strconv.ParseFloat(row[c], 64)
			if err != nil || !(x >= 0 && x <= 1) || (c == "idle" && x == 1) {
				return nil, fmt.Errorf("%s:%s: column %s: %q is not a number in [0, 1]", name, row["line"], c, row[c])
			}
			v[i] = x
		}
		w := out[id]
		if w[sig] != nil {
			return nil, fmt.Errorf("%s:%s: workload %s: second row for %s", name, row["line"], id, row["signal"])
		}
		w[sig] = &Stat{Mean: v[0], P95: v[1], Idle: v[2]}
		out[id] = w
	}
	return out, nil
}

// WithWindows returns a copy of c in which every workload with a measured
// window shows it in telemetry (Workload.Shown): on each of its GPUs whose
// profile is busy at all (SMACT mean > 0), the window's signals replace
// the profile's, each signal the window has; speed, memory and the
// policies' profiles still read PerGPU. Windows of workloads not in c are
// ignored.
func (c *Catalog) WithWindows(ws map[string]Window) *Catalog {
	out := &Catalog{byID: make(map[string]*Workload, len(c.byID)), ids: c.ids}
	for id, w := range c.byID {
		cp := *w
		if win, ok := ws[id]; ok {
			cp.Shown = make([]Profile, len(w.PerGPU))
			for g, p := range w.PerGPU {
				cp.Shown[g] = p
				if p.SMACT.Mean == 0 {
					continue
				}
				for i, st := range win {
					if st != nil {
						*cp.Shown[g].signal(i) = *st
					}
				}
			}
		}
		out.byID[id] = &cp
	}
	return out
}

// WindowIDs returns the workloads of ws in sorted order.
func WindowIDs(ws map[string]Window) []string {
	ids := make([]string, 0, len(ws))
	for id := range ws {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
