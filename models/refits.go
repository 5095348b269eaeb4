package models

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/aegis-sched/aegis/internal/strictyaml"
)

// RefitsFile is the YAML form of a set of bootstrap refits of a speed
// model (calibration.Bootstrap): the model refitted on resampled
// measurements, refit 0 on the measurements as they are. A spec's
// model_uncertainty runs every cell under refits 1..N of its GPU type's
// embedded set (RefitsFor).
type RefitsFile struct {
	// GPU is the GPU type whose measurements were resampled.
	GPU string `yaml:"gpu"`
	// Seed is the resampling's seed (refit i draws from a PCG seeded with
	// (Seed, i)).
	Seed uint64 `yaml:"seed"`
	// Source names the measurements and how the set was made.
	Source string `yaml:"source"`
	// Refits are the refitted parameters, refit 0 first.
	Refits []PressureParams `yaml:"refits"`
	// SteadySaturation, when present, is each refit's steady saturation u1
	// (TelemetryParams.SteadySaturation), refit 0 first, one per refit:
	// u1 refitted on resampled testbed runs (SteadyScanA100), which a
	// refit's cells combine telemetry with. Absent: every refit runs the
	// GPU type's telemetry combination.
	SteadySaturation []float64 `yaml:"steady_saturation,omitempty"`
	// SteadySource names the runs u1 was refitted on and how.
	SteadySource string `yaml:"steady_source,omitempty"`
	// DepthOverlap, when present, is each refit's depth term δ
	// (TelemetryParams.DepthOverlap), refit 0 first, one per refit: δ
	// refitted on the same resampled testbed runs as u1 (DepthScanA100).
	// Absent: every refit runs the GPU type's δ.
	DepthOverlap []float64 `yaml:"depth_overlap,omitempty"`
	// DepthSource names the runs δ was refitted on and how.
	DepthSource string `yaml:"depth_source,omitempty"`
}

// Embedded refit sets: derived parameters only (the measurements stay in
// the shared data folder); experiments/calibration's TestEmbeddedRefits
// checks and, with -update, regenerates them.
var (
	//go:embed data/refits_a100.yaml
	refitsA100YAML []byte
	//go:embed data/refits_legacy11gb.yaml
	refitsLegacyYAML []byte
)

// Names of the embedded refit sets (as errors and run.json name them).
const (
	RefitsA100File   = "models/data/refits_a100.yaml"
	RefitsLegacyFile = "models/data/refits_legacy11gb.yaml"
)

var (
	refitsA100   = sync.OnceValues(func() (*RefitsFile, error) { return ReadRefits(refitsA100YAML, RefitsA100File) })
	refitsLegacy = sync.OnceValues(func() (*RefitsFile, error) { return ReadRefits(refitsLegacyYAML, RefitsLegacyFile) })
)

// RefitsFileSHA256 is the sha256 (hex) of the embedded refit set named
// file (RefitsA100File or RefitsLegacyFile, as RefitsFor names them), ""
// for another name.
func RefitsFileSHA256(file string) string {
	var b []byte
	switch file {
	case RefitsA100File:
		b = refitsA100YAML
	case RefitsLegacyFile:
		b = refitsLegacyYAML
	default:
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// RefitsFor is the embedded refit set of GPU type t's interference model
// and its file's name: the legacy server's for legacy-11gb, else the
// A100's, whose model every other type without its own interference file
// runs (InterferenceFor). A type with its own interference file has none.
// Treat the result as read-only.
func RefitsFor(t GPUType) (*RefitsFile, string, error) {
	switch {
	case t.InterferenceFile != "":
		return nil, "", fmt.Errorf("GPU type %s runs its own interference model (%s): no bootstrap refits of it are embedded (aegis calibrate --bootstrap N --bootstrap-out DIR writes refits a config's model: can name)", t.Name, t.InterferenceFile)
	case t.Name == "legacy-11gb":
		f, err := refitsLegacy()
		return f, RefitsLegacyFile, err
	}
	f, err := refitsA100()
	return f, RefitsA100File, err
}

// ReadRefits parses and validates a refit set: strict keys, at least one
// refit, every parameter present and valid as in an interference model
// file (ReadInterference), and the steady saturations and depth terms, when
// given, one valid value per refit.
func ReadRefits(data []byte, name string) (*RefitsFile, error) {
	var f RefitsFile
	root, err := strictyaml.Decode(data, name, &f)
	if err != nil {
		return nil, err
	}
	if f.GPU == "" {
		return nil, fmt.Errorf("%s:%d: gpu: missing: the GPU type the measurements are of", name, strictyaml.KeyLine(root, "gpu"))
	}
	if len(f.Refits) == 0 {
		return nil, fmt.Errorf("%s:%d: refits: missing: list at least refit 0", name, strictyaml.KeyLine(root, "refits"))
	}
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	_, seq := strictyaml.MappingKey(doc, "refits")
	for i, p := range f.Refits {
		line := strictyaml.KeyLine(root, "refits")
		if seq != nil && i < len(seq.Content) {
			line = seq.Content[i].Line
		}
		if seq != nil && i < len(seq.Content) {
			for _, k := range paramKeys {
				if kn, _ := strictyaml.MappingKey(seq.Content[i], k); kn == nil {
					return nil, fmt.Errorf("%s:%d: refits[%d]: missing %s", name, line, i, k)
				}
			}
		}
		if k, err := checkParams(p); err != nil {
			return nil, fmt.Errorf("%s:%d: refits[%d].%s: %w", name, line, i, k, err)
		}
	}
	if n := len(f.SteadySaturation); n > 0 {
		line := strictyaml.KeyLine(root, "steady_saturation")
		if n != len(f.Refits) {
			return nil, fmt.Errorf("%s:%d: steady_saturation: %d values for %d refits: want one per refit", name, line, n, len(f.Refits))
		}
		for i, u := range f.SteadySaturation {
			if err := (TelemetryParams{SteadySaturation: u}).Check(); err != nil {
				return nil, fmt.Errorf("%s:%d: steady_saturation[%d]: %w", name, line, i, err)
			}
		}
	}
	if n := len(f.DepthOverlap); n > 0 {
		line := strictyaml.KeyLine(root, "depth_overlap")
		if n != len(f.Refits) {
			return nil, fmt.Errorf("%s:%d: depth_overlap: %d values for %d refits: want one per refit", name, line, n, len(f.Refits))
		}
		for i, d := range f.DepthOverlap {
			if err := (TelemetryParams{DepthOverlap: d}).Check(); err != nil {
				return nil, fmt.Errorf("%s:%d: depth_overlap[%d]: %w", name, line, i, err)
			}
		}
	}
	return &f, nil
}

// paramKeys are the keys of a speed model's parameters.
var paramKeys = []string{"intercept", "co_smact", "co_drama", "co_mem_per_10gib", "self_smact",
	"self_drama", "self_mem_per_10gib", "capacity", "nway_exponent"}

// checkParams checks a speed model's parameters: finite within ±100, the
// capacity not negative, ρ positive. It returns the first bad one's key.
func checkParams(p PressureParams) (string, error) {
	for _, v := range []struct {
		k string
		v float64
	}{{"intercept", p.Intercept}, {"co_smact", p.CoSMACT}, {"co_drama", p.CoDRAMA}, {"co_mem_per_10gib", p.CoMem},
		{"self_smact", p.SelfSMACT}, {"self_drama", p.SelfDRAMA}, {"self_mem_per_10gib", p.SelfMem},
		{"capacity", p.Capacity}, {"nway_exponent", p.NWayExponent}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || math.Abs(v.v) > 100 {
			return v.k, fmt.Errorf("%v is not a finite number within ±100", v.v)
		}
	}
	if p.Capacity < 0 {
		return "capacity", fmt.Errorf("%v is negative (0 disables the cap)", p.Capacity)
	}
	if p.NWayExponent <= 0 {
		return "nway_exponent", fmt.Errorf("%v, want > 0 (1 = additive)", p.NWayExponent)
	}
	return "", nil
}

// WriteRefits writes f as YAML preceded by comment as '#' lines.
func WriteRefits(w io.Writer, f *RefitsFile, comment string) error {
	return strictyaml.Write(w, f, comment)
}
