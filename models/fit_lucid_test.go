package models

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"identical", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{"monotone transform", []float64{0.1, 5, 2, 9}, []float64{1, 125, 8, 729}, 1},
		{"ties", []float64{1, 1, 2}, []float64{1, 2, 3}, math.Sqrt(3) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, Spearman(tc.x, tc.y), 1e-12)
		})
	}
	require.True(t, math.IsNaN(Spearman([]float64{1, 1}, []float64{1, 2})))
	require.True(t, math.IsNaN(Spearman([]float64{1}, []float64{1})))
	require.True(t, math.IsNaN(Spearman([]float64{1}, []float64{1, 2})), "lengths differ")
}

const lucidSingle = `model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label
A,D,32,0,100,90,50,8000,2
B,D,32,0,100,20,2,2000,0
`

const lucidCo = `,model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem
0,A,D,1,32,0,0.9,B,D,1,32,0,0.5,1,1,1
1,A,D,2,32,0,0.9,B,D,1,32,0,0.5,1,1,1
2,B,D,1,32,0,0.99,B,D,1,32,0,0.97,1,1,1
`

func TestReadLucid(t *testing.T) {
	ps, err := readLucid(strings.NewReader(lucidCo), "co.csv", strings.NewReader(lucidSingle), "single.csv")
	require.NoError(t, err)
	require.Len(t, ps, 2, "the 2-GPU row is skipped")
	require.Equal(t, lucidJob{Key: "A/D/32/0", Speed: 0.9,
		Profile: Profile{PeakMiB: 8000, SMACT: Stat{Mean: 0.9, P95: 0.9}, DRAMA: Stat{Mean: 0.5, P95: 0.5}, UtilPct: 90}}, ps[0].A)
	require.Equal(t, 2, ps[0].Line)

	// The heavy job A hurts the light one B more than the reverse: the model
	// agrees with that row; the near-tie row is left out of Sign.
	a := lucidAgreement(DefaultInterference(), ps, 0.05)
	require.Equal(t, 4, a.Jobs)
	require.Equal(t, 1, a.SignPairs)
	require.Equal(t, 1.0, a.Sign)

	for _, tc := range []struct{ name, co, single, want string }{
		{"no solo row", strings.Replace(lucidCo, "B,D,1,32,0,0.5", "C,D,1,32,0,0.5", 1), lucidSingle, "co.csv:2: job C/D/32/0 has no solo row"},
		{"bad speed", strings.Replace(lucidCo, "0.9,B", "fast,B", 1), lucidSingle, "co.csv:2: column speed1"},
		{"missing column", "model1\n", lucidSingle, `co.csv: header: missing column "dataset1"`},
		{"only multi-GPU", strings.Split(lucidCo, "\n")[0] + "\n1,A,D,2,32,0,0.9,B,D,1,32,0,0.5,1,1,1\n", lucidSingle, "no single-GPU"},
		{"bad single", lucidCo, strings.Replace(lucidSingle, "90,50", "x,50", 1), "single.csv:2: column gpu_util"},
		{"single header", lucidCo, "model\nA\n", `single.csv: header: missing column "dataset"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readLucid(strings.NewReader(tc.co), "co.csv", strings.NewReader(tc.single), "single.csv")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestLucidDirection reports how the A100-fitted model's direction of
// slowdown agrees with Lucid's independent RTX 3090 table (skipped without
// the shared data). Acceptance: better than chance on every figure.
func TestLucidDirection(t *testing.T) {
	dir, ok := SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
	co, err := os.Open(filepath.Join(dir, "calibration", "lucid", "colocate_info.csv"))
	require.NoError(t, err)
	defer co.Close()
	si, err := os.Open(filepath.Join(dir, "calibration", "lucid", "single_data.csv"))
	require.NoError(t, err)
	defer si.Close()
	ps, err := readLucid(co, "colocate_info.csv", si, "single_data.csv")
	require.NoError(t, err)
	require.Len(t, ps, 1388)
	for _, th := range []float64{0, 0.05, 0.1} {
		a := lucidAgreement(DefaultInterference(), ps, th)
		t.Logf("threshold %.2f: %+v", th, a)
		require.Greater(t, a.Spearman, 0.3)
		require.Greater(t, a.PairSpearman, 0.3)
		require.Greater(t, a.Sign, 0.5)
	}
}
