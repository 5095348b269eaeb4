// Command aegis replays training-job traces on simulated multi-GPU servers
// under scheduling policies, and reports the AEGIS paper's metrics.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aegis-sched/aegis/internal/suggest"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/traces"
)

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	delayGC(os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code: 0 ok, 1 error,
// 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var code exitCode
	if errors.As(err, &code) { // a child's exit code, passed on silently
		return int(code)
	}
	fmt.Fprintln(stderr, "aegis:", shorten(err.Error()))
	var u usageError
	if errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "aegis",
		Short:         "Simulate and compare GPU collocation schedulers for deep-learning training",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("aegis {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%s: %w%s (see --help)", c.CommandPath(), err, flagSuggestion(c, err))}
	})
	root.AddCommand(newSimulateCmd(), newPoliciesCmd(), newWorkloadsCmd(), newCalibrateCmd(), newTraceCmd())
	root.AddCommand(newValidateCmd(), newRunCmd(), newMergeCmd())
	root.AddCommand(newGPUsCmd())
	root.AddCommand(newPlotCmd(), newCompareCmd(), newFidelityCmd(), newMeasuredCmd())
	root.AddCommand(newExecCmd(), newAttemptCmd(), newFakeTrainCmd())
	completeValues(root)
	return root
}

// valueNames are the names a flag of this name takes, for the shell's
// completion (aegis completion bash|zsh|fish|powershell): --trace also
// completes files.
var valueNames = map[string]func() []string{
	"trace":  traces.BuiltinList,
	"policy": registry.Names,
	"server": func() []string {
		var s []string
		for _, t := range models.GPUTypeNames() {
			s = append(s, t+":")
		}
		return s
	},
	"figure": func() []string { return plots.FigureNames },
	"format": func() []string { return plots.Formats },
}

// completeValues registers valueNames' completions on every command of
// root's tree that has such a flag. A comma-separated list (--policy
// aegis,lu) completes its last item.
func completeValues(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, names := range valueNames {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			dir := cobra.ShellCompDirectiveNoFileComp
			if name == "trace" {
				dir = cobra.ShellCompDirectiveDefault
			}
			if name == "server" {
				dir |= cobra.ShellCompDirectiveNoSpace
			}
			_ = c.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
				head := ""
				if i := strings.LastIndex(typed, ","); i >= 0 {
					head = typed[:i+1]
				}
				var out []string
				for _, n := range names() {
					if strings.HasPrefix(head+n, typed) {
						out = append(out, head+n)
					}
				}
				return out, dir
			})
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// subcommands is the Args check of a command that groups subcommands: a
// stray word is an unknown subcommand, a usage error.
func subcommands(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		var names []string
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		return usageError{fmt.Errorf("%s: unknown subcommand %q (have %s)", c.CommandPath(), args[0], strings.Join(names, ", "))}
	}
	return nil
}

// exactArgs is cobra.ExactArgs reporting a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(c, args); err != nil {
			return usageError{fmt.Errorf("%s: %w", c.CommandPath(), err)}
		}
		return nil
	}
}

// flagSuggestion is " (did you mean --NAME?)" for an unknown flag that is
// a likely typo of one of c's flags, else "".
func flagSuggestion(c *cobra.Command, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s := suggest.DidYouMean(name, names); s != "" {
		return strings.Replace(s, "mean ", "mean --", 1)
	}
	return ""
}

// maxWord bounds a run of non-blank bytes in an error message: a 10 MB
// field of a bad input is echoed by its start and end, not whole.
const maxWord = 256

// shorten cuts every run of non-blank bytes in msg longer than maxWord to
// its first and last bytes around "...(N bytes)...".
func shorten(msg string) string {
	var b strings.Builder
	for len(msg) > 0 {
		i := strings.IndexAny(msg, " \t\n")
		if i < 0 {
			i = len(msg)
		}
		w := msg[:i]
		if len(w) > maxWord {
			head, tail := w[:maxWord*3/4], w[len(w)-maxWord/8:]
			for !utf8.ValidString(head) {
				head = head[:len(head)-1]
			}
			for !utf8.ValidString(tail) {
				tail = tail[1:]
			}
			w = fmt.Sprintf("%s...(%d bytes)...%s", head, len(w), tail)
		}
		b.WriteString(w)
		if i < len(msg) {
			b.WriteByte(msg[i])
			i++
		}
		msg = msg[i:]
	}
	return b.String()
}
