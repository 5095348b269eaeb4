package colloc

import (
	"math"

	"github.com/aegis-sched/aegis/policies"
)

// Field reads one profiled or estimated figure of a job, such as its
// profiled peak memory. Rules built on profiles (Lucid, Horus) sum a Field
// over a GPU's jobs instead of reading measurements.
type Field func(j *policies.Job) float64

// PeakMiB is a Field: the job's profiled solo peak memory on its busiest GPU.
func PeakMiB(j *policies.Job) float64 { return j.PeakMiB }

// UtilPct is a Field: the job's profiled mean nvidia-smi utilization in
// percent.
func UtilPct(j *policies.Job) float64 { return j.UtilPct }

// LucidClass is a Field: the job's Lucid sharing class (tiny 0, medium 1,
// jumbo 2).
func LucidClass(j *policies.Job) float64 { return float64(j.Lucid) }

// Sum returns the sum of f over the jobs running on GPU g.
func Sum(v *policies.View, g int, f Field) float64 {
	var s float64
	for _, id := range v.GPUs[g].Jobs {
		s += f(v.Job(id))
	}
	return s
}

// Projected returns the sum of f over GPU g's jobs and j: the figure GPU g
// would have if j were placed on it.
func Projected(v *policies.View, j *policies.Job, g int, f Field) float64 {
	return Sum(v, g, f) + f(j)
}

// AtMost reports whether x ≤ limit, forgiving the rounding error that
// summing float64 figures can introduce (a relative 1e-9), so that a sum
// landing exactly on a limit is admitted.
func AtMost(x, limit float64) bool {
	return x <= limit+1e-9*max(1, math.Abs(limit))
}
