package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/traces"
)

// newTraceCmd is `aegis trace`: select, map, profile and generate traces.
func newTraceCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "trace",
		Short: "Select, map, profile and generate job traces",
		Long: `Turn production job logs into runnable traces and study traces.

  select  pick the representative window of a Philly or Helios log (AEGIS's method)
  map     give each job of a log a catalog workload (nearest duration quantile)
  stats   profile a trace or log, side by side with the paper's reference profile
  gen     generate a synthetic Philly-, Saturn- or Venus-like log

Built-in traces: ` + traces.BuiltinNames() + `.`,
		Args: subcommands,
		RunE: func(c *cobra.Command, _ []string) error {
			return usageError{fmt.Errorf("%s: missing subcommand (select, map, stats or gen; see --help)", c.CommandPath())}
		},
	}
	c.PersistentFlags().String("gpu-type", "a100-40gb",
		"GPU type whose workload catalog jobs are mapped onto (a built-in name or a GPU type YAML file)")
	c.AddCommand(newTraceSelectCmd(), newTraceMapCmd(), newTraceStatsCmd(), newTraceGenCmd())
	return c
}

// traceCatalog returns the workload catalog of the trace commands' --gpu-type.
func traceCatalog(c *cobra.Command) (*models.Catalog, error) {
	name, err := c.Flags().GetString("gpu-type")
	if err != nil {
		return nil, err
	}
	t, err := models.ResolveGPUType(name)
	if err != nil {
		return nil, usageError{fmt.Errorf("--gpu-type: %w", err)}
	}
	return models.CatalogFor(t)
}

func formatUsage() string {
	var names []string
	for _, f := range traces.Formats() {
		names = append(names, string(f))
	}
	return strings.Join(names, "|")
}

// parseFormat checks a --format value.
func parseFormat(s string) (traces.Format, error) {
	for _, f := range traces.Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", usageError{fmt.Errorf("--format %q: want one of %s", s, formatUsage())}
}

// parseGPUList parses "1,2" (empty: nil).
func parseGPUList(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 0 || g > 1024 {
			return nil, usageError{fmt.Errorf("--%s %q: want GPU counts like 1,2", flag, s)}
		}
		out = append(out, g)
	}
	return out, nil
}

// parseMinPerGPU parses "2:2" or "2:1,4:1" (GPUS:MIN pairs); "none" is no
// minimum.
func parseMinPerGPU(s string) (map[int]int, error) {
	m := map[int]int{}
	if s == "none" {
		return m, nil
	}
	for _, f := range strings.Split(s, ",") {
		g, n, ok := strings.Cut(strings.TrimSpace(f), ":")
		gi, err1 := strconv.Atoi(g)
		ni, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || gi < 0 || ni < 0 {
			return nil, usageError{fmt.Errorf("--min-per-gpu %q: want GPUS:MIN pairs like 2:2 or 2:1,4:1, or none", s)}
		}
		m[gi] = ni
	}
	return m, nil
}

func checkLike(like string, allowEmpty bool) error {
	if like == "" && allowEmpty {
		return nil
	}
	if _, ok := traces.ReferenceProfile(like); !ok {
		return usageError{fmt.Errorf("--like %q: want one of %s", like, strings.Join(traces.ReferenceNames(), ", "))}
	}
	return nil
}

// writeLog renders jobs as our CSV log (see logCSV) to out, or stdout.
func writeLog(c *cobra.Command, out string, jobs []traces.LogJob, mapWorkloads bool, hint string) error {
	b, err := logCSV(c, jobs, mapWorkloads, hint)
	if err != nil {
		return err
	}
	return writeOutput(out, c.OutOrStdout(), b)
}

// writeOutput writes b to the file path all or nothing, or to w when path is
// "" or "-".
func writeOutput(path string, w io.Writer, b []byte) error {
	return streamOutput(path, w, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// streamOutput lets write write to the file path all or nothing (see
// results.WriteFile), or to w through a buffer when path is "" or "-".
func streamOutput(path string, w io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	return results.WriteFile(path, write)
}

// maxGenJobs bounds trace gen --jobs.
const maxGenJobs = 1_000_000_000

// summaryWriter is where a command's human summary goes: stdout when the data
// goes to a file, else stderr.
func summaryWriter(c *cobra.Command, out string) io.Writer {
	if out == "" || out == "-" {
		return c.ErrOrStderr()
	}
	return c.OutOrStdout()
}

// logCSV renders jobs as our CSV log, with catalog workloads when mapping.
func logCSV(c *cobra.Command, jobs []traces.LogJob, mapWorkloads bool, hint string) ([]byte, error) {
	var wl []string
	if mapWorkloads {
		cat, err := traceCatalog(c)
		if err != nil {
			return nil, err
		}
		if wl, err = traces.MapWorkloads(jobs, cat); err != nil {
			return nil, fmt.Errorf("%w%s", err, hint)
		}
	}
	var buf bytes.Buffer
	if err := traces.WriteLogCSV(&buf, jobs, wl); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// reportSelection writes trace select's report r as JSON to the file report
// (when set) and its summary, with the log's skipped records, to the
// summary writer for the window's output out.
func reportSelection(c *cobra.Command, r traces.SelectReport, skipped, out, report string) error {
	if report != "" {
		rb, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := writeOutput(report, c.OutOrStdout(), append(rb, '\n')); err != nil {
			return err
		}
	}
	sw := summaryWriter(c, out)
	fmt.Fprintf(sw, "%s: %d records, %d kept (skipped: %s), %d eligible with %v GPUs\n",
		r.Log, r.Records, r.SourceJobs, skipped, r.EligibleJobs, r.GPUs)
	fmt.Fprintf(sw, "windows: %d, rejected %d (minimum per GPU count) + %d (GPU mix) + %d (runtime CDF), accepted %d, tied best %d\n",
		r.Windows, r.RejectedMinPerGPU, r.RejectedGPUMix, r.RejectedRuntimeCDF, r.Accepted, r.Tied)
	d := r.Distances
	fmt.Fprintf(sw, "selected eligible jobs %d-%d (ids %s-%s), span %.0f s, score %.4f: runtime CDF %.4f, GPU mix %.4f, inter-arrival %.4f, GPU service %.4f, burstiness %.4f\n",
		r.Start, r.End, r.FirstJobID, r.LastJobID, r.ArrivalSpanS, r.Score, d.RuntimeCDF, d.GPUMix, d.InterArrival, d.GPUService, d.Burstiness)
	return nil
}

func newTraceSelectCmd() *cobra.Command {
	var (
		input, format, gpus, minPer, like, out, report string
		jobs                                           int
		seed                                           uint64
		maxMix, maxCDF                                 float64
		mapWL                                          bool
	)
	c := &cobra.Command{
		Use:   "select",
		Short: "Pick the representative window of a job log (AEGIS's method)",
		Long: `Pick the window of --jobs contiguous jobs that best represents a whole log.

Jobs whose GPU count is not in --gpus are dropped first (inter-arrival times are
recomputed after filtering). Windows short of --min-per-gpu are rejected; the others
are scored against the whole filtered log (runtime CDF 0.35, GPU-demand mix 0.25,
inter-arrival p50/p95 0.20, GPU-service share 0.15, burstiness 0.05), windows whose
GPU-mix distance exceeds --max-gpu-mix or runtime-CDF distance --max-runtime-cdf are
rejected, and the best score wins (ties drawn with --seed).

The window is written as CSV (job_id,submit_offset_s,num_gpus,duration_s,status, plus
workload_id unless --map=false), submit times rebased to the first job: with
workload_id it is a runnable trace for 'aegis simulate --trace'. --report writes the
selection report as JSON (counts, the window's five distances, both profiles).

--min-per-gpu defaults to the paper's: 2:2 for Philly (--like philly, or without
--like a Philly cluster_job_log, detected or --format philly), else 2:1 (none when
--gpus lacks 2). --max-gpu-mix and --max-runtime-cdf accept any distance of at least
0 (0: only windows that match the whole log exactly).`,
		Example: `  aegis trace select --format philly --input cluster_job_log --out philly60.csv --report report.json
  aegis trace select --format helios --input Venus/cluster_log.csv --like venus --out venus60.csv
  aegis trace gen --like saturn --jobs 300000 --out big.csv && aegis trace select --input big.csv --like saturn`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if input == "" {
				return usageError{fmt.Errorf("%s: --input is required", c.CommandPath())}
			}
			f, err := parseFormat(format)
			if err != nil {
				return err
			}
			if err := checkLike(like, true); err != nil {
				return err
			}
			if jobs < 2 {
				return usageError{fmt.Errorf("--jobs %d: want at least 2", jobs)}
			}
			for _, lim := range []struct {
				flag string
				v    float64
			}{{"max-gpu-mix", maxMix}, {"max-runtime-cdf", maxCDF}} {
				if !(lim.v >= 0) { // negative or NaN
					return usageError{fmt.Errorf("--%s %v: want a distance of at least 0", lim.flag, lim.v)}
				}
			}
			o := traces.DefaultSelectOptions(like)
			o.Jobs, o.Seed, o.MaxGPUMix, o.MaxRuntimeCDF = jobs, seed, new(maxMix), new(maxCDF)
			if o.GPUs, err = parseGPUList("gpus", gpus); err != nil {
				return err
			}
			if len(o.GPUs) == 0 {
				return usageError{fmt.Errorf("--gpus: want at least one GPU count")}
			}
			if minPer != "auto" {
				if o.MinPerGPU, err = parseMinPerGPU(minPer); err != nil {
					return err
				}
				for g := range o.MinPerGPU {
					if !slices.Contains(o.GPUs, g) {
						return usageError{fmt.Errorf("--min-per-gpu: %d-GPU jobs are not among --gpus %v", g, o.GPUs)}
					}
				}
			}
			cat, err := traceCatalog(c)
			if err != nil {
				return err
			}
			l, err := traces.ReadLogFile(input, f, cat)
			if err != nil {
				return err
			}
			if minPer == "auto" {
				o.MinPerGPU = autoMinPerGPU(like, l.Format, o.GPUs)
			}
			sel, err := traces.SelectWindow(l, o)
			if err != nil {
				return err
			}
			if err := writeLog(c, out, sel.Jobs, mapWL, " (use --map=false to write durations only)"); err != nil {
				return err
			}
			return reportSelection(c, sel.Report, l.SkipSummary(), out, report)
		},
	}
	fl := c.Flags()
	fl.StringVar(&input, "input", "", "log file (or built-in trace name)")
	fl.StringVar(&format, "format", "auto", "input format: "+formatUsage())
	fl.IntVar(&jobs, "jobs", traces.DefaultWindowJobs, "window length in jobs")
	fl.StringVar(&gpus, "gpus", "1,2", "eligible GPU counts")
	fl.StringVar(&minPer, "min-per-gpu", "auto", "minimum jobs per GPU count in a window, GPUS:MIN[,...] or none")
	fl.StringVar(&like, "like", "", "use the paper's settings for philly, saturn or venus")
	fl.Uint64Var(&seed, "seed", traces.DefaultSelectSeed, "seed for breaking ties between equal windows")
	fl.Float64Var(&maxMix, "max-gpu-mix", traces.DefaultMaxGPUMix, "largest accepted GPU-mix distance")
	fl.Float64Var(&maxCDF, "max-runtime-cdf", traces.DefaultMaxRuntimeCDF, "largest accepted runtime-CDF distance")
	fl.BoolVar(&mapWL, "map", true, "add catalog workloads (workload_id) so the window is a runnable trace")
	fl.StringVar(&out, "out", "", "window CSV file (default stdout)")
	fl.StringVar(&report, "report", "", "selection report JSON file")
	return c
}

// autoMinPerGPU is --min-per-gpu auto: the paper's minimum of 2-GPU jobs
// for --like, else for the format the log was read as (Philly's two for a
// cluster_job_log, detected or not), and none without 2-GPU jobs.
func autoMinPerGPU(like string, read traces.Format, gpus []int) map[int]int {
	if !slices.Contains(gpus, 2) {
		return nil
	}
	if like == "" && read == traces.FormatPhilly {
		like = "philly"
	}
	return traces.DefaultSelectOptions(like).MinPerGPU
}

func newTraceMapCmd() *cobra.Command {
	var input, format, gpus, out string
	var remap bool
	c := &cobra.Command{
		Use:   "map",
		Short: "Give each job of a log a catalog workload (nearest duration quantile)",
		Long: `Map each job of a log to a catalog workload (of --gpu-type, A100 by default): within each GPU count, the job's
duration rank among the log's jobs gives a quantile, and the job gets the catalog
workload of that GPU count whose solo-runtime quantile is nearest. The output is a
runnable trace in our CSV format (with duration_s and status columns kept). An input
whose jobs already name workloads (a trace, or this command's output) is refused
unless --remap asks to replace them.`,
		Example: `  aegis trace map --input window.csv --out mapped.csv
  aegis trace map --format helios --input cluster_log.csv --gpus 1,2 --out venus-all.csv`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if input == "" {
				return usageError{fmt.Errorf("%s: --input is required", c.CommandPath())}
			}
			f, err := parseFormat(format)
			if err != nil {
				return err
			}
			keep, err := parseGPUList("gpus", gpus)
			if err != nil {
				return err
			}
			cat, err := traceCatalog(c)
			if err != nil {
				return err
			}
			l, err := traces.ReadLogFile(input, f, cat)
			if err != nil {
				return err
			}
			if l.Mapped && !remap {
				return fmt.Errorf("map %s: its jobs already name workloads (it is a trace, or mapped): give --remap to replace them with the nearest --gpu-type workloads by duration", input)
			}
			jobs := traces.FilterGPUs(l.Jobs, keep)
			if len(jobs) == 0 {
				return fmt.Errorf("map %s: no job with %v GPUs", input, keep)
			}
			if err := writeLog(c, out, jobs, true, " (use --gpus to keep GPU counts the catalog has)"); err != nil {
				return err
			}
			fmt.Fprintf(summaryWriter(c, out), "%s: mapped %d of %d jobs (skipped records: %s)\n", input, len(jobs), len(l.Jobs), l.SkipSummary())
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&input, "input", "", "log or trace file")
	fl.StringVar(&format, "format", "auto", "input format: "+formatUsage())
	fl.StringVar(&gpus, "gpus", "", "keep only these GPU counts, e.g. 1,2 (default all)")
	fl.StringVar(&out, "out", "", "mapped trace CSV file (default stdout)")
	fl.BoolVar(&remap, "remap", false, "map an input whose jobs already name workloads again (e.g. onto another --gpu-type)")
	return c
}

// statsJSON is `trace stats --json`'s object: the profile, and the reference
// it was compared with, if any.
type statsJSON struct {
	traces.Profile
	Like      string          `json:"like,omitempty"`
	Reference *traces.Profile `json:"reference,omitempty"`
}

func newTraceStatsCmd() *cobra.Command {
	var (
		format, like, gpus string
		asJSON             bool
	)
	c := &cobra.Command{
		Use:   "stats FILE",
		Short: "Profile a trace or log, side by side with the paper's reference",
		Long: `Print a trace's profile: job count, duration p50/p95, runtime CDF (fractions under
10 min, 1 h, 6 h, 1 day), GPU demand and GPU-service fractions by GPU count,
inter-arrival p50/p95 and the fraction of zero inter-arrival gaps.

FILE is a built-in trace (` + traces.BuiltinNames() + `), our CSV or JSON Lines trace
(durations are the catalog's solo runtimes), our CSV log, or a Philly or Helios log.
--like compares with the paper's whole-trace profile of philly, saturn or venus (the
default for those built-ins). That profile covers 1- and 2-GPU jobs only, so with
--like, --gpus defaults to 1,2 (an explicit --gpus still wins, e.g. --gpus '' for all
GPU counts). --json prints one JSON object.`,
		Example: `  aegis trace stats venus
  aegis trace stats big.csv --like venus --gpus 1,2,4,8
  aegis trace stats --format philly cluster_job_log --json`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, err := parseFormat(format)
			if err != nil {
				return err
			}
			if like == "" && slices.Contains(traces.ReferenceNames(), args[0]) {
				like = args[0]
			}
			if err := checkLike(like, true); err != nil {
				return err
			}
			if like != "" && !c.Flags().Changed("gpus") {
				gpus = "1,2" // the reference profiles' GPU counts
			}
			keep, err := parseGPUList("gpus", gpus)
			if err != nil {
				return err
			}
			cat, err := traceCatalog(c)
			if err != nil {
				return err
			}
			l, err := traces.ReadLogFile(args[0], f, cat)
			if err != nil {
				return err
			}
			kept := traces.FilterGPUs(l.Jobs, keep)
			p := traces.ProfileOf(kept)
			var ref *traces.Profile
			if like != "" {
				r, _ := traces.ReferenceProfile(like)
				ref = &r.Profile
			}
			if asJSON {
				b, err := json.MarshalIndent(statsJSON{Profile: p, Like: like, Reference: ref}, "", "  ")
				if err != nil {
					return fmt.Errorf("stats: %w", err)
				}
				_, err = fmt.Fprintf(c.OutOrStdout(), "%s\n", b)
				return err
			}
			if err := writeStatsTable(c.OutOrStdout(), args[0], l, p, like, ref); err != nil {
				return err
			}
			if len(kept) < len(l.Jobs) {
				_, err = fmt.Fprintf(c.OutOrStdout(), "profiled the %d of %d jobs with %s GPUs (--gpus)\n", len(kept), len(l.Jobs), gpus)
			}
			return err
		},
	}
	fl := c.Flags()
	fl.StringVar(&format, "format", "auto", "input format: "+formatUsage())
	fl.StringVar(&like, "like", "", "compare with the reference profile of philly, saturn or venus")
	fl.StringVar(&gpus, "gpus", "", "profile only these GPU counts, e.g. 1,2 (default all; 1,2 with --like)")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

// writeStatsTable prints the profile as an aligned table, with the
// reference in a second column when there is one.
func writeStatsTable(w io.Writer, name string, l *traces.Log, p traces.Profile, like string, ref *traces.Profile) error {
	type line struct{ label, v, r string }
	var lines []line
	row := func(label string, v func(p *traces.Profile) string) {
		ln := line{label: label, v: v(&p)}
		if ref != nil {
			ln.r = v(ref)
		}
		lines = append(lines, ln)
	}
	num := func(x float64) string { return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64) }
	frac := func(x float64) string { return fmt.Sprintf("%.4f", x) }
	row("jobs", func(p *traces.Profile) string { return strconv.Itoa(p.JobCount) })
	row("duration p50 (s)", func(p *traces.Profile) string { return num(p.DurationP50S) })
	row("duration p95 (s)", func(p *traces.Profile) string { return num(p.DurationP95S) })
	row("runtime < 10 min", func(p *traces.Profile) string { return frac(p.RuntimeCDF.Under10m) })
	row("runtime < 1 h", func(p *traces.Profile) string { return frac(p.RuntimeCDF.Under1h) })
	row("runtime < 6 h", func(p *traces.Profile) string { return frac(p.RuntimeCDF.Under6h) })
	row("runtime < 1 day", func(p *traces.Profile) string { return frac(p.RuntimeCDF.Under1d) })
	counts := p.GPUCounts()
	if ref != nil {
		for _, g := range ref.GPUCounts() {
			if !slices.Contains(counts, g) {
				counts = append(counts, g)
			}
		}
		slices.Sort(counts)
	}
	gpuLabel := func(what string, g int) string {
		if g == 1 {
			return fmt.Sprintf("%s, 1 GPU", what)
		}
		return fmt.Sprintf("%s, %d GPUs", what, g)
	}
	for _, g := range counts {
		row(gpuLabel("GPU demand", g), func(p *traces.Profile) string { return frac(p.GPUDemand[g]) })
	}
	for _, g := range counts {
		row(gpuLabel("GPU service", g), func(p *traces.Profile) string { return frac(p.GPUService[g]) })
	}
	row("inter-arrival p50 (s)", func(p *traces.Profile) string { return num(p.InterArrivalP50S) })
	row("inter-arrival p95 (s)", func(p *traces.Profile) string { return num(p.InterArrivalP95S) })
	row("zero inter-arrival", func(p *traces.Profile) string { return frac(p.ZeroInterArrival) })

	head := line{label: "statistic", v: name}
	if ref != nil {
		head.r = like + " (paper)"
	}
	wl, wv, wr := len(head.label), len(head.v), len(head.r)
	for _, ln := range lines {
		wl, wv, wr = max(wl, len(ln.label)), max(wv, len(ln.v)), max(wr, len(ln.r))
	}
	var buf bytes.Buffer
	for _, ln := range append([]line{head}, lines...) {
		fmt.Fprintf(&buf, "%-*s  %*s", wl, ln.label, wv, ln.v)
		if ref != nil {
			fmt.Fprintf(&buf, "  %*s", wr, ln.r)
		}
		buf.WriteByte('\n')
	}
	if l.SkippedTotal() > 0 {
		fmt.Fprintf(&buf, "%d records read, %d skipped: %s\n", l.Records, l.SkippedTotal(), l.SkipSummary())
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func newTraceGenCmd() *cobra.Command {
	var (
		like, out string
		jobs      int
		seed      uint64
		maxGPUs   int
		mapWL     bool
	)
	c := &cobra.Command{
		Use:   "gen",
		Short: "Generate a synthetic Philly-, Saturn- or Venus-like log",
		Long: `Generate a seeded synthetic log whose whole-trace profile matches the paper's
reference for philly, saturn or venus: the runtime CDF, GPU mix, inter-arrival
p50/p95 and burstiness at any --jobs (sampling is stratified), the GPU-service split
from about 10,000 jobs on. The output is CSV (job_id,submit_offset_s,num_gpus,
duration_s,status, plus workload_id unless --map=false, which makes it a runnable
trace). --max-gpus 4, 8, 16, 32 or 64 adds multi-GPU jobs for cluster-scale studies
(in the reference's share of jobs of more than 2 GPUs, split evenly between 4, 8, ...
--max-gpus GPUs: an assumption, not Helios's GPU-count mix). When the catalog has
workloads of every GPU count the jobs ask for, jobs map onto those (a trace for one
server). Otherwise (the A100 catalog has 1- and 2-GPU workloads, so from --max-gpus 4
on) the trace is for clusters (aegis simulate --cluster, e.g. a100-40gb:8x1 for one
8-GPU server): a job of G GPUs gets a workload of the largest catalog GPU count
dividing G (by nearest duration quantile among the jobs of G GPUs), and a last column
solo_s repeats duration_s, so every job runs for its generated length.`,
		Example: `  aegis trace gen --like venus --jobs 100000 --seed 7 --out big.csv
  aegis trace gen --like philly --jobs 1000000 --max-gpus 8 --out cluster.csv
  aegis trace gen --like venus --jobs 2000 --max-gpus 64 --seed 1 --out c64.csv`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := checkLike(like, false); err != nil {
				return err
			}
			if jobs < 1 || jobs > maxGenJobs {
				return usageError{fmt.Errorf("--jobs %d: want 1 to %d (a billion jobs are about 40 GB of CSV)", jobs, maxGenJobs)}
			}
			if !traces.ValidMaxGPUs(maxGPUs) {
				return usageError{fmt.Errorf("--max-gpus %d: want %s", maxGPUs, traces.MaxGPUsChoices)}
			}
			var (
				cat      *models.Catalog
				dividing bool
			)
			if mapWL {
				var err error
				if cat, err = traceCatalog(c); err != nil {
					return err
				}
				// Without workloads of every GPU count the jobs ask for
				// (the A100 catalog has 1 and 2), the trace is for
				// clusters: jobs map onto workloads whose GPU count
				// divides theirs, with solo_s.
				dividing = !traces.MapsExactly(cat, maxGPUs)
			}
			// Streamed: one block of jobs in memory at a time, written as it
			// is drawn (mapped onto the catalog block by block).
			var (
				name string
				last float64
			)
			gen := func(w io.Writer) error {
				cols := traces.LogPlain
				switch {
				case mapWL && dividing:
					cols = traces.LogWorkloadsSolo
				case mapWL:
					cols = traces.LogWorkloads
				}
				lw, err := traces.NewLogWriter(w, cols)
				if err != nil {
					return err
				}
				mapFn := traces.MapWorkloads
				if dividing {
					mapFn = traces.MapWorkloadsDividing
				}
				name, err = traces.StreamLike(like, jobs, seed, maxGPUs, func(block []traces.LogJob) error {
					var wl []string
					if mapWL {
						if wl, err = mapFn(block, cat); err != nil {
							return fmt.Errorf("%w (use --map=false to write durations only)", err)
						}
					}
					last = max(last, block[len(block)-1].Submit.Seconds())
					return lw.Write(block, wl)
				})
				if err != nil {
					return err
				}
				return lw.Flush()
			}
			if err := streamOutput(out, c.OutOrStdout(), gen); err != nil {
				return err
			}
			fmt.Fprintf(summaryWriter(c, out), "generated %s: %d jobs over %.0f s\n", name, jobs, last)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&like, "like", "", "reference trace: philly, saturn or venus (required)")
	fl.IntVar(&jobs, "jobs", 1000, "number of jobs")
	fl.Uint64Var(&seed, "seed", 1, "seed")
	fl.IntVar(&maxGPUs, "max-gpus", 2, "largest GPU count: "+traces.MaxGPUsChoices)
	fl.BoolVar(&mapWL, "map", true, "add catalog workloads (workload_id) so the log is a runnable trace")
	fl.StringVar(&out, "out", "", "output CSV file (default stdout)")
	return c
}
