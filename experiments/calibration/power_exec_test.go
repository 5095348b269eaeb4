package calibration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// execRun writes an aegis exec run directory of 2 GPUs and 100 s whose
// power follows idle 50 W, busy +100 W and 2 W per GiB used: active for
// the first `active` seconds with mem GiB used, idle after.
func execRun(t *testing.T, active int, mem float64) string {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("gpu,t_s,smact,smocc,drama,util,used_mib,power_w\n")
	for s := range 100 {
		for g := range 2 {
			switch {
			case s == 0: // busy, though util and SMACT read 0
				fmt.Fprintf(&b, "%d,%d,0.0000,0.0000,0.3000,0.00,%.1f,%.1f\n", g, s, mem*1024, 150+2*mem)
			case s < active:
				fmt.Fprintf(&b, "%d,%d,0.6000,0.2000,0.3000,80.00,%.1f,%.1f\n", g, s, mem*1024, 150+2*mem)
			default:
				fmt.Fprintf(&b, "%d,%d,0.0000,0.0000,0.0000,0.00,0.0,50.0\n", g, s)
			}
		}
	}
	fmt.Fprintf(&b, "0,100,0.0000,0.0000,0.0000,0.00,0.0,\n") // a second without power
	require.NoError(t, os.WriteFile(filepath.Join(dir, "telemetry.csv"), []byte(b.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "exec.json"), []byte(`{"trace":{"name":"mytrace"}}`), 0o644))
	return dir
}

// aegis exec runs of one's own GPU fit a power model as the testbed's
// summaries do: each run's readings summarized (duration, energy, active
// share, idle and active power, active means; a reading without power left
// out), and the fit recovers the power the readings follow, memory kept.
func TestExecPowerRuns(t *testing.T) {
	d := execRun(t, 30, 10)
	r, err := ExecPowerRun(d)
	require.NoError(t, err)
	require.Equal(t, filepath.Base(d), r.Name)
	require.Equal(t, "mytrace", r.Group)
	require.Equal(t, 2, r.GPUs)
	require.Equal(t, 100.0, r.DurationS)
	require.InDelta(t, 0.3, r.ActiveFrac, 1e-12)
	require.InDelta(t, 50, r.IdleW, 1e-9)
	require.InDelta(t, 170, r.ActiveW, 1e-9)
	require.InDelta(t, 2*(30*170+70*50), r.EnergyJ, 1e-6)
	require.InDelta(t, 10, r.Active.MemGiB, 1e-9)
	require.InDelta(t, 0.6*29/30, r.Active.SMACT, 1e-9)

	var dirs []string
	for i, mem := range []float64{4, 12, 20, 30} {
		dirs = append(dirs, execRun(t, 20+15*i, mem))
	}
	fit, err := FitPowerRuns(PowerOptions{ExecDirs: dirs, GPU: "a100-40gb"})
	require.NoError(t, err)
	m := fit.Model
	require.InDelta(t, 50, m.IdleW, 1e-6)
	require.InDelta(t, 100, m.BusyW, 1e-6)
	require.InDelta(t, 2, m.MemWPerGiB, 1e-6)
	require.Equal(t, []string{"mem"}, m.Fit.Terms)
	require.Contains(t, m.Source, "aegis exec runs "+dirs[0])

	_, err = FitPowerRuns(PowerOptions{ExecDirs: dirs, RunsPath: "x.csv", GPU: "a100-40gb"})
	require.ErrorContains(t, err, "give one of them")
}

func TestExecPowerRunErrors(t *testing.T) {
	for _, tc := range []struct {
		name, csv, err string
	}{
		{"no power column", "gpu,t_s,smact,smocc,drama,util,used_mib\n0,0,0,0,0,0,0\n", `missing column "power_w"`},
		{"no power read", "gpu,t_s,smact,smocc,drama,util,used_mib,power_w\n0,0,0,0,0,0,0,\n", "no reading with power_w"},
		{"never active", "gpu,t_s,smact,smocc,drama,util,used_mib,power_w\n0,0,0,0,0,0,0,50\n", "0 of 1 readings active"},
		{"a bad value", "gpu,t_s,smact,smocc,drama,util,used_mib,power_w\n0,0,x,0,0,0,0,50\n", "telemetry.csv:2: column smact"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "telemetry.csv"), []byte(tc.csv), 0o644))
			_, err := ExecPowerRun(dir)
			require.ErrorContains(t, err, tc.err)
		})
	}
	_, err := ExecPowerRun(t.TempDir())
	require.ErrorContains(t, err, "telemetry.csv")
}
