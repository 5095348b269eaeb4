package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/aegis-sched/aegis/experiments"
	"github.com/aegis-sched/aegis/policies"
)

// quickRun is aegis run without a spec: policies × traces × seeds from
// flags, made into a spec.
type quickRun struct {
	name, server, cluster, seeds string
	traces, policies             []string
	sets, truths                 []string
}

func (q *quickRun) flags(c *cobra.Command) {
	f := c.Flags()
	f.StringSliceVar(&q.traces, "trace", nil, "without a spec: traces to run (built-in names or files)")
	f.StringSliceVar(&q.policies, "policy", nil, "without a spec: policies to run, each a config labelled by its name")
	f.StringVar(&q.seeds, "seeds", "1", "without a spec: seeds, e.g. 1-5 or 1,3,7")
	f.StringArrayVar(&q.sets, "set", nil, "without a spec: policy parameter key=value for every policy (repeatable)")
	f.StringArrayVar(&q.truths, "truth", nil, "without a spec: simulator truth setting key=value (repeatable)")
	f.StringVar(&q.server, "server", "a100-40gb:3", "without a spec: server as TYPE:COUNT")
	f.StringVar(&q.cluster, "cluster", "", "without a spec: a cluster TYPE:GPUSxSERVERS[,...] instead of --server")
	f.StringVar(&q.name, "name", "run", "without a spec: the experiment's name")
}

// specs are the compiled specs to run: the one the flags make, or the
// files'.
func (q *quickRun) specs(paths []string, w io.Writer) ([]*experiments.Plan, error) {
	if !q.asked() {
		return loadSpecs(paths, w)
	}
	s, err := q.spec()
	if err != nil {
		return nil, err
	}
	return []*experiments.Plan{s}, nil
}

// asked reports whether the quick-run flags were given.
func (q *quickRun) asked() bool { return len(q.traces) > 0 || len(q.policies) > 0 }

// quickSpec is the spec a quick run makes, as YAML.
type quickSpec struct {
	Name    string              `yaml:"name"`
	Server  string              `yaml:"server,omitempty"`
	Cluster string              `yaml:"cluster,omitempty"`
	Traces  []map[string]string `yaml:"traces"`
	Seeds   []uint64            `yaml:"seeds,flow"`
	Configs []quickConfig       `yaml:"configs"`
	Table   string              `yaml:"table"`
	Figures []string            `yaml:"figures,flow"`
}

type quickConfig struct {
	Label  string            `yaml:"label"`
	Policy string            `yaml:"policy"`
	Params map[string]string `yaml:"params,omitempty"`
	Truth  map[string]string `yaml:"truth,omitempty"`
}

// spec makes the flags into a spec and compiles it as aegis run compiles
// a spec file; errors name the flag.
func (q *quickRun) spec() (*experiments.Plan, error) {
	if len(q.traces) == 0 || len(q.policies) == 0 {
		return nil, usageError{fmt.Errorf("--trace and --policy: give both")}
	}
	seeds, err := parseSeeds(q.seeds)
	if err != nil {
		return nil, usageError{err}
	}
	params, err := policies.ParseSets(q.sets)
	if err != nil {
		return nil, usageError{err}
	}
	truth, err := policies.ParseFlagSets("--truth", q.truths)
	if err != nil {
		return nil, usageError{err}
	}
	qs := quickSpec{Name: q.name, Server: q.server, Seeds: seeds, Table: experiments.TablePerTrace, Figures: []string{"jct-cdf"}}
	if q.cluster != "" {
		qs.Server, qs.Cluster = "", q.cluster
	}
	if len(seeds) > 1 {
		qs.Figures = append(qs.Figures, "seeds-cdf")
	}
	for _, t := range q.traces {
		qs.Traces = append(qs.Traces, map[string]string{"trace": t})
	}
	for _, p := range q.policies {
		qs.Configs = append(qs.Configs, quickConfig{Label: p, Policy: p, Params: params, Truth: truth})
	}
	b, err := yaml.Marshal(qs)
	if err != nil {
		return nil, err
	}
	spec, err := experiments.ParsePlan(b, quickName)
	if err != nil {
		// The lines of the spec made from the flags mean nothing to the user.
		return nil, errors.New(quickLine.ReplaceAllString(err.Error(), "flags: "))
	}
	return spec, nil
}

// quickName is the file name of the spec made from the flags (run.json's
// spec_file).
const quickName = "command line"

var quickLine = regexp.MustCompile(`(?m)^` + quickName + `:\d+: `)

// parseSeeds reads "1-5", "1,3,7" or a mix ("1-3,9").
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.ParseUint(hi, 10, 64)
		}
		if err1 != nil || err2 != nil || b < a || b-a >= 10_000 {
			return nil, fmt.Errorf("--seeds %q: want seeds such as 1-5 or 1,3,7 (at most 10000 in a range)", s)
		}
		for v := a; ; v++ {
			out = append(out, v)
			if v == b {
				break
			}
		}
	}
	return out, nil
}
