package models

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// GPUType describes a GPU model as the simulator sees it.
type GPUType struct {
	Name      string
	MemoryMiB float64
	// Pressure reports whether DCGM profiling metrics (SMACT, SMOCC, DRAMA)
	// are available; without them only nvidia-smi utilization is.
	Pressure bool
	// CatalogFile, when set, is a workload catalog (derived CSV format) of
	// solo times and peaks measured on this type; see CatalogFor.
	CatalogFile string
	// InterferenceFile, when set, is a fitted interference model for this
	// type (`aegis calibrate --out`); see InterferenceFor.
	InterferenceFile string
	// SpeedsFile, when set, gives the GPUs of a server of this type speed
	// classes (a YAML file in the Speeds format); see SpeedsFor.
	SpeedsFile string
	// PowerFile, when set, is a fitted power model for this type
	// (`aegis calibrate power --out`); see PowerFor.
	PowerFile string
}

// GPU types. Capacities are the usable MiB nvidia-smi reports.
var gpuTypes = map[string]GPUType{
	"a100-40gb":   {Name: "a100-40gb", MemoryMiB: 40960, Pressure: true},
	"legacy-11gb": {Name: "legacy-11gb", MemoryMiB: 11264, Pressure: false},
	"h200-141gb":  {Name: "h200-141gb", MemoryMiB: 143771, Pressure: true},
}

// LookupGPU returns a built-in GPU type by name.
func LookupGPU(name string) (GPUType, error) {
	t, ok := gpuTypes[strings.ToLower(name)]
	if !ok {
		return GPUType{}, fmt.Errorf("unknown GPU type %q (known: %s)", name, strings.Join(GPUTypeNames(), ", "))
	}
	return t, nil
}

// GPUTypeNames lists the built-in GPU types.
func GPUTypeNames() []string {
	var s []string
	for n := range gpuTypes {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}

// Server is a homogeneous multi-GPU server.
type Server struct {
	Type GPUType
	GPUs int
}

// ParseServer parses "TYPE:COUNT", e.g. "a100-40gb:3", where TYPE is a
// built-in GPU type or a GPU type YAML file (see loadGPUType), e.g.
// "my-gpu.yaml:8".
func ParseServer(s string) (Server, error) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return Server{}, fmt.Errorf("server %q: want TYPE:COUNT, e.g. a100-40gb:3", s)
	}
	name, n := s[:i], s[i+1:]
	if ext := strings.ToLower(filepath.Ext(name)); strings.Contains(name, ":") && ext != ".yaml" && ext != ".yml" {
		return Server{}, fmt.Errorf("server %q: want TYPE:COUNT with one colon, e.g. a100-40gb:3", s)
	}
	t, err := ResolveGPUType(name)
	if err != nil {
		return Server{}, fmt.Errorf("server %q: %w", s, err)
	}
	var count int
	if _, err := fmt.Sscanf(n, "%d", &count); err != nil || count < 1 || count > 1024 || fmt.Sprint(count) != n {
		return Server{}, fmt.Errorf("server %q: GPU count %q is not a whole number in 1..1024", s, n)
	}
	return Server{Type: t, GPUs: count}, nil
}

// ResolveGPUType returns a built-in GPU type by name, or reads a GPU type
// YAML file when the name ends in .yaml or .yml.
func ResolveGPUType(name string) (GPUType, error) {
	if ext := strings.ToLower(filepath.Ext(name)); ext == ".yaml" || ext == ".yml" {
		return loadGPUType(name)
	}
	return LookupGPU(name)
}

func (s Server) String() string { return fmt.Sprintf("%s:%d", s.Type.Name, s.GPUs) }
