package models

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDepthScanFits: the embedded δ scan fitted on Philly's four AEGIS
// runs gives the shipped DepthOverlapA100 with docs/crowding.md's figures,
// on Saturn's the 0.5 it quotes as the other trace's fit.
func TestDepthScanFits(t *testing.T) {
	scan, err := DepthScanA100()
	require.NoError(t, err)
	require.Len(t, scan, 10*2*8, "10 candidates x 2 seed sets x 8 runs")
	for _, tc := range []struct {
		trace string
		want  float64
	}{{"philly", DepthOverlapA100}, {"saturn", 0.5}} {
		runs := DepthRuns(scan, tc.trace)
		require.Len(t, runs, 4, tc.trace)
		d, err := FitDepthOverlap(scan, tc.trace, runs)
		require.NoError(t, err)
		require.Equal(t, tc.want, d, tc.trace)
	}
	// docs/crowding.md's table: Philly at δ = 0 and 0.2.
	fits, err := DepthFits(scan, "philly", DepthRuns(scan, "philly"))
	require.NoError(t, err)
	require.Equal(t, 0.0, fits[0].Delta)
	require.InDelta(t, 1.025, fits[0].Loss, 1e-9)
	require.Equal(t, fits[0].Loss, fits[0].J, "δ = 0 is the guard's baseline")
	require.Equal(t, 0.2, fits[3].Delta)
	require.InDelta(t, 0.725, fits[3].Loss, 1e-9)
	require.InDelta(t, 0.487, fits[3].J, 5e-4)
	// The runs drawn decide: Philly's NF runs alone (whose peaks and
	// failures δ does not move) keep δ where the DCGM error is least.
	nf := []string{"aegis_magm_no_thresholds", "aegis_lug_no_thresholds"}
	d, err := FitDepthOverlap(scan, "philly", nf)
	require.NoError(t, err)
	require.NotEqual(t, DepthOverlapA100, d, "another draw, another δ")
	_, err = FitDepthOverlap(scan, "venus", []string{"x"})
	require.ErrorContains(t, err, `no runs of trace "venus"`)
	_, err = FitDepthOverlap(scan, "philly", []string{"nothing"})
	require.ErrorContains(t, err, "no row for run nothing")
}

// TestDepthFits: the loss and J on a small scan worked by hand; a scan
// without δ = 0 or with unequal seed sets is an error.
func TestDepthFits(t *testing.T) {
	row := func(d float64, seeds, run string, peak, failed, e float64) DepthRun {
		return DepthRun{Delta: d, Seeds: seeds, Trace: "p", Run: run, PeakMeasured: 10, PeakOurs: peak, FailedMeasured: 2, FailedOurs: failed, Err: e}
	}
	scan := []DepthRun{
		row(0, "1-5", "a", 14, 6, 0.05), row(0, "6-10", "a", 12, 4, 0.07), // peak 13 (err 3), failed 5 (3)
		row(0, "1-5", "b", 10, 2, 0.02), row(0, "6-10", "b", 10, 2, 0.02), // exact
		row(0.5, "1-5", "a", 10, 2, 0.07), row(0.5, "6-10", "a", 10, 2, 0.07), // exact, DCGM +0.01
		row(0.5, "1-5", "b", 10, 2, 0.04), row(0.5, "6-10", "b", 10, 2, 0.04), // DCGM +0.02
	}
	fits, err := DepthFits(scan, "p", []string{"a", "b"})
	require.NoError(t, err)
	require.Len(t, fits, 2)
	require.InDelta(t, (3.0/2+3.0/2)/4, fits[0].Loss, 1e-12) // (run a: |3|/2 + |3|/2, run b: 0) / (2 figures x 2 runs)
	require.InDelta(t, 0.04, fits[0].Err, 1e-12)
	require.InDelta(t, fits[0].Loss, fits[0].J, 1e-12)
	require.InDelta(t, 0.0, fits[1].Loss, 1e-12)
	require.InDelta(t, 1.5, fits[1].J, 1e-9, "the DCGM error rose 0.015: 1.5 units")
	d, err := FitDepthOverlap(scan, "p", []string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, 0.0, d, "J 0.75 at δ = 0 against 1.5 at 0.5")
	// Run a drawn twice and b not: the peak and failures weigh more.
	fits, err = DepthFits(scan, "p", []string{"a", "a"})
	require.NoError(t, err)
	require.InDelta(t, 1.5, fits[0].J, 1e-12)
	require.InDelta(t, 0.01/DepthGuard, fits[1].J, 1e-9, "no loss, DCGM +0.01")
	d, err = FitDepthOverlap(scan, "p", []string{"a", "a"})
	require.NoError(t, err)
	require.Equal(t, 0.5, d)

	_, err = DepthFits(scan[4:], "p", []string{"a"})
	require.ErrorContains(t, err, "no δ = 0 rows")
	_, err = DepthFits(scan[:7], "p", []string{"b"})
	require.ErrorContains(t, err, "run b: 1 seed sets at δ = 0.5, want as many as at δ = 0")
}

func TestReadDepthScan(t *testing.T) {
	const head = "delta,seeds,trace,run,peak_measured,peak_ours,failed_measured,failed_ours,dcgm_error\n"
	scan, err := ReadDepthScan(strings.NewReader(head+"0.2,1-5,philly,r,13,14.8,3,5.8,0.030\n"), "d.csv")
	require.NoError(t, err)
	require.Equal(t, []DepthRun{{Delta: 0.2, Seeds: "1-5", Trace: "philly", Run: "r", PeakMeasured: 13, PeakOurs: 14.8, FailedMeasured: 3, FailedOurs: 5.8, Err: 0.03}}, scan)
	for _, tc := range []struct{ name, text, want string }{
		{"header", strings.Replace(head, "delta", "d", 1) + "0,1-5,p,r,1,1,1,1,0.1\n", `d.csv: header: missing column "delta"`},
		{"number", head + "0,1-5,p,r,1,x,1,1,0.1\n", `d.csv:2: peak_ours "x"`},
		{"negative", head + "-1,1-5,p,r,1,1,1,1,0.1\n", `d.csv:2: delta "-1"`},
		{"infinite", head + "0,1-5,p,r,1,1,1,1,NaN\n", `d.csv:2: dcgm_error "NaN"`},
		{"names", head + "0,,p,r,1,1,1,1,0.1\n", `d.csv:2: seeds, trace and run`},
		{"ragged", head + "0,1-5,p,r\n", `d.csv:2: wrong number of fields`},
		{"empty", head, `d.csv: no rows`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadDepthScan(strings.NewReader(tc.text), "d.csv")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// FuzzReadDepthScan checks that any input reads into a scan of finite,
// non-negative numbers with named runs, or an error naming the file.
func FuzzReadDepthScan(f *testing.F) {
	f.Add(string(depthScanCSV))
	f.Add("delta,seeds,trace,run,peak_measured,peak_ours,failed_measured,failed_ours,dcgm_error\n0,1-5,p,r,1,1,1,1,0.1\n")
	f.Fuzz(func(t *testing.T, s string) {
		scan, err := ReadDepthScan(strings.NewReader(s), "d.csv")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "d.csv"), "%v", err)
			return
		}
		require.NotEmpty(t, scan)
		for _, r := range scan {
			for _, v := range []float64{r.Delta, r.PeakMeasured, r.PeakOurs, r.FailedMeasured, r.FailedOurs, r.Err} {
				require.False(t, math.IsNaN(v) || math.IsInf(v, 0) || v < 0)
			}
			require.NotEmpty(t, r.Seeds)
			require.NotEmpty(t, r.Trace)
			require.NotEmpty(t, r.Run)
		}
	})
}
