package models

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// pairJob is one job of a measured two-job co-run.
type pairJob struct {
	Name  string  // workload name as written in the pair file
	ID    string  // catalog workload whose pressure profile stands for it
	SoloS float64 // solo runtime of this (possibly truncated) run, seconds
	PairS float64 // runtime when started together with the partner, seconds
}

// PairRun is one measured co-run of two jobs started together on one GPU.
// The longer job's PairS includes the time it ran alone after its partner
// finished.
type PairRun struct {
	Line int // line in the source file
	A, B pairJob
}

// Key identifies the unordered pair of catalog workloads the model sees,
// "A.ID|B.ID" in lexical order. Repeated runs share a key, and so do runs
// whose pair-file names differ but map to the same catalog profiles (e.g.
// unet_voc_1gpu and unet_voc_1gpu_10e are both unet_voc_1gpu): to the model
// they are the same pair, so cross-validation must keep them together.
func (p PairRun) Key() string {
	a, b := p.A.ID, p.B.ID
	if b < a {
		a, b = b, a
	}
	return a + "|" + b
}

// pairSuffix matches the run-length suffixes of the pair file's workload
// names: ImageNet runs truncated to N batches, the Llama run to N steps, the
// U-Net run to N epochs.
var pairSuffix = regexp.MustCompile(`_(maxbatches\d+|maxsteps\d+|\d+e)$`)

// PairWorkloadID maps a workload name of the pairwise co-run file to the
// catalog workload whose solo pressure profile stands for it. Names already
// in the catalog map to themselves (the CIFAR-100 runs, e.g.
// resnet18_cifar100_bs32_20e_1gpu). Otherwise a run-length suffix
// (_maxbatchesN, _maxstepsN, _Ne) is dropped and, when the rest carries no
// _Ngpu suffix, _1gpu is appended: efficientnet_imagenet_bs64_maxbatches1200
// → efficientnet_imagenet_bs64_1gpu, unet_voc_1gpu_10e → unet_voc_1gpu,
// llama3_width_8layer_wiki_bs1_1gpu_maxsteps2000 →
// llama3_width_8layer_wiki_bs1_1gpu. Pressure is a per-iteration property
// of model and batch size, so a truncated run shares the full run's
// profile; its solo time comes from the pair file itself.
func PairWorkloadID(name string, cat *Catalog) string {
	if cat != nil {
		if _, ok := cat.Get(name); ok {
			return name
		}
	}
	id := pairSuffix.ReplaceAllString(name, "")
	if !gpuSuffix.MatchString(id) {
		id += "_1gpu"
	}
	return id
}

var gpuSuffix = regexp.MustCompile(`_\d+gpu$`)

var pairCols = []string{"workload_a", "workload_b", "solo_time_a_s", "solo_time_b_s", "pair_time_a_s", "pair_time_b_s"}

// specKeyCols stand for workload_a and workload_b in the legacy server's
// layout: spec file names, the workload ID with ".yaml".
var specKeyCols = []string{"spec_a_key", "spec_b_key"}

// ReadPairs parses a pairwise co-run file (the AEGIS artifact's
// pairwise_results.csv layout: columns workload_a, workload_b,
// solo_time_a_s, solo_time_b_s, pair_time_a_s, pair_time_b_s; others are
// ignored; the legacy server's file has spec_a_key and spec_b_key, the
// workloads' spec file names, instead of workload_a and workload_b) and
// maps each workload to cat with PairWorkloadID. Errors name the file, line
// and column.
func ReadPairs(r io.Reader, name string, cat *Catalog) ([]PairRun, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cols := pairCols
	if head, _, _ := strings.Cut(string(data), "\n"); !slices.Contains(strings.Split(head, ","), pairCols[0]) &&
		slices.Contains(strings.Split(head, ","), specKeyCols[0]) {
		cols = append(slices.Clone(specKeyCols), pairCols[2:]...)
	}
	rows, err := readTable(bytes.NewReader(data), name, cols)
	if err != nil {
		return nil, err
	}
	var out []PairRun
	for _, row := range rows {
		line, _ := strconv.Atoi(row["line"])
		var v [4]float64
		for i := range v {
			s := row[pairCols[2+i]]
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s:%d: column %s: want a positive number of seconds, got %q", name, line, pairCols[2+i], s)
			}
			v[i] = x
		}
		p := PairRun{Line: line,
			A: pairJob{Name: strings.TrimSuffix(row[cols[0]], ".yaml"), SoloS: v[0], PairS: v[2]},
			B: pairJob{Name: strings.TrimSuffix(row[cols[1]], ".yaml"), SoloS: v[1], PairS: v[3]}}
		for i, j := range []*pairJob{&p.A, &p.B} {
			if j.Name == "" {
				return nil, fmt.Errorf("%s:%d: column %s: empty workload name", name, line, cols[i])
			}
			j.ID = PairWorkloadID(j.Name, cat)
			if cat != nil {
				w, ok := cat.Get(j.ID)
				if !ok {
					return nil, fmt.Errorf("%s:%d: column %s: workload %q (as %q) is not in the catalog", name, line, cols[i], j.Name, j.ID)
				}
				if w.GPUs != 1 {
					return nil, fmt.Errorf("%s:%d: column %s: workload %q uses %d GPUs; co-runs are single-GPU", name, line, cols[i], j.ID, w.GPUs)
				}
			}
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no co-runs", name)
	}
	return out, nil
}

// coRunJob is a job started at time zero on a GPU shared with others.
type coRunJob struct {
	Profile Profile
	SoloS   float64 // solo runtime, seconds
}

// simulateCoRun returns each job's completion time, in seconds, when the
// jobs start together on one GPU: while a set of jobs is running each
// progresses at m.Rate(its profile, the others' profiles); the rates are
// re-evaluated whenever a job finishes, so the last job runs alone. This is
// exactly what the simulator does on one GPU with no later arrivals.
func simulateCoRun(m Interference, jobs []coRunJob) []float64 {
	n := len(jobs)
	left := make([]float64, n) // remaining work in solo-seconds
	done := make([]float64, n)
	active := make([]int, 0, n)
	for i, j := range jobs {
		left[i] = j.SoloS
		active = append(active, i)
	}
	now := 0.0
	rates := make([]float64, n)
	co := make([]Profile, 0, n)
	for len(active) > 0 {
		dt := math.Inf(1)
		for _, i := range active {
			co = co[:0]
			for _, k := range active {
				if k != i {
					co = append(co, jobs[k].Profile)
				}
			}
			r := m.Rate(jobs[i].Profile, co)
			if !(r > 1e-9) { // guard a degenerate model: progress, slowly
				r = 1e-9
			}
			rates[i] = r
			dt = min(dt, left[i]/r)
		}
		now += dt
		next := active[:0]
		for _, i := range active {
			left[i] -= rates[i] * dt
			if left[i] <= 1e-9*jobs[i].SoloS {
				done[i] = now
			} else {
				next = append(next, i)
			}
		}
		active = next
	}
	return done
}

// Folds assigns each co-run to one of k cross-validation folds, grouped by
// catalog workload pair (PairRun.Key) so that repeated runs of a pair, and
// runs the model cannot tell apart, never straddle training and test. The
// assignment is deterministic: the distinct pair keys are ordered by their
// FNV-1a hash (then by key) and dealt round-robin.
func Folds(pairs []PairRun, k int) []int {
	keys := map[string]bool{}
	for _, p := range pairs {
		keys[p.Key()] = true
	}
	type hk struct {
		h uint64
		k string
	}
	var order []hk
	for k := range keys {
		f := fnv.New64a()
		f.Write([]byte(k))
		order = append(order, hk{f.Sum64(), k})
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].h != order[j].h {
			return order[i].h < order[j].h
		}
		return order[i].k < order[j].k
	})
	fold := map[string]int{}
	for i, o := range order {
		fold[o.k] = i % k
	}
	out := make([]int, len(pairs))
	for i, p := range pairs {
		out[i] = fold[p.Key()]
	}
	return out
}

// pairWorkloads lists the distinct catalog workloads (A.ID and B.ID) of
// pairs, sorted.
func pairWorkloads(pairs []PairRun) []string {
	seen := map[string]bool{}
	var ids []string
	for _, p := range pairs {
		for _, id := range []string{p.A.ID, p.B.ID} {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// workloadHoldOuts returns, for each workload of pairWorkloads(pairs) in
// that order, the indices of the co-runs involving it: the test set of
// leave-one-workload-out cross-validation, whose training set is every
// other co-run. A co-run of two different workloads is in two test sets.
func workloadHoldOuts(pairs []PairRun) (ids []string, tests [][]int) {
	ids = pairWorkloads(pairs)
	at := make(map[string]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	tests = make([][]int, len(ids))
	for i, p := range pairs {
		a, b := at[p.A.ID], at[p.B.ID]
		tests[a] = append(tests[a], i)
		if b != a {
			tests[b] = append(tests[b], i)
		}
	}
	return ids, tests
}

// pairAPE returns the absolute percentage errors (as fractions) of the
// co-run times m predicts for p's two jobs, A then B.
func pairAPE(m Interference, cat *Catalog, p PairRun) (a, b float64) {
	t := simulateCoRun(m, []coRunJob{
		{Profile: profileOf(cat, p.A.ID), SoloS: p.A.SoloS},
		{Profile: profileOf(cat, p.B.ID), SoloS: p.B.SoloS}})
	return math.Abs(t[0]-p.A.PairS) / p.A.PairS, math.Abs(t[1]-p.B.PairS) / p.B.PairS
}

func profileOf(cat *Catalog, id string) Profile {
	w, ok := cat.Get(id)
	if !ok {
		panic("models: workload " + id + " not in catalog") // ReadPairs validated it
	}
	return w.PerGPU[0]
}
