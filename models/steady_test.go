package models

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSteadyScanFits: the embedded u1 scan fitted on Philly's four AEGIS
// runs gives the shipped SteadySaturationA100, on Saturn's the 1.25 that
// docs/crowding.md quotes as the other trace's fit.
func TestSteadyScanFits(t *testing.T) {
	scan, err := SteadyScanA100()
	require.NoError(t, err)
	require.Len(t, scan, 8*8, "8 candidates x 8 runs")
	for _, tc := range []struct {
		trace string
		want  float64
	}{{"philly", SteadySaturationA100}, {"saturn", 1.25}} {
		runs := SteadyRuns(scan, tc.trace)
		require.Len(t, runs, 4, tc.trace)
		u, err := FitSteadySaturation(scan, tc.trace, runs)
		require.NoError(t, err)
		require.Equal(t, tc.want, u, tc.trace)
	}
	// One run alone can prefer another u1: Philly MU (lug) is least at 1.1.
	u, err := FitSteadySaturation(scan, "philly", []string{"aegis_lug_thresholded", "aegis_lug_thresholded"})
	require.NoError(t, err)
	require.Equal(t, 1.1, u)
	_, err = FitSteadySaturation(scan, "venus", []string{"x"})
	require.ErrorContains(t, err, `no runs of trace "venus"`)
	_, err = FitSteadySaturation(scan, "philly", []string{"nothing"})
	require.ErrorContains(t, err, "no error for run nothing")
}

func TestReadSteadyScan(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"header", "u,trace,run,dcgm_error\n1,p,r,0.1\n", `s.csv: header: missing column "u1"`},
		{"twice", "u1,trace,run,dcgm_error,u1\n1,p,r,0.1,2\n", `s.csv:1: header names column "u1" twice`},
		{"infinite", "u1,trace,run,dcgm_error\n1,p,r,+Inf\n", `s.csv:2: dcgm_error "+Inf"`},
		{"number", "u1,trace,run,dcgm_error\n1,p,r,x\n", `s.csv:2: dcgm_error "x"`},
		{"negative", "u1,trace,run,dcgm_error\n-1,p,r,0.1\n", `s.csv:2: u1 "-1"`},
		{"names", "u1,trace,run,dcgm_error\n1,,r,0.1\n", `s.csv:2: trace and run`},
		{"ragged", "u1,trace,run,dcgm_error\n1,p,r\n", `s.csv:2: wrong number of fields`},
		{"empty", "u1,trace,run,dcgm_error\n", `s.csv: no rows`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSteadyScan(strings.NewReader(tc.text), "s.csv")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// FuzzReadSteadyScan checks that any input reads into a scan of finite,
// non-negative numbers with named runs, or an error naming the file.
func FuzzReadSteadyScan(f *testing.F) {
	f.Add(string(steadyScanCSV))
	f.Add("u1,trace,run,dcgm_error\n1,p,r,0.1\n")
	f.Add("run,u1,dcgm_error,trace\n1.2,p,r,0.1\n")
	f.Fuzz(func(t *testing.T, s string) {
		scan, err := ReadSteadyScan(strings.NewReader(s), "s.csv")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "s.csv"), "%v", err)
			return
		}
		require.NotEmpty(t, scan)
		for _, r := range scan {
			require.False(t, math.IsNaN(r.U1) || math.IsInf(r.U1, 0) || r.U1 < 0)
			require.False(t, math.IsNaN(r.Err) || math.IsInf(r.Err, 0) || r.Err < 0)
			require.NotEmpty(t, r.Trace)
			require.NotEmpty(t, r.Run)
		}
	})
}
