package models

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"github.com/aegis-sched/aegis/internal/strictyaml"
)

// PowerModel is a GPU type's board power as a function of what the GPU does
// in a second: Idle watts when no job is active on it, and otherwise
//
//	min(Board, Idle + Busy + SMACT·smact + DRAMA·drama + SMOCC·smocc + MemPerGiB·used GiB)
//
// fitted on whole runs' DCGM readings (FitPower): a model linear in the
// activity reproduces a run's mean power from the run means of the signals,
// so run-level summaries suffice. A coefficient the fit left out (its term
// did not lower the leave-one-run-out error) is 0.
type PowerModel struct {
	// GPU is the GPU type the model was fitted on.
	GPU string `yaml:"gpu" json:"gpu"`
	// Source names the measurements it was fitted on.
	Source string `yaml:"source" json:"source"`
	// IdleW is the power of a GPU with no active job, watts.
	IdleW float64 `yaml:"idle_w" json:"idle_w"`
	// BusyW is added while any job is active on the GPU.
	BusyW float64 `yaml:"busy_w" json:"busy_w"`
	// SMACTW, DRAMAW and SMOCCW are watts per unit of the signal (a
	// fraction in [0, 1]); MemWPerGiB watts per GiB of memory used.
	SMACTW     float64 `yaml:"smact_w" json:"smact_w"`
	DRAMAW     float64 `yaml:"drama_w" json:"drama_w"`
	SMOCCW     float64 `yaml:"smocc_w" json:"smocc_w"`
	MemWPerGiB float64 `yaml:"mem_w_per_gib" json:"mem_w_per_gib"`
	// BoardW is the card's power limit, a datasheet figure, not fitted:
	// no second's power exceeds it.
	BoardW float64 `yaml:"board_w" json:"board_w"`
	// Fit records how the parameters were obtained (informational).
	Fit *PowerFitRecord `yaml:"fit,omitempty" json:"fit,omitempty"`
}

// Activity is what a GPU does in a second, as the power model reads it.
type Activity struct {
	// Busy reports whether any job is active on the GPU.
	Busy bool
	// SMACT, SMOCC and DRAMA are DCGM's profiling signals (fractions).
	SMACT, SMOCC, DRAMA float64
	// MemGiB is the memory used, GiB.
	MemGiB float64
}

// Power returns the GPU's power in watts at activity a.
func (m *PowerModel) Power(a Activity) float64 {
	if !a.Busy {
		return m.IdleW
	}
	p := m.IdleW + m.BusyW + m.SMACTW*a.SMACT + m.DRAMAW*a.DRAMA + m.SMOCCW*a.SMOCC + m.MemWPerGiB*a.MemGiB
	return min(max(p, m.IdleW), m.BoardW)
}

// FullLoadW is the power with every signal at 1 and memory full (memGiB),
// before the board limit: the model's full-load power.
func (m *PowerModel) FullLoadW(memGiB float64) float64 {
	return m.IdleW + m.BusyW + m.SMACTW + m.DRAMAW + m.SMOCCW + m.MemWPerGiB*memGiB
}

// Check reports parameters outside physical bounds: an idle power that is
// not positive or not below the board limit, a negative busy power or
// coefficient (more activity never draws less power), or a full load
// (memGiB of memory) above the board limit.
func (m *PowerModel) Check(memGiB float64) error {
	for _, v := range []float64{m.IdleW, m.BusyW, m.SMACTW, m.DRAMAW, m.SMOCCW, m.MemWPerGiB, m.BoardW} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("power model %s: a parameter is not a number", m.GPU)
		}
	}
	if !(m.BoardW > 0) {
		return fmt.Errorf("power model %s: board_w %g: want a positive power limit", m.GPU, m.BoardW)
	}
	if !(m.IdleW > 0 && m.IdleW < m.BoardW) {
		return fmt.Errorf("power model %s: idle_w %.1f W: want in (0, board_w %.0f W)", m.GPU, m.IdleW, m.BoardW)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"busy_w", m.BusyW}, {"smact_w", m.SMACTW}, {"drama_w", m.DRAMAW}, {"smocc_w", m.SMOCCW}, {"mem_w_per_gib", m.MemWPerGiB}} {
		if c.v < 0 {
			return fmt.Errorf("power model %s: %s %.2f: negative (more activity would draw less power)", m.GPU, c.name, c.v)
		}
	}
	if f := m.FullLoadW(memGiB); f > m.BoardW {
		return fmt.Errorf("power model %s: full-load power %.1f W: above board_w %.0f W", m.GPU, f, m.BoardW)
	}
	return nil
}

// PowerFitRecord documents a power model's fit: the runs, the terms kept
// and the errors of run energy (fractions).
type PowerFitRecord struct {
	Runs int `yaml:"runs" json:"runs"`
	// Terms are the activity terms kept (besides idle and busy).
	Terms []string `yaml:"terms" json:"terms"`
	// LeaveOneRunOut is the error of each run's energy predicted by the
	// model refitted without it; InSample with the model itself.
	LeaveOneRunOut APE `yaml:"leave_one_run_out" json:"leave_one_run_out"`
	InSample       APE `yaml:"in_sample" json:"in_sample"`
}

//go:embed data/power_a100.yaml
var powerA100YAML []byte

// A100Power is the embedded power model of the A100 SXM4 40 GB, fitted by
// `aegis calibrate power` on the testbed's ten Philly and Saturn trace runs
// (models/data/power_a100.yaml). Treat it as read-only.
func A100Power() *PowerModel { return a100Power() }

var a100Power = sync.OnceValue(func() *PowerModel {
	m, err := ReadPowerModel(powerA100YAML, "power_a100.yaml")
	if err != nil {
		panic(fmt.Sprintf("embedded power model: %v", err)) // a build defect, covered by tests
	}
	return m
})

// ErrNoPower is wrapped by PowerFor's error for a GPU type without a
// measured power model: such runs report no energy.
var ErrNoPower = errors.New("no measured power model")

// PowerFor returns GPU type t's power model: t.PowerFile when set, the
// embedded A100 model for a100-40gb, and otherwise an error wrapping
// ErrNoPower that says why (legacy-11gb and h200-141gb have no power
// measurements in the calibration data).
func PowerFor(t GPUType) (*PowerModel, error) {
	if t.PowerFile != "" {
		return LoadPowerModel(t.PowerFile)
	}
	switch t.Name {
	case "a100-40gb":
		return A100Power(), nil
	case "legacy-11gb":
		return nil, fmt.Errorf("GPU type %s: %w (its server has no DCGM power readings in the calibration data)", t.Name, ErrNoPower)
	case "h200-141gb":
		return nil, fmt.Errorf("GPU type %s: %w (no H200 run was measured; the A100's would be a guess)", t.Name, ErrNoPower)
	}
	return nil, fmt.Errorf("GPU type %s: %w (give its YAML a power: file from `aegis calibrate power --out`)", t.Name, ErrNoPower)
}

// LoadPowerModel reads a power model YAML file (`aegis calibrate power --out`).
func LoadPowerModel(path string) (*PowerModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("power model: %w", err)
	}
	return ReadPowerModel(data, path)
}

// ReadPowerModel parses a power model YAML document; name is used in errors.
// Unknown keys, missing parameters and parameters outside physical bounds
// (PowerModel.Check at a full 40 GiB) are errors.
func ReadPowerModel(data []byte, name string) (*PowerModel, error) {
	var m PowerModel
	root, err := strictyaml.Decode(data, name, &m)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"gpu", "idle_w", "busy_w", "board_w"} {
		if !strictyaml.HasKey(root, k) {
			return nil, fmt.Errorf("%s:%d: missing required key %s", name, strictyaml.KeyLine(root), k)
		}
	}
	if err := m.Check(0); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &m, nil
}

// WritePowerModel writes m as YAML, the comment lines first.
func WritePowerModel(w io.Writer, m *PowerModel, comment string) error {
	return strictyaml.Write(w, m, comment)
}
