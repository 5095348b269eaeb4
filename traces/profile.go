package traces

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
)

// cdfThresholds returns the runtime CDF thresholds: the profile counts the
// fractions of jobs that run under 10 minutes, 1 hour, 6 hours and 1 day.
func cdfThresholds() [4]time.Duration {
	return [4]time.Duration{10 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}
}

// RuntimeCDF is the fraction of jobs whose run time is strictly under each
// threshold.
type RuntimeCDF struct {
	Under10m float64 `json:"under_10m"`
	Under1h  float64 `json:"under_1h"`
	Under6h  float64 `json:"under_6h"`
	Under1d  float64 `json:"under_1d"`
}

// points returns the four fractions in threshold order.
func (c RuntimeCDF) points() [4]float64 {
	return [4]float64{c.Under10m, c.Under1h, c.Under6h, c.Under1d}
}

func cdfFromPoints(p [4]float64) RuntimeCDF {
	return RuntimeCDF{Under10m: p[0], Under1h: p[1], Under6h: p[2], Under1d: p[3]}
}

// Profile summarizes a trace the way the AEGIS paper's window selection
// compares traces. Percentiles are policies.Quantile's (type 7). Inter-arrival
// times are the gaps between consecutive submissions in submit order. A
// statistic without data (no jobs, or one job for inter-arrivals) is 0.
type Profile struct {
	JobCount     int        `json:"job_count"`
	DurationP50S float64    `json:"duration_p50_s"`
	DurationP95S float64    `json:"duration_p95_s"`
	RuntimeCDF   RuntimeCDF `json:"runtime_cdf"`
	// GPUDemand is the fraction of jobs by GPU count.
	GPUDemand map[int]float64 `json:"gpu_demand_fractions"`
	// GPUService is the fraction of GPU-seconds (GPUs × run time) by GPU count.
	GPUService       map[int]float64 `json:"gpu_service_fractions"`
	InterArrivalP50S float64         `json:"interarrival_p50_s"`
	InterArrivalP95S float64         `json:"interarrival_p95_s"`
	// ZeroInterArrival is the fraction of inter-arrival gaps that are 0.
	ZeroInterArrival float64 `json:"zero_interarrival_fraction"`
}

// GPUCounts returns the GPU counts of the profile's demand mix, ascending.
func (p Profile) GPUCounts() []int {
	return slices.Sorted(maps.Keys(p.GPUDemand))
}

// ProfileOf computes the profile of jobs (in any order).
func ProfileOf(jobs []LogJob) Profile {
	p := Profile{JobCount: len(jobs), GPUDemand: map[int]float64{}, GPUService: map[int]float64{}}
	if len(jobs) == 0 {
		return p
	}
	durs := make([]float64, len(jobs))
	subs := make([]time.Duration, len(jobs))
	var under [4]int
	var service float64
	ths := cdfThresholds()
	for i, j := range jobs {
		durs[i] = j.Duration.Seconds()
		subs[i] = j.Submit
		for k, th := range ths {
			if j.Duration < th {
				under[k]++
			}
		}
		p.GPUDemand[j.GPUs]++
		gs := float64(j.GPUs) * durs[i]
		p.GPUService[j.GPUs] += gs
		service += gs
	}
	n := float64(len(jobs))
	slices.Sort(durs)
	p.DurationP50S = policies.SortedQuantile(durs, 0.5)
	p.DurationP95S = policies.SortedQuantile(durs, 0.95)
	var pts [4]float64
	for k := range pts {
		pts[k] = float64(under[k]) / n
	}
	p.RuntimeCDF = cdfFromPoints(pts)
	for g := range p.GPUDemand {
		p.GPUDemand[g] /= n
		if service > 0 {
			p.GPUService[g] /= service
		} else {
			p.GPUService[g] = 0
		}
	}
	if len(jobs) > 1 {
		slices.Sort(subs)
		gaps := make([]float64, len(subs)-1)
		zero := 0
		for i := 1; i < len(subs); i++ {
			gaps[i-1] = (subs[i] - subs[i-1]).Seconds()
			if subs[i] == subs[i-1] {
				zero++
			}
		}
		slices.Sort(gaps)
		p.InterArrivalP50S = policies.SortedQuantile(gaps, 0.5)
		p.InterArrivalP95S = policies.SortedQuantile(gaps, 0.95)
		p.ZeroInterArrival = float64(zero) / float64(len(gaps))
	}
	return p
}

// ProfileTrace computes the profile of a runnable trace, each job's duration
// being its catalog workload's solo runtime.
func ProfileTrace(t *Trace, cat *models.Catalog) (Profile, error) {
	jobs, err := TraceJobs(t, cat)
	if err != nil {
		return Profile{}, err
	}
	return ProfileOf(jobs), nil
}

// Reference is a whole-trace profile of a production log as the AEGIS
// artifact's trace manifests report it (1- and 2-GPU jobs only).
type Reference struct {
	Name         string // philly, saturn or venus
	SourceJobs   int    // jobs in the source log
	Profile             // of the eligible (1- and 2-GPU) jobs; JobCount is their number
	WindowStart  int    // the paper's selected 60-job window, first eligible index
	WindowEnd    int    // last eligible index (inclusive)
	MinTwoGPU    int    // the minimum number of 2-GPU jobs per window used
	ArrivalSpanS int    // the selected window's arrival span, seconds
}

// ReferenceNames lists the reference profiles.
func ReferenceNames() []string { return []string{"philly", "saturn", "venus"} }

// ReferenceProfile returns the whole-trace reference profile of philly,
// saturn or venus. The figures are those of the table in
// shared/traces/aegis-representative/README.md, from the trace manifests of
// the AEGIS artifact repository (ehsanyousefzadehasl/AEGIS); the arrival
// spans are from the same README.
func ReferenceProfile(name string) (Reference, bool) {
	switch name {
	case "philly":
		return Reference{Name: name, SourceJobs: 83140, WindowStart: 8189, WindowEnd: 8248, MinTwoGPU: 2, ArrivalSpanS: 9404,
			Profile: Profile{JobCount: 79126, DurationP50S: 1052, DurationP95S: 19494.5,
				RuntimeCDF: RuntimeCDF{0.410, 0.798, 0.952, 0.983},
				GPUDemand:  map[int]float64{1: 0.9768, 2: 0.0232}, GPUService: map[int]float64{1: 0.8738, 2: 0.1262},
				InterArrivalP50S: 8, InterArrivalP95S: 600, ZeroInterArrival: 0.0836}}, true
	case "saturn":
		return Reference{Name: name, SourceJobs: 406982, WindowStart: 105938, WindowEnd: 105997, MinTwoGPU: 1, ArrivalSpanS: 2409,
			Profile: Profile{JobCount: 289626, DurationP50S: 180, DurationP95S: 8712,
				RuntimeCDF: RuntimeCDF{0.683, 0.881, 0.980, 0.995},
				GPUDemand:  map[int]float64{1: 0.9673, 2: 0.0327}, GPUService: map[int]float64{1: 0.7361, 2: 0.2639},
				InterArrivalP50S: 5, InterArrivalP95S: 211, ZeroInterArrival: 0.2791}}, true
	case "venus":
		return Reference{Name: name, SourceJobs: 65912, WindowStart: 17501, WindowEnd: 17560, MinTwoGPU: 1, ArrivalSpanS: 18831,
			Profile: Profile{JobCount: 39846, DurationP50S: 266, DurationP95S: 37081.5,
				RuntimeCDF: RuntimeCDF{0.615, 0.823, 0.919, 0.976},
				GPUDemand:  map[int]float64{1: 0.9432, 2: 0.0568}, GPUService: map[int]float64{1: 0.7480, 2: 0.2520},
				InterArrivalP50S: 89, InterArrivalP95S: 1610.75, ZeroInterArrival: 0.1641}}, true
	}
	return Reference{}, false
}

// referenceOrError is ReferenceProfile with an error naming the known
// profiles for an unknown name.
func referenceOrError(name string) (Reference, error) {
	r, ok := ReferenceProfile(name)
	if !ok {
		return Reference{}, fmt.Errorf("no reference profile %q (have %v)", name, ReferenceNames())
	}
	return r, nil
}
