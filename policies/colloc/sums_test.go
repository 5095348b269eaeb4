package colloc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
)

func TestSumAndProjected(t *testing.T) {
	v := &policies.View{
		GPUs: []policies.GPU{{Index: 0, CapacityMiB: 40960, Jobs: []policies.JobID{0, 1}}, {Index: 1, CapacityMiB: 40960}},
		Jobs: []policies.Job{
			{ID: 0, Profile: policies.Profile{PeakMiB: 1000, UtilPct: 30, Lucid: 1}},
			{ID: 1, Profile: policies.Profile{PeakMiB: 2500, UtilPct: 45.5, Lucid: 0}},
			{ID: 2, Profile: policies.Profile{PeakMiB: 700, UtilPct: 20, Lucid: 2}},
		},
	}
	cand := v.Job(2)
	for _, tc := range []struct {
		name      string
		f         colloc.Field
		g         int
		sum, proj float64
	}{
		{"peak on shared GPU", colloc.PeakMiB, 0, 3500, 4200},
		{"util on shared GPU", colloc.UtilPct, 0, 75.5, 95.5},
		{"class on shared GPU", colloc.LucidClass, 0, 1, 3},
		{"peak on idle GPU", colloc.PeakMiB, 1, 0, 700},
		{"class on idle GPU", colloc.LucidClass, 1, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.sum, colloc.Sum(v, tc.g, tc.f))
			require.Equal(t, tc.proj, colloc.Projected(v, cand, tc.g, tc.f))
		})
	}
}

func TestAtMost(t *testing.T) {
	for _, tc := range []struct {
		x, limit float64
		want     bool
	}{
		{100, 100, true},
		{100.01, 100, false},
		{99.99, 100, true},
		{33.3 + 33.3 + 33.4, 100, true}, // rounding error of a sum is forgiven
		{0.1 + 0.2, 0.3, true},
		{40448, 40960 - 512, true},
		{40449, 40960 - 512, false},
		{2, 2, true},
		{3, 2, false},
		{0, 0, true},
		{1e-6, 0, false},
	} {
		require.Equal(t, tc.want, colloc.AtMost(tc.x, tc.limit), "%v ≤ %v", tc.x, tc.limit)
	}
}
