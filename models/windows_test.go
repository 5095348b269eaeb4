package models

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDeriveWindows(t *testing.T) {
	head := "run_id,finish_status,base_metric,mean_w200s,median_w200s,p95_w200s\n"
	in := head +
		"solo_0001_vgg_1gpu_ab12,completed,smact,0.54,0.82,0.83\n" + // low mode: idle 1-0.54/0.82
		"solo_0001_vgg_1gpu_ab12,completed,drama,0.42,0.41,0.44\n" + // mean above median: idle 0
		"solo_0002_short_1gpu_cd34,completed,smact,0.18,0.24,0.11\n" + // p95 below median: left out
		"solo_0003_dlrm_1gpu_ef56,completed,smact,0.12,0,0.52\n" + // no busy level: left out
		"solo_0004_crash_1gpu_0000,failed,smact,0.5,0.5,0.6\n" // not completed: left out
	var sb strings.Builder
	require.NoError(t, DeriveWindows(&sb, strings.NewReader(in), "w.csv"))
	require.Equal(t, "workload,signal,mean,p95,idle\nvgg_1gpu,smact,0.5400,0.8300,0.3415\nvgg_1gpu,drama,0.4200,0.4400,0.0000\n", sb.String())
	ws, err := ReadWindows(strings.NewReader(sb.String()), "d.csv")
	require.NoError(t, err)
	require.Equal(t, map[string]Window{"vgg_1gpu": {{Mean: 0.54, P95: 0.83, Idle: 0.3415}, nil, {Mean: 0.42, P95: 0.44}}}, ws)
	require.InDelta(t, 0.82, ws["vgg_1gpu"][0].Busy(), 0.001)

	for _, tc := range []struct{ name, in, want string }{
		{"missing column", "run_id,base_metric\n", `missing column "finish_status"`},
		{"bad run", head + "vgg,completed,smact,0.5,0.5,0.5\n", `w.csv:2: run_id "vgg"`},
		{"bad number", head + "solo_1_a_1gpu_x,completed,smact,x,0.5,0.5\n", `w.csv:2: column mean_w200s: "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sb strings.Builder
			require.ErrorContains(t, DeriveWindows(&sb, strings.NewReader(tc.in), "w.csv"), tc.want)
		})
	}
}

func TestReadWindowsErrors(t *testing.T) {
	head := "workload,signal,mean,p95,idle\n"
	for _, tc := range []struct{ name, in, want string }{
		{"signal", head + "a,util,0.1,0.2,0\n", `d.csv:2: column signal: "util"`},
		{"range", head + "a,smact,1.5,0.2,0\n", `d.csv:2: column mean: "1.5"`},
		{"all idle", head + "a,smact,0.1,0.2,1\n", `d.csv:2: column idle: "1"`},
		{"twice", head + "a,smact,0.1,0.2,0\na,smact,0.1,0.2,0\n", `d.csv:3: workload a: second row for smact`},
		{"empty id", head + ",smact,0.1,0.2,0\n", `d.csv:2: column workload: empty`},
		{"header", "workload,signal\n", `missing column "mean"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadWindows(strings.NewReader(tc.in), "d.csv")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A workload with a window shows it (Shown) on its busy GPUs; speed and
// memory keep the catalog profile; a GPU the catalog profiles as idle
// (xlnet_base's second) keeps its profile.
func TestWithWindows(t *testing.T) {
	raw, err := ReadCatalog(strings.NewReader(string(a100CSV)), "catalog_a100.csv")
	require.NoError(t, err)
	c := A100()
	vgg, _ := c.Get("vgg16_imagenet_bs128_1gpu")
	rv, _ := raw.Get("vgg16_imagenet_bs128_1gpu")
	require.Equal(t, rv.PerGPU, vgg.PerGPU)
	win := A100Windows()["vgg16_imagenet_bs128_1gpu"]
	require.Equal(t, *win[0], vgg.Shown[0].SMACT)
	require.Equal(t, rv.PerGPU[0].PeakMiB, vgg.Shown[0].PeakMiB)
	x, _ := c.Get("xlnet_base_cased_wiki_bs8_2gpu")
	require.Len(t, x.Shown, 2)
	require.Equal(t, x.PerGPU[1], x.Shown[1])
	require.NotEqual(t, x.PerGPU[0].SMACT, x.Shown[0].SMACT)
	d, _ := c.Get("dlrm_criteo_bs32768_1gpu") // bursty SMACT: no window level
	require.Equal(t, d.PerGPU[0].SMACT, d.Shown[0].SMACT)
	require.NotEqual(t, d.PerGPU[0].DRAMA, d.Shown[0].DRAMA)
	gpt, _ := c.Get("gpt2_xl_wiki_bs2_1gpu") // the catalog's figures are a 200-s average of another run
	require.InDelta(t, 0.948, gpt.Shown[0].SMACT.Busy(), 0.001)
}

// The measured windows against the catalog's full-run profiles (the
// finding behind Window): over the fully profiled one-GPU workloads (p95
// above mean in the catalog) a window's busy level (its median) is the
// catalog's full-run mean, SMACT and SMOCC within 0.06 for at least 90 %
// of them, while their window mean is far lower for the heavy CNNs: the
// window's extra low samples (about a third of them for most workloads),
// not a lower level. DRAMA has no such low mode (idle share below 0.11).
func TestWindowBusyLevelIsTheCatalogMean(t *testing.T) {
	ws, c := A100Windows(), A100()
	var n, busyClose, dramaIdle int
	var heavy, heavyLow int
	for _, id := range WindowIDs(ws) {
		w, ok := c.Get(id)
		if !ok || w.GPUs != 1 || w.PerGPU[0].SMACT.P95 <= w.PerGPU[0].SMACT.Mean {
			continue
		}
		win, p := ws[id], w.PerGPU[0]
		if win[0] == nil || win[1] == nil || win[2] == nil {
			continue
		}
		n++
		if abs(win[0].Busy()-p.SMACT.Mean) < 0.06 && abs(win[1].Busy()-p.SMOCC.Mean) < 0.06 {
			busyClose++
		}
		if win[2].Idle < 0.11 {
			dramaIdle++
		}
		if p.SMACT.Mean > 0.6 {
			heavy++
			if p.SMACT.Mean-win[0].Mean > 0.1 {
				heavyLow++
			}
		}
	}
	require.GreaterOrEqual(t, n, 40)
	require.GreaterOrEqual(t, float64(busyClose), 0.9*float64(n), "busy level near the catalog mean")
	require.Equal(t, n, dramaIdle, "DRAMA without a low mode")
	require.GreaterOrEqual(t, heavy, 10)
	require.GreaterOrEqual(t, float64(heavyLow), 0.8*float64(heavy), "heavy CNNs' window mean below their profile")
}

func abs(x float64) float64 { return max(x, -x) }
