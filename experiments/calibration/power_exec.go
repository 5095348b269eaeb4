package calibration

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/results/runfiles"
)

// ExecPowerRun summarizes an aegis exec run directory's telemetry.csv (the
// readings with a power_w, one second of one GPU each) as a power run, the
// row aegis calibrate power fits on: its duration is the readings' seconds
// per GPU, its energy their power summed, a reading active when any of
// util, SMACT, SMOCC or DRAMA is above 0 (one alone may read 0 in a busy
// second), and the activity means those of the active readings. The run is named after the directory and grouped by
// the trace its exec.json names.
func ExecPowerRun(dir string) (models.PowerRun, error) {
	name := filepath.Join(dir, "telemetry.csv")
	t, err := runfiles.ReadTable(name, append(append([]string(nil), results.TelemetryColumns...), results.PowerColumn)...)
	if err != nil {
		return models.PowerRun{}, err
	}
	run := models.PowerRun{Name: filepath.Base(filepath.Clean(dir)), Group: "exec", Active: models.Activity{Busy: true}}
	if m, err := rundir.ReadExec(dir); err == nil {
		run.Group = m.Trace.Name
	} else if !errors.Is(err, fs.ErrNotExist) {
		return models.PowerRun{}, err
	}
	gpus := map[int]bool{}
	var n, active int
	var idleJ, activeJ float64
	for i := 0; i < t.Len(); i++ {
		w, err := t.OptFloat(i, results.PowerColumn)
		if err != nil {
			return models.PowerRun{}, err
		}
		if math.IsNaN(w) {
			continue // no power read that second
		}
		v := map[string]float64{}
		for _, c := range []string{"smact", "smocc", "drama", "util", "used_mib"} {
			if v[c], err = t.Float(i, c); err != nil {
				return models.PowerRun{}, err
			}
		}
		g, err := t.Int(i, "gpu")
		if err != nil {
			return models.PowerRun{}, err
		}
		gpus[g] = true
		n++
		if v["util"] == 0 && v["smact"] == 0 && v["smocc"] == 0 && v["drama"] == 0 {
			idleJ += w
			continue
		}
		active++
		activeJ += w
		a := &run.Active
		a.SMACT, a.SMOCC, a.DRAMA, a.MemGiB = a.SMACT+v["smact"], a.SMOCC+v["smocc"], a.DRAMA+v["drama"], a.MemGiB+v["used_mib"]/1024
	}
	if n == 0 {
		return models.PowerRun{}, fmt.Errorf("%s: no reading with %s (a run of aegis exec before it read power, or a source that reads none)", name, results.PowerColumn)
	}
	if active == 0 || active == n {
		return models.PowerRun{}, fmt.Errorf("%s: %d of %d readings active: a run needs idle and active seconds", name, active, n)
	}
	run.GPUs = len(gpus)
	run.DurationS = float64(n) / float64(run.GPUs)
	run.EnergyJ = idleJ + activeJ
	run.ActiveFrac = float64(active) / float64(n)
	run.IdleW, run.ActiveW = idleJ/float64(n-active), activeJ/float64(active)
	a, k := &run.Active, float64(active)
	a.SMACT, a.SMOCC, a.DRAMA, a.MemGiB = a.SMACT/k, a.SMOCC/k, a.DRAMA/k, a.MemGiB/k
	return run, nil
}
