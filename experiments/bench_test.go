package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/traces"
)

// The benchmarks of docs/performance.md (make bench writes bench.txt;
// make benchstat compares it with the committed baseline).

// likeTrace generates a runnable trace like `aegis trace gen --like like
// --jobs n --seed seed` writes (1- and 2-GPU jobs on catalog workloads).
func likeTrace(b testing.TB, like string, n int, seed uint64) *traces.Trace {
	log, err := traces.GenerateLike(like, n, seed, 2)
	require.NoError(b, err)
	tr, err := traces.MapTrace(log.Name, log.Jobs, models.A100(), traces.Exact)
	require.NoError(b, err)
	return tr
}

// loadedTrace returns tr with its submit times scaled so that its offered
// load on gpus GPUs is load: the GPU-seconds its jobs need alone (each
// job's GPUs times its solo time, the A100 catalog's unless its own) over
// gpus times the span of its submissions. At a load above 1 the queue
// grows for as long as jobs arrive (a Venus-like trace at 1.2 keeps a
// sixth of its jobs waiting at the last arrival); the generated traces'
// loads are far below 1 on 16 GPUs and above.
func loadedTrace(b testing.TB, tr *traces.Trace, gpus int, load float64) *traces.Trace {
	cat := models.A100()
	work := 0.0
	for _, j := range tr.Jobs {
		solo := j.SoloS
		if solo == 0 {
			w, ok := cat.Get(j.Workload)
			require.True(b, ok, j.Workload)
			solo = w.SoloS
		}
		work += float64(j.GPUs) * solo
	}
	span := (tr.Jobs[len(tr.Jobs)-1].Submit - tr.Jobs[0].Submit).Seconds()
	require.Positive(b, span)
	f := work / (float64(gpus) * load) / span
	out := &traces.Trace{Name: fmt.Sprintf("%s-load%g-%dgpus", tr.Name, load, gpus), Jobs: slices.Clone(tr.Jobs)}
	for i := range out.Jobs {
		out.Jobs[i].Submit = time.Duration(math.Round(float64(tr.Jobs[i].Submit) * f))
	}
	return out
}

// benchRun simulates tr on srv under policy and reports events per second
// and the CPU time per run (cpu-ns/op: user + system time of the whole
// process, less sensitive than ns/op to other programs sharing the cores).
func benchRun(b *testing.B, tr *traces.Trace, srv string, policy string, sets ...string) {
	s, err := models.ParseServer(srv)
	require.NoError(b, err)
	params, err := policies.ParseSets(sets)
	require.NoError(b, err)
	benchSim(b, assemble.Run{Trace: tr, Server: s, Policy: policy, Params: params, Seed: 1})
}

// benchSim simulates r at each iteration and reports events per second
// (wall), events per run, CPU time per run (cpu-ns/op: user + system time
// of the whole process, less sensitive than ns/op to other programs
// sharing the cores) and events per CPU second.
func benchSim(b *testing.B, r assemble.Run) {
	events, runs := 0, 0
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		o, err := assemble.Simulate(context.Background(), r, io.Discard)
		require.NoError(b, err)
		events += o.Events
		runs++
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(runs), "events/op")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(runs), "cpu-ns/op")
		b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
	}
}

// BenchmarkEngine is the simulator and loop under the simplest policy
// (Exclusive: FIFO on idle GPUs) on a 25,000-job Saturn-like trace.
func BenchmarkEngine(b *testing.B) {
	benchRun(b, likeTrace(b, "saturn", 25000, 1), "a100-40gb:16", "exclusive")
}

// BenchmarkPaperTraces runs every pinned configuration (the golden
// hashes') on each built-in 60-job trace on 3 × A100-40GB.
func BenchmarkPaperTraces(b *testing.B) {
	for _, name := range []string{"demo", "philly", "saturn", "venus"} {
		tr, err := traces.Load(name)
		require.NoError(b, err)
		for _, c := range goldenConfigs() {
			b.Run(fmt.Sprintf("%s/%s/%s", name, c.policy, orDefault(c.sets)), func(b *testing.B) {
				benchRun(b, tr, "a100-40gb:3", c.policy, splitSets(c.sets)...)
			})
		}
	}
}

// BenchmarkTick compares AEGIS on Philly with the default 1 s decision tick
// and a 1 ms one: skipped ticks make them cost the same.
func BenchmarkTick(b *testing.B) {
	tr, err := traces.Load("philly")
	require.NoError(b, err)
	for _, tick := range []string{"1s", "1ms"} {
		b.Run("aegis/tick="+tick, func(b *testing.B) { benchRun(b, tr, "a100-40gb:3", "aegis", "tick="+tick) })
	}
}

// BenchmarkVenus24k is issue 11's side-by-side trace: `aegis trace gen
// --like venus --jobs 24000 --seed 1` on 8 and on 16 GPUs.
func BenchmarkVenus24k(b *testing.B) {
	tr := likeTrace(b, "venus", 24000, 1)
	for _, gpus := range []int{16, 8} {
		for _, p := range []string{"exclusive", "horus", "lucid", "aegis"} {
			b.Run(fmt.Sprintf("%dgpus/%s", gpus, p), func(b *testing.B) {
				benchRun(b, tr, fmt.Sprintf("a100-40gb:%d", gpus), p)
			})
		}
	}
}

// BenchmarkWindowScore is one pressure score of a 30-sample window.
func BenchmarkWindowScore(b *testing.B) {
	xs := make([]float64, 30)
	for i := range xs {
		xs[i] = float64((i*7919)%101) / 100
	}
	buf := make([]float64, 0, 30)
	b.ReportAllocs()
	for b.Loop() {
		policies.Score(xs, buf)
	}
}

// largeEnv opts in to the benchmarks of a million jobs (make growth-plot
// sets it): each takes seconds to a minute of CPU time, too long for every
// make bench.
const largeEnv = "AEGIS_BENCH_LARGE"

// BenchmarkGrowth is time against trace size: Venus-like traces of 1,000
// to 100,000 jobs on 16 GPUs, and 1,000,000 with AEGIS_BENCH_LARGE=1
// (docs/growth.png; make growth-plot sets it), as generated
// (POLICY/jobs=N: a light load, jobs rarely wait) and compressed to an
// offered load of 1.2 (POLICY/loaded/jobs=N: a queue that grows to a sixth
// of the jobs).
func BenchmarkGrowth(b *testing.B) {
	sizes := []int{1000, 10000, 100000}
	if os.Getenv(largeEnv) != "" {
		sizes = append(sizes, 1000000)
	}
	for _, n := range sizes {
		tr := likeTrace(b, "venus", n, 1)
		loaded := loadedTrace(b, tr, 16, 1.2)
		for _, p := range []string{"exclusive", "horus", "lucid", "aegis"} {
			b.Run(fmt.Sprintf("%s/jobs=%d", p, n), func(b *testing.B) {
				benchRun(b, tr, "a100-40gb:16", p)
			})
			b.Run(fmt.Sprintf("%s/loaded/jobs=%d", p, n), func(b *testing.B) {
				benchRun(b, loaded, "a100-40gb:16", p)
			})
		}
	}
}

// BenchmarkMillion is the issue's scale target: `aegis trace gen --like
// saturn --jobs 1000000 --seed 1` under AEGIS on a flat pool of 1,000
// A100s and on a cluster of 125 servers of 8, with jobs.csv and the event
// log streamed (to io.Discard) as aegis simulate --out streams them. It
// also reports peak-RSS-MiB, the benchmark process's peak resident set so
// far (trace generation and earlier sub-benchmarks included: an upper
// bound). Opt-in: AEGIS_BENCH_LARGE=1.
func BenchmarkMillion(b *testing.B) {
	if os.Getenv(largeEnv) == "" {
		b.Skip("set " + largeEnv + "=1 to run the million-job benchmarks")
	}
	tr := likeTrace(b, "saturn", 1000000, 1)
	for _, c := range []struct{ name, server, cluster string }{
		{"flat/a100-40gb:1000", "a100-40gb:1000", ""},
		{"cluster/a100-40gb:8x125", "", "a100-40gb:8x125"},
	} {
		b.Run(c.name+"/aegis", func(b *testing.B) {
			r := assemble.Run{Trace: tr, Policy: "aegis", Seed: 1, Jobs: io.Discard}
			if c.cluster != "" {
				cl, err := models.ParseCluster(c.cluster)
				require.NoError(b, err)
				r.Cluster = &cl
			} else {
				srv, err := models.ParseServer(c.server)
				require.NoError(b, err)
				r.Server = srv
			}
			benchSim(b, r)
			if rss := peakRSS(); rss > 0 {
				b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
			}
		})
	}
}

// BenchmarkMillionLoaded is the scale target with a queue: 1,000,000
// Venus-like jobs (`aegis trace gen --like venus --jobs 1000000 --seed 1`)
// with their arrivals compressed to an offered load of 1.2 on a flat pool
// of 1,000 A100s (loadedTrace), under Exclusive and AEGIS, jobs.csv and
// the event log streamed to io.Discard; peak-RSS-MiB as in
// BenchmarkMillion. BenchmarkMillionLoaded/small is the same at a tenth
// (100,000 jobs on 100 GPUs), run by make bench, and so is
// BenchmarkMillionLoaded/mid (30,000 jobs on 300 GPUs: a shorter span,
// three times the GPUs each decision reads); BenchmarkMillionLoaded/wide
// the tenth on the million's 1,000 GPUs (a tenth of its span: each
// decision reads as many GPUs). Wide and the million: opt-in,
// AEGIS_BENCH_LARGE=1.
func BenchmarkMillionLoaded(b *testing.B) {
	cases := []struct {
		name       string
		jobs, gpus int
	}{{"small", 100000, 100}, {"mid", 30000, 300}, {"wide", 100000, 1000}, {"million", 1000000, 1000}}
	for _, c := range cases {
		if c.name != "small" && c.name != "mid" && os.Getenv(largeEnv) == "" {
			continue
		}
		tr := loadedTrace(b, likeTrace(b, "venus", c.jobs, 1), c.gpus, 1.2)
		srv, err := models.ParseServer(fmt.Sprintf("a100-40gb:%d", c.gpus))
		require.NoError(b, err)
		for _, p := range []string{"exclusive", "aegis"} {
			b.Run(fmt.Sprintf("%s/a100-40gb:%d/%s", c.name, c.gpus, p), func(b *testing.B) {
				benchSim(b, assemble.Run{Trace: tr, Server: srv, Policy: p, Seed: 1, Jobs: io.Discard})
				if rss := peakRSS(); rss > 0 {
					b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
				}
			})
		}
	}
}

// BenchmarkSimulate runs each policy on the demo trace (an overloaded
// worst case: the head job waits most of the run, so collocating policies
// decide every second) and on the Philly paper trace.
func BenchmarkSimulate(b *testing.B) {
	srv, err := models.ParseServer("a100-40gb:3")
	require.NoError(b, err)
	for _, name := range []string{"demo", "philly"} {
		tr, err := traces.Load(name)
		require.NoError(b, err)
		for _, policy := range registry.Builtin() {
			b.Run(name+"/"+policy, func(b *testing.B) {
				events := 0
				b.ReportAllocs()
				for b.Loop() {
					o, err := assemble.Simulate(context.Background(), assemble.Run{Trace: tr, Server: srv, Policy: policy, Seed: 1}, io.Discard)
					require.NoError(b, err)
					events += o.Events
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
