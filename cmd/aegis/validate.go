package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/experiments"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate SPEC...",
		Short: "Check experiment specs without running them",
		Long: `Check experiment spec files (see docs/experiments.md): the YAML's form,
the server, the traces (loaded or generated), every config's policy, parameters
and truth settings at every sweep point. Errors name the file, line and key.
Prints the number of cells each spec would run.`,
		Example: "  aegis validate experiments/table3.yaml",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("%s: give at least one spec file", c.CommandPath())}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			for _, path := range args {
				s, err := experiments.LoadSpec(path)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: ok: %s, %d cells (%d traces, %d configs, %d sweep points, %d seeds)\n",
					path, s.Name, len(s.Cells()), len(s.Traces), len(s.Configs), len(s.Points()), len(s.Seeds))
			}
			return nil
		},
	}
}
