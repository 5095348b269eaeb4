package models

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// InterferenceFile is the YAML form of a fitted interference model, as
// written by `aegis calibrate --out` and read by LoadInterference.
type InterferenceFile struct {
	// Model names the model family; "pressure" (PressureModel) is the only one.
	Model string `yaml:"model"`
	// GPU is the GPU type the parameters were fitted on (informational).
	GPU    string         `yaml:"gpu,omitempty"`
	Params PressureParams `yaml:"params"`
	// Fit records how the parameters were obtained (informational).
	Fit *FitRecord `yaml:"fit,omitempty"`
}

// FitRecord documents a fit: the data, the cross-validation and the errors.
type FitRecord struct {
	Source   string         `yaml:"source"`
	Pairs    int            `yaml:"pairs"`
	Folds    int            `yaml:"folds"`
	HeldOut  map[string]APE `yaml:"heldout"`
	InSample APE            `yaml:"in_sample"`
}

// APE is a median and 90th-percentile absolute percentage error (fractions).
type APE struct {
	Median float64 `yaml:"median_ape"`
	P90    float64 `yaml:"p90_ape"`
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

// InterferenceFor is the interference truth for jobs on GPU type t: the
// model in t.InterferenceFile when set, else DefaultInterference. The
// A100-fitted parameters stand in for every built-in type (no co-run data
// exists for the others; see the README).
func InterferenceFor(t GPUType) (Interference, error) {
	if t.InterferenceFile != "" {
		return LoadInterference(t.InterferenceFile)
	}
	return DefaultInterference(), nil
}

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
// keys, missing parameters and bad values are errors naming the file and
// line.
func ReadInterference(data []byte, name string) (*InterferenceFile, error) {
	var f InterferenceFile
	root, err := decodeStrict(data, name, &f)
	if err != nil {
		return nil, err
	}
	if f.Model != "pressure" {
		return nil, fmt.Errorf("%s:%d: model: %q is not a known interference model (want pressure)", name, keyLine(root, "model"), f.Model)
	}
	for _, k := range []string{"intercept", "co_smact", "co_drama", "co_mem_per_10gib", "self_smact",
		"self_drama", "self_mem_per_10gib", "capacity", "nway_exponent"} {
		if !hasKey(root, "params", k) {
			return nil, fmt.Errorf("%s:%d: params: missing %s", name, keyLine(root, "params"), k)
		}
	}
	p := f.Params
	for k, v := range map[string]float64{"intercept": p.Intercept, "co_smact": p.CoSMACT, "co_drama": p.CoDRAMA,
		"co_mem_per_10gib": p.CoMem, "self_smact": p.SelfSMACT, "self_drama": p.SelfDRAMA, "self_mem_per_10gib": p.SelfMem,
		"capacity": p.Capacity, "nway_exponent": p.NWayExponent} {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 100 {
			return nil, fmt.Errorf("%s:%d: params.%s: %v is not a finite number within ±100", name, keyLine(root, "params", k), k, v)
		}
	}
	if p.Capacity < 0 {
		return nil, fmt.Errorf("%s:%d: params.capacity: %v is negative (0 disables the cap)", name, keyLine(root, "params", "capacity"), p.Capacity)
	}
	if p.NWayExponent <= 0 {
		return nil, fmt.Errorf("%s:%d: params.nway_exponent: %v, want > 0 (1 = additive)", name, keyLine(root, "params", "nway_exponent"), p.NWayExponent)
	}
	return &f, nil
}

// WriteInterference writes f as YAML preceded by '#' comment lines.
func WriteInterference(w io.Writer, f *InterferenceFile, comment string) error {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(comment, "\n"), "\n") {
		if comment != "" {
			b.WriteString("# " + l + "\n")
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// decodeStrict decodes exactly one YAML document of data into v, rejecting
// unknown keys, and returns the document's node tree for line look-ups.
// Errors read "name:LINE: ...".
func decodeStrict(data []byte, name string, v any) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty document", name)
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(name, err)
		}
		return nil, fmt.Errorf("%s:%d: a second YAML document; want one", name, extra.Line)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	return &root, nil
}

// yamlError rewrites yaml's "line N: msg" errors as "name:N: msg".
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = name + ":" + strings.TrimPrefix(m, "line ")
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		return fmt.Errorf("%s:%s", name, rest)
	}
	return fmt.Errorf("%s: %s", name, s)
}

// lookup walks mapping keys from the document root; it returns the key
// node of the last element found and whether the whole path exists.
func lookup(root *yaml.Node, path ...string) (*yaml.Node, bool) {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	last := n
	for _, k := range path {
		if n.Kind != yaml.MappingNode {
			return last, false
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				last, n, found = n.Content[i], n.Content[i+1], true
				break
			}
		}
		if !found {
			return last, false
		}
	}
	return last, true
}

// keyLine is the line of the key at path, or of its deepest present parent.
func keyLine(root *yaml.Node, path ...string) int {
	n, _ := lookup(root, path...)
	return n.Line
}

func hasKey(root *yaml.Node, path ...string) bool {
	_, ok := lookup(root, path...)
	return ok
}
