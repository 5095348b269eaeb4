package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/compare"
	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/plots"
)

func newCompareCmd() *cobra.Command {
	var (
		out, format string
		metrics     []string
		sz          sizeFlags
	)
	c := &cobra.Command{
		Use:   "compare DIR...",
		Short: "Compare results directories side by side: deltas with 95 % CIs and paired tests, CDFs overlaid",
		Long: `Compare results directories (aegis run --out or aegis simulate --out) side by side.

With several directories, each is a side and the first the reference: "before vs after
my change" (two runs of one spec), or "policy X vs Y" (two simulate directories). Runs
pair by trace and seed, jobs by ID; configurations present in every directory are
compared one by one (or, when each directory holds one, those whatever their names).
With one directory, its configurations are the sides (aegis run --policy aegis,lucid).

Per trace (and configuration) and metric (--metric, summary.csv columns): each side's
mean ± 95 % CI over the seeds every side has, the paired difference to the reference
with its CI, the difference in percent and the p-value of a paired t-test over seeds;
then the jobs' JCT / solo runtime paired by seed and job with a Wilcoxon signed-rank test
(exact up to 50 pairs without ties, else the normal approximation). The table is printed
as Markdown; --out DIR also writes compare.md, compare.csv, compare.tex, the per-job
CDFs overlaid (compare-cdf.svg, or --format png or pdf; --width, --height and
--font-scale as in aegis plot) and README.md, a page of it all with the compared
directories linked and each one's provenance file's sha256.`,
		Example: `  aegis compare before/ after/
  aegis run --trace philly,venus --policy aegis,lucid --seeds 1-5 --out pol && aegis compare pol
  aegis compare out/aegis out/lucid out/horus --out cmp --format png`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("%s: give the results directories to compare", c.CommandPath())}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := plots.CheckFormat(format); err != nil {
				return usageError{err}
			}
			size, err := sz.size()
			if err != nil {
				return usageError{err}
			}
			for _, m := range metrics {
				if !strings.Contains(","+strings.Join(results.SummaryColumns, ",")+",", ","+m+",") {
					return usageError{fmt.Errorf("--metric %q: want summary.csv columns (%s)", m, strings.Join(results.SummaryColumns, ", "))}
				}
			}
			res, err := compare.Dirs(args, metrics)
			if err != nil {
				return err
			}
			t := res.Table()
			if err := t.WriteMarkdown(c.OutOrStdout()); err != nil {
				return err
			}
			if out == "" {
				return nil
			}
			paths, err := writeComparison(out, format, size, res, t)
			if err == nil {
				err = res.WritePage(out, args, metrics)
				paths = append(paths, filepath.Join(out, page.Name))
			}
			for _, p := range paths {
				fmt.Fprintln(c.OutOrStdout(), p)
			}
			return err
		},
	}
	c.Flags().StringVar(&out, "out", "", "also write compare.md, compare.csv, compare.tex, the overlaid CDFs and a README.md page into this directory")
	c.Flags().StringVar(&format, "format", "svg", "the figure's format: "+strings.Join(plots.Formats, ", "))
	c.Flags().StringSliceVar(&metrics, "metric", nil, "summary.csv columns to compare (default "+strings.Join(compare.DefaultMetrics, ",")+")")
	sz.add(c)
	return c
}

// writeComparison writes the table's files and the figure, drawn at size,
// into dir.
func writeComparison(dir, format string, size plots.Size, res *compare.Result, t *results.Table) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	var md, csv, tex bytes.Buffer
	for _, w := range []func() error{
		func() error { return t.WriteMarkdown(&md) },
		func() error { return t.WriteCSV(&csv) },
		func() error { return t.WriteLaTeX(&tex) },
	} {
		if err := w(); err != nil {
			return nil, err
		}
	}
	var paths []string
	for _, f := range []struct {
		name string
		b    []byte
	}{{"compare.md", md.Bytes()}, {"compare.csv", csv.Bytes()}, {"compare.tex", tex.Bytes()}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.b, 0o644); err != nil {
			return paths, fmt.Errorf("output: %w", err)
		}
		paths = append(paths, p)
	}
	fig, err := res.Figure()
	if err != nil {
		return paths, err
	}
	if err := fig.Resize(size); err != nil {
		return paths, err
	}
	p, err := fig.Save(filepath.Join(dir, "compare-cdf."+format))
	return append(paths, p...), err
}
