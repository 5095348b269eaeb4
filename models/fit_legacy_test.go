package models

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadPairsSpecKeys: the legacy server's co-run file names workloads by
// spec file (spec_a_key, spec_b_key); they map to the catalog without
// ".yaml".
func TestReadPairsSpecKeys(t *testing.T) {
	in := "run_id,spec_a_key,spec_b_key,solo_time_a_s,solo_time_b_s,pair_time_a_s,pair_time_b_s\n" +
		"r1,mnist_bs32_1gpu.yaml,unet_voc_1gpu.yaml,234.5,4745.6,300,4800\n"
	ps, err := ReadPairs(strings.NewReader(in), "p.csv", Legacy11GB())
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, "mnist_bs32_1gpu", ps[0].A.ID)
	require.Equal(t, "unet_voc_1gpu", ps[0].B.ID)
	require.Equal(t, 300.0, ps[0].A.PairS)
	_, err = ReadPairs(strings.NewReader("run_id,spec_a_key\nr1,x.yaml\n"), "p.csv", Legacy11GB())
	require.ErrorContains(t, err, `missing column "spec_b_key"`)
}

// TestFitHoldsUnmeasuredFeatures: on the legacy catalog (no DRAM activity
// measured) the DRAMA coefficients stay exactly 0, and with NoMemory the
// memory ones too, while the rest recover the truth.
func TestFitHoldsUnmeasuredFeatures(t *testing.T) {
	cat := Legacy11GB()
	truth := &PressureModel{P: PressureParams{Intercept: -5, CoSMACT: 4, SelfSMACT: -1, NWayExponent: 1}}
	ps := pairsOf(truth, cat, "mnist_bs32_1gpu", "resnet18_cifar100_bs64_20e_1gpu", "efficientnet_imagenet_bs64_1gpu",
		"vgg16_imagenet_bs32_1gpu", "unet_voc_1gpu", "xception_imagenet_bs32_1gpu", "mobilenet_imagenet_bs32_1gpu")
	for _, tc := range []struct {
		name     string
		noMemory bool
	}{{"memory fitted", false}, {"no memory", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FitPressure(ps, cat, FitOptions{NoMemory: tc.noMemory})
			require.NoError(t, err)
			require.Zero(t, p.CoDRAMA)
			require.Zero(t, p.SelfDRAMA)
			if tc.noMemory {
				require.Zero(t, p.CoMem)
				require.Zero(t, p.SelfMem)
				require.InDelta(t, 4, p.CoSMACT, 0.05)
			}
			require.Less(t, pairLoss(&PressureModel{P: p}, cat, ps), 1e-5)
		})
	}
}
