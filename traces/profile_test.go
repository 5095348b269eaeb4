package traces

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/internal/golden"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
)

func TestProfileOf(t *testing.T) {
	jobs := []LogJob{ // deliberately out of submit order
		{Submit: sec(10), Duration: 30 * time.Minute, GPUs: 1},
		{Submit: 0, Duration: 5 * time.Minute, GPUs: 1},
		{Submit: sec(10), Duration: 2 * time.Hour, GPUs: 2},
		{Submit: sec(100), Duration: 48 * time.Hour, GPUs: 1},
		{Submit: sec(100), Duration: 10 * time.Minute, GPUs: 1}, // not under 10 min
	}
	p := ProfileOf(jobs)
	require.Equal(t, 5, p.JobCount)
	durs := []float64{300, 600, 1800, 7200, 172800}
	require.Equal(t, policies.Quantile(durs, 0.5), p.DurationP50S)
	require.Equal(t, policies.Quantile(durs, 0.95), p.DurationP95S)
	require.Equal(t, RuntimeCDF{0.2, 0.6, 0.8, 0.8}, p.RuntimeCDF)
	require.Equal(t, map[int]float64{1: 0.8, 2: 0.2}, p.GPUDemand)
	total := 300.0 + 600 + 1800 + 2*7200 + 172800
	require.InDelta(t, 2*7200/total, p.GPUService[2], 1e-12)
	require.InDelta(t, 1-2*7200/total, p.GPUService[1], 1e-12)
	gaps := []float64{10, 0, 90, 0} // 0,10,10,100,100
	require.Equal(t, policies.Quantile(gaps, 0.5), p.InterArrivalP50S)
	require.Equal(t, policies.Quantile(gaps, 0.95), p.InterArrivalP95S)
	require.Equal(t, 0.5, p.ZeroInterArrival)
	require.Equal(t, []int{1, 2}, p.GPUCounts())

	empty := ProfileOf(nil)
	require.Equal(t, 0, empty.JobCount)
	one := ProfileOf(jobs[:1])
	require.Equal(t, 1800.0, one.DurationP50S)
	require.Zero(t, one.InterArrivalP95S)
	_, err := json.Marshal(one)
	require.NoError(t, err, "no NaN")
}

// TestBuiltinProfilesGolden pins the profiles of the built-in traces
// (durations are the A100 catalog's solo runtimes); -update rewrites.
func TestBuiltinProfilesGolden(t *testing.T) {
	cat := models.A100()
	got := map[string]Profile{}
	for _, name := range []string{"demo", "philly", "saturn", "venus"} {
		tr, err := Load(name)
		require.NoError(t, err)
		p, err := ProfileTrace(tr, cat)
		require.NoError(t, err)
		got[name] = p
	}
	b, err := json.MarshalIndent(got, "", "  ")
	require.NoError(t, err)
	b = append(roundJSON(t, b), '\n')
	golden.File(t, "testdata/golden/builtin_profiles.json", b)

	_, err = ProfileTrace(&Trace{Name: "x", Jobs: []Job{{ID: "1", Workload: "nope", GPUs: 1}}}, cat)
	require.ErrorContains(t, err, `trace x: job 1: workload "nope" is not in the catalog`)
}

// roundJSON re-encodes JSON with every number rounded to 9 significant
// digits, so that goldens do not depend on the last bits of floating point.
func roundJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case float64:
			r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 9, 64), 64)
			return r
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return v
	}
	out, err := json.MarshalIndent(walk(v), "", "  ")
	require.NoError(t, err)
	return out
}

// TestReferenceProfilesMatchREADME checks the Go constants against the
// table in shared/traces/aegis-representative/README.md where it is present.
func TestReferenceProfilesMatchREADME(t *testing.T) {
	shared, ok := models.SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the reference profiles are not compared with the README table")
	}
	b, err := os.ReadFile(filepath.Join(shared, "traces", "aegis-representative", "README.md"))
	if err != nil {
		t.Skipf("README of the representative traces not found: %v", err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) == 4 {
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows[cells[0]] = cells[1:]
		}
	}
	nums := func(s string) []float64 {
		var out []float64
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == ' ' || r == '–' }) {
			v, err := strconv.ParseFloat(strings.ReplaceAll(f, ",", ""), 64)
			require.NoError(t, err, s)
			out = append(out, v)
		}
		return out
	}
	for i, name := range ReferenceNames() {
		ref, ok := ReferenceProfile(name)
		require.True(t, ok)
		p := ref.Profile
		cdf := p.RuntimeCDF.points()
		want := map[string][]float64{
			"source jobs / eligible (1–2 GPU) jobs":      {float64(ref.SourceJobs), float64(p.JobCount)},
			"duration p50 / p95 (s)":                     {p.DurationP50S, p.DurationP95S},
			"runtime CDF <10 min / <1 h / <6 h / <1 day": cdf[:],
			"GPU demand fraction 1 / 2 GPUs":             {p.GPUDemand[1], p.GPUDemand[2]},
			"GPU-service fraction 1 / 2 GPUs":            {p.GPUService[1], p.GPUService[2]},
			"inter-arrival p50 / p95 (s)":                {p.InterArrivalP50S, p.InterArrivalP95S},
			"zero inter-arrival fraction":                {p.ZeroInterArrival},
			"selected window (eligible index)":           {float64(ref.WindowStart), float64(ref.WindowEnd)},
		}
		for stat, w := range want {
			row, ok := rows[stat]
			require.True(t, ok, "README row %q", stat)
			require.Equal(t, w, nums(row[i]), "%s %s", name, stat)
		}
	}
	_, ok = ReferenceProfile("earth")
	require.False(t, ok)
}

// TestReferenceFractionsSumToOne guards against typos in the constants.
func TestReferenceFractionsSumToOne(t *testing.T) {
	for _, name := range ReferenceNames() {
		ref, _ := ReferenceProfile(name)
		for _, m := range []map[int]float64{ref.GPUDemand, ref.GPUService} {
			var s float64
			for _, v := range m {
				s += v
			}
			require.InDelta(t, 1, s, 1e-9, name)
		}
		pts := ref.RuntimeCDF.points()
		require.True(t, slices.IsSorted(pts[:]), name)
		require.Equal(t, 59, ref.WindowEnd-ref.WindowStart)
		require.False(t, math.IsNaN(ref.DurationP50S))
	}
}
