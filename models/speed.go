package models

import (
	_ "embed"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/aegis-sched/aegis/internal/strictyaml"
)

// Speeds are the speed classes of a server whose GPUs do not all run a
// workload at the speed its catalog profile was measured at: the legacy
// 8 × 11 GB server mixes two GPU generations, and its GPUs 4–7 run some
// workloads up to 3.7 × slower than GPUs 0–3, where the solo profiles were
// taken (and where its Exclusive runs still ran some workloads up to 20 %
// faster than profiled). A GPU in no class runs every workload at its
// profiled speed.
type Speeds struct {
	// Source names the measurements the factors were fitted on.
	Source  string       `yaml:"source" json:"source"`
	Classes []SpeedClass `yaml:"classes" json:"classes"`
}

// SpeedClass is a set of GPUs, by index within their server, that run
// workloads at other than their profiled speed, by a factor on their solo
// time.
type SpeedClass struct {
	Name string `yaml:"name" json:"name"`
	GPUs []int  `yaml:"gpus" json:"gpus"`
	// Factors holds each workload's stretch on these GPUs (its solo time
	// there over its profiled solo time), by catalog workload ID.
	Factors map[string]float64 `yaml:"factors" json:"factors"`
	// UtilSlope gives the stretch of a workload not in Factors from its
	// solo nvidia-smi utilization u (a fraction): exp(UtilSlope·u).
	UtilSlope float64 `yaml:"util_slope" json:"util_slope"`
	// GPUFactors, when set, stretch every workload further on one GPU of
	// the class, by index (a GPU not listed: 1): the class's GPUs do not
	// all run at one speed (FitSpeeds keeps them only where they lower the
	// cross-validated error).
	GPUFactors map[int]float64 `yaml:"gpu_factors,omitempty" json:"gpu_factors,omitempty"`
	// Fit records how the factors were obtained (informational).
	Fit *SpeedFitRecord `yaml:"fit,omitempty" json:"fit,omitempty"`
}

// SpeedFitRecord documents a speed class's fit: the data and its errors on
// the execution time of the jobs on the class's GPUs (fractions).
type SpeedFitRecord struct {
	Jobs int `yaml:"jobs" json:"jobs"`
	// LeaveOneJobOut is the error of predicting each job on the class's
	// GPUs from the other jobs (its program's factor, and the GPU factors
	// if any, refitted without it).
	LeaveOneJobOut APE `yaml:"leave_one_job_out" json:"leave_one_job_out"`
	// OneSpeedLeaveOneJobOut is LeaveOneJobOut without GPU factors (every
	// GPU of the class at one speed), the alternative they had to beat.
	OneSpeedLeaveOneJobOut APE `yaml:"one_speed_leave_one_job_out" json:"one_speed_leave_one_job_out"`
	// LeaveOneProgramOut is the error on workloads never seen on the
	// class's GPUs: each program (model, data set and batch size) predicted by the
	// utilization slope fitted without it.
	LeaveOneProgramOut APE `yaml:"leave_one_program_out" json:"leave_one_program_out"`
	// None is the error of assuming every GPU runs at the profiled speed.
	None APE `yaml:"none" json:"none"`
}

// Factor is the stretch on a job of workload w's solo time on the GPU at
// index slot within its server: 1 unless a class holds the slot. A nil
// Speeds runs every GPU at the profiled speed.
func (s *Speeds) Factor(w *Workload, slot int) float64 {
	if s == nil {
		return 1
	}
	for i := range s.Classes {
		c := &s.Classes[i]
		if !slices.Contains(c.GPUs, slot) {
			continue
		}
		g := 1.0
		if f, ok := c.GPUFactors[slot]; ok {
			g = f
		}
		if f, ok := c.Factors[w.ID]; ok {
			return f * g
		}
		return math.Exp(c.UtilSlope*w.UtilPct()/100) * g
	}
	return 1
}

// ReadSpeeds parses and checks a speed-class file (see Speeds); errors name
// the file and line.
func ReadSpeeds(data []byte, name string) (*Speeds, error) {
	var s Speeds
	root, err := strictyaml.Decode(data, name, &s)
	if err != nil {
		return nil, err
	}
	if len(s.Classes) == 0 {
		return nil, fmt.Errorf("%s:%d: classes: want at least one speed class", name, strictyaml.KeyLine(root, "classes"))
	}
	seen := map[int]string{}
	for i, c := range s.Classes {
		at := strictyaml.KeyLine(root, "classes")
		if c.Name == "" {
			return nil, fmt.Errorf("%s:%d: classes[%d].name: empty", name, at, i)
		}
		if len(c.GPUs) == 0 {
			return nil, fmt.Errorf("%s:%d: classes[%d] (%s).gpus: want at least one GPU index", name, at, i, c.Name)
		}
		for _, g := range c.GPUs {
			if g < 0 || g > 1023 {
				return nil, fmt.Errorf("%s:%d: classes[%d] (%s).gpus: index %d is not in 0..1023", name, at, i, c.Name, g)
			}
			if o, dup := seen[g]; dup {
				return nil, fmt.Errorf("%s:%d: classes[%d] (%s).gpus: GPU %d is also in class %s", name, at, i, c.Name, g, o)
			}
			seen[g] = c.Name
		}
		if !(math.Abs(c.UtilSlope) <= 10) {
			return nil, fmt.Errorf("%s:%d: classes[%d] (%s).util_slope: %v is not a finite number within ±10", name, at, i, c.Name, c.UtilSlope)
		}
		for _, id := range sortedKeys(c.Factors) {
			if f := c.Factors[id]; !(f > 0 && f <= 100) {
				return nil, fmt.Errorf("%s:%d: classes[%d] (%s).factors.%s: %v is not a factor in (0, 100]", name, at, i, c.Name, id, f)
			}
		}
		for _, g := range slices.Sorted(maps.Keys(c.GPUFactors)) {
			if !slices.Contains(c.GPUs, g) {
				return nil, fmt.Errorf("%s:%d: classes[%d] (%s).gpu_factors: GPU %d is not one of the class's gpus %v", name, at, i, c.Name, g, c.GPUs)
			}
			if f := c.GPUFactors[g]; !(f > 0 && f <= 100) {
				return nil, fmt.Errorf("%s:%d: classes[%d] (%s).gpu_factors.%d: %v is not a factor in (0, 100]", name, at, i, c.Name, g, f)
			}
		}
	}
	return &s, nil
}

// WriteSpeeds writes s as YAML preceded by '#' comment lines.
func WriteSpeeds(w io.Writer, s *Speeds, comment string) error {
	return strictyaml.Write(w, s, comment)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

//go:embed data/speeds_legacy11gb.yaml
var speedsLegacyYAML []byte

// LegacySpeeds are the embedded speed classes of the legacy 8 × 11 GB
// server, fitted by FitSpeeds on its measured Exclusive runs
// (models/data/speeds_legacy11gb.yaml). Treat them as read-only.
func LegacySpeeds() *Speeds { return legacySpeeds() }

var legacySpeeds = sync.OnceValue(func() *Speeds {
	s, err := ReadSpeeds(speedsLegacyYAML, "speeds_legacy11gb.yaml")
	if err != nil {
		panic(fmt.Sprintf("embedded speed classes: %v", err)) // a build defect, covered by tests
	}
	return s
})

// SpeedsFor returns the speed classes of GPU type t's servers: the file
// t.SpeedsFile when set, LegacySpeeds for legacy-11gb, else nil (every GPU
// at its profiled speed).
func SpeedsFor(t GPUType) (*Speeds, error) {
	if t.SpeedsFile != "" {
		data, err := os.ReadFile(t.SpeedsFile)
		if err != nil {
			return nil, fmt.Errorf("GPU type %s: speeds: %w", t.Name, err)
		}
		s, err := ReadSpeeds(data, t.SpeedsFile)
		if err != nil {
			return nil, fmt.Errorf("GPU type %s: %w", t.Name, err)
		}
		return s, nil
	}
	if t.Name == "legacy-11gb" {
		return LegacySpeeds(), nil
	}
	return nil, nil
}
