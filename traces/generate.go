package traces

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
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
// p50, p95, 14 days at 1). A job's duration quantile u is uniform over all
// 1-/2-GPU jobs, but 2-GPU jobs draw u from the density a·u^(a−1) and 1-GPU
// jobs from the complementary density (by rejection), so that 2-GPU jobs run
// longer by the factor the GPU-service split implies while the mixture keeps
// the exact CDF; a is solved numerically. Inter-arrival gaps are 0 with the
// zero fraction, else a lognormal through the reference's p50 and p95,
// rounded to whole seconds (at least 1). Durations are whole seconds too.
//
// With MaxGPUs 4 or 8, jobs of 4 (and 8) GPUs are added, as many as the
// reference's source jobs exceed its 1-/2-GPU jobs (split evenly between 4
// and 8 GPUs: an assumption, the table gives no split), submitted between
// the 1-/2-GPU jobs so that those keep their inter-arrival profile, with
// durations drawn like 2-GPU jobs'.
type Generator struct {
	like    string
	maxGPUs int
	qu, qd  []float64 // quantile knots: u ascending, ln(duration seconds)
	p2      float64   // P(2 GPUs | 1 or 2 GPUs)
	a       float64   // 2-GPU quantile skew
	pZero   float64   // P(gap = 0)
	mu, sig float64   // lognormal of the positive gaps (seconds)
	pBig    float64   // P(a job needs > 2 GPUs)
}

// maxDurationS is the generators' longest run time (14 days).
const maxDurationS = 14 * 24 * 3600

// maxGapS caps a generated inter-arrival gap (1 day).
const maxGapS = 24 * 3600

// NewGenerator returns the generator for "philly", "saturn" or "venus"
// (a "-like" suffix is accepted), for jobs of at most maxGPUs GPUs: 2 (0
// means 2: the reference's 1- and 2-GPU jobs only), 4 or 8.
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
	if maxGPUs != 2 && maxGPUs != 4 && maxGPUs != 8 {
		return nil, fmt.Errorf("generator: max GPUs %d: want 2, 4 or 8", maxGPUs)
	}
	g := &Generator{like: like, maxGPUs: maxGPUs, p2: ref.GPUDemand[2], pZero: ref.ZeroInterArrival}
	// Duration quantile knots.
	type knot struct{ u, d float64 }
	c := ref.RuntimeCDF
	ks := []knot{{0, 1}, {c.Under10m, 600}, {c.Under1h, 3600}, {c.Under6h, 6 * 3600}, {c.Under1d, 24 * 3600},
		{0.5, ref.DurationP50S}, {0.95, ref.DurationP95S}, {1, maxDurationS}}
	slices.SortFunc(ks, func(a, b knot) int {
		if a.u != b.u {
			return cmpFloat(a.u, b.u)
		}
		return cmpFloat(a.d, b.d)
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

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

// Generate draws n jobs using r. Job ids are their index, the first job is
// submitted at 0, submit times and durations are whole seconds, and Status
// is empty.
func (g *Generator) Generate(n int, r *rand.Rand) []LogJob {
	jobs := make([]LogJob, 0, n)
	var at int64 // seconds
	for len(jobs) < n {
		if len(jobs) > 0 {
			gap := g.gap(r)
			// Jobs of more than 2 GPUs arrive inside the gap.
			if g.pBig > 0 {
				var big []int64
				for len(jobs)+len(big) < n-1 && r.Float64() < g.pBig {
					big = append(big, at+int64(r.Float64()*float64(gap)))
				}
				slices.Sort(big)
				for _, t := range big {
					gp := 4
					if g.maxGPUs == 8 && r.IntN(2) == 1 {
						gp = 8
					}
					jobs = append(jobs, g.job(len(jobs), t, gp, g.skewed(r)))
				}
			}
			at += gap
		}
		u, gp := 0.0, 1
		if r.Float64() < g.p2 {
			gp, u = 2, g.skewed(r)
		} else {
			u = g.complement(r)
		}
		jobs = append(jobs, g.job(len(jobs), at, gp, u))
	}
	return jobs
}

func (g *Generator) job(i int, at int64, gpus int, u float64) LogJob {
	d := max(1, math.Round(g.durationAt(u)))
	return LogJob{ID: strconv.Itoa(i), Submit: time.Duration(at) * time.Second, Duration: time.Duration(d) * time.Second, GPUs: gpus}
}

// skewed draws u from the density a·u^(a−1).
func (g *Generator) skewed(r *rand.Rand) float64 {
	return math.Pow(r.Float64(), 1/g.a)
}

// complement draws u from (1 − p2·a·u^(a−1)) / (1 − p2), by rejection from
// the uniform: the 1-GPU jobs' share that keeps the mixture uniform.
func (g *Generator) complement(r *rand.Rand) float64 {
	for {
		u := r.Float64()
		if r.Float64() < 1-g.p2*g.a*math.Pow(u, g.a-1) {
			return u
		}
	}
}

// gap draws one inter-arrival gap in whole seconds.
func (g *Generator) gap(r *rand.Rand) int64 {
	if r.Float64() < g.pZero {
		return 0
	}
	x := math.Exp(g.mu + g.sig*r.NormFloat64())
	return int64(min(max(1, math.Round(x)), maxGapS))
}

// GenerateLike draws a synthetic log of n jobs like the reference "philly",
// "saturn" or "venus" (see Generator), with jobs of at most maxGPUs GPUs (0
// or 2, 4, 8), seeded: the same arguments give the same log.
func GenerateLike(like string, n int, seed uint64, maxGPUs int) (*Log, error) {
	if n < 1 {
		return nil, fmt.Errorf("generate: %d jobs: want at least 1", n)
	}
	g, err := NewGenerator(like, maxGPUs)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0xa3e915c0ffee))
	jobs := g.Generate(n, r)
	return &Log{Name: fmt.Sprintf("%s-like-%d-seed%d", g.like, n, seed), Jobs: jobs, Records: len(jobs)}, nil
}
