package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
)

func newWorkloadsShowCmd() *cobra.Command {
	var gpuName string
	c := &cobra.Command{
		Use:   "show WORKLOAD",
		Short: "Print one workload's full profile on a GPU type",
		Long: `Print a workload's catalog entry: solo and startup time, Lucid class, the
memory figure each memory input gives, and per GPU the peak memory, SMACT,
SMOCC and DRAMA (mean and p95) and nvidia-smi utilization, plus its simulated
slowdown when stacked with copies of itself under the default interference
model. --gpu-type picks the catalog: a100-40gb (default), legacy-11gb,
h200-141gb (A100 figures, see docs/models.md), or a GPU type YAML file.`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			t, cat, err := gpuCatalog(gpuName)
			if err != nil {
				return err
			}
			w, ok := cat.Get(args[0])
			if !ok {
				return fmt.Errorf("workload %q is not in the %s catalog (see %s)%s", args[0], t.Name, assemble.WorkloadsCommand(t.Name), showSuggest(cat, args[0]))
			}
			m, err := models.InterferenceFor(t)
			if err != nil {
				return err
			}
			return showWorkloadProfile(c.OutOrStdout(), t, w, m)
		},
	}
	c.Flags().StringVar(&gpuName, "gpu-type", "a100-40gb", "GPU type name or GPU type YAML file")
	return c
}

// showSuggest names up to three catalog ids containing s's first word.
func showSuggest(cat *models.Catalog, s string) string {
	stem, _, _ := strings.Cut(strings.ToLower(s), "_")
	var hits []string
	for _, id := range cat.IDs() {
		if stem != "" && strings.Contains(id, stem) && len(hits) < 3 {
			hits = append(hits, id)
		}
	}
	if len(hits) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(hits, ", ") + "?"
}

func showWorkloadProfile(out io.Writer, t models.GPUType, w *models.Workload, m models.Interference) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	yes := map[bool]string{true: "yes", false: "no (figures below are A100 ones, for the truth model only)"}
	fmt.Fprintf(tw, "workload\t%s\n", w.ID)
	fmt.Fprintf(tw, "GPU type\t%s, %.0f MiB, pressure telemetry: %s\n", t.Name, t.MemoryMiB, yes[t.Pressure])
	fmt.Fprintf(tw, "GPUs\t%d\n", w.GPUs)
	fmt.Fprintf(tw, "solo time\t%.2f s (%.1f min)\n", w.SoloS, w.SoloS/60)
	fmt.Fprintf(tw, "startup\t%s to first GPU activity\n", models.Startup(w.ID))
	fmt.Fprintf(tw, "Lucid class\t%s\n", w.Lucid)
	fmt.Fprintln(tw, "memory inputs\t")
	for _, in := range policies.MemoryInputs() {
		e := models.EstimateFor(in, w)
		var v string
		switch e.Status {
		case policies.EstimateKnown:
			v = fmt.Sprintf("%.0f MiB", e.MiB)
			if e.MiB > t.MemoryMiB {
				v += " (more than the GPU)"
			}
		case policies.EstimateNone:
			v = "no per-job estimate (admission asks for free memory only)"
		case policies.EstimateUnavailable:
			v = "unavailable (exclusive placement only)"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", in, v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\t"
	for g := range w.PerGPU {
		head += fmt.Sprintf("gpu %d\t", g)
	}
	fmt.Fprintln(tw, head)
	row := func(name string, f func(p models.Profile) string) {
		s := name + "\t"
		for _, p := range w.PerGPU {
			s += f(p) + "\t"
		}
		fmt.Fprintln(tw, s)
	}
	row("peak MiB", func(p models.Profile) string { return fmt.Sprintf("%.0f", p.PeakMiB) })
	for _, sig := range []struct {
		name string
		get  func(p models.Profile) models.Stat
	}{{"SMACT", func(p models.Profile) models.Stat { return p.SMACT }},
		{"SMOCC", func(p models.Profile) models.Stat { return p.SMOCC }},
		{"DRAMA", func(p models.Profile) models.Stat { return p.DRAMA }}} {
		row(sig.name+" mean", func(p models.Profile) string { return fmt.Sprintf("%.4f", sig.get(p).Mean) })
		row(sig.name+" p95", func(p models.Profile) string { return fmt.Sprintf("%.4f", sig.get(p).P95) })
	}
	row("util %", func(p models.Profile) string { return fmt.Sprintf("%.1f", p.UtilPct) })
	for _, n := range []int{2, 3, 4} {
		row(fmt.Sprintf("slowdown ×%d", n), func(p models.Profile) string {
			return fmt.Sprintf("%.2f", 1/models.StackedRate(m, p, n))
		})
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nslowdown ×N: each of N copies stacked on one GPU, solo time factor under the\ninterference truth model (%s); a multi-GPU job runs at its slowest GPU's rate.\n", showModelName(m))
	return nil
}

func showModelName(m models.Interference) string {
	if _, ok := m.(*models.PressureModel); ok {
		return "pressure model"
	}
	return fmt.Sprintf("%T", m)
}
