package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/dispatch"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/sim"
)

func newPoliciesCmd() *cobra.Command {
	var sets []string
	c := &cobra.Command{
		Use:   "policies [POLICY]",
		Short: "List the policies with their parameters, defaults and valid values",
		Long: `List every scheduling policy (or one) with its parameters for aegis simulate
--set key=value: default, valid values and what each does, one line each, then the
simulator's truth settings for --truth key=value. The lists come from the code
that reads the parameters. A variant that changes defaults shows them as
"default (variant: value)". An external policy (a program of your own,
docs/own-policy.md) lists the parameters its program declares when it is
named with --set command=...`,
		Example: "  aegis policies\n  aegis policies aegis\n  aegis policies external --set command=\"python3 policies/external/python/bestfit.py\"",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("%s: want at most one policy, got %d arguments", c.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			names := registry.Names()
			if len(args) == 1 {
				if !slices.Contains(names, args[0]) {
					return usageError{fmt.Errorf("unknown policy %q (known: %s)", args[0], strings.Join(names, ", "))}
				}
				names = args[:1]
			}
			settings, err := policies.ParseSets(sets)
			if err != nil {
				return usageError{err}
			}
			if len(sets) > 0 && len(args) == 0 {
				return usageError{fmt.Errorf("%s: --set needs a policy (e.g. aegis policies external --set command=...)", c.CommandPath())}
			}
			w := c.OutOrStdout()
			for _, n := range names {
				defs, err := registry.Params(n, settings)
				if err != nil {
					return err
				}
				variants, err := variantDefaults(n, defs)
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%s: %s\n", n, registry.Summary(n))
				if err := writeParamDefs(w, defs, variants); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
			if len(args) == 0 {
				p := policies.NewParams(nil)
				if _, err := sim.ReadTruth(p); err != nil {
					return err
				}
				fmt.Fprintln(w, "simulator truth (aegis simulate --truth key=value):")
				if err := writeParamDefs(w, p.Defs(), nil); err != nil {
					return err
				}
				p = policies.NewParams(nil)
				dispatch.ReadConfig(p)
				fmt.Fprintln(w, "\ncluster dispatcher (aegis simulate --cluster, with any policy's --set key=value):")
				return writeParamDefs(w, p.Defs(), nil)
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&sets, "set", nil, "policy parameter key=value, for a policy whose parameters depend on one (external: command=...)")
	c.AddCommand(newPoliciesNewCmd())
	return c
}

// variantDefaults gives, per parameter key, the defaults that a policy's
// other variants (the non-default choices of its "variant" parameter) change,
// as "variant: value" notes.
func variantDefaults(policy string, defs []policies.ParamDef) (map[string][]string, error) {
	i := slices.IndexFunc(defs, func(d policies.ParamDef) bool { return d.Key == "variant" })
	if i < 0 {
		return nil, nil
	}
	notes := map[string][]string{}
	for _, v := range defs[i].Choices {
		if v == defs[i].Default {
			continue
		}
		other, err := registry.Params(policy, map[string]string{"variant": v})
		if err != nil {
			return nil, err
		}
		for _, o := range other {
			j := slices.IndexFunc(defs, func(d policies.ParamDef) bool { return d.Key == o.Key })
			if j >= 0 && o.Key != "variant" && defs[j].Default != o.Default {
				notes[o.Key] = append(notes[o.Key], v+": "+o.Default)
			}
		}
	}
	return notes, nil
}

// writeParamDefs prints one line per parameter: key, default, valid values,
// help.
func writeParamDefs(w io.Writer, defs []policies.ParamDef, notes map[string][]string) error {
	if len(defs) == 0 {
		_, err := fmt.Fprintln(w, "  (no parameters)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  key\tdefault\tvalid\twhat")
	for _, d := range defs {
		def := d.Default
		if n := notes[d.Key]; len(n) > 0 {
			def += " (" + strings.Join(n, "; ") + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", d.Key, def, d.Valid, d.Help)
	}
	return tw.Flush()
}
