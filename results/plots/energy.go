package plots

import (
	"fmt"
	"math"
	"slices"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
)

// FigEnergy is the energy figure: energy to solution per trace and
// configuration (cells.csv), and, when normalized.csv is there, energy
// over the normalizing configuration's per trace and GeoMean; bars are
// means over seeds with their 95 % CI and a ring per seed (equal seeds one ring).
const FigEnergy = "energy"

// energy draws FigEnergy.
func (d *dirData) energy() (*Figure, error) {
	t, err := d.table(rundir.Cells, "trace")
	if err != nil {
		return nil, err
	}
	if !t.Has("energy_kwh") {
		if !d.named {
			return nil, errSkip
		}
		return nil, fmt.Errorf("%s: no energy_kwh column: energy is metered only on GPU types with a power model (see docs/energy.md)", t.Name)
	}
	sweep := SweepColumns(t, results.SummaryColumns)
	abs, err := d.energyPanel(rundir.Cells, "energy_kwh", sweep, false)
	if err != nil {
		return nil, err
	}
	abs.Title, abs.YLabel = "energy to solution", "energy (kWh)"
	panels := []Bars{abs}
	if n, err := d.table(rundir.Normalized); err == nil && n.Has("energy_j") {
		rel, err := d.energyPanel(rundir.Normalized, "energy_j", SweepColumns(n, results.SummaryColumns), true)
		if err != nil {
			return nil, err
		}
		base := baselineName(n)
		rel.Title, rel.YLabel, rel.Ref, rel.RefName = "energy normalized to "+base, "energy / "+base+"'s", 1, base+" (= 1)"
		panels = append(panels, rel)
	}
	return NormalizedBars(d.styles(), "energy to solution (mean ± 95 % CI over seeds)", panels...)
}

// energyPanel is one energy panel from file's column col: per trace
// (GeoMean last) one bar per configuration, the mean over seeds with its
// CI and the seeds as dots; with dropBase the normalizing configuration
// (normalized.csv's normalized_to) is left out.
func (d *dirData) energyPanel(file, col string, sweep []string, dropBase bool) (Bars, error) {
	t, err := d.table(file, "trace", col)
	if err != nil {
		return Bars{}, err
	}
	var traces, series order
	vals := map[[2]int][]float64{}
	base := map[int]bool{} // the normalizing configuration's series
	for i := range t.Len() {
		g, s := traces.at(t.String(i, "trace")), series.at(SeriesName(t, i, sweep))
		v, err := t.OptFloat(i, col)
		if err != nil {
			return Bars{}, err
		}
		base[s] = isBaseline(t, i)
		if finite(v) {
			vals[[2]int{s, g}] = append(vals[[2]int{s, g}], v)
		}
	}
	if t.Len() == 0 {
		return Bars{}, fmt.Errorf("%s: no rows", t.Name)
	}
	groups := slices.Clone(traces.keys)
	gi := make([]int, len(groups))
	for i := range gi {
		gi[i] = i
	}
	if k := slices.Index(groups, rundir.GeoMean); k >= 0 {
		groups = append(slices.Delete(groups, k, k+1), "GeoMean")
		gi = append(slices.Delete(gi, k, k+1), k)
	}
	b := Bars{Groups: groups}
	for s, name := range series.keys {
		if dropBase && base[s] && len(series.keys) > 1 {
			continue
		}
		bs := BarSeries{Name: name}
		for _, g := range gi {
			xs := vals[[2]int{s, g}]
			st := results.StatOf(xs)
			m, ci := st.Mean, st.CI95
			if len(xs) == 0 {
				m = math.NaN()
			}
			if math.IsNaN(ci) {
				ci = 0
			}
			bs.Values, bs.Lo, bs.Hi = append(bs.Values, m), append(bs.Lo, m-ci), append(bs.Hi, m+ci)
			bs.Points = append(bs.Points, xs)
		}
		b.Series = append(b.Series, bs)
	}
	return b, nil
}
