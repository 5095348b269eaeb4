package policies

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemoryInputEstimate(t *testing.T) {
	p := &Profile{PeakMiB: 7000, Analytical: 9000, GPUMemNet: 16000}
	for _, tc := range []struct {
		in   MemoryInput
		want MemEstimate
	}{
		{MemPeak, MemEstimate{Status: EstimateKnown, MiB: 7000}},
		{MemAnalytical, MemEstimate{Status: EstimateKnown, MiB: 9000}},
		{MemGPUMemNet, MemEstimate{Status: EstimateKnown, MiB: 16000}},
		{MemFakeTensor, MemEstimate{Status: EstimateUnavailable}}, // 0: the estimator failed
		{MemEstFree, MemEstimate{Status: EstimateNone}},
		{"bogus", MemEstimate{Status: EstimateUnavailable}},
	} {
		require.Equal(t, tc.want, tc.in.Estimate(p), string(tc.in))
	}
	require.Len(t, MemoryInputs(), 5)
	require.Equal(t, "unavailable", EstimateUnavailable.String())
}
