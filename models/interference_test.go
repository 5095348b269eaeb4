package models

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
)

// checkGolden compares got with testdata/name (golden.File).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.File(t, filepath.Join("testdata", name), []byte(got))
}

func TestPressureModelRate(t *testing.T) {
	cat := A100()
	m := DefaultInterference()
	light := profileOf(cat, "resnet18_cifar100_bs64_20e_1gpu")
	heavy := profileOf(cat, "vgg16_imagenet_bs128_1gpu")
	mid := profileOf(cat, "resnet50_imagenet_bs64_1gpu")
	require.Equal(t, 1.0, m.Rate(heavy, nil), "alone")
	for _, tc := range []struct {
		name     string
		self     Profile
		a, b     []Profile // b is a's co-runners made worse
		strictly bool
	}{
		{"heavier co-runner hurts more", light, []Profile{light}, []Profile{heavy}, true},
		{"one more co-runner hurts more", mid, []Profile{mid}, []Profile{mid, mid}, true},
		{"adding a light co-runner never helps", heavy, []Profile{mid}, []Profile{mid, light}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ra, rb := m.Rate(tc.self, tc.a), m.Rate(tc.self, tc.b)
			require.Greater(t, ra, rb)
			require.LessOrEqual(t, ra, 1.0)
			require.Greater(t, rb, 0.0)
		})
	}
	// The measured asymmetry: a light job suffers from a heavy one far more
	// than the other way round.
	require.Less(t, m.Rate(light, []Profile{heavy}), 0.6)
	require.Greater(t, m.Rate(heavy, []Profile{light}), 0.95)
}

func TestPressureModelCapacity(t *testing.T) {
	p := DefaultPressureParams()
	cat := A100()
	for _, id := range []string{"resnet50_imagenet_bs64_1gpu", "vgg16_imagenet_bs128_1gpu", "resnet18_cifar100_bs64_20e_1gpu"} {
		for _, rho := range []float64{0.5, 1, 2} {
			p.NWayExponent = rho
			m := &PressureModel{P: p}
			w := profileOf(cat, id)
			prev := 1.0
			for n := 1; n <= 12; n++ {
				r := StackedRate(m, w, n)
				require.LessOrEqual(t, r, prev+1e-12, "%s ρ=%v n=%d: rate must not rise with more jobs", id, rho, n)
				require.LessOrEqual(t, float64(n)*w.SMACT.Mean*r, p.Capacity+1e-9, "%s ρ=%v n=%d: SM capacity", id, rho, n)
				prev = r
			}
		}
	}
	// ρ does not change pairs.
	a, b := profileOf(cat, "unet_voc_1gpu"), profileOf(cat, "llama3_width_8layer_wiki_bs1_1gpu")
	p.NWayExponent = 1
	r1 := (&PressureModel{P: p}).Rate(a, []Profile{b})
	p.NWayExponent = 2
	require.InDelta(t, r1, (&PressureModel{P: p}).Rate(a, []Profile{b}), 1e-12)
	// Capacity 0 disables the cap.
	p.Capacity, p.NWayExponent = 0, 1
	m := &PressureModel{P: p}
	s := 1 / StackedRate(m, a, 3)
	require.Greater(t, s, 1.0)
}

// TestNWayStacking is the table docs/models.md shows: per-job slowdown and GPU
// throughput (relative to one job alone) of N identical jobs stacked on one
// GPU, for the N-way exponent ρ assumed 0.5, 1 (default) and 2.
func TestNWayStacking(t *testing.T) {
	cat := A100()
	p := DefaultPressureParams()
	var b strings.Builder
	fmt.Fprintf(&b, "| workload | ρ | N=1 | N=2 | N=3 | N=4 | N=6 | N=8 |\n|---|---|---|---|---|---|---|---|\n")
	for _, id := range []string{"resnet18_cifar100_bs64_20e_1gpu", "mobilenet_imagenet_bs64_1gpu", "resnet50_imagenet_bs64_1gpu",
		"vgg16_imagenet_bs128_1gpu", "bert_base_wiki_bs32_1gpu"} {
		for _, rho := range []float64{0.5, 1, 2} {
			p.NWayExponent = rho
			m := &PressureModel{P: p}
			fmt.Fprintf(&b, "| %s | %g |", id, rho)
			for _, n := range []int{1, 2, 3, 4, 6, 8} {
				r := StackedRate(m, profileOf(cat, id), n)
				fmt.Fprintf(&b, " %.2f / %.2f |", 1/r, float64(n)*r)
			}
			b.WriteString("\n")
		}
	}
	checkGolden(t, "nway_stacking.md", b.String())
}

func TestFlatInterference(t *testing.T) {
	require.Equal(t, 1.0, flatInterference{Slowdown: 1.2}.Rate(Profile{}, nil))
	require.InDelta(t, 1/1.2, flatInterference{Slowdown: 1.2}.Rate(Profile{}, []Profile{{}}), 1e-15)
	require.Equal(t, 1.0, flatInterference{}.Rate(Profile{}, []Profile{{}}))
	require.Equal(t, 1.0, StackedRate(NoInterference{}, Profile{}, 5))
}

const goodModel = `# comment
model: pressure
params:
  intercept: -4
  co_smact: 4
  co_drama: 0
  co_mem_per_10gib: 0.5
  self_smact: -1
  self_drama: 2
  self_mem_per_10gib: -0.3
  capacity: 1.1
  nway_exponent: 1
`

func TestReadInterference(t *testing.T) {
	f, err := ReadInterference([]byte(goodModel), "m.yaml")
	require.NoError(t, err)
	require.Equal(t, PressureParams{Intercept: -4, CoSMACT: 4, CoMem: 0.5, SelfSMACT: -1, SelfDRAMA: 2, SelfMem: -0.3, Capacity: 1.1, NWayExponent: 1}, f.Params)
	// Merge keys count as given (the required-key check follows them).
	merged := "defaults: &d\n  capacity: 1.1\n  nway_exponent: 1\n" + strings.Replace(goodModel, "  capacity: 1.1\n  nway_exponent: 1\n", "  <<: *d\n", 1)
	_, err = ReadInterference([]byte(merged), "m.yaml")
	require.ErrorContains(t, err, `m.yaml:1: unknown key "defaults"; valid keys: model, gpu, params, telemetry, fit`)
	// One anchor merged into two sections is checked against each.
	_, err = ReadInterference([]byte(strings.Replace(goodModel, "params:\n", "params: &p\n", 1)+"fit:\n  <<: *p\n"), "m.yaml")
	require.ErrorContains(t, err, `m.yaml:4: unknown key "intercept" in fit; valid keys: source, pairs, folds, heldout, leave_one_workload_out, in_sample`)
	merged = strings.Replace(goodModel, "  capacity: 1.1\n  nway_exponent: 1\n", "  <<: {capacity: 1.1, nway_exponent: 1}\n", 1)
	g, err := ReadInterference([]byte(merged), "m.yaml")
	require.NoError(t, err)
	require.Equal(t, f.Params, g.Params)

	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "m.yaml: empty document"},
		{"comment only", "# nothing\n", "m.yaml: empty document"},
		{"unknown key", strings.Replace(goodModel, "  capacity:", "  capacty: 1\n  capacity:", 1),
			`m.yaml:11: unknown key "capacty" in params; valid keys: intercept, co_smact, co_drama, co_mem_per_10gib, self_smact, self_drama, self_mem_per_10gib, capacity, nway_exponent (did you mean capacity?)`},
		{"unknown top key", goodModel + "extra: 1\n", `m.yaml:13: unknown key "extra"; valid keys: model, gpu, params, telemetry, fit`},
		{"top-level param", goodModel + "capacity: 1\n", `m.yaml:13: unknown key "capacity"; valid keys: model, gpu, params, telemetry, fit`},
		{"unknown fit key", goodModel + "fit:\n  pairs: 3\n  heldout:\n    none: {median: 0.1}\n",
			`m.yaml:16: unknown key "median" in fit.heldout.none; valid keys: median_ape, p90_ape (did you mean median_ape?)`},
		{"param twice", goodModel + "  co_smact: 5\n", "m.yaml:13: params.co_smact: given twice (first at line 5)"},
		{"bad type", strings.Replace(goodModel, "co_smact: 4", "co_smact: four", 1), `m.yaml:5: params.co_smact: want a number, got "four"`},
		{"params a list", "model: pressure\nparams: [1, 2]\n", "m.yaml:2: params: want a mapping with keys intercept, co_smact,"},
		{"pairs not a number", goodModel + "fit:\n  pairs: many\n", `m.yaml:14: fit.pairs: want a whole number, got "many"`},
		{"null document", "---\n", "m.yaml: empty document"},
		{"wrong model", strings.Replace(goodModel, "model: pressure", "model: linear", 1), `m.yaml:2: model: "linear"`},
		{"missing param", strings.Replace(goodModel, "  co_drama: 0\n", "", 1), "m.yaml:3: params: missing co_drama"},
		{"negative capacity", strings.Replace(goodModel, "capacity: 1.1", "capacity: -1", 1), "m.yaml:11: params.capacity"},
		{"zero exponent", strings.Replace(goodModel, "nway_exponent: 1", "nway_exponent: 0", 1), "m.yaml:12: params.nway_exponent"},
		{"huge", strings.Replace(goodModel, "intercept: -4", "intercept: 1e300", 1), "m.yaml:4: params.intercept"},
		{"two documents", goodModel + "---\nmodel: pressure\n", "m.yaml:13: a second YAML document"},
		{"syntax", "model: [\n", "m.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadInterference([]byte(tc.in), "m.yaml")
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "models.", "no Go type names")
		})
	}
}

func TestWriteReadInterference(t *testing.T) {
	f := &InterferenceFile{Model: "pressure", GPU: "a100-40gb", Params: DefaultPressureParams(),
		Fit: &FitRecord{Source: "x.csv", Pairs: 3, Folds: 2, HeldOut: map[string]APE{"none": {0.1, 0.3}}, InSample: APE{0.01, 0.02}}}
	var b bytes.Buffer
	require.NoError(t, WriteInterference(&b, f, "line one\nline two"))
	require.True(t, strings.HasPrefix(b.String(), "# line one\n# line two\nmodel: pressure\n"))
	g, err := ReadInterference(b.Bytes(), "w.yaml")
	require.NoError(t, err)
	require.Equal(t, f, g)

	dir := t.TempDir()
	path := filepath.Join(dir, "m.yaml")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	m, err := LoadInterference(path)
	require.NoError(t, err)
	require.Equal(t, &PressureModel{P: f.Params}, m)
	_, err = LoadInterference(filepath.Join(dir, "missing.yaml"))
	require.ErrorContains(t, err, "missing.yaml")

	im, err := InterferenceFor(GPUType{Name: "x", InterferenceFile: path})
	require.NoError(t, err)
	require.Equal(t, m, im)
	im, err = InterferenceFor(GPUType{Name: "a100-40gb"})
	require.NoError(t, err)
	require.Equal(t, DefaultInterference(), im)
}

func FuzzReadInterference(f *testing.F) {
	f.Add(goodModel)
	f.Add("model: pressure\nparams: {capacity: .nan}\n")
	f.Add("---\n---\n")
	f.Add("model: pressure\nparams: {capacty: 1}\n")
	f.Add("base: &b {intercept: 1}\nparams:\n  <<: [*b, *b]\n  intercept: 2\n")
	f.Add("params: &p\n  <<: *p\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ReadInterference([]byte(s), "f.yaml")
		if err == nil {
			r := (&PressureModel{P: m.Params}).Rate(Profile{SMACT: Stat{Mean: 0.5}}, []Profile{{SMACT: Stat{Mean: 0.5}}})
			if !(r >= 0 && r <= 1) {
				t.Fatalf("rate %v out of [0,1] for accepted model %+v", r, m.Params)
			}
		}
	})
}

func BenchmarkPressureRate(b *testing.B) {
	cat := A100()
	m := DefaultInterference()
	self := profileOf(cat, "resnet50_imagenet_bs64_1gpu")
	co := []Profile{profileOf(cat, "vgg16_imagenet_bs128_1gpu"), profileOf(cat, "mnist_bs32_1gpu")}
	b.ReportAllocs()
	for b.Loop() {
		m.Rate(self, co)
	}
}

// TestCheckSlowdown: the embedded model passes on every built-in catalog;
// a model slowing a job beyond MaxPairSlowdown, or speeding it up, does not.
func TestCheckSlowdown(t *testing.T) {
	for _, cat := range []*Catalog{A100(), Legacy11GB()} {
		require.NoError(t, CheckSlowdown(DefaultInterference(), cat))
	}
	require.NoError(t, CheckSlowdown(flatInterference{Slowdown: MaxPairSlowdown}, A100()))
	require.ErrorContains(t, CheckSlowdown(flatInterference{Slowdown: 2 * MaxPairSlowdown}, A100()), "at 0.0005 of its solo speed; want at most 1000 times slower")
	require.ErrorContains(t, CheckSlowdown(flatInterference{Slowdown: 0.5}, A100()), "at 2 of its solo speed; want at most 1000 times slower and never faster")
	p := DefaultPressureParams()
	p.Intercept = 50
	require.ErrorContains(t, CheckSlowdown(&PressureModel{P: p}, A100()), "of its solo speed")
}

// TestRateMemoIsRate holds RateMemo to Rate bit for bit: catalog profiles
// and random ones, one to four co-runners, several exponents (one memo
// shared by them all, as a simulator of several GPU types does not; it must
// still answer right), each combination asked twice so that the second
// answer comes from the memo.
func TestRateMemoIsRate(t *testing.T) {
	cat := A100()
	var profs []Profile
	for _, id := range cat.IDs() {
		w, _ := cat.Get(id)
		profs = append(profs, w.PerGPU...)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		profs = append(profs, Profile{PeakMiB: 40000 * r.Float64(), SMACT: Stat{Mean: r.Float64()}, DRAMA: Stat{Mean: r.Float64()}})
	}
	var memo PressureMemo
	for _, rho := range []float64{0, 1, 0.5, 0.7, 1.3, 2} {
		m := &PressureModel{P: DefaultPressureParams()}
		m.P.NWayExponent = rho
		for range 2000 {
			self := profs[r.IntN(len(profs))]
			co := make([]Profile, 1+r.IntN(4))
			for i := range co {
				co[i] = profs[r.IntN(len(profs))]
			}
			want := m.Rate(self, co)
			for range 2 {
				got := m.RateMemo(&memo, self, co)
				require.Equal(t, math.Float64bits(want), math.Float64bits(got), "ρ %v: %v with %v", rho, self, co)
			}
		}
	}
}
