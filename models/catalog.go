package models

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/aegis-sched/aegis/policies"
)

// Profile is one GPU's share of a workload measured running alone: peak memory
// and the DCGM pressure indicators (fractions in [0,1]) as mean and p95, plus
// nvidia-smi utilization in percent.
type Profile struct {
	PeakMiB float64
	SMACT   Stat
	SMOCC   Stat
	DRAMA   Stat
	UtilPct float64
}

// Stat is a signal's mean and 95th percentile over a solo run, and the
// share of its 1 Hz samples that sit at zero (Idle: 0 for the catalog's
// full-run profiles, a measured window's low mode otherwise, see Window):
// the other samples lie around the busy level Mean/(1−Idle).
type Stat struct{ Mean, P95, Idle float64 }

// Busy is the signal's level while not idle: Mean/(1−Idle).
func (s Stat) Busy() float64 {
	if s.Idle <= 0 {
		return s.Mean
	}
	return s.Mean / (1 - s.Idle)
}

// Estimates are a workload's memory estimates in MiB; 0 means the estimator
// is unavailable for it (failed, or capped at the GPU size).
type Estimates struct {
	Analytical, FakeTensor, GPUMemNet float64
}

// LucidClass is Lucid's sharing class: tiny 0, medium 1, jumbo 2.
type LucidClass int

// Lucid sharing classes.
const (
	Tiny LucidClass = iota
	Medium
	Jumbo
)

func (c LucidClass) String() string {
	switch c {
	case Tiny:
		return "tiny"
	case Medium:
		return "medium"
	case Jumbo:
		return "jumbo"
	}
	return "LucidClass(" + strconv.Itoa(int(c)) + ")"
}

// Workload is one catalog entry: a training job measured alone on the
// reference GPU.
type Workload struct {
	ID     string
	GPUs   int
	SoloS  float64   // solo end-to-end runtime, seconds
	PerGPU []Profile // len == GPUs
	// Shown is the telemetry its jobs show per GPU where it differs from
	// PerGPU (measured solo windows, see Catalog.WithWindows); nil: PerGPU.
	Shown     []Profile
	Estimates Estimates
	Lucid     LucidClass
}

// PeakMiB is the largest per-GPU peak memory of the workload.
func (w *Workload) PeakMiB() float64 {
	var m float64
	for _, p := range w.PerGPU {
		m = max(m, p.PeakMiB)
	}
	return m
}

// PolicyProfile is what profiling the workload alone tells a scheduler:
// its solo time, its busiest GPU's peak memory and pressure means, its mean
// utilization, Lucid class and memory estimates.
func (w *Workload) PolicyProfile() policies.Profile {
	p := policies.Profile{Workload: w.ID, SoloS: w.SoloS, PeakMiB: w.PeakMiB(), UtilPct: w.UtilPct(),
		Lucid: int(w.Lucid), Analytical: w.Estimates.Analytical, FakeTensor: w.Estimates.FakeTensor,
		GPUMemNet: w.Estimates.GPUMemNet}
	for _, g := range w.PerGPU {
		p.SMACT = max(p.SMACT, g.SMACT.Mean)
		p.SMOCC = max(p.SMOCC, g.SMOCC.Mean)
		p.DRAMA = max(p.DRAMA, g.DRAMA.Mean)
	}
	return p
}

// UtilPct is the mean nvidia-smi utilization over the workload's GPUs.
func (w *Workload) UtilPct() float64 {
	var s float64
	for _, p := range w.PerGPU {
		s += p.UtilPct
	}
	return s / float64(len(w.PerGPU))
}

// Catalog is a set of workloads keyed by id.
type Catalog struct {
	byID map[string]*Workload
	ids  []string
}

//go:embed data/catalog_a100.csv
var a100CSV []byte

//go:embed data/windows_a100.csv
var a100Windows []byte

// A100 returns the embedded catalog measured on A100 40 GB (derived from the
// AEGIS artifact's characterization, see NOTICE), with the solo telemetry
// windows measured on the same GPU (A100Windows) as what its jobs show.
// The catalog is parsed once and shared: treat it as read-only.
func A100() *Catalog { return a100() }

var a100 = sync.OnceValue(func() *Catalog {
	c, err := ReadCatalog(bytes.NewReader(a100CSV), "catalog_a100.csv")
	if err != nil {
		panic(fmt.Sprintf("embedded catalog: %v", err)) // a build defect, covered by tests
	}
	return c.WithWindows(A100Windows())
})

// A100Windows returns the embedded solo telemetry windows measured on the
// A100 (models/data/windows_a100.csv, derived by DeriveWindows). Parsed once
// and shared: treat it as read-only.
func A100Windows() map[string]Window { return a100Win() }

var a100Win = sync.OnceValue(func() map[string]Window {
	w, err := ReadWindows(bytes.NewReader(a100Windows), "windows_a100.csv")
	if err != nil {
		panic(fmt.Sprintf("embedded windows: %v", err)) // a build defect, covered by tests
	}
	return w
})

// Get returns the workload with the given id.
func (c *Catalog) Get(id string) (*Workload, bool) {
	w, ok := c.byID[id]
	return w, ok
}

// IDs returns the workload ids in sorted order.
func (c *Catalog) IDs() []string { return c.ids }

// Len is the number of workloads.
func (c *Catalog) Len() int { return len(c.ids) }

var catalogCols = []string{"workload", "gpus", "gpu", "solo_s", "peak_mib", "smact_mean", "smact_p95",
	"smocc_mean", "smocc_p95", "drama_mean", "drama_p95", "util_pct", "analytical_mib",
	"faketensor_mib", "gpumemnet_mib", "lucid_class"}

// catalogMax is the largest value a numeric catalog column may hold:
// pressure indicators are fractions, utilization a percentage.
func catalogMax(col string) float64 {
	switch {
	case strings.HasPrefix(col, "smact"), strings.HasPrefix(col, "smocc"), strings.HasPrefix(col, "drama"):
		return 1
	case col == "util_pct":
		return 100
	case col == "gpus" || col == "gpu":
		return 1024
	}
	return 1e9 // seconds and MiB
}

// ReadCatalog parses a catalog in the derived CSV format (one row per workload
// GPU, '#' comments). Errors name the file, line and column.
func ReadCatalog(r io.Reader, name string) (*Catalog, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = len(catalogCols)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	for i, h := range catalogCols {
		if strings.TrimSpace(head[i]) != h {
			return nil, fmt.Errorf("%s: header column %d: got %q, want %q", name, i+1, head[i], h)
		}
	}
	c := &Catalog{byID: map[string]*Workload{}}
	seen := map[string][]bool{} // rows read per workload GPU
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		f := make([]float64, len(rec))
		for i := 1; i < len(rec)-1; i++ {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[i]), 64)
			hi := catalogMax(catalogCols[i])
			if err != nil || !(v >= 0 && v <= hi) { // NaN fails too
				return nil, fmt.Errorf("%s:%d: column %s: %q is not a number in [0, %g]", name, line, catalogCols[i], rec[i], hi)
			}
			f[i] = v
		}
		id := strings.TrimSpace(rec[0])
		gpus, gpu := int(f[1]), int(f[2])
		if id == "" || gpus < 1 || gpu >= gpus || f[3] <= 0 {
			return nil, fmt.Errorf("%s:%d: bad workload/gpus/gpu/solo_s", name, line)
		}
		var cls LucidClass
		switch strings.TrimSpace(rec[15]) {
		case "tiny":
			cls = Tiny
		case "medium":
			cls = Medium
		case "jumbo":
			cls = Jumbo
		default:
			return nil, fmt.Errorf("%s:%d: column lucid_class: %q is not tiny, medium or jumbo", name, line, rec[15])
		}
		w := c.byID[id]
		if w == nil {
			w = &Workload{ID: id, GPUs: gpus, SoloS: f[3], PerGPU: make([]Profile, gpus),
				Estimates: Estimates{Analytical: f[12], FakeTensor: f[13], GPUMemNet: f[14]}, Lucid: cls}
			c.byID[id] = w
			c.ids = append(c.ids, id)
		} else if w.GPUs != gpus {
			return nil, fmt.Errorf("%s:%d: column gpus: %d disagrees with an earlier row (%d)", name, line, gpus, w.GPUs)
		}
		if seen[id] == nil {
			seen[id] = make([]bool, gpus)
		}
		if seen[id][gpu] {
			return nil, fmt.Errorf("%s:%d: workload %s: second row for gpu %d", name, line, id, gpu)
		}
		seen[id][gpu] = true
		w.PerGPU[gpu] = Profile{PeakMiB: f[4], SMACT: Stat{Mean: f[5], P95: f[6]}, SMOCC: Stat{Mean: f[7], P95: f[8]},
			DRAMA: Stat{Mean: f[9], P95: f[10]}, UtilPct: f[11]}
	}
	for _, id := range c.ids {
		for g, ok := range seen[id] {
			if !ok {
				return nil, fmt.Errorf("%s: workload %s: no row for gpu %d", name, id, g)
			}
		}
	}
	sort.Strings(c.ids)
	return c, nil
}

// NewCatalog builds a catalog from workloads (copied, profiles included).
// Every workload needs a non-empty, unique id, at least one GPU with one
// profile per GPU, and a positive solo time.
func NewCatalog(ws []Workload) (*Catalog, error) {
	c := &Catalog{byID: map[string]*Workload{}}
	for i := range ws {
		w := ws[i]
		switch {
		case w.ID == "":
			return nil, fmt.Errorf("catalog: workload %d has no id", i)
		case c.byID[w.ID] != nil:
			return nil, fmt.Errorf("catalog: workload %s given twice", w.ID)
		case w.GPUs < 1 || len(w.PerGPU) != w.GPUs:
			return nil, fmt.Errorf("catalog: workload %s: %d GPUs with %d profiles", w.ID, w.GPUs, len(w.PerGPU))
		case !(w.SoloS > 0) || math.IsInf(w.SoloS, 0):
			return nil, fmt.Errorf("catalog: workload %s: solo time %v is not a positive number", w.ID, w.SoloS)
		}
		w.PerGPU = append([]Profile(nil), w.PerGPU...)
		if w.Shown != nil {
			if len(w.Shown) != w.GPUs {
				return nil, fmt.Errorf("catalog: workload %s: %d GPUs with %d shown profiles", w.ID, w.GPUs, len(w.Shown))
			}
			w.Shown = append([]Profile(nil), w.Shown...)
		}
		c.byID[w.ID] = &w
		c.ids = append(c.ids, w.ID)
	}
	sort.Strings(c.ids)
	return c, nil
}
