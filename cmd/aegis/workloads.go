package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/models"
)

func newWorkloadsCmd() *cobra.Command {
	var gpuName string
	c := &cobra.Command{
		Use:   "workloads",
		Short: "List a GPU type's workload catalog (default: A100 40 GB measurements)",
		Long: `List the workloads a trace may name on a GPU type: solo time, peak memory,
mean SMACT, SMOCC and DRAMA, nvidia-smi utilization and Lucid class. --gpu-type
picks the catalog: a100-40gb (default), legacy-11gb, h200-141gb (A100 figures),
or a GPU type YAML file. aegis workloads show ID prints one workload in full.`,
		Example: "  aegis workloads --gpu-type legacy-11gb",
		Args:    subcommands,
		RunE: func(c *cobra.Command, _ []string) error {
			_, cat, err := gpuCatalog(gpuName)
			if err != nil {
				return err
			}
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
	c.Flags().StringVar(&gpuName, "gpu-type", "a100-40gb", "GPU type name or GPU type YAML file")
	c.AddCommand(newWorkloadsShowCmd())
	return c
}

// gpuCatalog resolves the --gpu-type flag and its workload catalog: a bad
// name is a usage error, a faulty GPU type file an input error.
func gpuCatalog(name string) (models.GPUType, *models.Catalog, error) {
	t, err := models.ResolveGPUType(name)
	if err != nil {
		if isYAML(name) {
			return t, nil, err // the GPU type file's content is at fault
		}
		return t, nil, usageError{fmt.Errorf("--gpu-type: %w", err)}
	}
	cat, err := models.CatalogFor(t)
	return t, cat, err
}
