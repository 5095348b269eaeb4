package models

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCatalogFor(t *testing.T) {
	for _, tc := range []struct {
		gpu  string
		n    int
		solo float64 // resnet50_imagenet_bs64_1gpu
	}{
		{"a100-40gb", 53, 1951.05},
		{"h200-141gb", 53, 1951.05}, // assumed equal to the A100
		{"legacy-11gb", 36, 5466.45},
	} {
		t.Run(tc.gpu, func(t *testing.T) {
			gt, err := LookupGPU(tc.gpu)
			require.NoError(t, err)
			c, err := CatalogFor(gt)
			require.NoError(t, err)
			require.Equal(t, tc.n, c.Len())
			w, ok := c.Get("resnet50_imagenet_bs64_1gpu")
			require.True(t, ok)
			require.Equal(t, tc.solo, w.SoloS)
		})
	}
}

// TestLegacyCatalog: the legacy card's solo times and peaks are its own,
// its activity figures are its own nvidia-smi utilization (no DCGM there:
// SMACT holds utilization as a fraction, SMOCC and DRAMA 0), its GPU type
// reports no pressure telemetry, and every workload fits its 11 GB.
func TestLegacyCatalog(t *testing.T) {
	leg, a100 := Legacy11GB(), A100()
	gt, err := LookupGPU("legacy-11gb")
	require.NoError(t, err)
	require.False(t, gt.Pressure)
	slower := 0
	for _, id := range leg.IDs() {
		l, _ := leg.Get(id)
		a, ok := a100.Get(id)
		require.True(t, ok, id)
		require.Equal(t, 1, l.GPUs)
		lp := l.PerGPU[0]
		require.InDelta(t, lp.UtilPct/100, lp.SMACT.Mean, 5e-5, id)
		require.GreaterOrEqual(t, lp.SMACT.P95, lp.SMACT.Mean, id)
		require.Zero(t, lp.SMOCC, id)
		require.Zero(t, lp.DRAMA, id)
		require.Less(t, lp.PeakMiB, gt.MemoryMiB, id)
		if l.SoloS > a.SoloS {
			slower++
		}
	}
	require.Equal(t, leg.Len(), slower, "the older cards are slower on every workload")
	w, _ := leg.Get("resnet34_cifar100_bs32_50e_1gpu")
	require.Equal(t, Jumbo, w.Lucid, "the legacy Lucid class, not the A100 one")
	require.Equal(t, 686.0, w.PeakMiB())
	w, _ = leg.Get("vgg16_imagenet_bs32_1gpu")
	require.Equal(t, 91.2, w.UtilPct(), "solo_features_legacy.csv: 91.2 % (the A100's differs)")
}

const gpuYAML = `name: rtx4090-24gb
memory_mib: 24564
pressure: false
`

func TestReadGPUType(t *testing.T) {
	dir := t.TempDir()
	// A small catalog and model file for the optional keys.
	var cat bytes.Buffer
	cat.WriteString(strings.Join(catalogCols, ",") + "\n")
	cat.WriteString("toy_1gpu,1,0,100,1000,0.5,0.6,0.2,0.3,0.1,0.2,60,2000,500,8000,tiny\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cat.csv"), cat.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.csv"), []byte("nope\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(goodModel), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "i50.yaml"), []byte(strings.Replace(goodModel, "intercept: -4", "intercept: 50", 1)), 0o644))

	got, err := readGPUType([]byte(gpuYAML), "g.yaml", dir)
	require.NoError(t, err)
	require.Equal(t, GPUType{Name: "rtx4090-24gb", MemoryMiB: 24564}, got)

	full := gpuYAML + "catalog: cat.csv\ninterference: m.yaml\n"
	path := filepath.Join(dir, "g.yaml")
	require.NoError(t, os.WriteFile(path, []byte(full), 0o644))
	got, err = loadGPUType(path)
	require.NoError(t, err)
	require.Equal(t, GPUType{Name: "rtx4090-24gb", MemoryMiB: 24564, CatalogFile: filepath.Join(dir, "cat.csv"),
		InterferenceFile: filepath.Join(dir, "m.yaml")}, got)
	c, err := CatalogFor(got)
	require.NoError(t, err)
	require.Equal(t, []string{"toy_1gpu"}, c.IDs())
	m, err := InterferenceFor(got)
	require.NoError(t, err)
	require.Equal(t, 1.1, m.(*PressureModel).P.Capacity)

	// What yaml accepts stays accepted: YAML 1.1 booleans, merge keys.
	for _, in := range []string{
		strings.Replace(gpuYAML, "false", "no", 1),
		"<<: {memory_mib: 24564, pressure: false}\nname: rtx4090-24gb\n",
		"<<: [{memory_mib: 24564}, {pressure: false}]\nname: rtx4090-24gb\n",
	} {
		got, err = readGPUType([]byte(in), "g.yaml", dir)
		require.NoError(t, err, in)
		require.Equal(t, GPUType{Name: "rtx4090-24gb", MemoryMiB: 24564}, got, in)
	}
	_, err = readGPUType([]byte("<<: {memory_mib: 24564, presure: false}\nname: rtx4090-24gb\n"), "g.yaml", dir)
	require.ErrorContains(t, err, `g.yaml:1: unknown key "presure"`, "merged keys are checked too")

	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "g.yaml: empty document"},
		{"unknown key", gpuYAML + "memory_gb: 24\n", `g.yaml:4: unknown key "memory_gb"; valid keys: name, memory_mib, pressure, catalog, interference, speeds, power (did you mean memory_mib?)`},
		{"typo", strings.Replace(gpuYAML, "pressure:", "presure:", 1), `g.yaml:3: unknown key "presure"; valid keys: name, memory_mib, pressure, catalog, interference, speeds, power (did you mean pressure?)`},
		{"unrelated key", gpuYAML + "vendor: nvidia\n", `g.yaml:4: unknown key "vendor"; valid keys: name, memory_mib, pressure, catalog, interference, speeds`},
		{"two unknown keys", gpuYAML + "a: 1\nb: 2\n", "g.yaml:4: unknown key \"a\"; valid keys: name, memory_mib, pressure, catalog, interference, speeds, power\ng.yaml:5: unknown key \"b\""},
		{"many unknown keys", gpuYAML + strings.Repeat("x: 1\n", 12), "g.yaml:13: unknown key \"x\"\n2 more errors"},
		{"key twice", gpuYAML + "memory_mib: 1024\n", "g.yaml:4: memory_mib: given twice (first at line 2)"},
		{"list", "- name: x\n", "g.yaml:1: document: want a mapping with keys name, memory_mib, pressure, catalog, interference, speeds, power, got a list"},
		{"null document", "---\n", "g.yaml: empty document"},
		{"built-in name", strings.Replace(gpuYAML, "rtx4090-24gb", "a100-40gb", 1), `g.yaml:1: name: "a100-40gb" is a built-in GPU type (built-in: a100-40gb, h200-141gb, legacy-11gb)`},
		{"built-in legacy", strings.Replace(gpuYAML, "rtx4090-24gb", "legacy-11gb", 1), `g.yaml:1: name: "legacy-11gb" is a built-in GPU type`},
		{"built-in h200", "memory_mib: 143771\npressure: true\nname: h200-141gb\n", `g.yaml:3: name: "h200-141gb" is a built-in GPU type`},
		{"missing pressure", "name: x\nmemory_mib: 1024\n", "g.yaml:1: missing required key pressure"},
		{"null pressure", "name: x\nmemory_mib: 1024\npressure:\n", "g.yaml:3: pressure: want true or false"},
		{"bad name", strings.Replace(gpuYAML, "rtx4090-24gb", "RTX 4090", 1), `g.yaml:1: name: "RTX 4090"`},
		{"tiny memory", strings.Replace(gpuYAML, "24564", "10", 1), "g.yaml:2: memory_mib: 10 is not in"},
		{"memory not a number", strings.Replace(gpuYAML, "24564", "lots", 1), `g.yaml:2: memory_mib: want a number, got "lots"`},
		{"memory a list", strings.Replace(gpuYAML, "24564", "[1, 2]", 1), "g.yaml:2: memory_mib: want a number, got a list"},
		{"pressure not a bool", strings.Replace(gpuYAML, "false", "maybe", 1), `g.yaml:3: pressure: want true or false, got "maybe"`},
		{"name a mapping", strings.Replace(gpuYAML, "rtx4090-24gb", "{a: 1}", 1), "g.yaml:1: name: want a string, got a mapping"},
		{"missing catalog", gpuYAML + "catalog: nope.csv\n", "g.yaml:4: catalog: GPU type rtx4090-24gb: catalog: open"},
		{"bad catalog", gpuYAML + "catalog: bad.csv\n", "g.yaml:4: catalog: GPU type rtx4090-24gb: "},
		{"bad model", gpuYAML + "interference: cat.csv\n", "g.yaml:4: interference: "},
		{"model slowing a job e^50 times", gpuYAML + "interference: i50.yaml\n", "g.yaml:4: interference: i50.yaml: the interference model runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readGPUType([]byte(tc.in), "g.yaml", dir)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "models.", "no Go type names")
		})
	}
	_, err = loadGPUType(filepath.Join(dir, "missing.yaml"))
	require.ErrorContains(t, err, "missing.yaml")
}

// TestLoadCatalogFormats: the artifact's source characterization read with
// gencatalog's rules gives exactly the embedded derived catalog.
func TestLoadCatalogFormats(t *testing.T) {
	dir := t.TempDir()
	derived := filepath.Join(dir, "derived.csv")
	require.NoError(t, os.WriteFile(derived, a100CSV, 0o644))
	c, err := LoadCatalog(derived)
	require.NoError(t, err)
	require.Equal(t, A100(), c.WithWindows(A100Windows()))
	_, err = LoadCatalog(filepath.Join(dir, "missing.csv"))
	require.ErrorContains(t, err, "missing.csv")
	_, err = readSourceCatalog(strings.NewReader("workload_id,num_gpus\nx,1\n"), "s.csv")
	require.ErrorContains(t, err, `s.csv: header: missing column "gpu_label"`)
	_, err = readSourceCatalog(strings.NewReader(strings.Join(sourceCatalogCols, ",")+"\n"), "s.csv")
	require.ErrorContains(t, err, "no workload rows")

	shared, ok := SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
	src, err := LoadCatalog(filepath.Join(shared, "calibration", "aegis", "workload_catalog_a100.csv"))
	require.NoError(t, err)
	require.Equal(t, A100(), src.WithWindows(A100Windows()))
}

// TestPredecode: Predecode leaves every built-in type's models as their
// functions return them (decoded once and shared: the same catalog), and
// reads no file of a type that names files (here missing ones, which its
// functions then report).
func TestPredecode(t *testing.T) {
	for _, name := range GPUTypeNames() {
		g, err := LookupGPU(name)
		require.NoError(t, err)
		Predecode(g)
		c1, err := CatalogFor(g)
		require.NoError(t, err)
		c2, err := CatalogFor(g)
		require.NoError(t, err)
		require.Same(t, c1, c2, name)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	g := GPUType{Name: "x", MemoryMiB: 1, CatalogFile: missing, InterferenceFile: missing, SpeedsFile: missing, PowerFile: missing}
	require.NotPanics(t, func() { Predecode(g) })
	_, err := CatalogFor(g)
	require.ErrorContains(t, err, "missing")
}
