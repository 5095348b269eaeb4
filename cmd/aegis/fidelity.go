package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results/fidelity"
)

func newFidelityCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "fidelity DIR",
		Short: "Set the paper's tables in DIR (make reproduce's results/paper) beside the published values",
		Long: `Write DIR/fidelity.md: a one-line verdict on top (conclusions that hold, the headline,
median errors and failed attempts against issue 31's bars, the testbed's own runs), then
every cell the AEGIS paper prints (Tables 2-6) beside ours
(mean ± 95 % CI over seeds, and the model-uncertainty spread where the run measured it)
with the error, the median |error| per table, and whether the paper's conclusions hold
(Table 3 PeakMem lowest makespan; Table 5 NF raises mean JCT for MFM and MU; Table 6
Mem-only worst makespan; AEGIS's headline makespan reductions), with the measured cause
where they do not, and the largest gaps explained in a sentence each.

The published values are read at report time from the shared data folder
(../shared/paper/published_tables.csv, or $AEGIS_SHARED); without it the report says
they are unavailable and still lists ours, but leaves a DIR/fidelity.md that has
them as it is (saying so; --out FILE writes it elsewhere). make reproduce runs this after the specs.
Without --out it also rewrites DIR/README.md, the index of DIR's runs, to link the report.`,
		Example: `  aegis fidelity results/paper
  aegis fidelity out --out -`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s: give one results directory", c.CommandPath())}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			// $AEGIS_SHARED is used as given (the report names what it
			// lacks); found by itself, the folder must hold calibration/.
			shared, ok := models.SharedDir()
			if !ok && os.Getenv("AEGIS_SHARED") == "" {
				shared = ""
			}
			r, err := fidelity.Load(args[0], shared)
			if err != nil {
				return fmt.Errorf("fidelity: %w", err)
			}
			var b bytes.Buffer
			if err := r.WriteMarkdown(&b); err != nil {
				return err
			}
			if out == "-" {
				_, err := c.OutOrStdout().Write(b.Bytes())
				return err
			}
			index := out == ""
			if index {
				out = filepath.Join(args[0], "fidelity.md")
				if r.Paper == nil && fidelity.Published(out) {
					// Without the data a report would replace the
					// published values with "unavailable".
					why := r.Source
					if env := os.Getenv("AEGIS_SHARED"); env != "" {
						why += " (the folder is AEGIS_SHARED=" + env + ")"
					}
					fmt.Fprintf(c.ErrOrStderr(), "aegis: fidelity: %s left as it is: it sets ours beside the published values, which are %s; --out FILE writes the report without them\n",
						out, why)
					return nil
				}
			}
			if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
				return fmt.Errorf("fidelity: %w", err)
			}
			fmt.Fprintln(c.OutOrStdout(), out)
			if index { // DIR's index page links the report
				return experiments.WriteIndex(args[0])
			}
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "the report's file (default DIR/fidelity.md; - for standard output)")
	return c
}
