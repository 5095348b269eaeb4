package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/models"
)

func newWorkloadsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "workloads",
		Short: "List the workload catalog (A100 40 GB measurements)",
		Args:  subcommands,
		RunE: func(c *cobra.Command, _ []string) error {
			cat := models.A100()
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "workload\tGPUs\tsolo s\tpeak MiB\tSMACT\tSMOCC\tDRAMA\tutil %\tLucid\t")
			for _, id := range cat.IDs() {
				w, _ := cat.Get(id)
				p := w.PerGPU[0]
				fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t\n", id, w.GPUs, w.SoloS,
					w.PeakMiB(), p.SMACT.Mean, p.SMOCC.Mean, p.DRAMA.Mean, w.UtilPct(), w.Lucid)
			}
			return tw.Flush()
		},
	}
	c.AddCommand(newWorkloadsShowCmd())
	return c
}
