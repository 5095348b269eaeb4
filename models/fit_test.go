package models

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPairWorkloadID(t *testing.T) {
	cat := A100()
	for _, tc := range []struct{ in, want string }{
		{"efficientnet_imagenet_bs64_maxbatches1200", "efficientnet_imagenet_bs64_1gpu"},
		{"vgg16_imagenet_bs128_maxbatches1200", "vgg16_imagenet_bs128_1gpu"},
		{"unet_voc_1gpu_10e", "unet_voc_1gpu"},
		{"unet_voc_1gpu", "unet_voc_1gpu"},
		{"llama3_width_8layer_wiki_bs1_1gpu_maxsteps2000", "llama3_width_8layer_wiki_bs1_1gpu"},
		{"resnet18_cifar100_bs32_20e_1gpu", "resnet18_cifar100_bs32_20e_1gpu"},
		{"mobilenet_cifar100_bs64_20e_1gpu", "mobilenet_cifar100_bs64_20e_1gpu"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := PairWorkloadID(tc.in, cat)
			require.Equal(t, tc.want, got)
			_, ok := cat.Get(got)
			require.True(t, ok)
		})
	}
	// Without a catalog the rules alone apply.
	require.Equal(t, "x_bs8_2gpu", PairWorkloadID("x_bs8_2gpu_maxsteps10", nil))
}

const pairHeader = "workload_a,workload_b,solo_time_a_s,solo_time_b_s,pair_time_a_s,pair_time_b_s,slowdown_a\n"

func TestReadPairs(t *testing.T) {
	cat := A100()
	ok := pairHeader +
		"vgg16_imagenet_bs64_maxbatches1200,unet_voc_1gpu_10e,227.42,208.4,257.27,355.7,1\n" +
		"# comment\n" +
		"mnist_bs32_1gpu,unet_voc_1gpu,100,200,110,205,1\n"
	ps, err := ReadPairs(strings.NewReader(ok), "p.csv", cat)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, PairRun{Line: 2,
		A: pairJob{Name: "vgg16_imagenet_bs64_maxbatches1200", ID: "vgg16_imagenet_bs64_1gpu", SoloS: 227.42, PairS: 257.27},
		B: pairJob{Name: "unet_voc_1gpu_10e", ID: "unet_voc_1gpu", SoloS: 208.4, PairS: 355.7}}, ps[0])
	require.Equal(t, 4, ps[1].Line)
	require.Equal(t, "unet_voc_1gpu|vgg16_imagenet_bs64_1gpu", ps[0].Key())

	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "p.csv: the file is empty: want a CSV header line with columns workload_a,workload_b"},
		{"missing column", "workload_a,workload_b\n", `missing column "solo_time_a_s"`},
		{"no rows", pairHeader, "p.csv: no co-runs"},
		{"bad number", pairHeader + "mnist_bs32_1gpu,unet_voc_1gpu,x,200,110,205,1\n", "p.csv:2: column solo_time_a_s"},
		{"zero time", pairHeader + "mnist_bs32_1gpu,unet_voc_1gpu,100,200,0,205,1\n", "p.csv:2: column pair_time_a_s"},
		{"unknown workload", pairHeader + "mnist_bs32_1gpu,nope_bs1,100,200,110,205,1\n", `p.csv:2: column workload_b: workload "nope_bs1" (as "nope_bs1_1gpu")`},
		{"multi-GPU", pairHeader + "mnist_bs32_1gpu,gpt2_large_wiki_bs8_2gpu,100,200,110,205,1\n", "uses 2 GPUs"},
		{"empty name", pairHeader + ",unet_voc_1gpu,100,200,110,205,1\n", "p.csv:2: column workload_a: empty"},
		{"ragged", pairHeader + "a,b\n", "p.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadPairs(strings.NewReader(tc.in), "p.csv", cat)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestSimulateCoRun(t *testing.T) {
	var p Profile
	for _, tc := range []struct {
		name string
		m    Interference
		solo []float64
		want []float64
	}{
		{"alone", flatInterference{Slowdown: 2}, []float64{100}, []float64{100}},
		{"none", NoInterference{}, []float64{100, 200}, []float64{100, 200}},
		// A runs at 1/1.2 for 120 s; B did 100 s of work by then and runs its
		// last 100 s alone.
		{"flat pair", flatInterference{Slowdown: 1.2}, []float64{100, 200}, []float64{120, 220}},
		{"flat pair reversed", flatInterference{Slowdown: 1.2}, []float64{200, 100}, []float64{220, 120}},
		{"equal", flatInterference{Slowdown: 2}, []float64{50, 50}, []float64{100, 100}},
		// Three at 1/2: the first ends at 20; the other two, 10 s of work each
		// done, go on at 1/2 (still shared): the second ends at 20+2*10=40,
		// the third runs its last 10 s alone: 50.
		{"three", flatInterference{Slowdown: 2}, []float64{10, 20, 30}, []float64{20, 40, 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := make([]coRunJob, len(tc.solo))
			for i, s := range tc.solo {
				jobs[i] = coRunJob{Profile: p, SoloS: s}
			}
			got := simulateCoRun(tc.m, jobs)
			require.InDeltaSlice(t, tc.want, got, 1e-9)
		})
	}
}

// TestPairKey: a pair's key is the unordered pair of catalog workloads
// the model sees, not the names in the pair file.
func TestPairKey(t *testing.T) {
	job := func(name, id string) pairJob { return pairJob{Name: name, ID: id} }
	for _, tc := range []struct {
		name string
		a, b pairJob
		want string
	}{
		{"ordered", job("mnist_bs32_1gpu", "mnist_bs32_1gpu"), job("unet_voc_1gpu", "unet_voc_1gpu"), "mnist_bs32_1gpu|unet_voc_1gpu"},
		{"reversed", job("unet_voc_1gpu", "unet_voc_1gpu"), job("mnist_bs32_1gpu", "mnist_bs32_1gpu"), "mnist_bs32_1gpu|unet_voc_1gpu"},
		{"run-length suffix", job("unet_voc_1gpu_10e", "unet_voc_1gpu"), job("mnist_bs32_1gpu", "mnist_bs32_1gpu"), "mnist_bs32_1gpu|unet_voc_1gpu"},
		// The names sort one way, the catalog ids the other.
		{"ids order", job("zz_maxbatches10", "aa_1gpu"), job("bb_1gpu", "bb_1gpu"), "aa_1gpu|bb_1gpu"},
		{"same workload", job("unet_voc_1gpu_10e", "unet_voc_1gpu"), job("unet_voc_1gpu", "unet_voc_1gpu"), "unet_voc_1gpu|unet_voc_1gpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, PairRun{A: tc.a, B: tc.b}.Key())
		})
	}
}

func TestFolds(t *testing.T) {
	var ps []PairRun
	for i := range 30 {
		a, b := fmt.Sprintf("a%d", i%12), fmt.Sprintf("b%d", i%12)
		// Pair-file names vary between repeats (run-length suffixes); the
		// catalog ids do not.
		p := PairRun{A: pairJob{Name: fmt.Sprintf("%s_%de", a, i), ID: a}, B: pairJob{Name: b, ID: b}}
		if i%2 == 1 { // the same pair written the other way round
			p.A, p.B = p.B, p.A
		}
		ps = append(ps, p)
	}
	f := Folds(ps, 5)
	require.Equal(t, f, Folds(ps, 5), "deterministic")
	byKey := map[string]int{}
	count := make([]int, 5)
	for i, p := range ps {
		if k, ok := byKey[p.Key()]; ok {
			require.Equal(t, k, f[i], "repeated runs of a pair share a fold")
		}
		byKey[p.Key()] = f[i]
	}
	for _, k := range byKey {
		count[k]++
	}
	for _, c := range count { // 12 distinct pairs dealt over 5 folds
		require.Contains(t, []int{2, 3}, c)
	}
}

// TestFoldsSharedCatalogIdentity: on the measured co-runs, pairs the model
// cannot tell apart (same catalog workloads, e.g. unet_voc_1gpu and
// unet_voc_1gpu_10e against the same partner) share a fold.
func TestFoldsSharedCatalogIdentity(t *testing.T) {
	ps := sharedPairs(t)
	names, ids := map[string]bool{}, map[string]bool{}
	for _, p := range ps {
		a, b := p.A.Name, p.B.Name
		if b < a {
			a, b = b, a
		}
		names[a+"|"+b] = true
		ids[p.Key()] = true
	}
	require.Less(t, len(ids), len(names), "some distinct pair-file names map to the same catalog pair")
	for _, k := range []int{2, 5, 10} {
		f := Folds(ps, k)
		byKey := map[string]int{}
		for i, p := range ps {
			if want, ok := byKey[p.Key()]; ok {
				require.Equal(t, want, f[i], "k=%d line %d: %s split from its twin", k, p.Line, p.Key())
			}
			byKey[p.Key()] = f[i]
		}
	}
}

func TestWorkloadHoldOuts(t *testing.T) {
	pr := func(a, b string) PairRun {
		return PairRun{A: pairJob{Name: a + "_x", ID: a}, B: pairJob{Name: b, ID: b}}
	}
	for _, tc := range []struct {
		name  string
		pairs []PairRun
		ids   []string
		tests [][]int
	}{
		{"one pair", []PairRun{pr("b", "a")}, []string{"a", "b"}, [][]int{{0}, {0}}},
		{"triangle", []PairRun{pr("a", "b"), pr("b", "c"), pr("c", "a"), pr("b", "a")},
			[]string{"a", "b", "c"}, [][]int{{0, 2, 3}, {0, 1, 3}, {1, 2}}},
		{"self pair counted once", []PairRun{pr("a", "a"), pr("a", "b")}, []string{"a", "b"}, [][]int{{0, 1}, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, tests := workloadHoldOuts(tc.pairs)
			require.Equal(t, tc.ids, ids)
			require.Equal(t, tc.ids, pairWorkloads(tc.pairs))
			require.Equal(t, tc.tests, tests)
		})
	}
}

// syntheticPairs makes co-runs whose times follow truth exactly.
func syntheticPairs(truth Interference, cat *Catalog) []PairRun {
	return pairsOf(truth, cat, "mnist_bs32_1gpu", "resnet18_cifar100_bs64_20e_1gpu", "efficientnet_imagenet_bs64_1gpu",
		"vgg16_imagenet_bs128_1gpu", "unet_voc_1gpu", "llama3_width_8layer_wiki_bs1_1gpu", "xception_imagenet_bs32_1gpu",
		"mobilenet_imagenet_bs32_1gpu", "resnet50_imagenet_bs128_1gpu")
}

// pairsOf simulates every pair of the workloads ids under truth.
func pairsOf(truth Interference, cat *Catalog, ids ...string) []PairRun {
	var ps []PairRun
	for i, a := range ids {
		for j, b := range ids[i+1:] {
			sa, sb := 100+float64(17*i), 150+float64(13*j)
			t := simulateCoRun(truth, []coRunJob{{profileOf(cat, a), sa}, {profileOf(cat, b), sb}})
			ps = append(ps, PairRun{A: pairJob{Name: a, ID: a, SoloS: sa, PairS: t[0]}, B: pairJob{Name: b, ID: b, SoloS: sb, PairS: t[1]}})
		}
	}
	return ps
}

func TestCalibrateSynthetic(t *testing.T) {
	cat := A100()
	truth := PressureParams{Intercept: -4, CoSMACT: 4, CoDRAMA: 0.5, CoMem: 0.5, SelfSMACT: -1, SelfDRAMA: 1, SelfMem: -0.2, NWayExponent: 1}
	ps := syntheticPairs(&PressureModel{P: truth}, cat)
	c, err := Calibrate(ps, cat, FitOptions{Folds: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"pressure", "none", "flat20"}, []string{c.HeldOut[0].Model, c.HeldOut[1].Model, c.HeldOut[2].Model})
	require.Less(t, c.HeldOut[0].MedianAPE, 0.01, "a model of the right form recovers the truth")
	require.Less(t, c.InSample.P90APE, 0.01)
	require.Greater(t, c.HeldOut[1].MedianAPE, 0.05)
	require.Equal(t, 2*len(ps), c.HeldOut[0].N)

	require.Nil(t, c.LOWO, "leave-one-workload-out only when asked")

	l, err := Calibrate(ps, cat, FitOptions{Folds: 3, LOWO: true})
	require.NoError(t, err)
	require.Equal(t, c.HeldOut, l.HeldOut)
	require.Equal(t, c.Params, l.Params)
	require.Equal(t, 9, l.Workloads)
	require.Len(t, l.LOWO, 3)
	for i, n := range []string{"pressure", "none", "flat20"} {
		require.Equal(t, n, l.LOWO[i].Model)
		require.Equal(t, 4*len(ps), l.LOWO[i].N, "every co-run is tested once per workload, both jobs")
	}
	require.Less(t, l.LOWO[0].MedianAPE, 0.01, "a model of the right form generalizes to unseen workloads")
	require.Greater(t, l.LOWO[1].MedianAPE, 0.05)

	_, err = Calibrate(ps, cat, FitOptions{Folds: 1})
	require.ErrorContains(t, err, "folds = 1")
	_, err = Calibrate(ps[:2], cat, FitOptions{Folds: 5})
	require.ErrorContains(t, err, "is empty")
	_, err = FitPressure(nil, cat, FitOptions{})
	require.Error(t, err)
}

// sharedPairs loads the measured A100 co-runs, or skips.
func sharedPairs(t *testing.T) []PairRun {
	t.Helper()
	dir, ok := SharedDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
	f, err := os.Open(filepath.Join(dir, "calibration", "aegis", "pairwise_a100_lucid_calibration.csv"))
	require.NoError(t, err)
	defer f.Close()
	ps, err := ReadPairs(f, "pairwise_a100_lucid_calibration.csv", A100())
	require.NoError(t, err)
	return ps
}

// TestEmbeddedMatchesFit re-runs `aegis calibrate` on the shipped data and
// checks the embedded default model is its output, and the acceptance
// criteria: the fitted model beats both baselines on held-out pairs, with a
// held-out median APE of at most 10 %.
func TestEmbeddedMatchesFit(t *testing.T) {
	ps := sharedPairs(t)
	require.Len(t, ps, 219)
	emb, err := ReadInterference(interferenceA100YAML, "interference_a100.yaml")
	require.NoError(t, err)
	// ρ and κ come from the joint fit on pairs and stacks (package
	// experiments/calibration, checked by cmd/aegis TestCalibrateOut); the
	// pairwise coefficients are refitted with them fixed.
	c, err := Calibrate(ps, A100(), FitOptions{NWayExponent: emb.Params.NWayExponent, Capacity: emb.Params.Capacity})
	require.NoError(t, err)
	want, got := emb.Params, c.Params
	for _, f := range []struct {
		name   string
		w, g   float64
		digits float64
	}{{"intercept", want.Intercept, got.Intercept, 1e-4}, {"co_smact", want.CoSMACT, got.CoSMACT, 1e-4},
		{"co_drama", want.CoDRAMA, got.CoDRAMA, 1e-4}, {"co_mem", want.CoMem, got.CoMem, 1e-4},
		{"self_smact", want.SelfSMACT, got.SelfSMACT, 1e-4}, {"self_drama", want.SelfDRAMA, got.SelfDRAMA, 1e-4},
		{"self_mem", want.SelfMem, got.SelfMem, 1e-4}, {"capacity", want.Capacity, got.Capacity, 1e-12},
		{"nway_exponent", want.NWayExponent, got.NWayExponent, 0}} {
		require.InDelta(t, f.w, f.g, f.digits, "embedded %s differs from the fit: regenerate with go run ./cmd/aegis calibrate --out models/data/interference_a100.yaml", f.name)
	}
	require.Equal(t, c.Pairs, emb.Fit.Pairs)
	for _, m := range c.HeldOut {
		require.InDelta(t, emb.Fit.HeldOut[m.Model].Median, m.MedianAPE, 1e-4, m.Model)
		require.InDelta(t, emb.Fit.HeldOut[m.Model].P90, m.P90APE, 1e-4, m.Model)
	}
	model, none, flat := c.HeldOut[0], c.HeldOut[1], c.HeldOut[2]
	require.LessOrEqual(t, model.MedianAPE, 0.10)
	require.Less(t, model.MedianAPE, none.MedianAPE)
	require.Less(t, model.MedianAPE, flat.MedianAPE)
	require.Less(t, model.P90APE, none.P90APE)
	require.Less(t, model.P90APE, flat.P90APE)
	t.Logf("held-out median/p90 APE: pressure %.4f/%.4f none %.4f/%.4f flat20 %.4f/%.4f",
		model.MedianAPE, model.P90APE, none.MedianAPE, none.P90APE, flat.MedianAPE, flat.P90APE)
}

// TestCalibrateLOWOErrors: leave-one-workload-out needs training co-runs
// for every held-out workload.
func TestCalibrateLOWOErrors(t *testing.T) {
	cat := A100()
	all := syntheticPairs(NoInterference{}, cat)
	var star []PairRun // every co-run involves mnist
	for _, p := range all {
		if p.A.ID == "mnist_bs32_1gpu" {
			star = append(star, p)
		}
	}
	for _, tc := range []struct {
		name  string
		pairs []PairRun
		folds int
		want  string
	}{
		{"star, 2 folds", star, 2, "every co-run involves mnist_bs32_1gpu"},
		{"star, 3 folds", star, 3, "every co-run involves mnist_bs32_1gpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Calibrate(tc.pairs, cat, FitOptions{Folds: tc.folds, LOWO: true})
			require.ErrorContains(t, err, tc.want)
			_, err = Calibrate(tc.pairs, cat, FitOptions{Folds: tc.folds})
			require.NoError(t, err, "k-fold alone is fine")
		})
	}
}

// TestCalibrateLOWOShared runs leave-one-workload-out on a subset of the
// measured co-runs (the ImageNet CNNs at batch 64 and 128, and U-Net) to
// keep the test fast; `aegis calibrate --lowo` runs it on all of them.
func TestCalibrateLOWOShared(t *testing.T) {
	var sub []PairRun
	keep := func(id string) bool {
		return strings.Contains(id, "imagenet_bs64") || strings.Contains(id, "imagenet_bs128") || id == "unet_voc_1gpu"
	}
	for _, p := range sharedPairs(t) {
		if keep(p.A.ID) && keep(p.B.ID) {
			sub = append(sub, p)
		}
	}
	require.Greater(t, len(sub), 30)
	c, err := Calibrate(sub, A100(), FitOptions{LOWO: true})
	require.NoError(t, err)
	require.Equal(t, len(pairWorkloads(sub)), c.Workloads)
	model, none, flat := c.LOWO[0], c.LOWO[1], c.LOWO[2]
	require.Less(t, model.MedianAPE, none.MedianAPE)
	require.Less(t, model.MedianAPE, flat.MedianAPE)
	require.Less(t, model.P90APE, none.P90APE)
	require.GreaterOrEqual(t, model.MedianAPE, c.InSample.MedianAPE, "unseen workloads are no easier than the training pairs")
	t.Logf("%d co-runs, %d workloads: LOWO median/p90 APE pressure %.4f/%.4f none %.4f/%.4f flat20 %.4f/%.4f",
		len(sub), c.Workloads, model.MedianAPE, model.P90APE, none.MedianAPE, none.P90APE, flat.MedianAPE, flat.P90APE)
}

func TestMeasuredLoad(t *testing.T) {
	cat := A100()
	a, b := profileOf(cat, "vgg16_imagenet_bs64_1gpu"), profileOf(cat, "mnist_bs32_1gpu")
	// A ran alone in 100 s, 125 s shared; B (200 s solo) ended at 210 s, so
	// it did 200-85 = 115 s of work during the 125 s overlap.
	p := PairRun{A: pairJob{ID: "vgg16_imagenet_bs64_1gpu", SoloS: 100, PairS: 125},
		B: pairJob{ID: "mnist_bs32_1gpu", SoloS: 200, PairS: 210}}
	require.InDelta(t, a.SMACT.Mean*0.8+b.SMACT.Mean*115.0/125, measuredLoad(p, cat), 1e-12)
	p.A, p.B = p.B, p.A
	require.InDelta(t, a.SMACT.Mean*0.8+b.SMACT.Mean*115.0/125, measuredLoad(p, cat), 1e-12)
}

func FuzzReadPairs(f *testing.F) {
	f.Add(pairHeader + "mnist_bs32_1gpu,unet_voc_1gpu,100,200,110,205,1\n")
	f.Add(pairHeader + "mnist_bs32_1gpu,unet_voc_1gpu,1e309,-1,NaN,205\n")
	f.Add("workload_a\n\"")
	cat := A100()
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := ReadPairs(strings.NewReader(s), "f.csv", cat)
		if err == nil {
			for _, p := range ps {
				if !(p.A.SoloS > 0 && p.B.PairS > 0) {
					t.Fatalf("accepted non-positive time: %+v", p)
				}
			}
		}
	})
}
