package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/policies/external"
)

// aegisModule is this module's path, which a checkout's go.mod declares.
const aegisModule = "github.com/aegis-sched/aegis"

func newPoliciesNewCmd() *cobra.Command {
	var lang, out, aegisDir string
	c := &cobra.Command{
		Use:   "new NAME",
		Short: "Start a policy of your own: a Python script or a Go program speaking the policy protocol, with its tests",
		Long: `Write the files of a new policy of your own, run as policy external
(docs/own-policy.md), into --out (default ./NAME): nothing in this repository
changes. --lang python writes NAME.py (a Policy subclass: first fit in queue
order, one parameter, the protocol's declarations), test_NAME.py (a table test
on hand-built views) and a copy of aegis_policy.py, the module that speaks the
protocol. --lang go writes main.go (the same policy, served by external.Serve),
main_test.go and a go.mod that builds against your aegis checkout (--aegis,
default: the checkout the current directory is in); run go mod tidy there
first. Existing files are never overwritten. The commands to run and test it
are printed.`,
		Example: "  aegis policies new mine\n  aegis policies new mine --lang go --out ../mine",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s: want the policy's name, got %d arguments", c.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			s := external.Starter{Name: args[0], Lang: lang, Dir: out}
			if s.Dir == "" {
				s.Dir = s.Name
			}
			if lang == "go" {
				var err error
				if s.Aegis, s.GoVersion, err = aegisCheckout(aegisDir); err != nil {
					return usageError{err}
				}
			}
			files, err := s.Files()
			if err != nil {
				return usageError{err}
			}
			names := slices.Sorted(maps.Keys(files))
			var there []string
			for _, n := range names {
				if _, err := os.Lstat(filepath.Join(s.Dir, n)); !errors.Is(err, fs.ErrNotExist) {
					there = append(there, filepath.Join(s.Dir, n))
				}
			}
			if len(there) > 0 {
				return fmt.Errorf("policies new: %s already there: nothing written (choose another --out)", strings.Join(there, ", "))
			}
			if err := os.MkdirAll(s.Dir, 0o755); err != nil {
				return fmt.Errorf("policies new: %w", err)
			}
			w := c.OutOrStdout()
			for _, n := range names {
				p := filepath.Join(s.Dir, n)
				if err := os.WriteFile(p, files[n], 0o644); err != nil {
					return fmt.Errorf("policies new: %w", err)
				}
				fmt.Fprintln(w, "wrote", p)
			}
			fmt.Fprintln(w)
			command := "python3 " + filepath.Join(s.Dir, s.Name+".py")
			if lang == "go" {
				command = filepath.Join(s.Dir, s.Name)
				fmt.Fprintf(w, "build and test it:\n  cd %s && go mod tidy && go build -o %s . && go test .\n", s.Dir, s.Name)
			} else {
				fmt.Fprintf(w, "test it:\n  python3 -m unittest discover -s %s\n", s.Dir)
			}
			fmt.Fprintf(w, "run it:\n  aegis simulate --trace philly --policy external --set command=%q\n", command)
			fmt.Fprintf(w, "  aegis policies external --set command=%q   # its parameters\n", command)
			fmt.Fprintf(w, "in a spec, beside AEGIS (aegis run SPEC.yaml, docs/experiments.md):\n  configs:\n")
			fmt.Fprintf(w, "    - {label: AEGIS, policy: aegis}\n    - {label: %s, policy: external, params: {command: %q, mem_share: 1}}\n", s.Name, command)
			return nil
		},
	}
	c.Flags().StringVar(&lang, "lang", "python", "python or go")
	c.Flags().StringVar(&out, "out", "", "directory to write into (default ./NAME)")
	c.Flags().StringVar(&aegisDir, "aegis", "", "a Go policy: the aegis checkout it builds against (default: the one the current directory is in)")
	return c
}

// aegisCheckout returns the absolute path of the aegis checkout dir (or,
// when empty, the one the current directory is in) and its go.mod's Go
// version.
func aegisCheckout(dir string) (string, string, error) {
	start := dir
	if start == "" {
		var err error
		if start, err = os.Getwd(); err != nil {
			return "", "", err
		}
	}
	start, err := filepath.Abs(start)
	if err != nil {
		return "", "", err
	}
	for d := start; ; d = filepath.Dir(d) {
		mod, goVersion, err := readGoMod(filepath.Join(d, "go.mod"))
		if err == nil && mod == aegisModule {
			return d, goVersion, nil
		}
		if dir != "" || filepath.Dir(d) == d {
			break
		}
	}
	if dir != "" {
		return "", "", fmt.Errorf("--aegis %s: not an aegis checkout (no go.mod of module %s there)", dir, aegisModule)
	}
	return "", "", fmt.Errorf("%s is not in an aegis checkout: give --aegis DIR, the checkout the Go policy builds against", start)
}

// readGoMod reads a go.mod's module path and go version.
func readGoMod(path string) (mod, goVersion string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		switch k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), " "); k {
		case "module":
			mod = strings.Trim(strings.TrimSpace(v), `"`)
		case "go":
			goVersion = strings.TrimSpace(v)
		}
	}
	return mod, goVersion, sc.Err()
}
