package traces

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

const tinyCatalog = `workload,gpus,gpu,solo_s,peak_mib,smact_mean,smact_p95,smocc_mean,smocc_p95,drama_mean,drama_p95,util_pct,analytical_mib,faketensor_mib,gpumemnet_mib,lucid_class
a,1,0,100,1,0,0,0,0,0,0,1,0,0,0,tiny
b,1,0,200,1,0,0,0,0,0,0,1,0,0,0,tiny
c,1,0,300,1,0,0,0,0,0,0,1,0,0,0,tiny
d,1,0,400,1,0,0,0,0,0,0,1,0,0,0,tiny
x,2,0,1000,1,0,0,0,0,0,0,1,0,0,0,tiny
x,2,1,1000,1,0,0,0,0,0,0,1,0,0,0,tiny
y,2,0,50,1,0,0,0,0,0,0,1,0,0,0,tiny
y,2,1,50,1,0,0,0,0,0,0,1,0,0,0,tiny
`

func TestMapWorkloads(t *testing.T) {
	cat, err := models.ReadCatalog(strings.NewReader(tinyCatalog), "tiny")
	require.NoError(t, err)
	j := func(gpus int, d time.Duration) LogJob { return LogJob{GPUs: gpus, Duration: d} }
	for _, tc := range []struct {
		name string
		jobs []LogJob
		want []string
	}{
		{"same count: rank order", []LogJob{j(1, 4), j(1, 1), j(1, 3), j(1, 2)}, []string{"d", "a", "c", "b"}},
		{"scale free", []LogJob{j(1, 4*time.Hour), j(1, time.Second), j(1, 3*time.Hour), j(1, 2*time.Hour)}, []string{"d", "a", "c", "b"}},
		{"one job: median, tie to the shorter", []LogJob{j(1, time.Hour)}, []string{"b"}},
		{"eight jobs onto four", []LogJob{j(1, 1), j(1, 2), j(1, 3), j(1, 4), j(1, 5), j(1, 6), j(1, 7), j(1, 8)}, []string{"a", "a", "b", "b", "c", "c", "d", "d"}},
		{"equal durations map alike", []LogJob{j(1, 5), j(1, 5), j(1, 5), j(1, 9)}, []string{"b", "b", "b", "d"}},
		{"per GPU count", []LogJob{j(2, 10), j(1, 7), j(2, 1), j(1, 3)}, []string{"x", "c", "y", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MapWorkloads(tc.jobs, cat)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err = MapWorkloads([]LogJob{j(1, 1), {ID: "big", GPUs: 8}}, cat)
	require.ErrorContains(t, err, "job big needs 8 GPUs, but the catalog has no 8-GPU workload (1 such jobs)")
}

// TestMapGeneratedLog maps a synthetic log onto the A100 catalog: the map is
// monotone in duration within a GPU count, and, once equal durations are
// made distinct (they map together), every workload is used about equally:
// quantiles spread uniformly over the catalog.
func TestMapGeneratedLog(t *testing.T) {
	cat := models.A100()
	l, err := GenerateLike("venus", 20000, 9, 0)
	require.NoError(t, err)
	for i := range l.Jobs {
		l.Jobs[i].Duration += time.Duration(i) // break ties
	}
	tr, err := MapTrace("venus-like", l.Jobs, cat, Exact)
	require.NoError(t, err)
	require.Len(t, tr.Jobs, len(l.Jobs))
	uses := map[string]int{}
	byGPUs := map[int][][2]float64{}
	for i, job := range tr.Jobs {
		w, ok := cat.Get(job.Workload)
		require.True(t, ok)
		require.Equal(t, job.GPUs, w.GPUs)
		require.Equal(t, l.Jobs[i].ID, job.ID)
		require.Equal(t, l.Jobs[i].Submit, job.Submit)
		uses[job.Workload]++
		byGPUs[job.GPUs] = append(byGPUs[job.GPUs], [2]float64{l.Jobs[i].Duration.Seconds(), w.SoloS})
	}
	for g, pairs := range byGPUs {
		slices.SortFunc(pairs, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
		for i := 1; i < len(pairs); i++ {
			require.LessOrEqual(t, pairs[i-1][1], pairs[i][1], "monotone within %d GPUs", g)
		}
	}
	for _, id := range cat.IDs() {
		w, _ := cat.Get(id)
		share := float64(uses[id]) / float64(len(byGPUs[w.GPUs]))
		var m int
		for _, id2 := range cat.IDs() {
			if w2, _ := cat.Get(id2); w2.GPUs == w.GPUs {
				m++
			}
		}
		require.InDelta(t, 1/float64(m), share, 0.01/float64(m)+1/float64(len(byGPUs[w.GPUs])), id)
	}
	// The mapped trace is runnable: it round-trips through our CSV.
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, tr))
	again, err := ReadCSV(&buf, "again")
	require.NoError(t, err)
	require.Equal(t, tr.Jobs, again.Jobs)
}

// TestMapWorkloadsDividing: a job of G GPUs maps onto the catalog's largest
// GPU count dividing G, by its quantile among the jobs of G GPUs; counts the
// catalog has map as MapWorkloads does; no divisor is an error naming the job.
func TestMapWorkloadsDividing(t *testing.T) {
	cat, err := models.ReadCatalog(strings.NewReader(tinyCatalog), "tiny")
	require.NoError(t, err)
	j := func(id string, gpus int, d time.Duration) LogJob { return LogJob{ID: id, GPUs: gpus, Duration: d} }
	jobs := []LogJob{j("0", 2, 10), j("1", 1, 7), j("2", 64, 1), j("3", 1, 3), j("4", 64, 9), j("5", 3, 4), j("6", 3, 1), j("7", 3, 2), j("8", 3, 3)}
	got, err := MapWorkloadsDividing(jobs, cat)
	require.NoError(t, err)
	// 64 → 2-GPU workloads (y short, x long); 3 → 1-GPU workloads by rank.
	require.Equal(t, []string{"y", "c", "y", "a", "x", "d", "a", "b", "c"}, got)
	plain, err := MapWorkloads(jobs[:2], cat)
	require.NoError(t, err)
	div, err := MapWorkloadsDividing(jobs[:2], cat)
	require.NoError(t, err)
	require.Equal(t, plain, div)

	_, err = MapWorkloads(jobs, cat)
	require.ErrorContains(t, err, "job 5 needs 3 GPUs, but the catalog has no 3-GPU workload")
	// MapTrace: Exact refuses what Dividing maps, with each job's
	// duration as its solo_s.
	_, err = MapTrace("t", jobs, cat, Exact)
	require.ErrorContains(t, err, "job 5 needs 3 GPUs")
	tr, err := MapTrace("t", jobs, cat, Dividing)
	require.NoError(t, err)
	for _, job := range tr.Jobs {
		i := slices.IndexFunc(jobs, func(l LogJob) bool { return l.ID == job.ID })
		require.Equal(t, got[i], job.Workload)
		require.Equal(t, jobs[i].Duration.Seconds(), job.SoloS)
	}
	tr, err = MapTrace("t", jobs[:2], cat, Exact)
	require.NoError(t, err)
	require.Zero(t, tr.Jobs[0].SoloS, "Exact keeps no solo_s")
	only2, err := models.ReadCatalog(strings.NewReader(strings.Split(tinyCatalog, "\n")[0]+"\n"+strings.Join(strings.Split(tinyCatalog, "\n")[5:], "\n")), "only2")
	require.NoError(t, err)
	_, err = MapWorkloadsDividing([]LogJob{j("9", 8, 1), j("10", 3, 1)}, only2)
	require.ErrorContains(t, err, "map: job 10 needs 3 GPUs, but no GPU count of the catalog's workloads divides 3 (1 such jobs)")
}
