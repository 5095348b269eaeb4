package experiments

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/stretchr/testify/require"
)

// A tuple sweep (thresholds τ1,τ2,τ3) has one column per component in
// every combined CSV, beside the whole value; a config that does not sweep
// leaves them empty.
func TestTupleSweepColumns(t *testing.T) {
	dir := runSmallSweep(t, "  - param: thresholds\n    product: [[0.5, 0.65], [0.35], [0.5]]\n")
	for _, name := range []string{"cells.csv", "jobs.csv", "normalized.csv"} {
		recs := readCSV(t, filepath.Join(dir, name))
		require.Equal(t, []string{"spec", "trace", "config", "policy", "seed", "thresholds", "thresholds.1", "thresholds.2", "thresholds.3"},
			recs[0][:9], name)
		var aegis, excl []string
		for _, r := range recs[1:] {
			if r[2] == "AEGIS" && aegis == nil {
				aegis = r[5:9]
			}
			if r[2] == "Exclusive" && excl == nil {
				excl = r[5:9]
			}
		}
		require.Equal(t, []string{"0.5,0.35,0.5", "0.5", "0.35", "0.5"}, aegis, name)
		require.Equal(t, []string{"", "", "", ""}, excl, name)
	}
	// The table shows the whole value only.
	md, err := os.ReadFile(filepath.Join(dir, "table.md"))
	require.NoError(t, err)
	require.Contains(t, string(md), "| Config | thresholds | Makespan |")
	require.Contains(t, string(md), "| AEGIS | 0.65,0.35,0.5 |")
}

func TestAxisComponents(t *testing.T) {
	for _, tc := range []struct {
		name string
		ax   Axis
		want int
	}{
		{"plain values", Axis{Values: []string{"10s", "30s"}}, 0},
		{"product of three", Axis{Product: [][]string{{"0.5", "0.6"}, {"0.35"}, {"0.5"}}}, 3},
		{"product of one", Axis{Product: [][]string{{"0.5", "0.6"}}}, 0},
		{"tuple values", Axis{Values: []string{"0.5,0.35,0.5", "0.6, 0.35, 0.5"}}, 3},
		{"tuples of unequal length", Axis{Values: []string{"0.5,0.35,0.5", "0.6,0.35"}}, 0},
		{"a plain value among tuples", Axis{Values: []string{"0.5,0.35", "0.6"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, tc.ax.Components()) })
	}
}

// Cell directories are named by the sweep point's values, made file-safe,
// and fall back to the point's index when that is too long.
func TestPointDir(t *testing.T) {
	long := strings.Repeat("x", maxPointDir)
	for _, tc := range []struct {
		name string
		pt   Point
		want string
	}{
		{"no sweep", nil, ""},
		{"one value", Point{{"hold", "10s"}}, ".hold=10s"},
		{"tuple and truth", Point{{"thresholds", "0.5,0.35,0.5"}, {"truth.noise", "0.1"}}, ".thresholds=0.5,0.35,0.5+truth.noise=0.1"},
		{"unsafe bytes", Point{{"filter", "util:70"}, {"x", "a b/c"}}, ".filter=util_70+x=a_b_c"},
		{"too long", Point{{"hold", long}}, ".p7"},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, pointDir(tc.pt, 7)) })
	}
}

// The example τ1 sweep (written from docs/experiments.md) runs and draws
// its figure: τ1 on the x axis, makespan and mean JCT, a line per trace.
func TestTau1SweepExample(t *testing.T) {
	s, err := LoadPlan(filepath.Join("examples", "tau1-sweep.yaml"))
	require.NoError(t, err)
	require.Len(t, s.Cells(), 4*2*3)
	dir := t.TempDir()
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	require.Contains(t, rep.Files, filepath.Join(dir, "sweep-thresholds.1.svg"))
	svg, err := os.ReadFile(filepath.Join(dir, "sweep-thresholds.1.svg"))
	require.NoError(t, err)
	for _, want := range []string{"τ1 (SMACT threshold)", "makespan (h)", "mean JCT (h)", ">philly<", ">venus<"} {
		require.Contains(t, string(svg), want)
	}
	_, err = os.Stat(filepath.Join(dir, "cells", "philly.AEGIS.thresholds=0.8,0.35,0.5.s3", rundir.CellFile))
	require.NoError(t, err, "cell directories are named by value")
}
