package traces

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Generator draws synthetic "Philly-like", "Saturn-like" or "Venus-like" job
// logs whose whole-trace profile (over 1- and 2-GPU jobs) matches a reference
// profile (ReferenceProfile): the runtime CDF, the duration p50 and p95, the
// 1-/2-GPU demand mix, the inter-arrival p50 and p95 and the fraction of zero
// inter-arrival gaps, and in expectation the GPU-service split.
//
// The model: durations follow a piecewise log-linear quantile function
// through the reference's quantile points (1 s at 0, the runtime CDF points,
// p50, p95, 14 days at 1). Over all 1-/2-GPU jobs a duration quantile u is
// uniform, but 2-GPU jobs have u distributed as a·u^(a−1) and 1-GPU jobs as
// the complementary density (1 − p2·a·u^(a−1))/(1 − p2), so that 2-GPU jobs
// run longer by the factor the GPU-service split implies while the mixture
// keeps the exact CDF; a is solved numerically. Inter-arrival gaps are 0 with
// the zero fraction, else lognormal through the reference's p50 and p95.
// Durations and gaps are whole seconds (durations rounded down, so that a
// duration is under a CDF threshold exactly when its quantile is).
//
// Sampling is stratified, so the profile holds at small job counts too, not
// only in expectation. Of m 1-/2-GPU jobs exactly round(p2·m) need 2 GPUs;
// the k-th of the m_g jobs of one GPU count takes the quantile (k+U)/m_g, U
// uniform on [0, 1), through the inverse of its GPU count's distribution
// (computed with the realized 2-GPU fraction, so the mixture stays uniform),
// and a seeded shuffle orders the jobs. So the 2-GPU fraction is off by at
// most 1/(2m) and each runtime-CDF point by less than 2/m (less than one job
// per GPU count). Of the m−1 gaps exactly round(pZero·(m−1)) are 0; the
// others are the lognormal's quantiles at the positions that the type-7
// percentiles of ProfileOf give their ranks among all gaps (rank j of n
// gaps: j/(n−1), at most 1 − 1/(2n) for the largest), so the inter-arrival
// p50 and p95 are the model's at any m up to the interpolation between two
// ranks and whole-second rounding; a seeded shuffle orders the gaps. (With
// (k+U)/m positions instead, type 7's p95 sits low by 0.45 of a position
// and jitters by ±0.5 of one: at 100 Philly-like jobs it missed 15 % for 5
// of 20 seeds, by up to 19 %.) The gap values thus depend on m only; the
// seed decides which gaps are 0 and their order.
//
// With MaxGPUs 4 to 64, jobs of 4 to MaxGPUs GPUs (powers of two) are
// added, round(pBig·n) of the n jobs, where pBig is the share of the
// reference's source jobs outside its 1-/2-GPU jobs, split evenly between
// the GPU counts (each count above 4 gets ⌊big/k⌋ of them for k counts, 4
// GPUs the rest: an assumption, the table gives no split), each submitted at a random time
// inside a random gap between the 1-/2-GPU jobs so that those keep their
// inter-arrival profile, with durations distributed like 2-GPU jobs'.
type Generator struct {
	like    string
	maxGPUs int
	qu, qd  []float64 // quantile knots: u ascending, ln(duration seconds)
	p2      float64   // P(2 GPUs | 1 or 2 GPUs)
	a       float64   // 2-GPU quantile skew
	pZero   float64   // P(gap = 0)
	mu, sig float64   // lognormal of the positive gaps (seconds)
	pBig    float64   // P(a job needs > 2 GPUs)
	// inverses caches newInverse1's tables by (p2, a) (at most
	// maxInverses): drawing many small logs (spec checks, fuzzing) rebuilt
	// the same 4,097-point table every time, half of checking a spec.
	inverses sync.Map // [2]float64 → *inverse1 (read-only; copied for use)
	nInverse atomic.Int32
}

// maxInverses bounds a generator's cache of inverse tables.
const maxInverses = 256

// maxDurationS is the generators' longest run time (14 days).
const maxDurationS = 14 * 24 * 3600

// maxGapS caps a generated inter-arrival gap (1 day).
const maxGapS = 24 * 3600

// NewGenerator returns the generator for "philly", "saturn" or "venus"
// (a "-like" suffix is accepted), for jobs of at most maxGPUs GPUs: 2 (0
// means 2: the reference's 1- and 2-GPU jobs only), 4, 8, 16, 32 or 64.
func NewGenerator(like string, maxGPUs int) (*Generator, error) {
	if len(like) > 5 && like[len(like)-5:] == "-like" {
		like = like[:len(like)-5]
	}
	ref, err := referenceOrError(like)
	if err != nil {
		return nil, fmt.Errorf("generator: %w", err)
	}
	if maxGPUs == 0 {
		maxGPUs = 2
	}
	if !ValidMaxGPUs(maxGPUs) {
		return nil, fmt.Errorf("generator: max GPUs %d: want %s", maxGPUs, MaxGPUsChoices)
	}
	key := generatorKey{like, maxGPUs}
	if g, ok := generators.Load(key); ok {
		return g.(*Generator), nil
	}
	g, err := newGenerator(ref, maxGPUs)
	if err != nil {
		return nil, err
	}
	generators.Store(key, g)
	return g, nil
}

// MaxGPUsLimit is the largest GPU count a generated job may ask for.
const MaxGPUsLimit = 64

// MaxGPUsChoices lists the generators' accepted largest GPU counts.
const MaxGPUsChoices = "2, 4, 8, 16, 32 or 64"

// ValidMaxGPUs reports whether a generator accepts jobs of at most maxGPUs
// GPUs: a power of two from 2 to MaxGPUsLimit.
func ValidMaxGPUs(maxGPUs int) bool {
	return maxGPUs >= 2 && maxGPUs <= MaxGPUsLimit && maxGPUs&(maxGPUs-1) == 0
}

// generators caches NewGenerator's generators (safe for concurrent use; solving the skew
// takes milliseconds).
var generators sync.Map // generatorKey → *Generator

type generatorKey struct {
	like    string
	maxGPUs int
}

func newGenerator(ref Reference, maxGPUs int) (*Generator, error) {
	like := ref.Name
	g := &Generator{like: like, maxGPUs: maxGPUs, p2: ref.GPUDemand[2], pZero: ref.ZeroInterArrival}
	// Duration quantile knots.
	type knot struct{ u, d float64 }
	c := ref.RuntimeCDF
	ks := []knot{{0, 1}, {c.Under10m, 600}, {c.Under1h, 3600}, {c.Under6h, 6 * 3600}, {c.Under1d, 24 * 3600},
		{0.5, ref.DurationP50S}, {0.95, ref.DurationP95S}, {1, maxDurationS}}
	slices.SortFunc(ks, func(a, b knot) int {
		if a.u != b.u {
			return cmp.Compare(a.u, b.u)
		}
		return cmp.Compare(a.d, b.d)
	})
	for i, k := range ks {
		if i > 0 && (k.d < ks[i-1].d || k.u == ks[i-1].u) {
			return nil, fmt.Errorf("generator %s: reference quantiles are not increasing at u=%v", like, k.u)
		}
		g.qu = append(g.qu, k.u)
		g.qd = append(g.qd, math.Log(k.d))
	}
	// Inter-arrival gaps: lognormal through the positive gaps' conditional
	// quantiles.
	q50 := (0.5 - g.pZero) / (1 - g.pZero)
	q95 := (0.95 - g.pZero) / (1 - g.pZero)
	z50, z95 := normQuantile(q50), normQuantile(q95)
	g.sig = (math.Log(ref.InterArrivalP95S) - math.Log(ref.InterArrivalP50S)) / (z95 - z50)
	g.mu = math.Log(ref.InterArrivalP50S) - g.sig*z50
	// 2-GPU skew: solve the expected GPU-service split for a.
	g.a = g.solveSkew(ref.GPUService[2])
	if maxGPUs > 2 {
		g.pBig = 1 - float64(ref.JobCount)/float64(ref.SourceJobs)
	}
	return g, nil
}

// normQuantile is the standard normal quantile function.
func normQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// durationAt is the duration quantile function, in seconds.
func (g *Generator) durationAt(u float64) float64 {
	i, _ := slices.BinarySearch(g.qu, u)
	switch {
	case i == 0:
		return math.Exp(g.qd[0])
	case i >= len(g.qu):
		return math.Exp(g.qd[len(g.qd)-1])
	}
	f := (u - g.qu[i-1]) / (g.qu[i] - g.qu[i-1])
	return math.Exp(g.qd[i-1] + f*(g.qd[i]-g.qd[i-1]))
}

// solveSkew finds a in [1, 0.99/p2] whose expected 2-GPU share of
// GPU-seconds is target, by bisection over a numerical integral.
func (g *Generator) solveSkew(target float64) float64 {
	const steps = 4000
	qs := make([]float64, steps)
	for i := range qs {
		qs[i] = g.durationAt((float64(i) + 0.5) / steps)
	}
	share := func(a float64) float64 {
		var e1, e2 float64 // E[d | 1 GPU], E[d | 2 GPUs]
		for i, q := range qs {
			u := (float64(i) + 0.5) / steps
			w2 := a * math.Pow(u, a-1)
			e2 += q * w2
			e1 += q * (1 - g.p2*w2) / (1 - g.p2)
		}
		s2 := 2 * g.p2 * e2
		return s2 / (s2 + (1-g.p2)*e1)
	}
	lo, hi := 1.0, 0.99/g.p2
	if share(lo) >= target {
		return lo
	}
	if share(hi) <= target {
		return hi
	}
	for range 40 {
		mid := (lo + hi) / 2
		if share(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// Like is the reference trace the generator imitates.
func (g *Generator) Like() string { return g.like }

// Skew is the 2-GPU duration-quantile exponent a (1 = no skew).
func (g *Generator) Skew() float64 { return g.a }

// GenerateBlock is the most jobs the generators stratify together: a log
// of more jobs is drawn as consecutive blocks of GenerateBlock jobs (the last
// one shorter), each stratified on its own and joined by one more gap, so
// that generating any number of jobs takes memory for one block only. Every
// block holds the profile bounds of its own size, so the whole log does too.
const GenerateBlock = 1 << 18

// Generate draws n jobs using r (see Generator for the stratified
// sampling, GenerateBlock for long logs). Job ids are their index, the first
// job is submitted at 0, submit times and durations are whole seconds, and
// Status is empty.
func (g *Generator) Generate(n int, r *rand.Rand) []LogJob {
	if n < 1 {
		return nil
	}
	jobs := make([]LogJob, 0, n)
	_ = g.Stream(n, r, func(block []LogJob) error { // never fails
		jobs = append(jobs, block...)
		return nil
	})
	return jobs
}

// Stream draws the same n jobs as Generate, handing them to emit one block
// of at most GenerateBlock jobs at a time, in submission order; emit must not
// keep the slice. It stops at emit's first error and returns it.
func (g *Generator) Stream(n int, r *rand.Rand, emit func(block []LogJob) error) error {
	var at int64 // seconds
	for base := 0; base < n; base += GenerateBlock {
		var block []LogJob
		block, at = g.block(min(GenerateBlock, n-base), base, at, r)
		if err := emit(block); err != nil {
			return err
		}
	}
	return nil
}

// block draws n jobs with ids from base on. The first block (base 0) starts
// at time 0; a later one starts one gap after at, the previous block's last
// eligible job. It returns the jobs and the submit time of its last eligible
// job.
func (g *Generator) block(n, base int, at int64, r *rand.Rand) ([]LogJob, int64) {
	nBig := 0
	if g.pBig > 0 {
		nBig = min(int(math.Round(g.pBig*float64(n))), n-1)
	}
	m := n - nBig
	lead := base > 0 // one more gap, before this block's first job
	el := g.eligible(m, r)
	nGaps := m - 1
	if lead {
		nGaps = m
	}
	gaps := g.gaps(nGaps, r)
	big := g.big(nBig, gaps, r)
	jobs := make([]LogJob, 0, n)
	b, gi := 0, 0 // next big job, next gap
	for i, e := range el {
		if i > 0 || lead {
			for ; b < len(big) && big[b].gap == gi; b++ {
				jobs = append(jobs, g.job(base+len(jobs), at+big[b].off, big[b].gpus, big[b].dur))
			}
			at += int64(gaps[gi])
			gi++
		}
		jobs = append(jobs, g.job(base+len(jobs), at, 1+int(e&1), int64(e>>1)))
	}
	for ; b < len(big); b++ { // no gaps: one 1-/2-GPU job, the rest at 0 too
		jobs = append(jobs, g.job(base+len(jobs), at, big[b].gpus, big[b].dur))
	}
	return jobs, at
}

// drawn is a generated job before it is given an id and a submit time.
type drawn struct {
	gpus int
	dur  int64 // seconds
}

// eligible draws m 1-/2-GPU jobs in submission order: exactly round(p2·m)
// of 2 GPUs, each GPU count's duration quantiles stratified. A job is packed
// as duration<<1 | (1 if it needs 2 GPUs) in an int32 (durations are at most
// 14 days), which keeps the memory the shuffle walks small.
func (g *Generator) eligible(m int, r *rand.Rand) []int32 {
	n2 := int(math.Round(g.p2 * float64(m)))
	n1 := m - n2
	p2, a := float64(n2)/float64(m), g.a
	if p2*a > 0.99 {
		a = 0.99 / p2 // keep the 1-GPU density positive at tiny m
	}
	out := make([]int32, m)
	for k := range n2 {
		out[k] = int32(g.durationS(quantile2(stratum(k, n2, r), a)))<<1 | 1
	}
	inv := g.newInverse1(p2, a)
	for k := range n1 {
		out[n2+k] = int32(g.durationS(inv.at(stratum(k, n1, r)))) << 1
	}
	shuffle(out, r)
	return out
}

// shuffle permutes s uniformly at random (Fisher–Yates).
func shuffle[T any](s []T, r *rand.Rand) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}

// stratum draws (k+U)/m, U uniform on [0, 1).
func stratum(k, m int, r *rand.Rand) float64 {
	return (float64(k) + r.Float64()) / float64(m)
}

// quantile2 is the inverse of the 2-GPU jobs' quantile distribution u^a.
func quantile2(v, a float64) float64 { return math.Pow(v, 1/a) }

// cdf1 is the 1-GPU jobs' quantile distribution when a fraction p2 of the
// jobs need 2 GPUs: (u − p2·u^a)/(1 − p2), so that (1−p2)·cdf1 + p2·u^a = u.
func cdf1(u, p2, a float64) float64 { return (u - p2*math.Pow(u, a)) / (1 - p2) }

// inverse1 inverts cdf1 fast, for ascending arguments: linear
// interpolation in a table of cdf1 over a uniform grid of u plus the
// duration knots. The interpolant is increasing and exact at the knots, so a
// 1-GPU job's duration is under a runtime-CDF threshold exactly when its
// stratified quantile v is under cdf1 of the threshold's u, as with the
// exact inverse; elsewhere it is off by at most about 1e-6 in u (near u = 1,
// where cdf1 is flattest).
type inverse1 struct {
	u, v []float64 // v = cdf1(u), ascending
	i    int       // cursor: v[i-1] < the last argument ≤ v[i]
}

const inverse1Size = 1 << 12

func (g *Generator) newInverse1(p2, a float64) *inverse1 {
	if p2 == 0 || a == 1 {
		return &inverse1{}
	}
	key := [2]float64{p2, a}
	if c, ok := g.inverses.Load(key); ok {
		t := c.(*inverse1)
		return &inverse1{u: t.u, v: t.v, i: 1}
	}
	inv := g.buildInverse1(p2, a)
	if g.nInverse.Add(1) <= maxInverses {
		g.inverses.Store(key, inv)
	}
	return &inverse1{u: inv.u, v: inv.v, i: 1}
}

// buildInverse1 computes newInverse1's table.
func (g *Generator) buildInverse1(p2, a float64) *inverse1 {
	us := make([]float64, 0, inverse1Size+1+len(g.qu))
	for i := range inverse1Size + 1 {
		us = append(us, float64(i)/inverse1Size)
	}
	us = append(us, g.qu...)
	slices.Sort(us)
	us = slices.Compact(us)
	inv := &inverse1{u: us, v: make([]float64, len(us)), i: 1}
	for i, u := range us {
		inv.v[i] = cdf1(u, p2, a)
	}
	inv.v[len(us)-1] = 1
	return inv
}

// at returns cdf1⁻¹(v); successive calls' v must not decrease.
func (inv *inverse1) at(v float64) float64 {
	if inv.u == nil {
		return v
	}
	for inv.i < len(inv.v)-1 && inv.v[inv.i] < v {
		inv.i++
	}
	i := inv.i
	f := (v - inv.v[i-1]) / (inv.v[i] - inv.v[i-1])
	return min(max(inv.u[i-1]+f*(inv.u[i]-inv.u[i-1]), 0), math.Nextafter(1, 0))
}

// durationS is the duration at quantile u in whole seconds, rounded down
// (at least 1); 1e-6 s absorbs the floating-point error of exp(log(d)) at
// the knots.
func (g *Generator) durationS(u float64) int64 {
	return max(1, int64(g.durationAt(u)+1e-6))
}

// gaps draws n inter-arrival gaps in whole seconds, in submission order:
// exactly round(pZero·n) zeros, and the others at the quantiles that the
// type-7 percentiles of ProfileOf give their ranks among all gaps,
// j/(n−1) (the largest at most 1 − 1/(2n), not the distribution's
// unbounded end), so that the inter-arrival percentiles are the model's at
// any n, up to rounding. The seed shuffles the order.
func (g *Generator) gaps(n int, r *rand.Rand) []int32 {
	if n < 1 {
		return nil
	}
	nz := int(math.Round(g.pZero * float64(n)))
	out := make([]int32, n)
	for j := nz; j < n; j++ {
		p := 0.5 // a lone gap: the median
		if n > 1 {
			p = min(float64(j)/float64(n-1), 1-0.5/float64(n))
		}
		out[j] = g.gapAt((p - g.pZero) / (1 - g.pZero))
	}
	shuffle(out, r)
	return out
}

// gapAt is a positive gap at quantile v of the lognormal, in whole seconds
// within [1 s, maxGapS].
func (g *Generator) gapAt(v float64) int32 {
	if v <= 0 {
		return 1
	}
	if v >= 1 {
		return maxGapS
	}
	x := math.Exp(g.mu + g.sig*normQuantile(v))
	return int32(min(max(1, math.Round(x)), maxGapS))
}

// bigJob is a job of more than 2 GPUs submitted off inside gap gap.
type bigJob struct {
	drawn
	gap int
	off int64
}

// big draws n jobs of 4 to MaxGPUs GPUs (powers of two; with k such
// counts, ⌊n/k⌋ of each count above 4 and the rest of 4), durations
// stratified like 2-GPU jobs', each at a uniform time inside a uniformly
// chosen one of the gaps, sorted by gap and time.
func (g *Generator) big(n int, gaps []int32, r *rand.Rand) []bigJob {
	if n == 0 {
		return nil
	}
	out := make([]bigJob, n)
	counts := 0 // GPU counts 4, 8, …, maxGPUs
	for c := 4; c <= g.maxGPUs; c *= 2 {
		counts++
	}
	per := n / counts
	for k := range out {
		out[k].gpus = 4
		// The first per jobs get maxGPUs, the next per maxGPUs/2, …
		// (with 8: the first n/2 get 8).
		if c := g.maxGPUs >> (k / max(per, 1)); per > 0 && c > 4 {
			out[k].gpus = c
		}
	}
	r.Shuffle(n, func(i, j int) { out[i].gpus, out[j].gpus = out[j].gpus, out[i].gpus })
	for k := range out {
		out[k].dur = g.durationS(quantile2(stratum(k, n, r), g.a))
	}
	r.Shuffle(n, func(i, j int) { out[i].dur, out[j].dur = out[j].dur, out[i].dur })
	if len(gaps) == 0 {
		return out
	}
	for k := range out {
		out[k].gap = r.IntN(len(gaps))
		out[k].off = int64(r.Float64() * float64(gaps[out[k].gap]))
	}
	slices.SortFunc(out, func(x, y bigJob) int {
		if x.gap != y.gap {
			return x.gap - y.gap
		}
		return int(x.off - y.off)
	})
	return out
}

func (g *Generator) job(i int, at int64, gpus int, d int64) LogJob {
	return LogJob{ID: strconv.Itoa(i), Submit: time.Duration(at) * time.Second, Duration: time.Duration(d) * time.Second, GPUs: gpus}
}

// GenerateLike draws a synthetic log of n jobs like the reference "philly",
// "saturn" or "venus" (see Generator), with jobs of at most maxGPUs GPUs (0
// or 2, 4, 8, 16, 32, 64), seeded: the same arguments give the same log.
func GenerateLike(like string, n int, seed uint64, maxGPUs int) (*Log, error) {
	var jobs []LogJob
	name, err := StreamLike(like, n, seed, maxGPUs, func(block []LogJob) error {
		jobs = append(jobs, block...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Log{Name: name, Jobs: jobs, Records: len(jobs)}, nil
}

// StreamLike draws the log GenerateLike returns and hands it to emit one
// block at a time (see Generator.Stream), so that memory stays bounded at any
// n. It returns the log's name.
func StreamLike(like string, n int, seed uint64, maxGPUs int, emit func(block []LogJob) error) (string, error) {
	if n < 1 {
		return "", fmt.Errorf("generate: %d jobs: want at least 1", n)
	}
	g, err := NewGenerator(like, maxGPUs)
	if err != nil {
		return "", err
	}
	r := rand.New(rand.NewPCG(seed, 0xa3e915c0ffee))
	name := fmt.Sprintf("%s-like-%d-seed%d", g.like, n, seed)
	return name, g.Stream(n, r, emit)
}
