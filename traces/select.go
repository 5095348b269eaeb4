package traces

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/aegis-sched/aegis/policies"
)

// Weights of the window score's components (AEGIS's representative-window
// selection).
const (
	WeightRuntimeCDF   = 0.35
	WeightGPUMix       = 0.25
	WeightInterArrival = 0.20
	WeightGPUService   = 0.15
	WeightBurstiness   = 0.05
)

// Default selection parameters.
const (
	DefaultWindowJobs    = 60
	DefaultMaxGPUMix     = 0.05
	DefaultMaxRuntimeCDF = 0.10
	DefaultSelectSeed    = 42
)

// tieEpsilon is how close two window scores must be to count as a tie.
const tieEpsilon = 1e-12

// Distances are the five components of a window's distance to the whole
// (filtered) trace, each in [0, 1] except InterArrival (log2 ratios).
type Distances struct {
	// RuntimeCDF is the mean absolute difference of the fractions of jobs
	// under 10 min, 1 h, 6 h and 1 day.
	RuntimeCDF float64 `json:"runtime_cdf"`
	// GPUMix is half the L1 distance between the job fractions by GPU count.
	GPUMix float64 `json:"gpu_mix"`
	// InterArrival is half of |log2((p50+1)/(p50*+1))| + |log2((p95+1)/(p95*+1))|
	// over inter-arrival times in seconds (* the whole trace's).
	InterArrival float64 `json:"interarrival"`
	// GPUService is half the L1 distance between the GPU-second fractions by
	// GPU count.
	GPUService float64 `json:"gpu_service"`
	// Burstiness is the absolute difference of the fractions of zero
	// inter-arrival gaps.
	Burstiness float64 `json:"burstiness"`
}

// Score is the weighted sum of the distances (lower is better).
func (d Distances) Score() float64 {
	return WeightRuntimeCDF*d.RuntimeCDF + WeightGPUMix*d.GPUMix + WeightInterArrival*d.InterArrival +
		WeightGPUService*d.GPUService + WeightBurstiness*d.Burstiness
}

// Distance compares a window's profile with the whole trace's.
func Distance(window, whole Profile) Distances {
	var d Distances
	w, t := window.RuntimeCDF.points(), whole.RuntimeCDF.points()
	for k := range w {
		d.RuntimeCDF += math.Abs(w[k] - t[k])
	}
	d.RuntimeCDF /= float64(len(w))
	d.GPUMix = halfL1(window.GPUDemand, whole.GPUDemand)
	d.GPUService = halfL1(window.GPUService, whole.GPUService)
	d.InterArrival = iaDistance(window.InterArrivalP50S, window.InterArrivalP95S, whole.InterArrivalP50S, whole.InterArrivalP95S)
	d.Burstiness = math.Abs(window.ZeroInterArrival - whole.ZeroInterArrival)
	return d
}

func halfL1(a, b map[int]float64) float64 {
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var s float64
	for _, k := range keys {
		s += math.Abs(a[k] - b[k])
	}
	return s / 2
}

func iaDistance(p50, p95, p50Whole, p95Whole float64) float64 {
	return 0.5 * (math.Abs(math.Log2((p50+1)/(p50Whole+1))) + math.Abs(math.Log2((p95+1)/(p95Whole+1))))
}

// SelectOptions configure SelectWindow. Zero Jobs and GPUs and nil
// MaxGPUMix and MaxRuntimeCDF take the defaults (60 jobs, GPU counts 1 and
// 2, 0.05, 0.10); a limit of 0 is a limit like any other (only windows
// at distance 0 pass), and Seed 0 a seed like any other
// (DefaultSelectOptions sets 42).
type SelectOptions struct {
	Jobs int   // window length N
	GPUs []int // eligible GPU counts; other jobs are dropped before windowing
	// MinPerGPU is the minimum number of jobs of a GPU count a window must
	// hold (the paper: two 2-GPU jobs for Philly, one for Saturn and Venus).
	MinPerGPU     map[int]int
	MaxGPUMix     *float64 // accept only windows whose GPU-mix distance is at most this
	MaxRuntimeCDF *float64 // and whose runtime-CDF distance is at most this
	Seed          uint64   // breaks ties between equally good windows
}

// DefaultSelectOptions returns the paper's settings for a trace: 60 jobs of
// 1 or 2 GPUs, at least two 2-GPU jobs for "philly" and one otherwise,
// acceptance limits 0.05 and 0.10, seed 42.
func DefaultSelectOptions(like string) SelectOptions {
	min2 := 1
	if like == "philly" {
		min2 = 2
	}
	return SelectOptions{Jobs: DefaultWindowJobs, GPUs: []int{1, 2}, MinPerGPU: map[int]int{2: min2},
		MaxGPUMix: new(DefaultMaxGPUMix), MaxRuntimeCDF: new(DefaultMaxRuntimeCDF), Seed: DefaultSelectSeed}
}

func (o SelectOptions) withDefaults() (SelectOptions, error) {
	if o.Jobs == 0 {
		o.Jobs = DefaultWindowJobs
	}
	if len(o.GPUs) == 0 {
		o.GPUs = []int{1, 2}
	}
	if o.MaxGPUMix == nil {
		o.MaxGPUMix = new(DefaultMaxGPUMix)
	}
	if o.MaxRuntimeCDF == nil {
		o.MaxRuntimeCDF = new(DefaultMaxRuntimeCDF)
	}
	o.GPUs = slices.Clone(o.GPUs)
	slices.Sort(o.GPUs)
	o.GPUs = slices.Compact(o.GPUs)
	switch {
	case o.Jobs < 2:
		return o, fmt.Errorf("select: window of %d jobs: need at least 2", o.Jobs)
	case !(*o.MaxGPUMix >= 0) || !(*o.MaxRuntimeCDF >= 0):
		return o, fmt.Errorf("select: negative or NaN acceptance limit (gpu mix %v, runtime cdf %v)", *o.MaxGPUMix, *o.MaxRuntimeCDF)
	case o.GPUs[0] < 0:
		return o, fmt.Errorf("select: negative GPU count %d", o.GPUs[0])
	}
	sum := 0
	for g, m := range o.MinPerGPU {
		if !slices.Contains(o.GPUs, g) {
			return o, fmt.Errorf("select: minimum for %d-GPU jobs, but the eligible GPU counts are %v", g, o.GPUs)
		}
		if m < 0 {
			return o, fmt.Errorf("select: negative minimum %d for %d-GPU jobs", m, g)
		}
		sum += m
	}
	if sum > o.Jobs {
		return o, fmt.Errorf("select: minimums per GPU count add up to %d, more than the window's %d jobs", sum, o.Jobs)
	}
	return o, nil
}

// Selection is a chosen window and how it was chosen.
type Selection struct {
	// Jobs are the window's jobs with submit times rebased so the first is at
	// 0 (arrival times otherwise kept as they are: real-time replay).
	Jobs   []LogJob
	Report SelectReport
}

// SelectReport documents a window selection: the data, the filtering, how
// many windows each constraint rejected (a window counts under the first
// check it fails, in the order minimum per GPU count, GPU mix, runtime CDF),
// the chosen window, its score and distances, and both profiles.
type SelectReport struct {
	Log                string         `json:"log"`
	Records            int            `json:"records"`
	Skipped            map[string]int `json:"skipped"`
	SourceJobs         int            `json:"source_jobs"`
	EligibleJobs       int            `json:"eligible_jobs"`
	GPUs               []int          `json:"eligible_gpus"`
	WindowJobs         int            `json:"window_jobs"`
	MinPerGPU          map[int]int    `json:"min_per_gpu"`
	MaxGPUMix          float64        `json:"max_gpu_mix"`
	MaxRuntimeCDF      float64        `json:"max_runtime_cdf"`
	Seed               uint64         `json:"seed"`
	Windows            int            `json:"windows"`
	RejectedMinPerGPU  int            `json:"rejected_min_per_gpu"`
	RejectedGPUMix     int            `json:"rejected_gpu_mix"`
	RejectedRuntimeCDF int            `json:"rejected_runtime_cdf"`
	Accepted           int            `json:"accepted"`
	Tied               int            `json:"tied"` // accepted windows sharing the best score (1 = no tie)
	Start              int            `json:"start"`
	End                int            `json:"end"` // inclusive, eligible indices
	FirstJobID         string         `json:"first_job_id"`
	LastJobID          string         `json:"last_job_id"`
	StartSubmitS       float64        `json:"start_submit_s"` // the first job's submit offset in the log
	ArrivalSpanS       float64        `json:"arrival_span_s"`
	Score              float64        `json:"score"`
	Distances          Distances      `json:"distances"`
	Weights            Distances      `json:"weights"`
	Whole              Profile        `json:"whole"`
	Window             Profile        `json:"window"`
}

// weights returns the score weights as a Distances value (for reports).
func weights() Distances {
	return Distances{RuntimeCDF: WeightRuntimeCDF, GPUMix: WeightGPUMix, InterArrival: WeightInterArrival,
		GPUService: WeightGPUService, Burstiness: WeightBurstiness}
}

// SelectWindow picks the representative window of a log as the AEGIS paper
// does: keep the jobs with an eligible GPU count (inter-arrival times are
// thus recomputed after filtering), slide a window of N contiguous jobs,
// drop windows short of the minimum jobs per GPU count, score every other
// window against the whole filtered trace (Distances.Score), accept only
// windows within the GPU-mix and runtime-CDF limits, and take the best score,
// drawing among equal scores with the seed.
//
// It runs in O(n·N) time in the worst case with a small constant: every
// statistic but the inter-arrival percentiles is updated in O(1) per slide;
// those keep a sorted window of gaps updated by binary search and one memmove.
func SelectWindow(l *Log, opts SelectOptions) (*Selection, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	el := FilterGPUs(l.Jobs, o.GPUs)
	sortLogJobs(el)
	n, N := len(el), o.Jobs
	if n < N {
		return nil, fmt.Errorf("select %s: %d eligible jobs (GPU counts %v) of %d, fewer than the window's %d", l.Name, n, o.GPUs, len(l.Jobs), N)
	}
	whole := ProfileOf(el)
	skipped := maps.Clone(l.Skipped)
	if skipped == nil {
		skipped = map[string]int{}
	}
	rep := SelectReport{Log: l.Name, Records: l.Records, Skipped: skipped, SourceJobs: len(l.Jobs), EligibleJobs: n,
		GPUs: o.GPUs, WindowJobs: N, MinPerGPU: o.MinPerGPU, MaxGPUMix: *o.MaxGPUMix, MaxRuntimeCDF: *o.MaxRuntimeCDF,
		Seed: o.Seed, Windows: n - N + 1, Weights: weights(), Whole: whole}

	w := newWindowStats(el, o.GPUs, N)
	jd := newWindowJudge(&rep, whole, o, N)
	jd.judge(w, 0)
	for s := 1; s+N <= n; s++ {
		w.slide(s, N)
		jd.judge(w, s)
	}
	if len(jd.ties) == 0 {
		return nil, fmt.Errorf("select %s: none of %d windows of %d jobs is acceptable (%d lack the minimum jobs per GPU count %v, %d exceed GPU-mix distance %v, %d exceed runtime-CDF distance %v)",
			l.Name, rep.Windows, N, rep.RejectedMinPerGPU, o.MinPerGPU, rep.RejectedGPUMix, jd.maxMix, rep.RejectedRuntimeCDF, jd.maxCDF)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed5e1ec7))
	s := jd.ties[0]
	if len(jd.ties) > 1 {
		s = jd.ties[rng.IntN(len(jd.ties))]
	}
	rep.Tied = len(jd.ties)
	return selected(el, s, N, whole, rep), nil
}

// windowStats are the statistics of the current window of contiguous
// jobs, updated in O(1) per slide but for the sorted gaps (binary search
// and one memmove).
type windowStats struct {
	el    []LogJob
	gidx  []int     // each job's GPU count, as an index into the eligible ones
	durS  []float64 // each job's duration, seconds
	ths   [4]time.Duration
	cnt   []int     // the window's jobs per GPU count
	svc   []float64 // their GPU service (GPUs × seconds) per GPU count
	under [4]int    // its jobs shorter than each runtime-CDF threshold
	zeros int       // its zero gaps
	gaps  []float64 // its gaps between submits, ascending
}

// newWindowStats returns the statistics of the window of jobs el[:N]
// (GPU counts among gpus).
func newWindowStats(el []LogJob, gpus []int, N int) *windowStats {
	n, K := len(el), len(gpus)
	w := &windowStats{el: el, gidx: make([]int, n), durS: make([]float64, n), ths: cdfThresholds(),
		cnt: make([]int, K), svc: make([]float64, K), gaps: make([]float64, 0, N-1)}
	for i, j := range el {
		w.gidx[i], _ = slices.BinarySearch(gpus, j.GPUs)
		w.durS[i] = j.Duration.Seconds()
	}
	for i := range N {
		w.addJob(i, 1)
		if i > 0 {
			w.addGap(i)
		}
	}
	return w
}

// gap is the gap before job i ≥ 1, seconds.
func (w *windowStats) gap(i int) float64 { return (w.el[i].Submit - w.el[i-1].Submit).Seconds() }

// addJob adds job i to the window (sign 1) or removes it (sign -1).
func (w *windowStats) addJob(i, sign int) {
	w.cnt[w.gidx[i]] += sign
	w.svc[w.gidx[i]] += float64(sign) * float64(w.el[i].GPUs) * w.durS[i]
	for t, th := range w.ths {
		if w.el[i].Duration < th {
			w.under[t] += sign
		}
	}
}

func (w *windowStats) addGap(i int) {
	g := w.gap(i)
	if g == 0 {
		w.zeros++
	}
	p, _ := slices.BinarySearch(w.gaps, g)
	w.gaps = slices.Insert(w.gaps, p, g)
}

func (w *windowStats) removeGap(i int) {
	g := w.gap(i)
	if g == 0 {
		w.zeros--
	}
	p, _ := slices.BinarySearch(w.gaps, g)
	w.gaps = slices.Delete(w.gaps, p, p+1)
}

// slide moves the window of N jobs on by one, to start at job s.
func (w *windowStats) slide(s, N int) {
	w.addJob(s-1, -1)
	w.addJob(s+N-1, 1)
	w.removeGap(s)
	w.addGap(s + N - 1)
}

// windowJudge scores windows against the whole filtered trace, counting
// them as rejected or accepted in the report, and keeps the starts of the
// best-scoring ones (ties).
type windowJudge struct {
	rep                *SelectReport
	whole              Profile
	wholeMix, wholeSvc []float64 // per GPU count
	minCnt             []int
	wholeCDF           [4]float64
	maxMix, maxCDF     float64
	nf, gf             float64 // the window's jobs and gaps
	best               float64
	ties               []int
}

func newWindowJudge(rep *SelectReport, whole Profile, o SelectOptions, N int) *windowJudge {
	K := len(o.GPUs)
	jd := &windowJudge{rep: rep, whole: whole, wholeMix: make([]float64, K), wholeSvc: make([]float64, K), minCnt: make([]int, K),
		wholeCDF: whole.RuntimeCDF.points(), maxMix: *o.MaxGPUMix, maxCDF: *o.MaxRuntimeCDF,
		nf: float64(N), gf: float64(N - 1), best: math.Inf(1)}
	for k, g := range o.GPUs {
		jd.wholeMix[k] = whole.GPUDemand[g]
		jd.wholeSvc[k] = whole.GPUService[g]
		jd.minCnt[k] = o.MinPerGPU[g]
	}
	return jd
}

// judge scores the window w, which starts at job s, counting it as
// rejected or accepted.
func (jd *windowJudge) judge(w *windowStats, s int) {
	K, rep, nf := len(w.cnt), jd.rep, jd.nf
	for k := range K {
		if w.cnt[k] < jd.minCnt[k] {
			rep.RejectedMinPerGPU++
			return
		}
	}
	var d Distances
	var total float64
	for k := range K {
		d.GPUMix += math.Abs(float64(w.cnt[k])/nf - jd.wholeMix[k])
		total += w.svc[k]
	}
	d.GPUMix /= 2
	if d.GPUMix > jd.maxMix {
		rep.RejectedGPUMix++
		return
	}
	for t := range w.under {
		d.RuntimeCDF += math.Abs(float64(w.under[t])/nf - jd.wholeCDF[t])
	}
	d.RuntimeCDF /= float64(len(w.under))
	if d.RuntimeCDF > jd.maxCDF {
		rep.RejectedRuntimeCDF++
		return
	}
	rep.Accepted++
	for k := range K {
		f := 0.0
		if total > 0 {
			f = w.svc[k] / total
		}
		d.GPUService += math.Abs(f - jd.wholeSvc[k])
	}
	d.GPUService /= 2
	d.InterArrival = iaDistance(policies.SortedQuantile(w.gaps, 0.5), policies.SortedQuantile(w.gaps, 0.95),
		jd.whole.InterArrivalP50S, jd.whole.InterArrivalP95S)
	d.Burstiness = math.Abs(float64(w.zeros)/jd.gf - jd.whole.ZeroInterArrival)
	switch sc := d.Score(); {
	case sc < jd.best-tieEpsilon:
		jd.best, jd.ties = sc, append(jd.ties[:0], s)
	case sc <= jd.best+tieEpsilon:
		jd.ties = append(jd.ties, s)
	}
}

// selected is the selection of the window el[s:s+N], its submit times
// shifted to start at 0, with the report completed.
func selected(el []LogJob, s, N int, whole Profile, rep SelectReport) *Selection {
	win := make([]LogJob, N)
	copy(win, el[s:s+N])
	base := win[0].Submit
	for i := range win {
		win[i].Submit -= base
	}
	rep.Start, rep.End = s, s+N-1
	rep.FirstJobID, rep.LastJobID = win[0].ID, win[N-1].ID
	rep.StartSubmitS = base.Seconds()
	rep.ArrivalSpanS = win[N-1].Submit.Seconds()
	rep.Window = ProfileOf(win)
	rep.Distances = Distance(rep.Window, whole)
	rep.Score = rep.Distances.Score()
	return &Selection{Jobs: win, Report: rep}
}
