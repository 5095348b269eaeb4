package models

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCombineTelemetry(t *testing.T) {
	light := TelemetryJob{SMACT: 0.2, SMOCC: 0.1, DRAMA: 0.05, Util: 0.3, Rate: 1}
	heavy := TelemetryJob{SMACT: 0.8, SMOCC: 0.4, DRAMA: 0.4, Util: 0.9, Rate: 0.5}
	for _, tc := range []struct {
		name    string
		p       TelemetryParams
		jobs    []TelemetryJob
		s, o, d float64
	}{
		{"alone is the solo draw", TelemetryParams{RateWeight: 1, Saturation: 1}, []TelemetryJob{{SMACT: 0.5, SMOCC: 0.3, DRAMA: 0.2, Util: 0.9, Rate: 1}}, 0.5, 0.3, 0.2},
		{"zero value sums and saturates", TelemetryParams{}, []TelemetryJob{light, heavy}, 1, 0.5, 0.45},
		{"rate weight", TelemetryParams{RateWeight: 1}, []TelemetryJob{light, heavy}, 0.6, 0.3, 0.25},
		{"saturation divides by the summed duty", TelemetryParams{Saturation: 1}, []TelemetryJob{light, heavy}, 1 / 1.2, 0.5 / 1.2, 0.45 / 1.2},
		{"saturation below the duty leaves it", TelemetryParams{Saturation: 2}, []TelemetryJob{light, heavy}, 1, 0.5, 0.45},
		{"both", TelemetryParams{RateWeight: 1, Saturation: 0.5}, []TelemetryJob{light, heavy}, 0.6 * 0.5 / 0.75, 0.3 * 0.5 / 0.75, 0.25 * 0.5 / 0.75},
		{"none", TelemetryParams{Saturation: 1}, nil, 0, 0, 0},
	} {
		s, o, d := tc.p.CombineTelemetry(tc.jobs)
		require.InDelta(t, tc.s, s, 1e-12, tc.name)
		require.InDelta(t, tc.o, o, 1e-12, tc.name)
		require.InDelta(t, tc.d, d, 1e-12, tc.name)
	}
	require.Error(t, TelemetryParams{RateWeight: -1}.Check())
	require.Error(t, TelemetryParams{Saturation: 1e9}.Check())
	require.NoError(t, TelemetryParams{RateWeight: 1, Saturation: 1.2}.Check())
}

func TestTelemetryInModelFile(t *testing.T) {
	base := "model: pressure\nparams:\n  intercept: -4\n  co_smact: 4\n  co_drama: 0\n  co_mem_per_10gib: 0.5\n  self_smact: 0\n  self_drama: 2\n  self_mem_per_10gib: 0\n  capacity: 1.1\n  nway_exponent: 1\n"
	f, err := ReadInterference([]byte(base+"telemetry:\n  rate_weight: 0.5\n  saturation: 1.2\n"), "m.yaml")
	require.NoError(t, err)
	require.Equal(t, &TelemetryParams{RateWeight: 0.5, Saturation: 1.2}, f.Telemetry)
	_, err = ReadInterference([]byte(base+"telemetry:\n  rate_weight: 0.5\n  saturation: -1\n"), "m.yaml")
	require.ErrorContains(t, err, "m.yaml:12: telemetry: saturation -1")
	_, err = ReadInterference([]byte(base+"telemetry:\n  rate_wieght: 0.5\n"), "m.yaml")
	require.ErrorContains(t, err, "m.yaml:13")
	f, err = ReadInterference([]byte(base), "m.yaml")
	require.NoError(t, err)
	require.Nil(t, f.Telemetry)
	require.NoError(t, DefaultTelemetry().Check())
}
