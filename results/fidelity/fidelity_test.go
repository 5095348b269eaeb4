package fidelity

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/models"
)

// vals builds Values from "table/config/trace/metric" → mean, CI 0.
func vals(m map[string]float64) Values {
	v := Values{}
	for s, x := range m {
		p := strings.Split(s, "/")
		k := Key{Table: int(p[0][0] - '0'), Config: p[1], Trace: p[2]}
		if v[k] == nil {
			v[k] = map[string]Stat{}
		}
		v[k][p[3]] = Stat{Mean: x, CI95: 0, Model: math.NaN()}
	}
	return v
}

func byID(id string) Conclusion {
	for _, c := range Conclusions {
		if c.ID == id {
			return c
		}
	}
	panic(id)
}

func TestConclusions(t *testing.T) {
	t3 := func(peak float64) map[string]float64 {
		return map[string]float64{"3/PeakMem//makespan": peak, "3/Est-free//makespan": 0.73, "3/AnalyticalMem//makespan": 0.74,
			"3/GPUMemNet//makespan": 0.75, "3/FakeTensor//makespan": 0.8}
	}
	t5 := func(mfmNF, muNF float64) map[string]float64 {
		return map[string]float64{"5/MFM//jct_mean": 0.6, "5/MFM-NF//jct_mean": mfmNF, "5/MU//jct_mean": 0.58, "5/MU-NF//jct_mean": muNF}
	}
	t6 := func(mem float64) map[string]float64 {
		return map[string]float64{"6/AEGIS Mem-only//makespan": mem, "6/AEGIS U70%//makespan": 0.88, "6/Horus//makespan": 0.9, "6/Lucid//makespan": 0.95}
	}
	t2 := func(aegis float64) map[string]float64 {
		m := map[string]float64{}
		for _, tr := range []string{"philly", "saturn", "venus"} {
			m["2/AEGIS Est-free/"+tr+"/makespan"] = aegis
			m["2/Lucid/"+tr+"/makespan"] = 10
			m["2/Horus/"+tr+"/makespan"] = 11
			m["2/Exclusive/"+tr+"/makespan"] = 12
		}
		return m
	}
	for _, tc := range []struct {
		name, id string
		v        map[string]float64
		ok, hold bool
	}{
		{"PeakMem lowest", "table3-peakmem", t3(0.7), true, true},
		{"PeakMem not lowest", "table3-peakmem", t3(0.745), true, false},
		{"PeakMem tie is not lowest", "table3-peakmem", t3(0.73), true, false},
		{"NF raises both", "table5-nf", t5(0.62, 0.6), true, true},
		{"NF lowers MFM", "table5-nf", t5(0.59, 0.6), true, false},
		{"NF lowers MU", "table5-nf", t5(0.62, 0.57), true, false},
		{"Mem-only worst", "table6-memonly", t6(1.0), true, true},
		{"Mem-only not worst", "table6-memonly", t6(0.92), true, false},
		{"headline in order", "headline", t2(8.5), true, true},
		{"AEGIS slower than Lucid", "headline", t2(10.5), true, false},
		{"table not run", "table5-nf", t3(0.7), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := byID(tc.id).Check(vals(tc.v))
			require.Equal(t, tc.ok, v.OK)
			require.Equal(t, tc.hold, v.Holds)
		})
	}
}

// TestClose: a difference within the seeds' combined CI is named.
func TestClose(t *testing.T) {
	v := vals(map[string]float64{"5/MFM//jct_mean": 0.6, "5/MFM-NF//jct_mean": 0.61, "5/MU//jct_mean": 0.5, "5/MU-NF//jct_mean": 0.6})
	s := v[Key{Table: 5, Config: "MFM"}]["jct_mean"]
	s.CI95 = 0.02
	v[Key{Table: 5, Config: "MFM"}]["jct_mean"] = s
	r := byID("table5-nf").Check(v)
	require.True(t, r.Holds)
	require.Equal(t, []string{"MFM → MFM-NF"}, r.Close)
}

func TestHeadline(t *testing.T) {
	v := vals(map[string]float64{})
	for i, tr := range []string{"philly", "saturn", "venus"} {
		for c, x := range map[string]float64{"AEGIS Est-free": 8, "Lucid": 10, "Horus": 10, "Exclusive": 16} {
			v[Key{2, c, tr}] = map[string]Stat{"makespan": {Mean: x * float64(i+1)}}
		}
	}
	r, ok := headline(v)
	require.True(t, ok)
	require.InDeltaSlice(t, []float64{0.2, 0.2, 0.5}, r, 1e-12)
	require.False(t, checkHeadline(v).Holds, "vs Lucid = vs Horus is not in the paper's order")
}

// writeRun writes a results directory with Tables 3 and 5 (two seeds).
func writeRun(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"table3/table.csv": "Config,makespan,makespan_ci95,jct_mean,jct_mean_ci95,failed,recovered\n" +
			"PeakMem,0.70,0.01,0.50,0.01,0.000,0.000\nEst-free,0.72,0.01,0.55,0.02,3.000,3.000\n" +
			"AnalyticalMem,0.73,0.00,0.58,0.00,1.000,1.000\nGPUMemNet,0.69,0.01,0.55,0.01,2.000,2.000\nFakeTensor,0.76,0.00,0.62,0.01,0.000,0.000\n",
		"table3/cells.csv": "spec,seed\ntable3,1\ntable3,2\ntable3,1\n",
		"table5/table.csv": "Config,makespan,makespan_ci95,jct_mean,jct_mean_ci95,jct_mean_model\n" +
			"MFM,0.72,0.01,0.55,0.02,0.004\nMFM-NF,0.71,0.01,0.54,0.00,0.006\nMU,0.72,0.01,0.56,0.01,0.003\nMU-NF,0.72,0.01,0.56,0.01,0.005\n",
		"table5/cells.csv": "spec,seed\ntable5,1\ntable5,2\n",
		// Under model 1 turning the filter off raises mean JCT for both.
		"table5/refits.csv": "model,Config,makespan,jct_mean\n" +
			"0,MFM,0.72,0.55\n0,MFM-NF,0.71,0.54\n0,MU,0.72,0.56\n0,MU-NF,0.72,0.56\n" +
			"1,MFM,0.72,0.55\n1,MFM-NF,0.71,0.56\n1,MU,0.72,0.56\n1,MU-NF,0.72,0.57\n" +
			"2,MFM,0.72,0.555\n2,MFM-NF,0.71,0.55\n2,MU,0.72,0.56\n2,MU-NF,0.72,0.565\n",
	}
	for name, s := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	return dir
}

// published is a made-up published_tables.csv (not the paper's values).
const published = `table,config,trace,makespan,jct_mean,jct_p95,queue_mean,queue_p95,exec_mean,exec_p95,failed,recovered
3,PeakMem,geomean,0.70,0.60,,,,1.7,,0,0
3,Est-free,geomean,0.73,0.61,,,,1.5,,10,10
3,AnalyticalMem,geomean,0.74,0.62,,,,1.4,,3,3
3,GPUMemNet,geomean,0.74,0.63,,,,1.5,,1,1
3,FakeTensor,geomean,0.79,0.65,,,,1.4,,0,0
5,MFM,geomean,0.73,0.61,,,,1.5,,10,10
5,MFM-NF,geomean,0.73,0.62,,,,1.8,,15,15
5,MU,geomean,0.75,0.59,,,,1.6,,11,11
5,MU-NF,geomean,0.77,0.62,,,,1.7,,16,16
6,Lucid,geomean,0.95,0.88,,,,1.2,,0,0
`

func TestReportGolden(t *testing.T) {
	dir := writeRun(t)
	shared := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(shared, "paper"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, PublishedPath), []byte(published), 0o644))
	for _, tc := range []struct{ name, shared, golden string }{
		{"published", shared, "report.md"},
		{"no shared folder", "", "report-unpublished.md"},
		{"shared without the paper", t.TempDir(), "report-nopaper.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Load(dir, tc.shared)
			require.NoError(t, err)
			r.Dir = "run"
			var b bytes.Buffer
			require.NoError(t, r.WriteMarkdown(&b))
			path := filepath.Join("testdata", tc.golden)
			golden.File(t, path, b.Bytes())
			require.Equal(t, r.Paper != nil, Published(path), "Published tells a report with the published values")
		})
	}
}

func TestMedianErr(t *testing.T) {
	require.False(t, Published(filepath.Join(t.TempDir(), "none.md")))
	r, err := Load(writeRun(t), "")
	require.NoError(t, err)
	require.True(t, math.IsNaN(r.MedianErr([]int{3}, "makespan")), "no published values")
	r.Paper, err = ReadPublished(strings.NewReader(published), "p.csv")
	require.NoError(t, err)
	// |err| makespan: PeakMem 0, Est-free .01, Analytical .01, GPUMemNet .05, FakeTensor .03.
	require.InDelta(t, 0.01, r.MedianErr([]int{3}, "makespan"), 1e-9)
	// Tables 3 and 5 together: the above and MFM .01, MFM-NF .02, MU .03, MU-NF .05.
	require.InDelta(t, 0.02, r.MedianErr([]int{3, 5}, "makespan"), 1e-9)
	require.Equal(t, 0.006, r.Ours[Key{Table: 5, Config: "MFM-NF"}]["jct_mean"].Model)
}

// TestConclusionsUnderModels: a conclusion read from tables run with
// model_uncertainty is also checked under each model of refits.csv.
func TestConclusionsUnderModels(t *testing.T) {
	dir := writeRun(t)
	r, err := Load(dir, "")
	require.NoError(t, err)
	require.Len(t, r.Refits[5], 3)
	require.Equal(t, 0.57, r.Refits[5][1][Key{Table: 5, Config: "MU-NF"}]["jct_mean"].Mean)
	k, n := r.underModels(byID("table5-nf"))
	require.Equal(t, [2]int{1, 3}, [2]int{k, n})
	_, n = r.underModels(byID("table3-peakmem"))
	require.Zero(t, n, "Table 3 ran without model refits")
	var b bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&b))
	require.Contains(t, b.String(), "within model uncertainty: holds under 1 of the 3 speed models (the calibrated one and 2 bootstrap refits)")

	// Refits that varied u1 too (run.json's model_refits.steady_saturation).
	require.NoError(t, os.WriteFile(filepath.Join(dir, "table5", "run.json"), []byte(`{"model_refits": {"source": "x", "steady_saturation": [1.2, 1.25]}}`), 0o644))
	r, err = Load(dir, "")
	require.NoError(t, err)
	require.Equal(t, map[int]bool{5: true}, r.RefitsU1)
	require.Equal(t, map[int]bool{5: false}, r.RefitsDelta)
	b.Reset()
	require.NoError(t, r.WriteMarkdown(&b))
	require.Contains(t, b.String(), "holds under 1 of the 3 models (the calibrated one and 2 bootstrap refits of the speed model and the steady saturation u1)")
	// And δ (model_refits.depth_overlap).
	require.NoError(t, os.WriteFile(filepath.Join(dir, "table5", "run.json"), []byte(`{"model_refits": {"source": "x", "steady_saturation": [1.2, 1.25], "depth_overlap": [0.2, 0.1]}}`), 0o644))
	r, err = Load(dir, "")
	require.NoError(t, err)
	require.Equal(t, map[int]bool{5: true}, r.RefitsDelta)
	b.Reset()
	require.NoError(t, r.WriteMarkdown(&b))
	require.Contains(t, b.String(), "holds under 1 of the 3 models (the calibrated one and 2 bootstrap refits of the speed model, the steady saturation u1 and the depth term δ)")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "table5", "run.json"), []byte(`{"model_refits": {"source": "x"}}`), 0o644))
	u1, delta, err := RefitsTelemetry(dir)
	require.NoError(t, err)
	require.Equal(t, map[int]bool{5: false}, u1)
	require.Equal(t, map[int]bool{5: false}, delta)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "table5", "run.json"), []byte(`{`), 0o644))
	_, _, err = RefitsTelemetry(dir)
	require.ErrorContains(t, err, filepath.Join(dir, "table5", "run.json"))
	require.Equal(t, "holds under all 21 speed models (the calibrated one and 20 bootstrap refits)", modelsText(21, 21, false, false))
	require.Equal(t, "holds under none of the 21 speed models (the calibrated one and 20 bootstrap refits)", modelsText(0, 21, false, false))
	require.Equal(t, "within model uncertainty: holds under 3 of the 21 models (the calibrated one and 20 bootstrap refits of the speed model and the steady saturation u1)", modelsText(3, 21, true, false))
	for _, tc := range []struct{ name, text, want string }{
		{"no model column", "Config,makespan\nMFM,0.7\n", `refits.csv:1: no "model" column`},
		{"models out of order", "model,Config,makespan\n0,MFM,0.7\n2,MFM,0.7\n", `refits.csv:3: model "2": want the models numbered 0, 1, ... in order`},
		{"bad value", "model,Config,makespan\n0,MFM,fast\n", "refits.csv: line 2: makespan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "table5", RefitsFile), []byte(tc.text), 0o644))
			_, err := Refits(dir)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestReadPublishedErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "p.csv: the file is empty"},
		{"column twice", "table,config,trace,config\n", `p.csv:1: header names column "config" twice (columns 2 and 4)`},
		{"no table column", "config,trace\n", `p.csv:1: no "table" column`},
		{"bad table", "table,config,trace\nx,a,b\n", "p.csv:2: table"},
		{"bad value", "table,config,trace,makespan\n3,a,b,fast\n", "p.csv:2: makespan"},
		{"ragged", "table,config,trace\n3,a\n", "p.csv:2: wrong number of fields"},
		{"bad table after a quoted line break", "table,config,trace\n3,\"a\nb\",c\nx,a,b\n", "p.csv:4: table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadPublished(strings.NewReader(tc.in), "p.csv")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func FuzzReadPublished(f *testing.F) {
	f.Add(published)
	f.Add("table,config,trace\n2,a,philly\n")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ReadPublished(strings.NewReader(s), "p.csv")
		if err == nil {
			require.NotNil(t, v)
		}
	})
}

// TestPaperReportCurrent regenerates the report of the committed
// results/paper and compares it with results/paper/fidelity.md: a change of
// the results or of the report needs make reproduce. It needs the
// published values (the shared data folder).
func TestPaperReportCurrent(t *testing.T) {
	shared, ok := models.SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the published values are not here")
	}
	dir := filepath.Join("..", "paper")
	r, err := Load(dir, shared)
	require.NoError(t, err)
	r.Dir = "results/paper"
	var b bytes.Buffer
	require.NoError(t, r.WriteMarkdown(&b))
	want, err := os.ReadFile(filepath.Join(dir, "fidelity.md"))
	require.NoError(t, err)
	require.Equal(t, string(want), b.String(), "results/paper/fidelity.md is out of date: run make reproduce")
}
