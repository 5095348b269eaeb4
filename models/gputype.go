package models

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/aegis-sched/aegis/internal/strictyaml"
)

//go:embed data/catalog_legacy11gb.csv
var legacyCSV []byte

// Legacy11GB returns the embedded catalog of the legacy 8-GPU 11 GB server
// (GTX 1080 Ti / RTX 2080 Ti): solo times, peaks, memory estimates and Lucid
// classes measured there (derived from the AEGIS artifact, see NOTICE). That
// server has no DCGM profiling metrics: the pressure figures are the A100
// ones, present for the interference truth model only; policies must not
// see them (the legacy GPU type has Pressure false).
// It is parsed once and shared: treat it as read-only.
func Legacy11GB() *Catalog { return legacy11GB() }

var legacy11GB = sync.OnceValue(func() *Catalog {
	c, err := ReadCatalog(bytes.NewReader(legacyCSV), "catalog_legacy11gb.csv")
	if err != nil {
		panic(fmt.Sprintf("embedded catalog: %v", err)) // a build defect, covered by tests
	}
	return c
})

// CatalogFor returns the workload catalog (solo times, peaks, profiles) that
// jobs on GPU type t follow:
//   - t.CatalogFile when set (a user-supplied type, see loadGPUType);
//   - a100-40gb: A100();
//   - legacy-11gb: Legacy11GB();
//   - h200-141gb and user types without a catalog: A100(). No H200
//     measurements of these workloads exist in the calibration data, so solo
//     times and peaks are assumed equal to the A100's (an H200 would run
//     them faster; relative results between policies are what this keeps).
func CatalogFor(t GPUType) (*Catalog, error) {
	if t.CatalogFile != "" {
		f, err := os.Open(t.CatalogFile)
		if err != nil {
			return nil, fmt.Errorf("GPU type %s: catalog: %w", t.Name, err)
		}
		defer f.Close()
		c, err := ReadCatalog(f, t.CatalogFile)
		if err != nil {
			return nil, fmt.Errorf("GPU type %s: %w", t.Name, err)
		}
		return c, nil
	}
	if t.Name == "legacy-11gb" {
		return Legacy11GB(), nil
	}
	return A100(), nil
}

// gpuTypeFile is the YAML form of a user-supplied GPU type.
type gpuTypeFile struct {
	Name         string  `yaml:"name"`
	MemoryMiB    float64 `yaml:"memory_mib"`
	Pressure     *bool   `yaml:"pressure"`
	Catalog      string  `yaml:"catalog"`
	Interference string  `yaml:"interference"`
	Speeds       string  `yaml:"speeds"`
	Power        string  `yaml:"power"`
}

var gpuTypeName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// loadGPUType reads a user-supplied GPU type from a YAML file:
//
//	name: rtx4090-24gb        # lower case letters, digits, '.', '_', '-'; not a built-in name
//	memory_mib: 24564         # usable MiB as nvidia-smi reports
//	pressure: false           # DCGM SMACT/SMOCC/DRAMA available?
//	catalog: rtx4090.csv      # optional: derived-format catalog measured on it
//	interference: model.yaml  # optional: `aegis calibrate --out` for it
//	speeds: speeds.yaml       # optional: GPUs slower than profiled (models.Speeds)
//	power: power.yaml         # optional: `aegis calibrate power --out` for it (energy columns)
//
// Relative paths are taken from the YAML file's folder; the catalog and the
// interference model are read and checked here. Unknown keys (listing the
// valid ones), bad values and a name taken by a built-in type
// (GPUTypeNames) are errors naming the file and line.
func loadGPUType(path string) (GPUType, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return GPUType{}, fmt.Errorf("GPU type: %w", err)
	}
	return readGPUType(data, path, filepath.Dir(path))
}

// readGPUType parses a GPU type YAML document (see loadGPUType); name is
// used in errors and relative paths are resolved against baseDir.
func readGPUType(data []byte, name, baseDir string) (GPUType, error) {
	var f gpuTypeFile
	root, err := strictyaml.Decode(data, name, &f)
	if err != nil {
		return GPUType{}, err
	}
	for _, k := range []string{"name", "memory_mib", "pressure"} {
		if !strictyaml.HasKey(root, k) {
			return GPUType{}, fmt.Errorf("%s:%d: missing required key %s", name, strictyaml.KeyLine(root), k)
		}
	}
	if f.Pressure == nil {
		return GPUType{}, fmt.Errorf("%s:%d: pressure: want true or false", name, strictyaml.KeyLine(root, "pressure"))
	}
	if !gpuTypeName.MatchString(f.Name) {
		return GPUType{}, fmt.Errorf("%s:%d: name: %q: want lower case letters, digits, '.', '_' or '-'", name, strictyaml.KeyLine(root, "name"), f.Name)
	}
	if builtin := GPUTypeNames(); slices.Contains(builtin, f.Name) {
		return GPUType{}, fmt.Errorf("%s:%d: name: %q is a built-in GPU type (built-in: %s); give yours another name, or use the built-in one without a YAML file",
			name, strictyaml.KeyLine(root, "name"), f.Name, strings.Join(builtin, ", "))
	}
	if !(f.MemoryMiB >= 256 && f.MemoryMiB <= 1<<24) {
		return GPUType{}, fmt.Errorf("%s:%d: memory_mib: %v is not in [256, %d]", name, strictyaml.KeyLine(root, "memory_mib"), f.MemoryMiB, 1<<24)
	}
	t := GPUType{Name: f.Name, MemoryMiB: f.MemoryMiB, Pressure: *f.Pressure}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(baseDir, p)
	}
	if f.Catalog != "" {
		t.CatalogFile = abs(f.Catalog)
		if _, err := CatalogFor(t); err != nil {
			return GPUType{}, fmt.Errorf("%s:%d: catalog: %w", name, strictyaml.KeyLine(root, "catalog"), err)
		}
	}
	if f.Interference != "" {
		t.InterferenceFile = abs(f.Interference)
		m, err := LoadInterference(t.InterferenceFile)
		if err != nil {
			return GPUType{}, fmt.Errorf("%s:%d: interference: %w", name, strictyaml.KeyLine(root, "interference"), err)
		}
		cat, err := CatalogFor(t)
		if err != nil {
			return GPUType{}, fmt.Errorf("%s:%d: catalog: %w", name, strictyaml.KeyLine(root, "catalog"), err)
		}
		if err := CheckSlowdown(m, cat); err != nil {
			return GPUType{}, fmt.Errorf("%s:%d: interference: %s: %w", name, strictyaml.KeyLine(root, "interference"), f.Interference, err)
		}
	}
	if f.Speeds != "" {
		t.SpeedsFile = abs(f.Speeds)
		if _, err := SpeedsFor(t); err != nil {
			return GPUType{}, fmt.Errorf("%s:%d: speeds: %w", name, strictyaml.KeyLine(root, "speeds"), err)
		}
	}
	if f.Power != "" {
		t.PowerFile = abs(f.Power)
		if _, err := PowerFor(t); err != nil {
			return GPUType{}, fmt.Errorf("%s:%d: power: %w", name, strictyaml.KeyLine(root, "power"), err)
		}
	}
	return t, nil
}

// Predecode decodes now, on the caller's goroutine, the embedded models of
// GPU type t that CatalogFor, InterferenceFor, TelemetryFor, SpeedsFor and
// PowerFor return, each decoded once, on its first use: aegis simulate
// calls it on a goroutine of its own, so that they are decoded while it
// reads its trace. Models read from a type's files are left to those
// functions (read on every call).
func Predecode(t GPUType) {
	if t.CatalogFile == "" {
		_, _ = CatalogFor(t)
	}
	if t.InterferenceFile == "" {
		_, _ = InterferenceFor(t)
		_, _ = TelemetryFor(t)
	}
	if t.SpeedsFile == "" {
		_, _ = SpeedsFor(t)
	}
	if t.PowerFile == "" {
		_, _ = PowerFor(t)
	}
}
