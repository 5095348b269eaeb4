package models

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/aegis-sched/aegis/internal/strictyaml"
)

// InterferenceFile is the YAML form of a fitted interference model, as
// written by `aegis calibrate --out` and read by LoadInterference.
type InterferenceFile struct {
	// Model names the model family; "pressure" (PressureModel) is the only one.
	Model string `yaml:"model"`
	// GPU is the GPU type the parameters were fitted on (informational).
	GPU    string         `yaml:"gpu,omitempty"`
	Params PressureParams `yaml:"params"`
	// Telemetry is how co-located jobs' telemetry combines on one GPU
	// (absent: summed and saturated at 1, the zero TelemetryParams).
	Telemetry *TelemetryParams `yaml:"telemetry,omitempty"`
	// Fit records how the parameters were obtained (informational).
	Fit *FitRecord `yaml:"fit,omitempty"`
}

// FitRecord documents a fit: the data, the cross-validation and the errors.
type FitRecord struct {
	Source  string         `yaml:"source"`
	Pairs   int            `yaml:"pairs"`
	Folds   int            `yaml:"folds"`
	HeldOut map[string]APE `yaml:"heldout"`
	// LOWO holds leave-one-workload-out errors (`aegis calibrate --lowo`).
	LOWO     map[string]APE `yaml:"leave_one_workload_out,omitempty"`
	InSample APE            `yaml:"in_sample"`
	// Stacks and Admissions hold the N-way errors on the progressive
	// stacking data (`aegis calibrate --stacks`), when fitted on it.
	Stacks     *StackRecord     `yaml:"stacks,omitempty"`
	Admissions *AdmissionRecord `yaml:"admissions,omitempty"`
}

// StackRecord documents the stacks part of a fit: the data and the
// leave-one-sequence-out errors of the no-deferral runs (fractions).
type StackRecord struct {
	Source            string  `yaml:"source"`
	Sequences         int     `yaml:"sequences"`
	MakespanMedianAPE float64 `yaml:"makespan_median_ape"`
	MeanSlowdownAPE   float64 `yaml:"mean_slowdown_median_ape"`
	MaxSlowdownWithin int     `yaml:"max_slowdown_within_10pct"`
}

// AdmissionRecord documents the telemetry-combination fit on the threshold
// grid, leave one sequence out.
type AdmissionRecord struct {
	Settings              int     `yaml:"settings"`
	FirstRejectedRight    float64 `yaml:"first_rejected_right"`
	DeferralsSpearman     float64 `yaml:"deferrals_spearman"`
	GridMakespanMedianAPE float64 `yaml:"grid_makespan_median_ape"`
}

// APE is a median and 90th-percentile absolute percentage error (fractions).
type APE struct {
	Median float64 `yaml:"median_ape" json:"median_ape"`
	P90    float64 `yaml:"p90_ape" json:"p90_ape"`
}

//go:embed data/interference_a100.yaml
var interferenceA100YAML []byte

// DefaultInterference is the interference truth model the simulator uses:
// PressureModel with the parameters fitted by `aegis calibrate` on the
// AEGIS artifact's A100 co-runs (embedded models/data/interference_a100.yaml).
func DefaultInterference() Interference {
	return &PressureModel{P: DefaultPressureParams()}
}

// DefaultPressureParams are the embedded A100 parameters.
func DefaultPressureParams() PressureParams { return defaultPressure() }

var defaultPressure = sync.OnceValue(func() PressureParams {
	f, err := ReadInterference(interferenceA100YAML, "interference_a100.yaml")
	if err != nil {
		panic(fmt.Sprintf("embedded interference model: %v", err)) // a build defect, covered by tests
	}
	return f.Params
})

// DefaultTelemetry is how co-located jobs' telemetry combines in the
// simulator: the parameters of the embedded A100 model file.
func DefaultTelemetry() TelemetryParams { return defaultTelemetry() }

var defaultTelemetry = sync.OnceValue(func() TelemetryParams {
	f, err := ReadInterference(interferenceA100YAML, "interference_a100.yaml")
	if err != nil {
		panic(fmt.Sprintf("embedded interference model: %v", err)) // a build defect, covered by tests
	}
	if f.Telemetry == nil {
		return TelemetryParams{}
	}
	return *f.Telemetry
})

// TelemetryFor is the telemetry combination on GPU type t: the one in
// t.InterferenceFile when set (the zero TelemetryParams if the file has
// none), else DefaultTelemetry.
func TelemetryFor(t GPUType) (TelemetryParams, error) {
	if t.InterferenceFile == "" {
		return DefaultTelemetry(), nil
	}
	data, err := os.ReadFile(t.InterferenceFile)
	if err != nil {
		return TelemetryParams{}, fmt.Errorf("interference model: %w", err)
	}
	f, err := ReadInterference(data, t.InterferenceFile)
	if err != nil {
		return TelemetryParams{}, err
	}
	if f.Telemetry == nil {
		return TelemetryParams{}, nil
	}
	return *f.Telemetry, nil
}

// InterferenceFor is the interference truth for jobs on GPU type t: the
// model in t.InterferenceFile when set, LegacyInterference for
// legacy-11gb, else DefaultInterference: the A100-fitted parameters stand
// in for the H200 (no co-run data exist for it; see docs/models.md).
func InterferenceFor(t GPUType) (Interference, error) {
	if t.InterferenceFile != "" {
		return LoadInterference(t.InterferenceFile)
	}
	if t.Name == "legacy-11gb" {
		return LegacyInterference(), nil
	}
	return DefaultInterference(), nil
}

//go:embed data/interference_legacy11gb.yaml
var interferenceLegacyYAML []byte

// LegacyInterference is the interference truth of the legacy 8 × 11 GB
// server: PressureModel fitted by `aegis calibrate --gpu legacy-11gb` on its
// own 52 co-runs, nvidia-smi utilization standing for SMACT (embedded
// models/data/interference_legacy11gb.yaml).
func LegacyInterference() Interference { return &PressureModel{P: legacyPressure()} }

var legacyPressure = sync.OnceValue(func() PressureParams {
	f, err := ReadInterference(interferenceLegacyYAML, "interference_legacy11gb.yaml")
	if err != nil {
		panic(fmt.Sprintf("embedded interference model: %v", err)) // a build defect, covered by tests
	}
	return f.Params
})

// LoadInterference reads a fitted interference model from a YAML file.
func LoadInterference(path string) (Interference, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("interference model: %w", err)
	}
	f, err := ReadInterference(data, path)
	if err != nil {
		return nil, err
	}
	return &PressureModel{P: f.Params}, nil
}

// ReadInterference parses and validates an interference model file. Unknown
// keys (listing the valid ones), missing parameters and bad values are
// errors naming the file and line.
func ReadInterference(data []byte, name string) (*InterferenceFile, error) {
	var f InterferenceFile
	root, err := strictyaml.Decode(data, name, &f)
	if err != nil {
		return nil, err
	}
	if f.Model != "pressure" {
		return nil, fmt.Errorf("%s:%d: model: %q is not a known interference model (want pressure)", name, strictyaml.KeyLine(root, "model"), f.Model)
	}
	for _, k := range paramKeys {
		if !strictyaml.HasKey(root, "params", k) {
			return nil, fmt.Errorf("%s:%d: params: missing %s", name, strictyaml.KeyLine(root, "params"), k)
		}
	}
	if k, err := checkParams(f.Params); err != nil {
		return nil, fmt.Errorf("%s:%d: params.%s: %w", name, strictyaml.KeyLine(root, "params", k), k, err)
	}
	if f.Telemetry != nil {
		if err := f.Telemetry.Check(); err != nil {
			return nil, fmt.Errorf("%s:%d: telemetry: %w", name, strictyaml.KeyLine(root, "telemetry"), err)
		}
	}
	return &f, nil
}

// WriteInterference writes f as YAML preceded by '#' comment lines.
func WriteInterference(w io.Writer, f *InterferenceFile, comment string) error {
	return strictyaml.Write(w, f, comment)
}
