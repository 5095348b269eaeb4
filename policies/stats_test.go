package policies

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{5}, 5},
		// mean 2.5, median 2.5, p95 3.85, EWMA (α 0.4) 2.824.
		{"ascending", []float64{1, 2, 3, 4}, 2.9185},
		// The same values: only the EWMA (2.528) follows the order.
		{"shuffled", []float64{4, 1, 3, 2}, 2.8445},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, Score(tc.xs, nil), 1e-12)
		})
	}
}

func TestEWMA(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{1, 2, 3, 4}, 2.824}, // α = 0.4: 1, 1.4, 2.04, 2.824
		{[]float64{4, 1, 3, 2}, 2.528},
	} {
		require.InDelta(t, tc.want, EWMA(tc.xs), 1e-12, "%v", tc.xs)
	}
}
