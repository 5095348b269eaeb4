package traces

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/aegis-sched/aegis/models"
)

// MapWorkloads maps each job to a catalog workload by nearest quantile, as
// the AEGIS paper does: within each GPU count, a job's duration rank among
// the given jobs of that GPU count gives its quantile, and the job gets the
// catalog workload of the same GPU count whose solo-runtime quantile (its
// rank among those workloads) is nearest. Quantiles are plotting positions
// (rank+0.5)/count, with equal durations sharing their mean rank (so they map
// alike) and ties between two workloads going to the shorter one. The result
// has one workload id per job, in job order. It fails, naming the job, when
// the catalog has no workload of a job's GPU count.
func MapWorkloads(jobs []LogJob, cat *models.Catalog) ([]string, error) {
	return mapWorkloads(jobs, cat, false)
}

// MapWorkloadsDividing maps like MapWorkloads, except that a job of G GPUs
// gets a workload of the largest GPU count of the catalog that divides G
// (G itself when the catalog has it), by the job's duration quantile among
// the jobs of G GPUs. Such a job runs only on a cluster, where a job may ask
// for any multiple of its workload's GPU count (the simulator's rule
// gpus_per_profile). It fails, naming the job, when no catalog GPU count
// divides a job's.
func MapWorkloadsDividing(jobs []LogJob, cat *models.Catalog) ([]string, error) {
	return mapWorkloads(jobs, cat, true)
}

func mapWorkloads(jobs []LogJob, cat *models.Catalog, dividing bool) ([]string, error) {
	// Catalog workloads by GPU count, sorted by solo runtime then id.
	pool := map[int][]*models.Workload{}
	for _, id := range cat.IDs() {
		w, _ := cat.Get(id)
		pool[w.GPUs] = append(pool[w.GPUs], w)
	}
	for _, ws := range pool {
		slices.SortFunc(ws, func(a, b *models.Workload) int {
			return cmp.Or(cmp.Compare(a.SoloS, b.SoloS), cmp.Compare(a.ID, b.ID))
		})
	}
	// Job indices by GPU count.
	byGPUs := map[int][]int{}
	for i, j := range jobs {
		byGPUs[j.GPUs] = append(byGPUs[j.GPUs], i)
	}
	out := make([]string, len(jobs))
	for _, g := range slices.Sorted(maps.Keys(byGPUs)) {
		idx, ws := byGPUs[g], pool[g]
		if dividing && len(ws) == 0 {
			for d := g / 2; d >= 1; d-- { // the largest catalog count dividing g
				if g%d == 0 && len(pool[d]) > 0 {
					ws = pool[d]
					break
				}
			}
			if len(ws) == 0 {
				j := jobs[idx[0]]
				return nil, fmt.Errorf("map: job %s needs %d GPUs, but no GPU count of the catalog's workloads divides %d (%d such jobs)", j.ID, g, g, len(idx))
			}
		}
		if len(ws) == 0 {
			j := jobs[idx[0]]
			return nil, fmt.Errorf("map: job %s needs %d GPUs, but the catalog has no %d-GPU workload (%d such jobs)", j.ID, g, g, len(idx))
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(jobs[a].Duration, jobs[b].Duration) })
		n, m := float64(len(idx)), float64(len(ws))
		for lo := 0; lo < len(idx); {
			hi := lo + 1
			for hi < len(idx) && jobs[idx[hi]].Duration == jobs[idx[lo]].Duration {
				hi++
			}
			rank := float64(lo+hi-1) / 2 // mean rank of the equal durations
			q := (rank + 0.5) / n
			// Nearest catalog position c with (c+0.5)/m closest to q, ties low.
			c := int(math.Ceil(q*m - 1))
			c = min(max(c, 0), len(ws)-1)
			for _, i := range idx[lo:hi] {
				out[i] = ws[c].ID
			}
			lo = hi
		}
	}
	return out, nil
}

// Mapping says how MapTrace maps a log's jobs to catalog workloads.
type Mapping int

const (
	// Exact maps each job to a workload of its own GPU count
	// (MapWorkloads): a trace for one server.
	Exact Mapping = iota
	// Dividing maps a job to a workload whose GPU count divides the job's
	// (MapWorkloadsDividing), each job's duration its solo_s: a trace for
	// clusters, which repeat a workload's profile per GPU.
	Dividing
)

// MapTrace maps jobs to catalog workloads as m says and returns them as a
// runnable trace with the jobs' ids, submit times and GPU counts (and,
// Dividing, their durations as solo_s).
func MapTrace(name string, jobs []LogJob, cat *models.Catalog, m Mapping) (*Trace, error) {
	mapWorkloads := MapWorkloads
	if m == Dividing {
		mapWorkloads = MapWorkloadsDividing
	}
	wl, err := mapWorkloads(jobs, cat)
	if err != nil {
		return nil, err
	}
	return mapped(name, jobs, wl, m == Dividing), nil
}

// mapped is the trace of jobs on workloads wl, with each job's duration
// as its solo_s when withSolo.
func mapped(name string, jobs []LogJob, wl []string, withSolo bool) *Trace {
	t := &Trace{Name: name, Jobs: make([]Job, len(jobs))}
	for i, j := range jobs {
		t.Jobs[i] = Job{ID: j.ID, Submit: j.Submit, Workload: wl[i], GPUs: j.GPUs}
		if withSolo {
			t.Jobs[i].SoloS = j.Duration.Seconds()
		}
	}
	sortStable(t.Jobs)
	return t
}

// MapsExactly reports whether cat has a workload of every GPU count that a
// generated log of jobs of at most maxGPUs GPUs may ask for (1 and the
// powers of two up to maxGPUs). Then MapWorkloads maps such a log, a trace
// for one server; otherwise MapWorkloadsDividing does, with every job's
// duration as its solo_s (MapTrace with Dividing), a trace for clusters.
func MapsExactly(cat *models.Catalog, maxGPUs int) bool {
	have := map[int]bool{}
	for _, id := range cat.IDs() {
		w, _ := cat.Get(id)
		have[w.GPUs] = true
	}
	for g := 1; g <= maxGPUs; g *= 2 {
		if !have[g] {
			return false
		}
	}
	return true
}
