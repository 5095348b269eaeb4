package models

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSpeedsFactor: a workload's factor on a GPU comes from the class
// holding that slot, its own factor or the utilization slope, and 1 on a
// slot in no class or with no speeds at all.
func TestSpeedsFactor(t *testing.T) {
	cat := Legacy11GB()
	vgg, _ := cat.Get("vgg16_imagenet_bs32_1gpu") // 91.2 % utilization
	s := &Speeds{Classes: []SpeedClass{{Name: "slow", GPUs: []int{4, 5}, Factors: map[string]float64{"mnist_bs32_1gpu": 1.5}, UtilSlope: 1}}}
	mnist, _ := cat.Get("mnist_bs32_1gpu")
	perGPU := &Speeds{Classes: []SpeedClass{{Name: "slow", GPUs: []int{4, 5}, Factors: s.Classes[0].Factors, UtilSlope: 1, GPUFactors: map[int]float64{5: 1.1}}}}
	for _, tc := range []struct {
		name string
		s    *Speeds
		w    *Workload
		slot int
		want float64
	}{
		{"own factor", s, mnist, 4, 1.5},
		{"utilization slope", s, vgg, 5, math.Exp(0.912)},
		{"own factor and GPU factor", perGPU, mnist, 5, 1.5 * 1.1},
		{"utilization slope and GPU factor", perGPU, vgg, 5, math.Exp(0.912) * 1.1},
		{"GPU without a factor", perGPU, mnist, 4, 1.5},
		{"slot in no class", s, mnist, 0, 1},
		{"no speeds", nil, vgg, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, tc.s.Factor(tc.w, tc.slot), 1e-12)
		})
	}
}

// TestLegacySpeeds: the embedded legacy classes make GPUs 4-7 slower on
// the heavy workloads (ResNet CIFAR at batch 128 above 3×) and leave light
// ones near their profile; GPUs 0-3 run near it.
func TestLegacySpeeds(t *testing.T) {
	gt, err := LookupGPU("legacy-11gb")
	require.NoError(t, err)
	s, err := SpeedsFor(gt)
	require.NoError(t, err)
	require.Same(t, LegacySpeeds(), s)
	cat := Legacy11GB()
	for _, tc := range []struct {
		id             string
		fastLo, fastHi float64
		slowLo, slowHi float64
	}{
		{"resnet34_cifar100_bs128_50e_1gpu", 0.9, 1.2, 3, 3.8},
		{"resnet50_imagenet_bs64_1gpu", 0.9, 1.1, 1.7, 2.2},
		{"mobilenet_cifar100_bs32_50e_1gpu", 0.8, 1.1, 0.9, 1.1},
		{"inception_imagenet_bs32_1gpu", 0.9, 1.1, 1.5, 2.5}, // never on GPUs 4-7: the utilization slope
	} {
		w, ok := cat.Get(tc.id)
		require.True(t, ok)
		for g := range 8 {
			f := s.Factor(w, g)
			lo, hi := tc.fastLo, tc.fastHi
			if g >= 4 {
				lo, hi = tc.slowLo, tc.slowHi
			}
			require.True(t, f >= lo && f <= hi, "%s on GPU %d: %v not in [%v, %v]", tc.id, g, f, lo, hi)
		}
	}
	a100, err := SpeedsFor(GPUType{Name: "a100-40gb"})
	require.NoError(t, err)
	require.Nil(t, a100, "the A100 server's GPUs all run at the profiled speed")
}

func TestReadSpeedsErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no classes", "source: x\nclasses: []\n", "s.yaml:2: classes: want at least one speed class"},
		{"no gpus", "classes:\n  - name: a\n    factors: {}\n    util_slope: 0\n", "classes[0] (a).gpus: want at least one GPU index"},
		{"gpu twice", "classes:\n  - {name: a, gpus: [1], util_slope: 0}\n  - {name: b, gpus: [1], util_slope: 0}\n", "GPU 1 is also in class a"},
		{"bad factor", "classes:\n  - {name: a, gpus: [1], util_slope: 0, factors: {w: -1}}\n", "factors.w: -1 is not a factor in (0, 100]"},
		{"bad slope", "classes:\n  - {name: a, gpus: [1], util_slope: 11}\n", "util_slope: 11 is not a finite number"},
		{"negative gpu", "classes:\n  - {name: a, gpus: [-1], util_slope: 0}\n", "index -1 is not in 0..1023"},
		{"unknown key", "classes:\n  - {name: a, gpus: [1], slope: 0}\n", `unknown key "slope"`},
		{"GPU factor off the class", "classes:\n  - {name: a, gpus: [1], util_slope: 0, gpu_factors: {2: 1.1}}\n", "gpu_factors: GPU 2 is not one of the class's gpus [1]"},
		{"bad GPU factor", "classes:\n  - {name: a, gpus: [1], util_slope: 0, gpu_factors: {1: 0}}\n", "gpu_factors.1: 0 is not a factor in (0, 100]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSpeeds([]byte(tc.in), "s.yaml")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestProgram(t *testing.T) {
	for in, want := range map[string]string{
		"resnet34_cifar100_bs128_50e_1gpu": "resnet34_cifar100_bs128_1gpu",
		"resnet34_cifar100_bs128_20e_1gpu": "resnet34_cifar100_bs128_1gpu",
		"resnet50_imagenet_bs64_1gpu":      "resnet50_imagenet_bs64_1gpu",
		"unet_voc_1gpu":                    "unet_voc_1gpu",
	} {
		require.Equal(t, want, Program(in), in)
	}
}

// exclusiveCSV writes jobs as the artifact's per-job metrics: trace, spec
// path, submit = dispatch, completion and execution span.
func exclusiveCSV(jobs []ExclusiveJob) string {
	var b strings.Builder
	b.WriteString("trace_name,task_file,submitted_at,first_dispatched_at,completed_at,execution_span_s\n")
	ts := func(s float64) string {
		return time.UnixMicro(int64(math.Round(s * 1e6))).UTC().Format("2006-01-02 15:04:05.000000-07:00")
	}
	for _, j := range jobs {
		fmt.Fprintf(&b, "%s,specs/%s.yaml,%s,%s,%s,%g\n", j.Trace, j.Workload, ts(j.Submit), ts(j.Dispatch), ts(j.Done), j.ExecS)
	}
	return b.String()
}

// drawExclusive draws an Exclusive run of n jobs (ResNet-50, ResNet-50,
// MNIST, ...) back to back on 4 GPUs, each on the lowest free GPU, that
// run on GPUs 2-3 slowF times slower per workload, times gpuF per GPU.
func drawExclusive(cat *Catalog, n int, slowF map[string]float64, gpuF map[int]float64) []ExclusiveJob {
	var jobs []ExclusiveJob
	busy := make([]float64, 4)
	at := 0.0
	for i := range n {
		id := "resnet50_imagenet_bs64_1gpu"
		if i%3 == 2 {
			id = "mnist_bs32_1gpu"
		}
		w, _ := cat.Get(id)
		g := -1
		for k, d := range busy {
			if d <= at {
				g = k
				break
			}
		}
		if g < 0 {
			at = slices.Min(busy)
			g = slices.Index(busy, at)
		}
		f := 1.0
		if g >= 2 {
			f = slowF[id] * gpuF[g]
		}
		exec := w.SoloS * f
		busy[g] = at + exec
		jobs = append(jobs, ExclusiveJob{Trace: "t", Workload: id, Submit: at, Dispatch: at, Done: at + exec, ExecS: exec})
	}
	return jobs
}

// TestFitSpeedsRecoversTruth: Exclusive runs drawn from known per-GPU
// speeds (GPUs 2-3 slow by 2× for ResNet-50, 1× for MNIST; in the second
// case GPU 3 a further 1.44× slower than GPU 2) placed on the lowest free
// GPU are read back, placed, and fitted to those factors, with a
// leave-one-job-out error of 0; GPU factors (geometric mean 1) only where
// the GPUs differ, where one speed per class errs.
func TestFitSpeedsRecoversTruth(t *testing.T) {
	cat := Legacy11GB()
	slowF := map[string]float64{"resnet50_imagenet_bs64_1gpu": 2, "mnist_bs32_1gpu": 1}
	for _, tc := range []struct {
		name    string
		gpuF    map[int]float64
		wantGPU map[int]float64
		scale   float64 // the workload factors' scale: the GPU factors' geometric mean
	}{
		{"one speed", map[int]float64{2: 1, 3: 1}, nil, 1},
		{"GPU 3 slower", map[int]float64{2: 1, 3: 1.44}, map[int]float64{2: 1 / 1.2, 3: 1.2}, 1.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read, err := ReadExclusiveJobs(strings.NewReader(exclusiveCSV(drawExclusive(cat, 24, slowF, tc.gpuF))), "x.csv", cat)
			require.NoError(t, err)
			require.NoError(t, PlaceLowestFree(read, 4, 1))
			cls, err := FitSpeeds(read, cat, SpeedClass{Name: "slow", GPUs: []int{2, 3}})
			require.NoError(t, err)
			require.InDelta(t, 2*tc.scale, cls.Factors["resnet50_imagenet_bs64_1gpu"], 1e-5)
			require.InDelta(t, tc.scale, cls.Factors["mnist_bs32_1gpu"], 1e-5)
			require.InDelta(t, 0, cls.Fit.LeaveOneJobOut.Median, 1e-5)
			if tc.wantGPU == nil {
				require.Nil(t, cls.GPUFactors)
				require.Equal(t, cls.Fit.LeaveOneJobOut, cls.Fit.OneSpeedLeaveOneJobOut)
			} else {
				require.Len(t, cls.GPUFactors, len(tc.wantGPU))
				for g, f := range tc.wantGPU {
					require.InDelta(t, f, cls.GPUFactors[g], 1e-5, "GPU %d", g)
				}
				require.Greater(t, cls.Fit.OneSpeedLeaveOneJobOut.P90, 0.1)
			}
			require.InDelta(t, 0.5, cls.Fit.None.P90, 0.25)
			_, err = FitSpeeds(read, cat, SpeedClass{Name: "none", GPUs: []int{7}})
			require.ErrorContains(t, err, "0 jobs on GPUs [7]")
		})
	}
}

func TestReadExclusiveJobsErrors(t *testing.T) {
	head := "trace_name,task_file,submitted_at,first_dispatched_at,completed_at,execution_span_s\n"
	ok := "2026-06-28 13:12:13.459830+00:00"
	for _, tc := range []struct{ name, in, want string }{
		{"missing column", "trace_name,task_file\n", `missing column "submitted_at"`},
		{"unknown workload", head + "t,x/nope.yaml," + ok + "," + ok + "," + ok + ",5\n", `x.csv:2: column task_file: workload "nope"`},
		{"bad time", head + "t,x/mnist_bs32_1gpu.yaml,yesterday," + ok + "," + ok + ",5\n", "x.csv:2: column submitted_at"},
		{"bad span", head + "t,x/mnist_bs32_1gpu.yaml," + ok + "," + ok + "," + ok + ",-5\n", "x.csv:2: column execution_span_s"},
		{"no trace", head + ",x/mnist_bs32_1gpu.yaml," + ok + "," + ok + "," + ok + ",5\n", "x.csv:2: column trace_name: empty"},
		{"no jobs", head, "x.csv: no jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadExclusiveJobs(strings.NewReader(tc.in), "x.csv", Legacy11GB())
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestPlaceLowestFree: each job takes the lowest free GPU; a dispatch a
// moment before a completion takes the GPU completing first; beyond the
// tolerance it is an error.
func TestPlaceLowestFree(t *testing.T) {
	jobs := []ExclusiveJob{
		{Trace: "a", Dispatch: 0, Done: 100}, {Trace: "a", Dispatch: 1, Done: 50}, {Trace: "a", Dispatch: 49.5, Done: 80},
		{Trace: "a", Dispatch: 101, Done: 200}, {Trace: "b", Dispatch: 0, Done: 10},
	}
	require.NoError(t, PlaceLowestFree(jobs, 2, 1))
	var got []int
	for _, j := range jobs {
		got = append(got, j.GPU)
	}
	require.Equal(t, []int{0, 1, 1, 0, 0}, got)
	jobs[2].Dispatch = 40
	require.ErrorContains(t, PlaceLowestFree(jobs, 2, 1), "with all 2 GPUs busy")
}
