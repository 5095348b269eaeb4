package plots

import (
	"image/color"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/aegis-sched/aegis/results/runfiles"
)

// tau1 is the sweep figure of experiments/examples/tau1-sweep.yaml, whose
// cells.csv (4 τ1 values × 2 traces × 3 seeds) is testdata/sweep.
var tau1 = Sweep{X: "thresholds.1", XLabel: "τ1 (SMACT threshold)", Y: []string{"makespan_s", "mean_jct_s"}}

// The acceptance figure: τ1 on the x axis, makespan and mean JCT panels,
// one line per trace with its CI band; byte for byte the golden SVG.
func TestSweepGolden(t *testing.T) {
	dir := copyDir(t, "testdata/sweep")
	paths, err := DrawSweeps(dir, "svg", tau1)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "sweep-thresholds.1.svg")}, paths)
	got := checkGolden(t, paths[0])
	for _, s := range []string{"τ1 (SMACT threshold)", "makespan (h)", "mean JCT (h)", ">philly<", ">venus<"} {
		require.Contains(t, got, s)
	}
}

// sweepPanels reads a cells.csv text and returns sw's panels.
func sweepPanels(t *testing.T, csv string, sw Sweep) [][]SweepPanel {
	t.Helper()
	tb, err := runfiles.ParseTable("cells.csv", strings.NewReader(csv))
	require.NoError(t, err)
	r := &sweepRows{t: tb, sw: sw, sweep: SweepColumns(tb, []string{"makespan_s"})}
	require.NoError(t, r.selectRows())
	grid, err := r.panels()
	require.NoError(t, err)
	return grid
}

// Each line is the mean over seeds with the Student-t 95 % interval,
// points by increasing x; a config that does not sweep is a flat line.
func TestSweepMeansAndBands(t *testing.T) {
	csv := "spec,trace,config,policy,seed,hold,makespan_s,mean_jct_s\n" +
		"s,p,Exclusive,exclusive,1,,7200,3600\n" +
		"s,p,Exclusive,exclusive,2,,7200,3600\n" +
		"s,p,AEGIS,aegis,1,30s,3600,1800\n" +
		"s,p,AEGIS,aegis,2,30s,7200,1800\n" +
		"s,p,AEGIS,aegis,1,10s,3600,1800\n" +
		"s,p,AEGIS,aegis,2,10s,3600,1800\n"
	grid := sweepPanels(t, csv, Sweep{X: "hold"})
	require.Len(t, grid, 1)
	require.Len(t, grid[0], 2)
	mk := grid[0][0]
	require.Equal(t, "makespan", mk.Title)
	require.Equal(t, "hold (s)", mk.XLabel, "durations make a numeric axis in seconds")
	require.Equal(t, "makespan (h)", mk.YLabel)
	require.Nil(t, mk.Categories)
	require.Len(t, mk.Lines, 2)
	ex, ae := mk.Lines[0], mk.Lines[1]
	require.Equal(t, "Exclusive", ex.Name)
	require.True(t, ex.Flat)
	require.Equal(t, []float64{2}, ex.Mean)
	require.Equal(t, "AEGIS", ae.Name)
	require.False(t, ae.Flat)
	require.Equal(t, []float64{10, 30}, ae.X, "by increasing x, not file order")
	require.Equal(t, []float64{1, 1.5}, ae.Mean)
	// Two seeds: t(0.975, 1) = 12.706; sd of {1, 2} h is 0.7071; half-width 12.706*0.7071/sqrt(2) = 6.353.
	require.Equal(t, 1.0, ae.Lo[0])
	require.InDelta(t, 1.5-6.353, ae.Lo[1], 1e-3)
	require.InDelta(t, 1.5+6.353, ae.Hi[1], 1e-3)
}

// A tuple component on the x axis: the other components that vary name
// the lines unless held or faceted; categories when values are not numbers.
func TestSweepHoldFacetCategories(t *testing.T) {
	csv := "spec,trace,config,policy,seed,thresholds,thresholds.1,thresholds.2,filter,makespan_s,mean_jct_s\n" +
		"s,p,A,aegis,1,\"0.5,0.3\",0.5,0.3,pressure,3600,1\n" +
		"s,p,A,aegis,1,\"0.6,0.3\",0.6,0.3,pressure,7200,1\n" +
		"s,p,A,aegis,1,\"0.5,0.4\",0.5,0.4,pressure,10800,1\n" +
		"s,p,A,aegis,1,\"0.6,0.4\",0.6,0.4,pressure,14400,1\n" +
		"s,p,A,aegis,1,\"0.5,0.3\",0.5,0.3,nf,1800,1\n"
	names := func(p SweepPanel) []string {
		var out []string
		for _, l := range p.Lines {
			out = append(out, l.Name)
		}
		return out
	}
	grid := sweepPanels(t, csv, Sweep{X: "thresholds.1", Y: []string{"makespan_s"}})
	require.Equal(t, "τ1 (SMACT threshold)", grid[0][0].XLabel, "a threshold named by its signal")
	require.Equal(t, "filter", paramName("filter"))
	require.Equal(t, []string{"A · thresholds.2=0.3 · filter=pressure", "A · thresholds.2=0.4 · filter=pressure", "A · thresholds.2=0.3 · filter=nf"}, names(grid[0][0]))
	grid = sweepPanels(t, csv, Sweep{X: "thresholds.1", Y: []string{"makespan_s"}, Hold: map[string]string{"thresholds.2": "0.40", "filter": "pressure"}})
	require.Equal(t, []string{"A"}, names(grid[0][0]))
	require.Equal(t, []float64{3, 4}, grid[0][0].Lines[0].Mean, "held values compare as numbers")
	grid = sweepPanels(t, csv, Sweep{X: "thresholds.1", Y: []string{"makespan_s"}, Facet: "thresholds.2", Hold: map[string]string{"filter": "pressure"}})
	require.Len(t, grid, 2)
	require.Equal(t, "makespan, thresholds.2=0.3", grid[0][0].Title)
	require.Equal(t, []float64{1, 2}, grid[0][0].Lines[0].Mean)
	require.Equal(t, []float64{3, 4}, grid[1][0].Lines[0].Mean)
	grid = sweepPanels(t, csv, Sweep{X: "filter", Y: []string{"makespan_s"}, Hold: map[string]string{"thresholds": "0.5,0.3"}})
	require.Equal(t, []string{"pressure", "nf"}, grid[0][0].Categories)
	require.Equal(t, []float64{0, 1}, grid[0][0].Lines[0].X)
	require.Equal(t, []float64{1, 0.5}, grid[0][0].Lines[0].Mean)
}

func TestSweepErrors(t *testing.T) {
	dir := copyDir(t, "testdata/sweep")
	for _, tc := range []struct {
		name string
		sw   Sweep
		want string
	}{
		{"no x", Sweep{}, "x: missing"},
		{"not swept", Sweep{X: "seed"}, `"seed" is not a swept column (have thresholds, thresholds.1, thresholds.2, thresholds.3)`},
		{"unknown metric", Sweep{X: "thresholds.1", Y: []string{"speed"}}, `y: unknown metric "speed"`},
		{"bad from", Sweep{X: "thresholds.1", From: "jobs"}, `from: "jobs": want cells or normalized`},
		{"no normalized.csv", Sweep{X: "thresholds.1", From: SweepNormalized}, "no normalized.csv"},
		{"held value absent", Sweep{X: "thresholds.1", Hold: map[string]string{"thresholds.2": "0.9"}}, "no row has the held values"},
		{"facet is x", Sweep{X: "thresholds.1", Facet: "thresholds.1"}, `facet: "thresholds.1" is the x axis`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DrawSweeps(dir, "svg", tc.sw)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// From normalized.csv the GeoMean rows are a line of their own (named
// GeoMean), left out when they repeat a single trace.
func TestSweepGeoMeanRows(t *testing.T) {
	head := "spec,trace,config,policy,seed,hold,makespan_s,mean_jct_s\n"
	one := head + "s,p,A,aegis,1,10s,0.5,1\ns,geomean,A,aegis,1,10s,0.5,1\n"
	names := func(grid [][]SweepPanel) []string {
		var out []string
		for _, l := range grid[0][0].Lines {
			out = append(out, l.Name)
		}
		return out
	}
	require.Equal(t, []string{"A"}, names(sweepPanels(t, one, Sweep{X: "hold", From: SweepNormalized})))
	two := one + "s,q,A,aegis,1,10s,0.5,1\n"
	require.Equal(t, []string{"p", "GeoMean", "q"}, names(sweepPanels(t, two, Sweep{X: "hold", From: SweepNormalized})))
}

// With several configurations drawn, a line takes its configuration's
// colour (the paper's slots: Exclusive grey, AEGIS blue) whatever else
// names it; the lines of one configuration differ in marker and dash.
// With one configuration (the τ1 figure's traces) each line has its own.
func TestSweepColoursByConfig(t *testing.T) {
	csv := "spec,trace,config,policy,seed,server,server.gpus,server.type,makespan_s\n" +
		"s,p,Exclusive,exclusive,1,a100-40gb:2,2,a100-40gb,3600\n" +
		"s,p,Exclusive,exclusive,1,h200-141gb:2,2,h200-141gb,3600\n" +
		"s,p,AEGIS,aegis,1,a100-40gb:2,2,a100-40gb,1800\n" +
		"s,p,AEGIS,aegis,1,h200-141gb:2,2,h200-141gb,1700\n" +
		"s,p,AEGIS,aegis,1,a100-40gb:4,4,a100-40gb,900\n" +
		"s,p,AEGIS,aegis,1,h200-141gb:4,4,h200-141gb,800\n"
	grid := sweepPanels(t, csv, Sweep{X: "server.gpus", Y: []string{"makespan_s"}})
	lines := grid[0][0].Lines
	var styles []string
	for _, l := range lines {
		styles = append(styles, l.Name+" / "+l.Style)
	}
	require.Equal(t, []string{"Exclusive · server.type=a100-40gb / Exclusive", "Exclusive · server.type=h200-141gb / Exclusive",
		"AEGIS · server.type=a100-40gb / AEGIS", "AEGIS · server.type=h200-141gb / AEGIS"}, styles)
	st := NewStyles()
	vs := variants(grid)
	type look struct {
		c      color.Color
		g      draw.GlyphDrawer
		dashes []vg.Length
	}
	looks := make([]look, len(lines))
	for i, l := range lines {
		c, g, d := bandStyle(st, l, vs)
		looks[i] = look{c, g, d}
	}
	require.Equal(t, st.Color("Exclusive"), looks[0].c)
	require.Equal(t, looks[0].c, looks[1].c, "one configuration, one colour")
	require.Equal(t, st.Color("AEGIS"), looks[2].c)
	require.Equal(t, looks[2].c, looks[3].c)
	require.NotEqual(t, looks[0].c, looks[2].c)
	require.Nil(t, looks[2].dashes, "a configuration's first line is solid")
	require.NotNil(t, looks[3].dashes, "its second is not")
	require.NotEqual(t, looks[2].g, looks[3].g, "nor has it the same marker")

	one := sweepPanels(t, "spec,trace,config,policy,seed,hold,makespan_s\ns,p,A,aegis,1,10s,1\ns,q,A,aegis,1,10s,2\n", Sweep{X: "hold", Y: []string{"makespan_s"}})
	for _, l := range one[0][0].Lines {
		require.Equal(t, "A", l.Style, "one configuration, several traces: its colour (%s)", l.Name)
		require.Equal(t, l.Name, l.Variant, "and a line per trace")
	}
}

// Sweep figures tell traces apart while keeping one colour per policy:
// every line of a trace (swept or flat, any configuration) has the same
// dashes and marker, the traces differ, and the legend names each
// configuration by its colour and each trace by its line once.
func TestSweepTellsTracesApart(t *testing.T) {
	csv := "spec,trace,config,policy,seed,hold,makespan_s\n" +
		"s,philly,Exclusive,exclusive,1,,3600\ns,saturn,Exclusive,exclusive,1,,3000\n" +
		"s,philly,Lucid,lucid,1,,3300\ns,saturn,Lucid,lucid,1,,2800\n" +
		"s,philly,aegis,aegis,1,10s,1800\ns,philly,aegis,aegis,1,30s,1700\n" +
		"s,saturn,aegis,aegis,1,10s,1500\ns,saturn,aegis,aegis,1,30s,1400\n"
	grid := sweepPanels(t, csv, Sweep{X: "hold", Y: []string{"makespan_s"}})
	st := NewStyles()
	vs := variants(grid)
	dashes := map[string][]vg.Length{}
	marks := map[string]draw.GlyphDrawer{}
	for _, l := range grid[0][0].Lines {
		c, g, d := bandStyle(st, l, vs)
		require.Equal(t, colorOf(policySlots[strings.ToLower(l.Style)]), c, "%s: its policy's colour", l.Name)
		if prev, ok := dashes[l.Variant]; ok {
			require.Equal(t, prev, d, "%s: its trace's dashes", l.Name)
			require.Equal(t, marks[l.Variant], g, "%s: its trace's marker", l.Name)
		}
		dashes[l.Variant], marks[l.Variant] = d, g
	}
	require.Len(t, dashes, 2)
	require.NotEqual(t, dashes["philly"], dashes["saturn"], "two traces, two line styles")
	fig, err := SweepLines(st, "t", grid)
	require.NoError(t, err)
	var names []string
	for _, e := range fig.Legend {
		names = append(names, e.Name)
	}
	require.Equal(t, []string{"Exclusive", "Lucid", "aegis", "philly", "saturn"}, names)
}
