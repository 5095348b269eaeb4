package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/aegis-sched/aegis/experiments/stacking"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

const goodSpec = `name: t
description: a test
server: a100-40gb:3
traces:
  - trace: demo
  - like: venus
    jobs: 12
    seed: 3
seeds: [1, 2]
configs:
  - label: Exclusive
    policy: exclusive
    sweep: false
  - label: AEGIS
    policy: aegis
    params: {memory: peakmem}
    truth: {noise: 0.5}
sweep:
  - param: hold
    values: [10s, 30s]
  - param: thresholds
    product: [[0.6, 0.7], [0.35], [0.5]]
normalize: Exclusive
table: normalized
`

func TestParseSpecCells(t *testing.T) {
	s, err := ParsePlan([]byte(goodSpec), "t.yaml")
	require.NoError(t, err)
	require.Equal(t, []string{"demo", "venus-12-s3"}, []string{s.Traces[0].Name, s.Traces[1].Name})
	pts := s.Points()
	require.Len(t, pts, 4)
	require.Equal(t, "hold=10s thresholds=0.6,0.35,0.5", pts[0].String())
	require.Equal(t, "hold=30s thresholds=0.7,0.35,0.5", pts[3].String())
	cells := s.Cells()
	// Per trace: Exclusive once per seed (2), AEGIS at 4 points × 2 seeds.
	require.Len(t, cells, 2*(2+8))
	require.Equal(t, "demo.Exclusive.s1", cells[0].ID)
	require.Equal(t, "demo.AEGIS.hold=10s+thresholds=0.6,0.35,0.5.s1", cells[2].ID)
	require.Equal(t, "venus-12-s3.AEGIS.hold=30s+thresholds=0.7,0.35,0.5.s2", cells[len(cells)-1].ID)
	r, err := s.p.(*tracePlan).cellRun(cells[2].config, cells[2].Point)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"memory": "peakmem", "hold": "10s", "thresholds": "0.6,0.35,0.5"}, r.Params)
	require.Equal(t, 0.5, r.Truth.Noise)
	require.Len(t, s.Hash(), 64)
}

func TestSweepTruthAndModel(t *testing.T) {
	spec := strings.Replace(goodSpec, "  - param: thresholds\n    product: [[0.6, 0.7], [0.35], [0.5]]\n",
		"  - param: truth.peak_jitter\n    values: [0, 0.2]\n  - param: model.nway_exponent\n    values: [0.5, 2]\n", 1)
	s, err := ParsePlan([]byte(spec), "t.yaml")
	require.NoError(t, err)
	cells := s.Cells()
	c := cells[len(cells)-1]
	r, err := s.p.(*tracePlan).cellRun(c.config, c.Point)
	require.NoError(t, err)
	require.Equal(t, 0.2, r.Truth.PeakJitter)
	require.Equal(t, 0.5, r.Truth.Noise, "config truth kept")
	require.NotContains(t, r.Params, "truth.peak_jitter")
	require.Equal(t, map[string]string{"noise": "0.5", "peak_jitter": "0.2"}, s.truthSettings(c))
	pm, ok := r.Interference.(*models.PressureModel)
	require.True(t, ok)
	require.Equal(t, 2.0, pm.P.NWayExponent, "ρ swept")
	base, ok := s.p.(*tracePlan).models[c.config].inter.(*models.PressureModel)
	require.True(t, ok)
	def, err := models.InterferenceFor(s.server.Type)
	require.NoError(t, err)
	require.Equal(t, def.(*models.PressureModel).P.NWayExponent, base.P.NWayExponent, "the config's model is left as it was")
}

// Every kind of bad spec gives an error naming the file, the line and the
// key at fault.
func TestBadSpecs(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("submit_offset_s,workload_id,num_gpus\n0,nope,1\n"), 0o644))
	repl := func(old, new string) string {
		require.Contains(t, goodSpec, old)
		return strings.Replace(goodSpec, old, new, 1)
	}
	for _, tc := range []struct{ name, spec, want string }{
		{"empty", "", "t.yaml: empty document"},
		{"only a comment", "# nothing\n", "t.yaml: empty document"},
		{"two documents", goodSpec + "---\nname: u\n", "t.yaml:25: a second YAML document"},
		{"syntax", "name: [t\n", "t.yaml:"},
		{"unknown key", repl("table: normalized", "tabel: normalized"), `t.yaml:24: unknown key "tabel"; valid keys: name, description, server, cluster, traces`},
		{"unknown config key", repl("    policy: aegis\n", "    policy: aegis\n    parms: {}\n"), `t.yaml:16: unknown key "parms" in configs[1]; valid keys: label, policy, params`},
		{"unknown trace key", repl("  - trace: demo\n", "  - trace: demo\n    job: 3\n"), `t.yaml:6: unknown key "job" in traces[0]; valid keys: name, trace, like, jobs, seed, max_gpus (did you mean jobs?)`},
		{"wrong type seeds", repl("seeds: [1, 2]", "seeds: [1, two]"), `t.yaml:9: seeds[1]: want a whole number from 0 to 18446744073709551615, got "two"`},
		{"wrong type traces", repl("traces:\n  - trace: demo\n  - like: venus\n    jobs: 12\n    seed: 3\n", "traces: demo\n"), "t.yaml:4: traces: want a list"},
		{"key twice", repl("name: t\n", "name: t\nname: u\n"), "t.yaml:2: name: given twice (first at line 1)"},
		{"missing name", repl("name: t\n", ""), "t.yaml:1: name: missing"},
		{"bad name", repl("name: t\n", "name: a b\n"), `t.yaml:1: name: "a b"`},
		{"missing server", repl("server: a100-40gb:3\n", ""), "t.yaml:1: server: missing"},
		{"bad server", repl("server: a100-40gb:3", "server: a100:3"), "t.yaml:3: server: server \"a100:3\""},
		{"no traces", repl("traces:\n  - trace: demo\n  - like: venus\n    jobs: 12\n    seed: 3\n", "traces: []\n"), "t.yaml:4: traces: missing"},
		{"unknown trace", repl("trace: demo", "trace: nosuch"), "t.yaml:5: traces[0].trace: trace \"nosuch\" is neither a built-in"},
		{"trace and like", repl("trace: demo", "trace: demo\n    like: philly"), "t.yaml:6: traces[0].like: give either trace"},
		{"neither trace nor like", repl("trace: demo", "name: x"), "t.yaml:5: traces[0]: give trace"},
		{"generator without jobs", repl("    jobs: 12\n", ""), "t.yaml:6: traces[1].jobs: missing: like needs the number of jobs to generate, 1..10000000"},
		{"unknown generator", repl("like: venus", "like: mars"), "t.yaml:6: traces[1].like:"},
		{"trace not on catalog", repl("trace: demo", "trace: "+bad), "t.yaml:5: traces[0].trace: " + bad + ":2: job 0: column workload_id"},
		{"duplicate trace name", repl("  - like: venus\n", "  - name: demo\n    like: venus\n"), `t.yaml:6: traces[1].name: "demo" repeats traces[0]`},
		{"no seeds", repl("seeds: [1, 2]", "seeds: []"), "t.yaml:9: seeds: missing"},
		{"duplicate seed", repl("seeds: [1, 2]", "seeds: [1, 1]"), "t.yaml:9: seeds[1]: seed 1 repeats seeds[0]"},
		{"no configs", repl("configs:\n", "configs: []\nx_configs:\n"), "t.yaml:"},
		{"missing label", repl("  - label: AEGIS\n", "  - label: ''\n"), "t.yaml:14: configs[1].label: missing"},
		{"duplicate label", repl("label: AEGIS", "label: Exclusive"), `t.yaml:14: configs[1].label: "Exclusive" repeats configs[0]`},
		{"unknown policy", repl("policy: aegis", "policy: aegys"), `t.yaml:15: configs[1].policy: unknown policy "aegys"`},
		{"unknown parameter", repl("{memory: peakmem}", "{memroy: peakmem}"), `t.yaml:16: configs[1].params: policy aegis: unknown parameter "memroy" (did you mean memory?); valid: anchor`},
		{"bad parameter value", repl("{memory: peakmem}", "{memory: lots}"), `t.yaml:16: configs[1].params: policy aegis: parameter memory="lots": want one of est-free`},
		{"bad truth", repl("{noise: 0.5}", "{noise: loud}"), `t.yaml:17: configs[1].truth: truth: parameter noise="loud"`},
		{"bad sweep value", repl("values: [10s, 30s]", "values: [10s, forever]"), `t.yaml:19: sweep[0]: config "AEGIS" (configs[1]): policy aegis: parameter hold="forever"`},
		{"sweep a tuple's component", repl("param: hold\n    values: [10s, 30s]", "param: thresholds.1\n    values: [0.4, 0.6]"),
			`t.yaml:19: sweep[0].param: "thresholds.1" is component 1 of the tuple parameter thresholds, which is swept whole: param: thresholds with product:`},
		{"sweep param a policy lacks", repl("    sweep: false\n", ""), `t.yaml:18: sweep[0]: config "Exclusive" (configs[0]): policy exclusive: unknown parameter "hold"`},
		{"sweep without values", repl("    values: [10s, 30s]\n", ""), "t.yaml:19: sweep[0].values: missing"},
		{"sweep values and product", repl("    values: [10s, 30s]\n", "    values: [10s, 30s]\n    product: [[1]]\n"), "t.yaml:21: sweep[0].product: give values or product"},
		{"sweep param twice", repl("param: thresholds", "param: hold"), `t.yaml:21: sweep[1].param: "hold" repeats sweep[0]`},
		{"sweep value twice", repl("values: [10s, 30s]", "values: [10s, 10s]"), `t.yaml:20: sweep[0].values: value "10s" given twice`},
		{"huge grid", repl("product: [[0.6, 0.7], [0.35], [0.5]]", "product: [[1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10]]"), "t.yaml:22: sweep[1].product: more than 1000000 values"},
		{"huge total grid", repl("product: [[0.6, 0.7], [0.35], [0.5]]", "product: [[1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10], [1,2,3,4,5,6,7,8,9,10]]"), "t.yaml:18: sweep: the grid has more than 1000000 cells"},
		{"unknown model parameter", repl("param: thresholds", "param: model.capacity"), `t.yaml:21: sweep[1].param: "model.capacity": the only model parameter is model.nway_exponent`},
		{"bad rho", repl("    policy: aegis\n", "    policy: aegis\n    nway_exponent: -1\n"), "t.yaml:16: configs[1].nway_exponent: ρ -1"},
		{"normalize unknown", repl("normalize: Exclusive", "normalize: Excl"), `t.yaml:23: normalize: "Excl" is not a config label (have Exclusive, AEGIS)`},
		{"normalize sweeps, other not", strings.Replace(repl("    sweep: false\n", ""), "    truth: {noise: 0.5}\n", "    truth: {noise: 0.5}\n    sweep: false\n", 1),
			`t.yaml:17: configs[1].sweep: config "AEGIS" does not sweep but the normalizing config "Exclusive" does`},
		{"unknown table", repl("table: normalized", "table: fancy"), `t.yaml:24: table: unknown table "fancy"`},
		{"normalized table without normalize", repl("normalize: Exclusive\n", ""), "t.yaml:23: table: the normalized table needs normalize"},
		{"bad plots", repl("table: normalized", "table: normalized\nplots: gif"), `t.yaml:25: plots: "gif"`},
		{"seeds figure with one seed", strings.Replace(repl("table: normalized", "table: normalized\nfigures: [seeds-cdf]"), "seeds: [1, 2]", "seeds: [1]", 1), `t.yaml:25: figures[0]: seeds-cdf shows the spread over seeds`},
		{"unknown figure", repl("table: normalized", "table: normalized\nfigures: [normalized, pie]"), `t.yaml:25: figures[1]: unknown figure "pie"`},
		{"sweep figure x not swept", repl("table: normalized", "table: normalized\nsweep_figures: [{x: thresholds.4}]"), `t.yaml:25: sweep_figures[0].x: "thresholds.4" is not a swept column (have hold, thresholds, thresholds.1, thresholds.2, thresholds.3)`},
		{"sweep figure without x", repl("table: normalized", "table: normalized\nsweep_figures: [{y: [makespan_s]}]"), `t.yaml:25: sweep_figures[0].x: missing`},
		{"sweep figure unknown metric", repl("table: normalized", "table: normalized\nsweep_figures: [{x: hold, y: [speed]}]"), `t.yaml:25: sweep_figures[0].y: unknown metric "speed"`},
		{"sweep figure bad facet", repl("table: normalized", "table: normalized\nsweep_figures: [{x: hold, facet: seed}]"), `t.yaml:25: sweep_figures[0].facet: "seed" is not a swept column`},
		{"sweep figure bad hold", repl("table: normalized", "table: normalized\nsweep_figures:\n  - x: hold\n    hold: {tau2: 0.35}"), `t.yaml:27: sweep_figures[0].hold: "tau2" is not a swept column`},
		{"sweep figure unknown key", repl("table: normalized", "table: normalized\nsweep_figures: [{x: hold, ys: [makespan_s]}]"), `t.yaml:25: unknown key "ys" in sweep_figures[0]; valid keys: x, xlabel, y, from, hold, facet, name, title`},
		{"sweep figures named alike", repl("table: normalized", "table: normalized\nsweep_figures: [{x: hold}, {x: hold, y: [p95_jct_s]}]"), `t.yaml:25: sweep_figures[1]: file name "sweep-hold" is taken`},
		{"sweep figure named as a figure", repl("table: normalized", "table: normalized\nsweep_figures: [{x: hold, name: normalized}]"), `sweep_figures[0]: file name "normalized" is taken`},
		{"sweep figure normalized without normalize", strings.Replace(repl("table: normalized", "sweep_figures: [{x: hold, from: normalized}]"), "normalize: Exclusive\n", "", 1), `sweep_figures[0].from: normalized needs normalize`},
		{"sweep figure without a sweep", repl("sweep:\n  - param: hold\n    values: [10s, 30s]\n  - param: thresholds\n    product: [[0.6, 0.7], [0.35], [0.5]]\n", "sweep_figures: [{x: hold}]\n"), `sweep_figures[0]: the spec sweeps nothing`},
		{"missing model file", repl("    policy: aegis\n", "    policy: aegis\n    model: nosuch.yaml\n"), "t.yaml:16: configs[1].model: open nosuch.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec), "t.yaml")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(goodSpec))
	f.Add([]byte("name: x\nserver: a100-40gb:1\ntraces: [{trace: demo}]\nseeds: [1]\nconfigs: [{label: E, policy: exclusive}]\n"))
	f.Add([]byte("name: x\nsweep: [{param: hold, product: [[1, 2], []]}]\n"))
	f.Add([]byte("name: x\nserver: a100-40gb:1\ntraces: [{trace: demo}]\nseeds: [1]\nconfigs: [{label: E, policy: exclusive}]\nmodel_uncertainty: {refits: 2}\n"))
	f.Add([]byte("name: x\nserver: a100-40gb:1\ntraces: [{like: venus, jobs: 10.7, seed: 1}]\nseeds: [1.5, 18446744073709551616]\nconfigs: [{label: \"E\\nx\", policy: exclusive}]\nfigures: [thresholds]\n"))
	f.Add([]byte("name: x\ncluster: a100-40gb:2x2,h200-141gb:4x1\ntraces: [{like: venus, jobs: 20, seed: 1, max_gpus: 8}]\nseeds: [1]\nconfigs: [{label: E, policy: exclusive, params: {dispatch: firstfit}}]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSpec(b, "fuzz.yaml")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.yaml"), err.Error())
			return
		}
		// The strict decoder's own check agrees with yaml's KnownFields
		// (once a second decode of every spec at load time).
		var again Spec
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		require.NoError(t, dec.Decode(&again), "strictyaml accepted what KnownFields refuses")
		// Generated traces are bounded so that a fuzzed spec stays quick.
		for _, ts := range s.Traces {
			if ts.Jobs > 200 || ts.Trace != "" && !strings.Contains(traces.BuiltinNames(), ts.Trace) {
				return // big generated traces are slow; files are not the decoder's business
			}
		}
		for _, c := range s.Configs {
			if c.Model != "" {
				return
			}
		}
		if s.Stacking != nil || isYAMLFile(strings.Split(s.Server, ":")[0]) || strings.Contains(s.Cluster, ".y") || len(s.Cluster) > 40 {
			return // GPU type files are not the decoder's business; a cluster of thousands of servers is slow to check
		}
		grid := 1
		for i := range s.Sweep {
			grid *= max(s.Sweep[i].size(), 1)
			if grid > 1000 {
				return // a big grid is valid but slow to check
			}
		}
		p, err := s.Compile()
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz.yaml:"), err.Error())
			return
		}
		require.NotEmpty(t, p.Cells())
	})
}

// TestValidateRejectsWhatRunCannotRun: what validate accepts, run runs.
// Each case validated before (issue 17) and then failed or went wrong in
// the run; now the spec is refused, naming the line and the key.
func TestValidateRejectsWhatRunCannotRun(t *testing.T) {
	dir := t.TempDir()
	emb, err := os.ReadFile(filepath.Join("..", "models", "data", "interference_a100.yaml"))
	require.NoError(t, err)
	i50 := regexp.MustCompile(`(?m)^  intercept: .*$`).ReplaceAllString(string(emb), "  intercept: 50")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "i50.yaml"), []byte(i50), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tiny.yaml"), []byte("name: tiny\nmemory_mib: 256\npressure: true\n"), 0o644))
	const base = "name: b\nserver: a100-40gb:3\ntraces: [{trace: demo}]\nseeds: [1]\nconfigs: [{label: E, policy: exclusive}, {label: A, policy: aegis}]\n"
	repl := func(old, new string) string {
		require.Contains(t, base, old)
		return strings.Replace(base, old, new, 1)
	}
	list := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f(i))
		}
		return "[" + b.String() + "]"
	}
	for _, tc := range []struct{ name, spec, want string }{
		{"thresholds figure on a trace spec", base + "figures: [thresholds]\n", "t.yaml:6: figures[0]: thresholds is drawn from thresholds.csv, which this spec does not write (it writes cells.csv, jobs.csv)"},
		{"stability figure without stability", base + "figures: [stability]\n", "t.yaml:6: figures[0]: stability is drawn from stability.csv"},
		{"context above the GPU's memory", repl("{label: E, policy: exclusive}", "{label: E, policy: exclusive, truth: {context_mib: 50000}}"), `t.yaml:5: configs[0].truth: truth: parameter context_mib="50000": want at most the a100-40gb GPU's 40960 MiB: set a smaller CUDA context`},
		{"interference intercept 50", repl("policy: aegis}", "policy: aegis, model: i50.yaml}"), "t.yaml:5: configs[1].model: on a100-40gb: the interference model runs"},
		{"GPU type of 256 MiB", repl("a100-40gb:3", "tiny.yaml:3"), `t.yaml:5: configs[0]: truth: parameter context_mib="500": want at most the tiny GPU's 256 MiB (500 is the default)`},
		{"seed 1.5", repl("seeds: [1]", "seeds: [1.5]"), `t.yaml:4: seeds[0]: want a whole number from 0 to 18446744073709551615, got "1.5"`},
		{"seed 2^64", repl("seeds: [1]", "seeds: [18446744073709551616]"), `t.yaml:4: seeds[0]: want a whole number from 0 to 18446744073709551615, got "18446744073709551616"`},
		{"jobs 10.7", repl("{trace: demo}", "{like: venus, jobs: 10.7, seed: 1}"), `t.yaml:3: traces[0].jobs: want a whole number, got "10.7"`},
		{"label with a newline", repl("label: E,", `label: "E\nx",`), `t.yaml:5: configs[0].label: "E\nx" has a control character`},
		{"5,000-character name", repl("name: b", "name: "+strings.Repeat("a", 5000)), "t.yaml:1: name: 5000 characters: at most 100"},
		{"5,000-character label", repl("label: E,", "label: "+strings.Repeat("E", 5000)+","), "t.yaml:5: configs[0].label: 5000 characters: at most 100"},
		{"200,000 seeds x 10 configs", strings.Replace(repl("seeds: [1]", "seeds: "+list(200_000, func(i int) string { return strconv.Itoa(i) })),
			"configs: [{label: E, policy: exclusive}, {label: A, policy: aegis}]", "configs: "+list(10, func(i int) string { return "{label: E" + strconv.Itoa(i) + ", policy: exclusive}" }), 1),
			"t.yaml:1: spec: more than 1000000 cells; at most 1000000 per spec"},
		{"1000 x 1000 sweep", base + "sweep: [{param: hold, values: " + list(1000, func(i int) string { return strconv.Itoa(i+1) + "s" }) + "}, {param: window, values: " +
			list(1000, func(i int) string { return strconv.Itoa(i+1) + "s" }) + "}]\n", "t.yaml:1: spec: more than 1000000 cells; at most 1000000 per spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec), filepath.Join(dir, "t.yaml"))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A failing sweep point blames the axis its error is about, found by type
// (policies.ParamError's key, a truth setting's truth.KEY, an axisError),
// never by the error's text or by rerunning the axes one by one.
func TestPointAxisOf(t *testing.T) {
	pt := Point{{Param: "hold", Value: "forever"}, {Param: "truth.noise", Value: "loud"}, {Param: modelRho, Value: "x"}}
	for _, tc := range []struct {
		name string
		pt   Point
		err  error
		want int // -1: none
	}{
		{"policy key", pt, fmt.Errorf("at: %w", &policies.ParamError{Scope: "policy aegis", Key: "hold"}), 0},
		{"truth key", pt, &policies.ParamError{Scope: sim.TruthScope, Key: "noise"}, 1},
		{"policy key named as a truth one", pt, &policies.ParamError{Scope: "policy aegis", Key: "noise"}, -1},
		{"axis", pt, &axisError{modelRho, errors.New("not a number")}, 2},
		{"untyped", pt, errors.New("truth noise"), -1},
		{"untyped, one axis", pt[1:2], errors.New("server lacks pressure"), 0},
		{"key not swept", pt, &policies.ParamError{Scope: "cluster", Key: "dispatch"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := tc.pt.axisOf(tc.err)
			require.Equal(t, tc.want >= 0, ok)
			if ok {
				require.Equal(t, tc.want, k)
			}
		})
	}
}

// TestCompileLeavesSpec: Compile resolves into the plan's own copy of the
// spec, so the spec stays as written (a stacking spec's sequences become
// only the plan's traces) and compiles again to the same cells; a spec
// read back from run.json has no YAML to compile.
func TestCompileLeavesSpec(t *testing.T) {
	specs := []string{goodSpec}
	if _, ok := stacking.DefaultDir(); ok {
		specs = append(specs, "name: f\nserver: a100-40gb:1\nstacking: {}\nseeds: [1]\n")
	}
	for _, text := range specs {
		s, err := ParseSpec([]byte(text), "t.yaml")
		require.NoError(t, err)
		written := slices.Clone(s.Traces)
		p1, err := s.Compile()
		require.NoError(t, err)
		p2, err := s.Compile()
		require.NoError(t, err)
		require.Equal(t, written, s.Traces)
		require.NotSame(t, s, p1.Spec)
		require.NotEmpty(t, p1.Cells())
		require.Equal(t, p1.Cells(), p2.Cells())
		_, err = p1.Spec.Compile() // the plan's copy is resolved, not YAML
		require.Error(t, err)
	}
	_, err := (&Spec{Name: "back"}).Compile()
	require.ErrorContains(t, err, "spec back: not read from a spec file")
}
