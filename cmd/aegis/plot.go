package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/results/plots"
)

func newPlotCmd() *cobra.Command {
	var (
		format  string
		figures []string
	)
	c := &cobra.Command{
		Use:   "plot DIR",
		Short: "Draw the figures of a results directory (a spec run or an aegis simulate --out) without re-running",
		Long: `Draw figures from the CSV files of a results directory into it, as SVG (default) or PNG.

From a spec run (aegis run --out DIR): normalized makespan/JCT bars per trace with GeoMean
and p95 diamonds (normalized.svg, Figure 3), per-job JCT/solo CDFs (jct-cdf.svg, Figure 4),
queue vs exec trade-off (queue-exec.svg, Figure 5), window stability (stability.svg,
Figure 6), the threshold sweep (thresholds.svg, Figure 7) and makespan and JCT CDFs across
seeds (seeds-cdf.svg). From an aegis simulate --out directory: the JCT/solo CDF and a GPU
timeline (timeline.svg: jobs per GPU, and memory and SMACT with --telemetry).
Every figure the directory's files allow is drawn unless --figure names some.`,
		Example: "  aegis plot results/table3\n  aegis simulate --trace philly --policy aegis --out out/run --telemetry && aegis plot out/run --format png",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := plots.CheckFormat(format); err != nil {
				return usageError{err}
			}
			paths, err := plots.DrawDir(args[0], format, figures...)
			for _, p := range paths {
				fmt.Fprintln(c.OutOrStdout(), p)
			}
			return err
		},
	}
	c.Flags().StringVar(&format, "format", "svg", "output format: "+strings.Join(plots.Formats, " or "))
	c.Flags().StringSliceVar(&figures, "figure", nil, "draw only these figures ("+strings.Join(plots.FigureNames, ", ")+")")
	return c
}
