package models

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/aegis-sched/aegis/internal/suggest"
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
	root, err := decodeStrict(data, name, &f)
	if err != nil {
		return nil, err
	}
	if f.Model != "pressure" {
		return nil, fmt.Errorf("%s:%d: model: %q is not a known interference model (want pressure)", name, keyLine(root, "model"), f.Model)
	}
	for _, k := range paramKeys {
		if !hasKey(root, "params", k) {
			return nil, fmt.Errorf("%s:%d: params: missing %s", name, keyLine(root, "params"), k)
		}
	}
	if k, err := checkParams(f.Params); err != nil {
		return nil, fmt.Errorf("%s:%d: params.%s: %w", name, keyLine(root, "params", k), k, err)
	}
	if f.Telemetry != nil {
		if err := f.Telemetry.Check(); err != nil {
			return nil, fmt.Errorf("%s:%d: telemetry: %w", name, keyLine(root, "telemetry"), err)
		}
	}
	return &f, nil
}

// WriteInterference writes f as YAML preceded by '#' comment lines.
func WriteInterference(w io.Writer, f *InterferenceFile, comment string) error {
	return writeYAML(w, f, comment)
}

// writeYAML writes v as YAML (indent 2) preceded by comment as '#' lines.
func writeYAML(w io.Writer, v any, comment string) error {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(comment, "\n"), "\n") {
		if comment != "" {
			b.WriteString("# " + l + "\n")
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// decodeStrict decodes exactly one YAML document of data into v (a pointer
// to a struct with yaml tags) and returns the document's node tree for line
// look-ups. Before decoding, it checks the document against v's type
// (yamlChecker), so that an unknown key, a key given twice or a value of the
// wrong kind reads "name:LINE: ..." in the file's own terms: the key, the
// valid keys there, the kind of value wanted. Several errors (at most
// maxYAMLErrors) are reported one per line.
func decodeStrict(data []byte, name string, v any) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
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
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
		return nil, fmt.Errorf("%s: empty document", name)
	}
	c := yamlChecker{name: name, seen: map[mergeSource]bool{}, listed: map[string]bool{}}
	c.walk(doc, reflect.TypeOf(v), "")
	if n := len(c.errs); n > maxYAMLErrors {
		c.errs = append(c.errs[:maxYAMLErrors], fmt.Sprintf("%d more errors", n-maxYAMLErrors))
	}
	if len(c.errs) > 0 {
		return nil, errors.New(strings.Join(c.errs, "\n"))
	}
	if err := root.Decode(v); err != nil { // rare after the check (alias loops)
		return nil, yamlError(name, err)
	}
	return &root, nil
}

// maxYAMLErrors is the most errors decodeStrict reports at once.
const maxYAMLErrors = 10

// yamlChecker checks a YAML node tree against the Go type it will be
// decoded into, collecting errors in document order.
type yamlChecker struct {
	name   string
	errs   []string
	seen   map[mergeSource]bool // merged mappings walked (against alias loops)
	listed map[string]bool      // sections whose valid keys an error listed
}

// mergeSource is a mapping merged into a value of type t.
type mergeSource struct {
	n *yaml.Node
	t reflect.Type
}

func (c *yamlChecker) errorf(line int, format string, a ...any) {
	c.errs = append(c.errs, fmt.Sprintf("%s:%d: ", c.name, line)+fmt.Sprintf(format, a...))
}

// walk checks node n, found at the dotted key path, against type t: every
// key of a struct mapping must be one of its yaml keys, given once; every
// other value must decode into its field's type. The first unknown key of a
// section lists the section's valid keys.
func (c *yamlChecker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // decodes as the zero value; the caller checks required keys
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.kindError(n, t, path)
			return
		}
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				c.merge(v, t, path)
				continue
			}
			key := k.Value
			if k.Kind != yaml.ScalarNode {
				key = "(" + nodeKind(k) + ")"
			}
			var ft reflect.Type
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else {
				keys, fields := yamlFields(t)
				var ok bool
				if ft, ok = fields[key]; !ok || k.Kind != yaml.ScalarNode {
					valid := ""
					if !c.listed[path] { // once per section
						c.listed[path] = true
						valid = "; valid keys: " + strings.Join(keys, ", ")
					}
					c.errorf(k.Line, "unknown key %q%s%s%s", key, inSection(path), valid, suggest.DidYouMean(key, keys))
					continue
				}
			}
			if l, dup := first[key]; dup {
				c.errorf(k.Line, "%s: given twice (first at line %d)", joinKey(path, key), l)
				continue
			}
			first[key] = k.Line
			c.walk(v, ft, joinKey(path, key))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if err := n.Decode(reflect.New(t).Interface()); err != nil {
				c.kindError(n, t, path)
			}
			return
		}
		for i, e := range n.Content {
			c.walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		if isInteger(t) && n.Kind == yaml.ScalarNode && n.ShortTag() != "!!int" {
			// The decoder would truncate 1.5 and wrap 2^64 (floats to it).
			c.kindError(n, t, path)
			return
		}
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			c.kindError(n, t, path)
		}
	}
}

// isInteger reports whether t is an integer kind.
func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// merge walks the mapping(s) a "<<" merge key brings into a mapping of
// type t.
func (c *yamlChecker) merge(v *yaml.Node, t reflect.Type, path string) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if c.seen[mergeSource{v, t}] {
		return
	}
	c.seen[mergeSource{v, t}] = true
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			c.merge(m, t, path)
		}
		return
	}
	c.walk(v, t, path)
}

// kindError reports that n is not the kind of value type t wants.
func (c *yamlChecker) kindError(n *yaml.Node, t reflect.Type, path string) {
	var want string
	switch t.Kind() {
	case reflect.Bool:
		want = "true or false"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		want = "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = fmt.Sprintf("a whole number from 0 to %d", uint64(1)<<(t.Bits()-1)*2-1)
	case reflect.String:
		want = "a string"
	case reflect.Struct:
		keys, _ := yamlFields(t)
		want = "a mapping with keys " + strings.Join(keys, ", ")
	case reflect.Map:
		want = "a mapping"
	case reflect.Slice:
		want = "a list"
	default:
		want = "a " + t.Kind().String()
	}
	what := path
	if what == "" {
		what = "document"
	}
	c.errorf(n.Line, "%s: want %s, got %s", what, want, nodeKind(n))
}

// nodeKind describes a YAML node for error messages: a scalar quoted (long
// ones cut), else its kind.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		v := n.Value
		if r := []rune(v); len(r) > 40 {
			v = string(r[:37]) + "..."
		}
		return strconv.Quote(v)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// yamlFields lists the yaml keys of struct type t in declaration order and
// maps each to its field's type.
func yamlFields(t reflect.Type) ([]string, map[string]reflect.Type) {
	var keys []string
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if k == "-" {
			continue
		}
		if k == "" {
			k = strings.ToLower(f.Name)
		}
		keys = append(keys, k)
		fields[k] = f.Type
	}
	return keys, fields
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func inSection(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path
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
		kn, vn := mappingKey(n, k, 0)
		if kn == nil {
			return last, false
		}
		last, n = kn, vn
	}
	return last, true
}

// mappingKey finds key k in mapping n, or in the mappings its "<<" merge
// keys bring in (as yaml decodes them: the mapping's own keys first), and
// returns the key and value nodes (nil when absent).
func mappingKey(n *yaml.Node, k string, depth int) (*yaml.Node, *yaml.Node) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode || depth > 8 {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" && n.Content[i].Value == k {
			return n.Content[i], n.Content[i+1]
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" {
			continue
		}
		v := n.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		srcs := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, m := range srcs {
			if kn, vn := mappingKey(m, k, depth+1); kn != nil {
				return kn, vn
			}
		}
	}
	return nil, nil
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
