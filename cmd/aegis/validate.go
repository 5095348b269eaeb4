package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate SPEC...",
		Short: "Check experiment specs without running them",
		Long: `Check experiment spec files (see docs/experiments.md): the YAML's form,
the server, the traces (loaded or generated), every config's policy, parameters
and truth settings at every sweep point. Errors name the file, line and key.
Prints the number of cells each spec would run. Among several specs, one that
needs the shared data folder where there is none is skipped with a line that
says what it needs, as aegis run does.`,
		Example: "  aegis validate experiments/table3.yaml",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("%s: give at least one spec file", c.CommandPath())}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			specs, err := loadSpecs(args, c.ErrOrStderr())
			if err != nil {
				return err
			}
			for _, s := range specs {
				refits := ""
				if mu := s.ModelUncertainty; mu != nil {
					refits = fmt.Sprintf(", each also under %d model refits", mu.Refits)
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: ok: %s, %d cells (%d traces, %d configs, %d sweep points, %d seeds%s)\n",
					s.File(), s.Name, len(s.Cells()), len(s.Traces), len(s.Configs), len(s.Points()), len(s.Seeds), refits)
			}
			return nil
		},
	}
}
