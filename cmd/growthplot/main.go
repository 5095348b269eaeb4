// Command growthplot turns the BenchmarkGrowth lines of a benchmark output
// (make bench's bench.txt) into docs/growth.csv (policy, arrivals, jobs,
// CPU seconds per run, microseconds per job; wall time when no cpu-ns/op is
// reported) and docs/growth.png (time per job against the number of jobs:
// a flat line is linear growth), one line per policy and arrivals: the
// traces as generated (POLICY/jobs=N) and compressed to a load of 1.2
// (POLICY/loaded/jobs=N).
//
//	go run ./cmd/growthplot [-in bench.txt] [-out docs/growth]
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/results/plots"
)

func main() {
	in := flag.String("in", "bench.txt", "benchmark output to read")
	out := flag.String("out", "docs/growth", "output path without extension (.csv and .png are written)")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "growthplot:", err)
		os.Exit(1)
	}
}

// point is one BenchmarkGrowth result.
type point struct {
	policy string
	loaded bool
	jobs   int
	nsOp   float64
}

// arrivals names a point's trace: as generated, or loaded.
func (p point) arrivals() string {
	if p.loaded {
		return "load 1.2"
	}
	return "as generated"
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	pts, err := parse(f, in)
	if err != nil {
		return err
	}
	if len(pts) == 0 {
		return fmt.Errorf("%s: no BenchmarkGrowth lines (run make bench BENCH=Growth)", in)
	}
	c, err := os.Create(out + ".csv")
	if err != nil {
		return err
	}
	w := csv.NewWriter(c)
	w.Write([]string{"policy", "arrivals", "jobs", "cpu_s_per_run", "cpu_us_per_job"})
	series := map[string]*plots.Series{}
	var names []string
	for _, p := range pts {
		w.Write([]string{p.policy, p.arrivals(), strconv.Itoa(p.jobs), strconv.FormatFloat(p.nsOp/1e9, 'f', 4, 64),
			strconv.FormatFloat(p.nsOp/1e3/float64(p.jobs), 'f', 3, 64)})
		name := p.policy
		if p.loaded {
			name += ", load 1.2"
		}
		s, ok := series[name]
		if !ok {
			s = &plots.Series{Name: name}
			series[name] = s
			names = append(names, name)
		}
		s.X = append(s.X, math.Log10(float64(p.jobs)))
		s.Y = append(s.Y, p.nsOp/1e3/float64(p.jobs))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	if err := c.Close(); err != nil {
		return err
	}
	ln := plots.Lines{Title: "time per job, 16 × A100-40GB, Venus-like traces",
		XLabel: "log10(jobs)", YLabel: "CPU µs per job, log scale (flat = linear)", LogY: true}
	for _, n := range names {
		ln.Series = append(ln.Series, *series[n])
	}
	fig, err := plots.LinePanels(nil, "", ln)
	if err != nil {
		return err
	}
	_, err = fig.Save(out + ".png")
	return err
}

// parse reads "BenchmarkGrowth/POLICY[/loaded]/jobs=N-P  iters  NS ns/op ..."
// lines.
func parse(r io.Reader, name string) ([]point, error) {
	var pts []point
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "BenchmarkGrowth/") || fs[3] != "ns/op" {
			continue
		}
		parts := strings.Split(strings.TrimPrefix(fs[0], "BenchmarkGrowth/"), "/")
		loaded := len(parts) == 3 && parts[1] == "loaded"
		if loaded {
			parts = []string{parts[0], parts[2]}
		}
		if len(parts) != 2 || !strings.HasPrefix(parts[1], "jobs=") {
			return nil, fmt.Errorf("%s:%d: benchmark name %q: want BenchmarkGrowth/POLICY[/loaded]/jobs=N", name, line, fs[0])
		}
		jobs := parts[1][len("jobs="):]
		if i := strings.LastIndexByte(jobs, '-'); i >= 0 {
			jobs = jobs[:i]
		}
		n, err := strconv.Atoi(jobs)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s:%d: job count %q: want a positive integer", name, line, jobs)
		}
		// CPU time per run when the benchmark reports it (less disturbed
		// by other programs on the machine), else wall time.
		val := fs[2]
		for k := 4; k+1 < len(fs); k += 2 {
			if fs[k+1] == "cpu-ns/op" {
				val = fs[k]
			}
		}
		ns, err := strconv.ParseFloat(val, 64)
		if err != nil || !(ns > 0) {
			return nil, fmt.Errorf("%s:%d: ns/op %q: want a positive number", name, line, val)
		}
		pts = append(pts, point{policy: parts[0], loaded: loaded, jobs: n, nsOp: ns})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	slices.SortStableFunc(pts, func(a, b point) int {
		if c := strings.Compare(a.policy, b.policy); c != 0 {
			return c
		}
		if a.loaded != b.loaded {
			if a.loaded {
				return 1
			}
			return -1
		}
		return a.jobs - b.jobs
	})
	return pts, nil
}
