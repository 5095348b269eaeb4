package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/internal/strictyaml"
	"github.com/aegis-sched/aegis/internal/suggest"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
)

// Spec is an experiment: traces × configs × sweep points × seeds on one
// server, and what to make of the results. It is read from a YAML file by
// LoadSpec (see docs/experiments.md for the format).
type Spec struct {
	// Name names the experiment (letters, digits, '-', '_', '.'); it labels
	// every result row and, when several specs run at once, their output
	// directories.
	Name string `yaml:"name" json:"name"`
	// Description says what the experiment reproduces.
	Description string `yaml:"description" json:"description,omitempty"`
	// Server is TYPE:COUNT, TYPE a built-in GPU type or a GPU type YAML
	// file (relative to the spec's directory).
	Server string `yaml:"server" json:"server"`
	// Cluster, instead of Server, is a cluster as aegis simulate
	// --cluster takes it (TYPE:GPUSxSERVERS[,...], models.ParseCluster;
	// GPU type YAML files relative to the spec's directory): every cell
	// runs on it behind the cluster dispatcher, whose parameters
	// (dispatch, route_depth) a config's params may set.
	Cluster string `yaml:"cluster" json:"cluster,omitempty"`
	// Traces are the traces every config runs on.
	Traces []TraceSource `yaml:"traces" json:"traces"`
	// Configs are the scheduling configurations compared.
	Configs []Config `yaml:"configs" json:"configs"`
	// Seeds are the seeds every cell runs with.
	Seeds []uint64 `yaml:"seeds" json:"seeds"`
	// Sweep is a grid over parameters: every combination of the axes'
	// values is one sweep point.
	Sweep []Axis `yaml:"sweep" json:"sweep,omitempty"`
	// Normalize is the label of the config the others are normalized to
	// (normalized.csv); empty for none.
	Normalize string `yaml:"normalize" json:"normalize,omitempty"`
	// Table is the paper-layout table to write: "per-trace" (one row per
	// trace and config: makespan, mean and p95 JCT in hours, like Table 2),
	// "normalized" (one row per config: GeoMean-normalized makespan, JCT,
	// queue and exec mean/p95 and failed/recovered attempts, like Tables
	// 3–6; needs normalize), or empty for none.
	Table string `yaml:"table" json:"table,omitempty"`
	// Energy adds the energy to solution to the table: per-trace, the
	// seeds' mean kWh; normalized, its GeoMean ratio to the normalizing
	// config. The server's GPU type must have a power model
	// (docs/energy.md). Every result has the energy columns regardless.
	Energy bool `yaml:"energy" json:"energy,omitempty"`
	// Figures names the figures drawn from the results (see aegis plot);
	// none when empty.
	Figures []string `yaml:"figures" json:"figures,omitempty"`
	// SweepFigures are figures of metrics against a swept parameter (one
	// line per trace × config with a 95 % CI band over seeds), drawn
	// into NAME.svg (plots.Sweep; default name sweep-X).
	SweepFigures []plots.Sweep `yaml:"sweep_figures" json:"sweep_figures,omitempty"`
	// Plots is the figures' format: "svg" (the default), "png" or "pdf".
	Plots string `yaml:"plots" json:"plots,omitempty"`
	// Stacking, when set, makes this a stacking spec (see StackingSpec):
	// no traces, configs, normalize or table.
	Stacking *StackingSpec `yaml:"stacking" json:"stacking,omitempty"`
	// Telemetry makes every cell also write telemetry.csv.
	Telemetry bool `yaml:"telemetry" json:"telemetry,omitempty"`
	// ModelUncertainty, when set, also runs every cell under bootstrap
	// refits of the GPU type's speed model and adds, per table row, the
	// spread they cause (KEY_model columns; see ModelUncertainty).
	ModelUncertainty *ModelUncertainty `yaml:"model_uncertainty" json:"model_uncertainty,omitempty"`
	// Stability writes stability.csv (Figure 6: the window scores' error
	// against a 200 s anchored reference, for windows of 10–120 s) from
	// every cell's telemetry and events; it needs telemetry.
	Stability bool `yaml:"stability" json:"stability,omitempty"`

	file string // the spec file
	hash string // sha256 of the spec file's bytes
	raw  []byte
	// root is the YAML the spec was decoded from (nil for a spec read
	// back from run.json, or a Plan's copy): Compile resolves against it
	// and names its lines in errors.
	root *yaml.Node
}

// TraceSource is one trace of a spec: a built-in trace or a trace file
// (Trace), or a generated one (Like, Jobs, Seed).
type TraceSource struct {
	// Name labels the trace in results; by default the built-in name, the
	// file's base name without extension, or LIKE-JOBS-sSEED.
	Name string `yaml:"name" json:"name"`
	// Trace is a built-in trace name or a CSV/JSONL trace file (relative
	// to the spec's directory).
	Trace string `yaml:"trace" json:"trace,omitempty"`
	// Like generates a trace like "philly", "saturn" or "venus"
	// (traces.GenerateLike) of Jobs jobs from Seed, mapped onto the
	// server's catalog.
	Like    string `yaml:"like" json:"like,omitempty"`
	Jobs    int    `yaml:"jobs" json:"jobs,omitempty"`
	Seed    uint64 `yaml:"seed" json:"seed,omitempty"`
	MaxGPUs int    `yaml:"max_gpus" json:"max_gpus,omitempty"`
}

// Config is one scheduling configuration of a spec.
type Config struct {
	// Label names the config in results (e.g. "AEGIS Est-free").
	Label string `yaml:"label" json:"label"`
	// Policy is a policy name (see aegis policies).
	Policy string `yaml:"policy" json:"policy"`
	// Params are the policy's parameters (as aegis simulate --set).
	Params map[string]string `yaml:"params" json:"params,omitempty"`
	// Truth are simulator truth settings (as aegis simulate --truth).
	Truth map[string]string `yaml:"truth" json:"truth,omitempty"`
	// Model is an interference model YAML file (relative to the spec's
	// directory); empty for the server type's built-in model.
	Model string `yaml:"model" json:"model,omitempty"`
	// NWayExponent, when set, overrides the interference model's ρ.
	NWayExponent *float64 `yaml:"nway_exponent" json:"nway_exponent,omitempty"`
	// Sweep false runs the config once per trace and seed instead of at
	// every sweep point (e.g. Exclusive in a threshold sweep).
	Sweep *bool `yaml:"sweep" json:"sweep,omitempty"`
}

// ModelUncertainty runs every cell of a spec also under bootstrap refits
// of its GPU type's speed model: the model refitted on resampled
// measurements (calibration.Bootstrap; the embedded sets of
// models.RefitsFor, seed 1). Cells under refit r are the spec's cells with
// the refit's parameters in place of the built-in model (a config's
// nway_exponent still overrides ρ); their directories end in ".mRR". The
// combined CSVs and figures hold the cells under the model as calibrated;
// the table gains, per row and metric, KEY_model: half the range (max −
// min) of the seed-mean over the N+1 models (the calibrated one and the N
// refits), each computed exactly as the row's mean (normalized to the
// normalizing config under the same model); refits.csv lists those
// seed-means per model.
type ModelUncertainty struct {
	// Refits is how many refits (1 to 20, refits 1..N of the embedded set)
	// every cell also runs under.
	Refits int `yaml:"refits" json:"refits"`
}

// Axis is one dimension of a sweep.
type Axis struct {
	// Param is a policy parameter (e.g. hold, window, thresholds),
	// "truth.KEY" for a truth setting, "model.nway_exponent" for ρ or
	// "server" for the server (TYPE:COUNT, of a GPU type with the spec's
	// server's workload catalog; the combined CSVs add its GPU count and
	// type as columns server.gpus and server.type), or, in a cluster spec,
	// "cluster" for the cluster (its GPU count as column cluster.gpus).
	Param string `yaml:"param" json:"param"`
	// Values are the parameter's values.
	Values []string `yaml:"values" json:"values,omitempty"`
	// Product, instead of Values, gives one list per component of a
	// comma-separated value: every combination is a value (e.g. the three
	// pressure thresholds τ1,τ2,τ3).
	Product [][]string `yaml:"product" json:"product,omitempty"`
}

// modelFile is a config's interference model and its file's hash.
type modelFile struct {
	inter models.Interference
	path  string
	hash  string
}

// specName is what a spec's and a trace's names may contain.
var specName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Tables and their names.
const (
	TablePerTrace   = "per-trace"
	TableNormalized = "normalized"
)

// plotFormats are the values of a spec's plots key.
var plotFormats = []string{"", "svg", "png", "pdf"}

// maxCells bounds the cells of one spec.
const maxCells = 1_000_000

// LoadSpec reads and checks a spec file: every error names the file, the
// line and the key at fault. Traces are loaded (or generated) and every
// cell's policy parameters and truth settings are checked, so a spec that
// loads compiles (Compile) and runs. The Spec is the schema as written;
// LoadPlan also keeps what the check resolved.
func LoadSpec(path string) (*Spec, error) {
	data, err := readSpec(path)
	if err != nil {
		return nil, err
	}
	return ParseSpec(data, path)
}

// LoadPlan reads a spec file and compiles it (LoadSpec, then Compile,
// resolving once).
func LoadPlan(path string) (*Plan, error) {
	data, err := readSpec(path)
	if err != nil {
		return nil, err
	}
	return ParsePlan(data, path)
}

// readSpec reads a spec file's bytes, at most maxSpecBytes.
func readSpec(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if len(data) > maxSpecBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB, the limit of a spec file", path, maxSpecBytes>>20)
	}
	return data, nil
}

// maxSpecBytes bounds a spec file (a million seeds take 7 MiB).
const maxSpecBytes = 64 << 20

// ParseSpec is LoadSpec on the spec file's contents; relative paths in it
// are resolved against name's directory.
func ParseSpec(data []byte, name string) (*Spec, error) {
	s, err := decodeSpec(data, name)
	if err != nil {
		return nil, err
	}
	if _, err := s.Compile(); err != nil {
		return nil, err
	}
	return s, nil
}

// ParsePlan is LoadPlan on the spec file's contents.
func ParsePlan(data []byte, name string) (*Plan, error) {
	s, err := decodeSpec(data, name)
	if err != nil {
		return nil, err
	}
	return s.Compile()
}

// decodeSpec decodes and checks the spec's form (keys, kinds of values).
func decodeSpec(data []byte, name string) (*Spec, error) {
	var s Spec
	root, err := strictyaml.Decode(data, name, &s)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	s.file, s.hash, s.raw, s.root = name, hex.EncodeToString(sum[:]), data, root
	return &s, nil
}

// Compile checks the spec and resolves what it names (server, traces,
// models, refits, swept hardware, stacking sequences) into the plan that
// runs it. The spec is left as written: the plan holds its own copy, with
// a stacking spec's sequences as its traces. A spec read back from
// run.json (ReadMeta) has no YAML to compile.
func (s *Spec) Compile() (*Plan, error) {
	if s.root == nil {
		return nil, fmt.Errorf("spec %s: not read from a spec file (LoadSpec, ParseSpec): nothing to compile", s.Name)
	}
	cp := *s
	cp.root = nil
	cp.Traces = slices.Clone(s.Traces)
	cp.Configs = slices.Clone(s.Configs)
	cp.Sweep = slices.Clone(s.Sweep)
	r := &resolved{Spec: &cp}
	p, err := r.compile(at{s.file, s.root})
	if err != nil {
		return nil, err
	}
	return &Plan{resolved: r, p: p}, nil
}

// Hash is the sha256 of the spec file's bytes.
func (s *Spec) Hash() string { return s.hash }

// File is the spec's file name.
func (s *Spec) File() string { return s.file }

// at locates a spec error: "file:line: key: ".
type at struct {
	file string
	root *yaml.Node
}

// errf reports an error at the key path (mapping keys and list indexes).
func (a at) errf(path []any, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", a.file, nodeLine(a.root, path), pathString(path), fmt.Sprintf(format, args...))
}

// nodeLine is the line of the deepest node of path present in root.
func nodeLine(root *yaml.Node, path []any) int {
	n := root
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line, next = n.Content[i].Line, n.Content[i+1]
				}
			}
			if next == nil {
				return line
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || k >= len(n.Content) {
				return line
			}
			n = n.Content[k]
			line = n.Line
		}
	}
	return line
}

func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch k := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		case int:
			fmt.Fprintf(&b, "[%d]", k)
		}
	}
	if b.Len() == 0 {
		return "spec"
	}
	return b.String()
}

// resolve makes a path in the spec relative to the spec's directory.
func (s *Spec) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.file), p)
}

// compile validates the decoded spec and resolves what it names, section
// by section, into its plan: its check* functions only check, its
// resolve* functions also load and set the resolved parts (server, models,
// refits, swept servers, stacking sequences).
func (s *resolved) compile(a at) (plan, error) {
	if err := checkName(a, []any{"name"}, s.Name, "give the experiment a name"); err != nil {
		return nil, err
	}
	server, err := s.resolveServer(a)
	if err != nil {
		return nil, err
	}
	cat, err := models.CatalogFor(server.Type)
	if err != nil {
		return nil, a.errf([]any{"server"}, "%v", err)
	}
	if err := s.checkOutputs(a); err != nil {
		return nil, err
	}
	if err := s.checkEnergy(a); err != nil {
		return nil, err
	}
	if s.Stacking != nil {
		if s.ModelUncertainty != nil {
			return nil, a.errf([]any{"model_uncertainty"}, "a stacking spec replays measured sequences under one model; model_uncertainty runs a trace spec's cells under refits")
		}
		if s.cluster != nil {
			return nil, a.errf([]any{"cluster"}, "a stacking spec runs on one GPU: give server: TYPE:1, not a cluster")
		}
		inter, err := models.InterferenceFor(server.Type)
		if err != nil {
			return nil, a.errf([]any{"server"}, "%v", err)
		}
		sp, err := s.resolveStacking(a, inter)
		if err != nil {
			return nil, err
		}
		return sp, nil
	}
	t := &tracePlan{resolved: s}
	if err := t.loadTraces(a, cat); err != nil {
		return nil, err
	}
	if err := s.checkSeeds(a); err != nil {
		return nil, err
	}
	if err := t.checkSweep(a); err != nil {
		return nil, err
	}
	labels, err := t.resolveConfigs(a)
	if err != nil {
		return nil, err
	}
	if err := t.resolveModelUncertainty(a); err != nil {
		return nil, err
	}
	if err := s.checkNormalize(a, labels); err != nil {
		return nil, err
	}
	if err := t.checkCells(a); err != nil {
		return nil, err
	}
	return t, nil
}

// maxName is the longest name (of a spec, trace or config) a spec may give:
// names become file and directory names.
const maxName = 100

// checkName checks a name of the spec or of one of its traces.
func checkName(a at, path []any, name, missing string) error {
	switch {
	case name == "":
		return a.errf(path, "missing: %s", missing)
	case len(name) > maxName:
		return a.errf(path, "%d characters: at most %d", len(name), maxName)
	case !specName.MatchString(name):
		return a.errf(path, "%q: use letters, digits, '.', '-' and '_'", name)
	}
	return nil
}

// loadTraces loads (or generates) every trace.
func (s *tracePlan) loadTraces(a at, cat *models.Catalog) error {
	if len(s.Traces) == 0 {
		return a.errf([]any{"traces"}, "missing: list at least one trace")
	}
	seen := map[string]int{}
	for i := range s.Traces {
		t, err := s.loadTrace(a, i, cat)
		if err != nil {
			return err
		}
		if prev, dup := seen[s.Traces[i].Name]; dup {
			return a.errf([]any{"traces", i, "name"}, "%q repeats traces[%d]; give each trace its own name", s.Traces[i].Name, prev)
		}
		seen[s.Traces[i].Name] = i
		s.trs = append(s.trs, t)
	}
	return nil
}

// checkSeeds checks that there are seeds and none repeats (in linear time:
// a spec may list a million).
func (s *Spec) checkSeeds(a at) error {
	if len(s.Seeds) == 0 {
		return a.errf([]any{"seeds"}, "missing: list at least one seed")
	}
	if len(s.Seeds) > maxCells {
		return a.errf([]any{"seeds"}, "%d seeds: at most %d cells per spec", len(s.Seeds), maxCells)
	}
	first := make(map[uint64]int, len(s.Seeds))
	for i, sd := range s.Seeds {
		if j, dup := first[sd]; dup {
			return a.errf([]any{"seeds", i}, "seed %d repeats seeds[%d]", sd, j)
		}
		first[sd] = i
	}
	return nil
}

// resolveConfigs checks every config's label, policy and model, loads the
// models (s.models), and returns the configs' indexes by label.
func (s *tracePlan) resolveConfigs(a at) (map[string]int, error) {
	if len(s.Configs) == 0 {
		return nil, a.errf([]any{"configs"}, "missing: list at least one config")
	}
	labels := map[string]int{}
	for i := range s.Configs {
		c := &s.Configs[i]
		if err := checkLabel(a, []any{"configs", i, "label"}, c.Label); err != nil {
			return nil, err
		}
		if prev, dup := labels[c.Label]; dup {
			return nil, a.errf([]any{"configs", i, "label"}, "%q repeats configs[%d]", c.Label, prev)
		}
		labels[c.Label] = i
		if c.Policy == "" {
			return nil, a.errf([]any{"configs", i, "policy"}, "missing: one of %s", strings.Join(registry.Names(), ", "))
		}
		if !slices.Contains(registry.Names(), c.Policy) {
			return nil, a.errf([]any{"configs", i, "policy"}, "unknown policy %q%s (known: %s)", c.Policy,
				suggest.DidYouMean(c.Policy, registry.Names()), strings.Join(registry.Names(), ", "))
		}
		mf, err := s.loadModel(a, i)
		if err != nil {
			return nil, err
		}
		s.models = append(s.models, mf)
	}
	return labels, nil
}

// checkLabel checks a config's label: any one line of UTF-8 text (a
// newline would break table.md and the CSVs' rows).
func checkLabel(a at, path []any, label string) error {
	switch {
	case label == "":
		return a.errf(path, "missing")
	case len(label) > maxName:
		return a.errf(path, "%d characters: at most %d", len(label), maxName)
	case strings.ContainsFunc(label, unicode.IsControl):
		return a.errf(path, "%q has a control character (a newline, a tab, ...): a label is one line of a table", label)
	case !utf8.ValidString(label):
		return a.errf(path, "%q is not UTF-8", label)
	}
	return nil
}

// resolveModelUncertainty checks model_uncertainty and loads its refits: a
// trace spec on one server whose configs run the GPU type's built-in
// model, and a number of refits the embedded set holds.
func (s *tracePlan) resolveModelUncertainty(a at) error {
	mu := s.ModelUncertainty
	if mu == nil {
		return nil
	}
	p := []any{"model_uncertainty"}
	if s.cluster != nil {
		return a.errf(p, "runs on a server (server: TYPE:COUNT); a cluster's GPU types each have their own model")
	}
	set, file, err := models.RefitsFor(s.server.Type)
	if err != nil {
		return a.errf([]any{"server"}, "model_uncertainty: %v", err)
	}
	if have := len(set.Refits) - 1; mu.Refits < 1 || mu.Refits > have {
		return a.errf(append(p, "refits"), "%d: want 1 to %d (the refits of %s)", mu.Refits, have, file)
	}
	for i, c := range s.Configs {
		if c.Model != "" {
			return a.errf([]any{"configs", i, "model"}, "%q: model_uncertainty refits the GPU type's built-in model; a config with its own model file cannot run under the refits", c.Model)
		}
	}
	for i := range s.Sweep {
		for k, v := range s.Sweep[i].Values {
			if srv, ok := s.swept[v]; ok && s.Sweep[i].Param == serverParam {
				if _, f, err := models.RefitsFor(srv.Type); err != nil || f != file {
					return a.errf([]any{"sweep", i, "values", k}, "server %q: model_uncertainty runs the refits of %s's model (%s); this GPU type runs another model", v, s.server.Type.Name, file)
				}
			}
		}
	}
	for r, params := range set.Refits[1 : mu.Refits+1] {
		m := &models.PressureModel{P: params}
		if err := s.checkSlowdown(m); err != nil {
			return a.errf(append(p, "refits"), "refit %d of %s: %v", r+1, file, err)
		}
		s.refits = append(s.refits, m)
	}
	if len(set.SteadySaturation) > 0 {
		s.refitSteady = set.SteadySaturation[1 : mu.Refits+1]
	}
	if len(set.DepthOverlap) > 0 {
		s.refitDepth = set.DepthOverlap[1 : mu.Refits+1]
	}
	s.refitFile = file
	return nil
}

// checkNormalize checks normalize and the table that needs it.
func (s *Spec) checkNormalize(a at, labels map[string]int) error {
	if s.Normalize != "" {
		n, ok := labels[s.Normalize]
		if !ok {
			return a.errf([]any{"normalize"}, "%q is not a config label (have %s)", s.Normalize, strings.Join(s.labels(), ", "))
		}
		if s.sweeps(n) {
			for i := range s.Configs {
				if !s.sweeps(i) {
					return a.errf([]any{"configs", i, "sweep"}, "config %q does not sweep but the normalizing config %q does", s.Configs[i].Label, s.Normalize)
				}
			}
		}
	}
	switch s.Table {
	case "", TablePerTrace:
	case TableNormalized:
		if s.Normalize == "" {
			return a.errf([]any{"table"}, "the normalized table needs normalize: the label of the config to normalize to")
		}
	default:
		return a.errf([]any{"table"}, "unknown table %q (want %s or %s)", s.Table, TablePerTrace, TableNormalized)
	}
	return nil
}

// cellCount counts the spec's cells without listing them, at most
// maxCells+1.
func (s *Spec) cellCount() int {
	grid := 1
	for i := range s.Sweep {
		grid = min(grid*s.Sweep[i].size(), maxCells+1)
	}
	n := 0
	for ci := range s.Configs {
		per := 1
		if s.sweeps(ci) {
			per = grid
		}
		n = min(n+per*len(s.Traces)*len(s.Seeds), maxCells+1)
	}
	if s.ModelUncertainty != nil {
		n = min(n*(1+max(s.ModelUncertainty.Refits, 0)), maxCells+1)
	}
	return n
}

// checkCells bounds the cells, then checks that every cell's parameters
// build its policy and truth: first each config alone, then at every sweep
// point, naming the axis at fault.
func (s *tracePlan) checkCells(a at) error {
	if n := s.cellCount(); n > maxCells {
		return a.errf(nil, "more than %d cells; at most %d per spec", maxCells, maxCells)
	}
	points := s.Points()
	for ci, c := range s.Configs {
		if _, err := s.cellRun(ci, nil); err != nil {
			path, given := []any{"configs", ci, "params"}, c.Params
			if pe := (*policies.ParamError)(nil); errors.As(err, &pe) && pe.Scope == sim.TruthScope {
				path, given = []any{"configs", ci, "truth"}, c.Truth
			}
			if len(given) == 0 {
				path = path[:2]
			}
			return a.errf(path, "%v", err)
		}
		if !s.sweeps(ci) {
			continue
		}
		for _, pt := range points {
			if _, err := s.cellRun(ci, pt); err != nil {
				if k, ok := pt.axisOf(err); ok {
					return a.errf([]any{"sweep", k}, "config %q (configs[%d]): %v", c.Label, ci, err)
				}
				return a.errf([]any{"configs", ci}, "at sweep point %s: %v", pt, err)
			}
		}
	}
	return nil
}

// checkEnergy checks that a spec asking for energy (energy: true, the
// energy figure) runs on GPUs with a power model, and not a stacking spec.
func (s *resolved) checkEnergy(a at) error {
	path := []any{"energy"}
	if i := slices.Index(s.Figures, plots.FigEnergy); i >= 0 {
		path = []any{"figures", i}
	} else if !s.Energy {
		return nil
	}
	if s.Stacking != nil {
		return a.errf(path, "a stacking spec meters no energy")
	}
	for _, t := range s.types() {
		if _, err := models.PowerFor(t); err != nil {
			return a.errf(path, "energy: %v", err)
		}
	}
	return nil
}

// checkOutputs checks the figures and their format.
func (s *Spec) checkOutputs(a at) error {
	if !slices.Contains(plotFormats, s.Plots) {
		return a.errf([]any{"plots"}, "%q: want svg, png or pdf", s.Plots)
	}
	if s.Stacking != nil && len(s.SweepFigures) > 0 {
		return a.errf([]any{"sweep_figures"}, "a stacking spec draws the thresholds figure; sweep figures need traces and configs")
	}
	if s.Stability && !s.Telemetry {
		return a.errf([]any{"stability"}, "needs telemetry: true (the cells' telemetry.csv)")
	}
	for i, f := range s.Figures {
		if !slices.Contains(plots.FigureNames, f) {
			return a.errf([]any{"figures", i}, "unknown figure %q (known: %s)", f, strings.Join(plots.FigureNames, ", "))
		}
		if j := slices.Index(s.Figures, f); j < i {
			return a.errf([]any{"figures", i}, "%q repeats figures[%d]", f, j)
		}
		if f == plots.FigSeeds && len(s.Seeds) < 2 {
			return a.errf([]any{"figures", i}, "%s shows the spread over seeds: give at least two seeds", f)
		}
		if file := plots.FigureFile(f); !slices.Contains(s.writes(), file) {
			return a.errf([]any{"figures", i}, "%s is drawn from %s, which this spec does not write (it writes %s)", f, file, strings.Join(s.writes(), ", "))
		}
	}
	return nil
}

// checkSweepFigures checks the sweep figures against the sweep: their
// axis, facet and held columns must be swept columns of the combined CSVs.
func (s *Spec) checkSweepFigures(a at) error {
	cols := sweepHeader(&Meta{Spec: s, Sweep: s.SweepParams()})
	names := map[string]int{}
	for i, f := range s.SweepFigures {
		p := func(k string) []any { return []any{"sweep_figures", i, k} }
		if err := f.Check(); err != nil {
			key, msg, _ := strings.Cut(err.Error(), ": ")
			return a.errf(p(key), "%s", msg)
		}
		if len(s.Sweep) == 0 {
			return a.errf([]any{"sweep_figures", i}, "the spec sweeps nothing: add a sweep")
		}
		if f.From == plots.SweepNormalized && s.Normalize == "" {
			return a.errf(p("from"), "normalized needs normalize: the label of the config to normalize to")
		}
		check := func(key, col string) error {
			if !slices.Contains(cols, col) {
				return a.errf(p(key), "%q is not a swept column (have %s)", col, strings.Join(cols, ", "))
			}
			return nil
		}
		if err := check("x", f.X); err != nil {
			return err
		}
		if f.Facet != "" {
			if err := check("facet", f.Facet); err != nil {
				return err
			}
		}
		for _, k := range slices.Sorted(maps.Keys(f.Hold)) {
			if err := check("hold", k); err != nil {
				return err
			}
		}
		if prev, dup := names[f.FileName()]; dup || slices.Contains(plots.FigureNames, f.FileName()) {
			return a.errf([]any{"sweep_figures", i}, "file name %q is taken (sweep_figures[%d] or a figure); give it a name", f.FileName(), prev)
		}
		names[f.FileName()] = i
	}
	return nil
}

// writes lists the files of a run's directory the figures may be drawn
// from.
func (s *Spec) writes() []string {
	if s.Stacking != nil {
		return []string{rundir.Thresholds}
	}
	w := []string{rundir.Cells, rundir.Jobs}
	if s.Normalize != "" {
		w = append(w, rundir.Normalized)
	}
	if s.Stability {
		w = append(w, rundir.Stability)
	}
	return w
}

// types lists the GPU types of the spec's server or cluster.
func (s *resolved) types() []models.GPUType {
	if s.cluster != nil {
		return s.cluster.Types
	}
	return []models.GPUType{s.server.Type}
}

// resolveServer resolves the spec's server or cluster (s.server, s.cluster).
func (s *resolved) resolveServer(a at) (models.Server, error) {
	switch {
	case s.Server != "" && s.Cluster != "":
		return models.Server{}, a.errf([]any{"cluster"}, "give server (TYPE:COUNT) or cluster (TYPE:GPUSxSERVERS,...), not both")
	case s.Cluster != "":
		c, err := s.parseCluster(s.Cluster)
		if err != nil {
			return models.Server{}, a.errf([]any{"cluster"}, "%v", err)
		}
		s.cluster, s.server = &c, c.Server()
		return s.server, nil
	case s.Server == "":
		return models.Server{}, a.errf([]any{"server"}, "missing: want TYPE:COUNT, e.g. a100-40gb:3 (or cluster: TYPE:GPUSxSERVERS, e.g. a100-40gb:8x16)")
	}
	srv := s.Server
	if typ, n, ok := strings.Cut(srv, ":"); ok && isYAMLFile(typ) {
		srv = s.resolve(typ) + ":" + n
	}
	server, err := models.ParseServer(srv)
	if err != nil {
		return models.Server{}, a.errf([]any{"server"}, "%v", err)
	}
	s.server = server
	return server, nil
}

// parseCluster parses a cluster string, its GPU type YAML files relative
// to the spec.
func (s *Spec) parseCluster(v string) (models.Cluster, error) {
	groups := strings.Split(v, ",")
	for i, g := range groups {
		if k := strings.LastIndex(g, ":"); k > 0 && isYAMLFile(g[:k]) {
			groups[i] = s.resolve(g[:k]) + g[k:]
		}
	}
	return models.ParseCluster(strings.Join(groups, ","))
}

// checkTrace checks trace t against the spec's server or cluster (cat: the
// server's or the cluster's first type's catalog).
func (s *resolved) checkTrace(t *traces.Trace, cat *models.Catalog) error {
	return assemble.CheckOn(t, s.server, s.cluster, cat)
}

func isYAMLFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// loadTrace loads or generates trace i and sets its default name.
func (s *resolved) loadTrace(a at, i int, cat *models.Catalog) (*traces.Trace, error) {
	ts := &s.Traces[i]
	p := func(k string) []any { return []any{"traces", i, k} }
	var t *traces.Trace
	switch {
	case ts.Trace != "" && ts.Like != "":
		return nil, a.errf(p("like"), "give either trace (a built-in or a file) or like (a generator), not both")
	case ts.Trace != "":
		if ts.Jobs != 0 || ts.Seed != 0 || ts.MaxGPUs != 0 {
			return nil, a.errf(p("trace"), "jobs, seed and max_gpus go with like (a generator), not with trace")
		}
		src := ts.Trace
		if !slices.Contains(strings.Split(traces.BuiltinNames(), ", "), src) {
			src = s.resolve(src)
		}
		var err error
		if t, err = traces.Load(src); err != nil {
			return nil, a.errf(p("trace"), "%v", err)
		}
		if ts.Name == "" {
			ts.Name = strings.TrimSuffix(filepath.Base(ts.Trace), filepath.Ext(ts.Trace))
		}
	case ts.Like != "":
		if ts.Jobs == 0 {
			return nil, a.errf(p("jobs"), "missing: like needs the number of jobs to generate, 1..10000000")
		}
		if ts.Jobs < 1 || ts.Jobs > 10_000_000 {
			return nil, a.errf(p("jobs"), "%d: want a number of jobs in 1..10000000", ts.Jobs)
		}
		maxG := cmpOr(ts.MaxGPUs, 2)
		log, err := traces.GenerateLike(ts.Like, ts.Jobs, ts.Seed, maxG)
		if err != nil {
			return nil, a.errf(p("like"), "%v", err)
		}
		if ts.Name == "" {
			ts.Name = fmt.Sprintf("%s-%d-s%d", ts.Like, ts.Jobs, ts.Seed)
		}
		exact, mapping := traces.MapsExactly(cat, maxG), traces.Exact
		if s.cluster != nil && !exact {
			mapping = traces.Dividing // a trace for clusters, as aegis trace gen writes it
		}
		if t, err = traces.MapTrace(ts.Name, log.Jobs, cat, mapping); err != nil {
			if s.cluster == nil && !exact {
				return nil, a.errf(p("max_gpus"), "%d: %v; such a trace runs on a cluster (cluster: TYPE:GPUSxSERVERS instead of server:)", maxG, err)
			}
			return nil, a.errf(p("like"), "%v", err)
		}
	default:
		return nil, a.errf([]any{"traces", i}, "give trace (a built-in: %s, or a file) or like (philly, saturn or venus) with jobs and seed", traces.BuiltinNames())
	}
	if err := checkName(a, p("name"), ts.Name, "name the trace"); err != nil {
		return nil, err
	}
	if err := s.checkTrace(t, cat); err != nil {
		return nil, a.errf(p("trace"), "%v", err)
	}
	return t, nil
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// loadModel reads config i's interference model.
func (s *resolved) loadModel(a at, i int) (*modelFile, error) {
	c := &s.Configs[i]
	mf := &modelFile{}
	if c.Model == "" {
		inter, err := models.InterferenceFor(s.server.Type)
		if err != nil {
			return nil, a.errf([]any{"configs", i}, "%v", err)
		}
		mf.inter = inter
	} else {
		p := s.resolve(c.Model)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, a.errf([]any{"configs", i, "model"}, "%v", err)
		}
		inter, err := models.LoadInterference(p)
		if err != nil {
			return nil, a.errf([]any{"configs", i, "model"}, "%v", err)
		}
		sum := sha256.Sum256(data)
		mf.inter, mf.path, mf.hash = inter, c.Model, hex.EncodeToString(sum[:])
	}
	inter, key := mf.inter, "model"
	if c.NWayExponent != nil {
		var err error
		if inter, err = withExponent(mf.inter, *c.NWayExponent); err != nil {
			return nil, a.errf([]any{"configs", i, "nway_exponent"}, "%v", err)
		}
		key = "nway_exponent"
	}
	if err := s.checkSlowdown(inter); err != nil {
		if c.Model == "" && c.NWayExponent == nil {
			return nil, a.errf([]any{"server"}, "%v", err)
		}
		return nil, a.errf([]any{"configs", i, key}, "%v", err)
	}
	return mf, nil
}

// checkSlowdown checks an interference model against the catalog of every
// GPU type of the spec's server or cluster (models.CheckSlowdown).
func (s *resolved) checkSlowdown(m models.Interference) error {
	for _, t := range s.types() {
		cat, err := models.CatalogFor(t)
		if err != nil {
			return err
		}
		if err := models.CheckSlowdown(m, cat); err != nil {
			return fmt.Errorf("on %s: %w", t.Name, err)
		}
	}
	return nil
}

// withExponent returns m with the N-way exponent ρ set.
func withExponent(m models.Interference, rho float64) (models.Interference, error) {
	pm, ok := m.(*models.PressureModel)
	if !ok {
		return nil, fmt.Errorf("the interference model %T has no N-way exponent", m)
	}
	if !(rho > 0 && rho <= 10) || math.IsInf(rho, 0) {
		return nil, fmt.Errorf("ρ %v: want a number in (0, 10]", rho)
	}
	cp := *pm
	cp.P.NWayExponent = rho
	return &cp, nil
}

// Sweep parameter namespaces.
const (
	truthPrefix  = "truth."
	modelRho     = "model.nway_exponent"
	serverParam  = "server"
	clusterParam = "cluster"
)

// component splits a tuple component's name ("thresholds.1": thresholds
// and 1); ok is false for any other parameter (truth.noise, server.gpus).
func component(param string) (tuple, k string, ok bool) {
	i := strings.LastIndexByte(param, '.')
	if i <= 0 || i == len(param)-1 {
		return "", "", false
	}
	for _, r := range param[i+1:] {
		if r < '0' || r > '9' {
			return "", "", false
		}
	}
	return param[:i], param[i+1:], true
}

// checkSweep checks the axes' form; values are checked per cell.
func (s *tracePlan) checkSweep(a at) error {
	seen := map[string]int{}
	for i := range s.Sweep {
		ax := &s.Sweep[i]
		p := func(k string) []any { return []any{"sweep", i, k} }
		if ax.Param == "" {
			return a.errf(p("param"), "missing: a policy parameter, truth.KEY, %s, server or cluster", modelRho)
		}
		if strings.HasPrefix(ax.Param, "model.") && ax.Param != modelRho {
			return a.errf(p("param"), "%q: the only model parameter is %s", ax.Param, modelRho)
		}
		if prev, dup := seen[ax.Param]; dup {
			return a.errf(p("param"), "%q repeats sweep[%d]", ax.Param, prev)
		}
		if tuple, k, ok := component(ax.Param); ok {
			return a.errf(p("param"), "%q is component %s of the tuple parameter %s, which is swept whole: param: %s with "+
				"product: one list per component, e.g. [[0.4, 0.6], [0.35], [0.5]] for τ1 in 0.4, 0.6 (cells.csv then has %s, "+
				"and aegis plot --sweep %s draws against it)", ax.Param, k, tuple, tuple, ax.Param, ax.Param)
		}
		seen[ax.Param] = i
		if ax.Param == serverParam {
			if err := s.resolveSweptServers(a, i); err != nil {
				return err
			}
		}
		if ax.Param == clusterParam {
			if err := s.resolveSweptClusters(a, i); err != nil {
				return err
			}
		}
		switch {
		case len(ax.Values) > 0 && len(ax.Product) > 0:
			return a.errf(p("product"), "give values or product, not both")
		case len(ax.Product) > 0:
			for k, comp := range ax.Product {
				if len(comp) == 0 {
					return a.errf([]any{"sweep", i, "product", k}, "empty list")
				}
			}
		case len(ax.Values) == 0:
			return a.errf(p("values"), "missing: list the values to sweep")
		}
		if ax.size() > maxCells {
			return a.errf(p("product"), "more than %d values", maxCells)
		}
	}
	// Bound the grid before expanding it.
	n := max(len(s.Seeds), 1) * max(len(s.Traces), 1)
	for i := range s.Sweep {
		if n *= s.Sweep[i].size(); n > maxCells {
			return a.errf([]any{"sweep"}, "the grid has more than %d cells", maxCells)
		}
	}
	for i := range s.Sweep {
		seenV := map[string]bool{}
		for _, v := range s.Sweep[i].values() {
			if seenV[v] {
				return a.errf([]any{"sweep", i, "values"}, "value %q given twice", v)
			}
			seenV[v] = true
		}
	}
	return s.checkSweepFigures(a)
}

// resolveSweptServers resolves the values of sweep axis i, a server sweep:
// each must parse, be of a GPU type whose workload catalog is the spec's
// server's (the traces are mapped onto that one: a100-40gb and h200-141gb
// share it), whose interference model keeps slowdowns in bounds, and fit
// every trace.
func (s *tracePlan) resolveSweptServers(a at, i int) error {
	ax := &s.Sweep[i]
	if s.cluster != nil {
		return a.errf([]any{"sweep", i, "param"}, "a cluster spec sweeps its cluster: param: cluster")
	}
	if len(ax.Product) > 0 {
		return a.errf([]any{"sweep", i, "product"}, "list the servers as values (TYPE:COUNT)")
	}
	cat, err := models.CatalogFor(s.server.Type)
	if err != nil {
		return a.errf([]any{"server"}, "%v", err)
	}
	s.swept = map[string]models.Server{}
	for k, v := range ax.Values {
		p := []any{"sweep", i, "values", k}
		srv := v
		if typ, n, ok := strings.Cut(v, ":"); ok && isYAMLFile(typ) {
			srv = s.resolve(typ) + ":" + n
		}
		server, err := models.ParseServer(srv)
		if err != nil {
			return a.errf(p, "%v", err)
		}
		if server.Type.Name != s.server.Type.Name {
			if err := sameCatalog(server.Type, s.server.Type, cat); err != nil {
				return a.errf(p, "server %q: %v", v, err)
			}
		}
		for ti, t := range s.trs {
			if err := assemble.CheckOn(t, server, nil, cat); err != nil {
				return a.errf(p, "server %q: trace %q (traces[%d]): %v", v, s.Traces[ti].Name, ti, err)
			}
		}
		s.swept[v] = server
	}
	return nil
}

// sameCatalog checks that GPU type t's workload catalog is cat, spec's
// (by content), and that t's own interference model keeps slowdowns in
// bounds on it.
func sameCatalog(t, spec models.GPUType, cat *models.Catalog) error {
	other, err := models.CatalogFor(t)
	if err != nil {
		return err
	}
	h1, err1 := catalogHash(other)
	h2, err2 := catalogHash(cat)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if h1 != h2 {
		return fmt.Errorf("GPU type %s has another workload catalog than the spec's server's %s, onto which the traces are mapped "+
			"(a server sweep varies the GPU count, or the GPU type among types of one catalog)", t.Name, spec.Name)
	}
	inter, err := models.InterferenceFor(t)
	if err != nil {
		return err
	}
	if err := models.CheckSlowdown(inter, cat); err != nil {
		return fmt.Errorf("GPU type %s: %w", t.Name, err)
	}
	return nil
}

// resolveSweptClusters resolves the values of sweep axis i, a cluster sweep
// of a cluster spec: each must parse, have GPU types whose workload
// catalog is the spec's cluster's first type's (onto which the traces are
// mapped) and fit every trace.
func (s *tracePlan) resolveSweptClusters(a at, i int) error {
	ax := &s.Sweep[i]
	if s.cluster == nil {
		return a.errf([]any{"sweep", i, "param"}, "only a cluster spec (cluster: instead of server:) sweeps the cluster; a server spec sweeps param: server")
	}
	if len(ax.Product) > 0 {
		return a.errf([]any{"sweep", i, "product"}, "list the clusters as values (TYPE:GPUSxSERVERS[,...])")
	}
	first := s.cluster.Types[0]
	cat, err := models.CatalogFor(first)
	if err != nil {
		return a.errf([]any{"cluster"}, "%v", err)
	}
	s.sweptClusters = map[string]models.Cluster{}
	for k, v := range ax.Values {
		p := []any{"sweep", i, "values", k}
		c, err := s.parseCluster(v)
		if err != nil {
			return a.errf(p, "%v", err)
		}
		for _, t := range c.Types {
			if t.Name == first.Name {
				continue
			}
			if err := sameCatalog(t, first, cat); err != nil {
				return a.errf(p, "cluster %q: %v", v, err)
			}
		}
		for ti, t := range s.trs {
			if err := assemble.CheckOn(t, c.Server(), &c, cat); err != nil {
				return a.errf(p, "cluster %q: trace %q (traces[%d]): %v", v, s.Traces[ti].Name, ti, err)
			}
		}
		s.sweptClusters[v] = c
	}
	return nil
}

// pointCluster is the cluster point pt sweeps to (ok false: the spec's).
func (s *tracePlan) pointCluster(pt Point) (c models.Cluster, ok bool) {
	for _, kv := range pt {
		if kv.Param == clusterParam {
			c, ok = s.sweptClusters[kv.Value]
		}
	}
	return c, ok
}

// pointServer is the server point pt sweeps to (ok false: the spec's).
func (s *tracePlan) pointServer(pt Point) (srv models.Server, ok bool) {
	for _, kv := range pt {
		if kv.Param == serverParam {
			srv, ok = s.swept[kv.Value]
		}
	}
	return srv, ok
}

// size is the number of an axis's values, at most maxCells+1.
func (ax *Axis) size() int {
	if len(ax.Product) == 0 {
		return len(ax.Values)
	}
	n := 1
	for _, comp := range ax.Product {
		n *= len(comp)
		if n > maxCells {
			return maxCells + 1
		}
	}
	return n
}

// Components is the number of components of a tuple axis, whose values
// are comma-separated lists of equal length (e.g. thresholds τ1,τ2,τ3):
// the number of Product's lists, or of every value's parts; 0 for an axis
// of plain values. The combined CSVs give each component its own column.
func (ax *Axis) Components() int {
	if len(ax.Product) > 0 {
		if len(ax.Product) < 2 {
			return 0
		}
		return len(ax.Product)
	}
	n := 0
	for i, v := range ax.Values {
		k := strings.Count(v, ",") + 1
		if k < 2 || i > 0 && k != n {
			return 0
		}
		n = k
	}
	return n
}

// values lists an axis's values: Values, or Product's combinations joined
// with commas (the last component varying fastest).
func (ax *Axis) values() []string {
	if len(ax.Product) == 0 {
		return ax.Values
	}
	out := []string{""}
	for k, comp := range ax.Product {
		var next []string
		for _, prefix := range out {
			for _, v := range comp {
				if k > 0 {
					next = append(next, prefix+","+strings.TrimSpace(v))
				} else {
					next = append(next, strings.TrimSpace(v))
				}
			}
		}
		out = next
	}
	return out
}

// Point is one sweep point: a value per axis, in the spec's axis order.
type Point []Setting

// Setting is one parameter's value.
type Setting struct {
	Param string `json:"param"`
	Value string `json:"value"`
}

func (p Point) String() string {
	var s []string
	for _, kv := range p {
		s = append(s, kv.Param+"="+kv.Value)
	}
	return strings.Join(s, " ")
}

// axisError is an error of one sweep axis's value (e.g. a ρ that is not a
// number).
type axisError struct {
	param string // the axis's Setting.Param
	err   error
}

func (e *axisError) Error() string { return e.err.Error() }
func (e *axisError) Unwrap() error { return e.err }

// axisOf finds the axis of p whose value err is about: an *axisError's, or
// the axis that sets a *policies.ParamError's key (a truth setting's
// truth.KEY). When err names none, a point of one axis blames that axis.
func (p Point) axisOf(err error) (int, bool) {
	param := ""
	var ae *axisError
	var pe *policies.ParamError
	switch {
	case errors.As(err, &ae):
		param = ae.param
	case errors.As(err, &pe) && pe.Scope == sim.TruthScope:
		param = truthPrefix + pe.Key
	case errors.As(err, &pe):
		param = pe.Key
	case len(p) == 1:
		return 0, true
	}
	i := slices.IndexFunc(p, func(kv Setting) bool { return kv.Param == param })
	return i, i >= 0
}

// Points lists the sweep's points, the last axis varying fastest; one
// empty point when there is no sweep.
func (s *Spec) Points() []Point {
	pts := []Point{nil}
	for i := range s.Sweep {
		ax := &s.Sweep[i]
		var next []Point
		for _, p := range pts {
			for _, v := range ax.values() {
				q := append(slices.Clip(p), Setting{ax.Param, v})
				next = append(next, q)
			}
		}
		pts = next
	}
	return pts
}

// Warnings lists what in the spec is valid but likely not meant: a config
// that sets a parameter (or truth setting) that a sweep axis varies, at
// every sweep point (the swept values replace the config's).
func (s *Spec) Warnings() []string {
	var out []string
	for i, c := range s.Configs {
		if !s.sweeps(i) {
			continue
		}
		for k, ax := range s.Sweep {
			key, v, ok := ax.Param, "", false
			if t, isTruth := strings.CutPrefix(key, truthPrefix); isTruth {
				v, ok = c.Truth[t]
				key = "truth." + t
			} else {
				v, ok = c.Params[key]
				key = "params." + key
			}
			if ok {
				out = append(out, fmt.Sprintf("spec %s: configs[%d] (%s) sets %s=%s, but sweep[%d] varies %s: the swept values replace it in every cell (set sweep: false on the config to run it once as given)",
					s.Name, i, c.Label, key, v, k, ax.Param))
			}
		}
	}
	return out
}

// SweepParams lists the swept parameters in axis order.
func (s *Spec) SweepParams() []string {
	var out []string
	for _, ax := range s.Sweep {
		out = append(out, ax.Param)
	}
	return out
}

// sweeps reports whether config i runs at every sweep point.
func (s *Spec) sweeps(i int) bool {
	return len(s.Sweep) > 0 && (s.Configs[i].Sweep == nil || *s.Configs[i].Sweep)
}

func (s *Spec) labels() []string {
	var out []string
	for _, c := range s.Configs {
		out = append(out, c.Label)
	}
	return out
}

// Cell is one simulation of a spec: a trace, a config, a sweep point and a
// seed.
type Cell struct {
	Index  int    `json:"index"`
	ID     string `json:"id"` // directory name under cells/
	Trace  string `json:"trace"`
	Config string `json:"config"`
	Policy string `json:"policy"`
	// Point is the sweep point (nil for a config that does not sweep).
	Point Point  `json:"point,omitempty"`
	Seed  uint64 `json:"seed"`
	// Refit is the ModelUncertainty refit the cell runs under (0: the
	// model as calibrated).
	Refit int `json:"refit,omitempty"`
	// Key is the hash of everything that determines the cell's outputs
	// (set by RunPlan; see keyInputs).
	Key string `json:"key,omitempty"`

	trace, config, point int
}

// cells expands a trace spec: trace, config, sweep point, seed, then the
// same under each refit of model_uncertainty.
func (s *tracePlan) cells() []Cell {
	var cells []Cell
	points := s.Points()
	for r := range 1 + len(s.refits) {
		suffix := ""
		if r > 0 {
			suffix = fmt.Sprintf(".m%02d", r)
		}
		for ti, ts := range s.Traces {
			for ci, c := range s.Configs {
				pts := points
				if !s.sweeps(ci) {
					pts = []Point{nil}
				}
				for pi, pt := range pts {
					for _, seed := range s.Seeds {
						id := cellDir(ts.Name) + "." + cellDir(c.Label) + pointDir(pt, pi) + ".s" + strconv.FormatUint(seed, 10) + suffix
						cells = append(cells, Cell{Index: len(cells), ID: id, Trace: ts.Name, Config: c.Label,
							Policy: c.Policy, Point: pt, Seed: seed, Refit: r, trace: ti, config: ci, point: pi})
					}
				}
			}
		}
	}
	// Labels made file-safe may collide; number the later ones.
	seen := map[string]bool{}
	for i := range cells {
		id := cells[i].ID
		for k := 2; seen[cells[i].ID]; k++ {
			cells[i].ID = id + "-" + strconv.Itoa(k)
		}
		seen[cells[i].ID] = true
	}
	return cells
}

// cellDir makes a label safe as part of a file name.
func cellDir(label string) string { return safeName(label, "-_") }

// safeName replaces every byte of s but ASCII letters, digits and the
// bytes of also by '_'.
func safeName(s, also string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(also, c) >= 0) {
			b[i] = '_'
		}
	}
	return string(b)
}

// maxPointDir bounds the sweep point's part of a cell directory's name.
const maxPointDir = 120

// pointDir is the sweep point's part of a cell directory's name: "" for no
// point, else "." and the point's settings by value, joined by '+' (e.g.
// ".hold=10s+thresholds=0.5,0.35,0.5"), made file-safe; ".pI" (I the
// point's index) when that would be too long for a file name.
func pointDir(pt Point, i int) string {
	if pt == nil {
		return ""
	}
	var parts []string
	for _, kv := range pt {
		parts = append(parts, kv.Param+"="+kv.Value)
	}
	s := safeName(strings.Join(parts, "+"), "-_.,=+")
	if len(s) > maxPointDir {
		return ".p" + strconv.Itoa(i)
	}
	return "." + s
}

// cellRun builds the run of config ci at sweep point pt (trace and seed
// left to the caller), checking the policy's parameters on the server.
func (s *tracePlan) cellRun(ci int, pt Point) (assemble.Run, error) { return s.refitRun(ci, pt, 0) }

// runOf is cell c's run (its config, sweep point and refit).
func (s *tracePlan) runOf(c Cell) (assemble.Run, error) {
	return s.refitRun(c.config, c.Point, c.Refit)
}

// refitRun is cellRun under ModelUncertainty's refit r (0: the model as
// calibrated).
func (s *tracePlan) refitRun(ci int, pt Point, r int) (assemble.Run, error) {
	c := &s.Configs[ci]
	params := map[string]string{}
	truth := map[string]string{}
	for k, v := range c.Params {
		params[k] = v
	}
	for k, v := range c.Truth {
		truth[k] = v
	}
	server, cl := s.server, s.cluster
	if srv, ok := s.pointServer(pt); ok {
		server = srv
	}
	if pc, ok := s.pointCluster(pt); ok {
		server, cl = pc.Server(), &pc
	}
	inter := s.models[ci].inter
	switch {
	case r > 0:
		inter = s.refits[r-1]
	case c.Model == "" && server.Type.Name != s.server.Type.Name:
		// A swept server of another GPU type: that type's model.
		var err error
		if inter, err = models.InterferenceFor(server.Type); err != nil {
			return assemble.Run{}, err
		}
	}
	// A model file or ρ replaces the model of every GPU type of a cluster.
	ownModel := c.NWayExponent != nil
	if c.NWayExponent != nil {
		var err error
		if inter, err = withExponent(inter, *c.NWayExponent); err != nil {
			return assemble.Run{}, err
		}
	}
	for _, kv := range pt {
		switch {
		case strings.HasPrefix(kv.Param, truthPrefix):
			truth[strings.TrimPrefix(kv.Param, truthPrefix)] = kv.Value
		case kv.Param == serverParam || kv.Param == clusterParam:
			// pointServer, pointCluster above
		case kv.Param == modelRho:
			ownModel = true
			rho, err := strconv.ParseFloat(kv.Value, 64)
			if err != nil {
				return assemble.Run{}, &axisError{kv.Param, fmt.Errorf("%s=%q: not a number", kv.Param, kv.Value)}
			}
			if inter, err = withExponent(inter, rho); err != nil {
				return assemble.Run{}, &axisError{kv.Param, fmt.Errorf("%s: %w", kv.Param, err)}
			}
			if err := s.checkSlowdown(inter); err != nil {
				return assemble.Run{}, &axisError{kv.Param, fmt.Errorf("%s=%s: %w", kv.Param, kv.Value, err)}
			}
		default:
			params[kv.Param] = kv.Value
		}
	}
	if cl != nil && cl.Mixed() && c.Model == "" && !ownModel {
		inter = nil // each GPU type's own model
	}
	tr, err := sim.ParseTruth(truth)
	if err != nil {
		return assemble.Run{}, err
	}
	run := assemble.Run{Server: server, Cluster: cl, Policy: c.Policy, Params: params, Truth: &tr, Interference: inter}
	if r > 0 && (len(s.refitSteady) > 0 || len(s.refitDepth) > 0) {
		tel, err := models.TelemetryFor(server.Type)
		if err != nil {
			return assemble.Run{}, err
		}
		if len(s.refitSteady) > 0 {
			tel.SteadySaturation = s.refitSteady[r-1]
		}
		if len(s.refitDepth) > 0 {
			tel.DepthOverlap = s.refitDepth[r-1]
		}
		run.Combine = &tel
	}
	return run, run.Check()
}

// truthSettings are a cell's truth settings as given (config, then sweep).
func (s *Spec) truthSettings(c Cell) map[string]string {
	m := map[string]string{}
	if c.config < len(s.Configs) {
		for k, v := range s.Configs[c.config].Truth {
			m[k] = v
		}
	}
	for _, kv := range c.Point {
		if strings.HasPrefix(kv.Param, truthPrefix) {
			m[strings.TrimPrefix(kv.Param, truthPrefix)] = kv.Value
		}
	}
	return m
}
