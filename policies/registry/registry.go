// Package registry is the one list of the policies this program knows by
// name: it builds one (or a cluster dispatcher of one per server) from
// key=value parameters, lists their parameters, summaries and names, and
// closes what a policy holds beyond memory. aegis policies, specs, cells'
// keys, aegis simulate and aegis exec all consult it.
package registry

import (
	"fmt"
	"io"
	"maps"
	"sort"
	"strings"

	"github.com/aegis-sched/aegis/internal/suggest"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/policies/bestfit"
	"github.com/aegis-sched/aegis/policies/dispatch"
	"github.com/aegis-sched/aegis/policies/exclusive"
	"github.com/aegis-sched/aegis/policies/external"
	"github.com/aegis-sched/aegis/policies/horus"
	"github.com/aegis-sched/aegis/policies/lucid"
)

// policy is a known policy: its one-line summary, its constructor, and the
// code that reads its parameters (the constructor's first step, run alone
// to list them).
type policy struct {
	summary string
	build   func(map[string]string) (policies.Policy, error)
	read    func(*policies.Params) error
}

// known lists the policies by name: the one place a policy is registered.
func known() map[string]policy {
	return map[string]policy{
		"exclusive": {"strict FIFO, each job alone on idle GPUs (the baseline)",
			func(p map[string]string) (policies.Policy, error) { return exclusive.New(p) },
			exclusive.ReadConfig},
		"aegis": {"runtime-guided collocation: memory feasibility, observation hold, activity-anchored telemetry window, pressure filter, placement",
			func(p map[string]string) (policies.Policy, error) { return aegis.New(p) },
			func(p *policies.Params) error { _, err := aegis.ReadConfig(p); return err }},
		"horus": {"Horus (TPDS 2021): collocation by summed profiled utilization (paper) or its cost model (original)",
			func(p map[string]string) (policies.Policy, error) { return horus.New(p) },
			func(p *policies.Params) error { _, err := horus.ReadConfig(p); return err }},
		"bestfit": {"example policy (docs/own-policy.md): FIFO, tightest fit by profiled memory, a cap on summed profiled utilization",
			func(p map[string]string) (policies.Policy, error) { return bestfit.New(p) },
			bestfit.ReadConfig},
		"external": {"a policy in any language: a program speaking the JSON-lines protocol of docs/own-policy.md (command=...)",
			func(p map[string]string) (policies.Policy, error) { return external.New(p) },
			readExternal},
		"lucid": {"Lucid (ASPLOS 2023): pairs jobs of complementary sharing classes within memory",
			func(p map[string]string) (policies.Policy, error) { return lucid.New(p) },
			func(p *policies.Params) error { _, err := lucid.ReadConfig(p); return err }},
	}
}

// readExternal reads policy external's own parameters and, when a command
// is given, the parameters its program declares (it is started for that).
func readExternal(p *policies.Params) error {
	cfg, err := external.ReadConfig(p)
	if err != nil || len(cfg.Args) == 0 {
		return err
	}
	defs, err := external.Describe(cfg)
	if err != nil {
		return err
	}
	for _, d := range defs {
		if len(d.Choices) > 0 {
			p.String(d.Key, d.Default, d.Help, d.Choices...)
		} else {
			p.Pattern(d.Key, d.Default, d.Valid, d.Help)
		}
	}
	return nil
}

// Close ends what a policy holds beyond memory (an external policy's
// process): every policy built here must be closed once done with.
func Close(p policies.Policy) error {
	if c, ok := p.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Inputs identifies by content the files a policy is made of beyond
// this program (an external policy's: external.Fingerprint), "" when none:
// cells' keys include it, so a changed program is never served a stale
// result.
func Inputs(name string, params map[string]string) (string, error) {
	if name != "external" {
		return "", nil
	}
	cfg, err := external.ReadConfig(policies.NewParams(params))
	if err != nil {
		return "", err
	}
	return external.Fingerprint(cfg)
}

// Summary is a one-line description of a known policy ("" for
// others).
func Summary(name string) string { return known()[name].summary }

// Params lists a policy's parameters with their defaults and valid
// values, read from the policy's own parameter code with settings (nil: all
// defaults; e.g. {"variant": "original"} shows that variant's defaults).
func Params(name string, settings map[string]string) ([]policies.ParamDef, error) {
	k, ok := known()[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q%s (known: %s)", name, suggest.DidYouMean(name, Names()), strings.Join(Names(), ", "))
	}
	p := policies.NewParams(settings)
	if err := k.read(p); err != nil {
		return nil, err
	}
	return p.Defs(), nil
}

// Names lists the known policies.
func Names() []string {
	var s []string
	for n := range known() {
		s = append(s, n)
	}
	sort.Strings(s)
	return s
}

// Builtin lists the policies compiled into this program: those of
// Names but external, which runs a program it is given.
func Builtin() []string {
	var s []string
	for _, n := range Names() {
		if n != "external" {
			s = append(s, n)
		}
	}
	return s
}

// New builds a policy by name with key=value parameters.
func New(name string, params map[string]string) (policies.Policy, error) {
	k, ok := known()[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q%s (known: %s)", name, suggest.DidYouMean(name, Names()), strings.Join(Names(), ", "))
	}
	return k.build(params)
}

// NewDispatcher builds a cluster dispatcher running policy name with
// params on each of the cluster's servers (their GPU counts); params may also hold the
// dispatcher's own key, dispatch (dispatch.ReadConfig).
func NewDispatcher(name string, params map[string]string, servers []int) (*dispatch.Dispatcher, error) {
	cfg, rest, err := splitDispatch(params)
	if err != nil {
		return nil, err
	}
	return dispatch.New(cfg, servers, func() (policies.Policy, error) { return New(name, rest) })
}

// ServerParams returns params without the dispatcher's keys: what each
// server's policy of a cluster gets.
func ServerParams(params map[string]string) map[string]string {
	rest := maps.Clone(params)
	for _, k := range dispatchKeys {
		delete(rest, k)
	}
	return rest
}

// dispatchKeys are the dispatcher's own parameters (dispatch.ReadConfig).
var dispatchKeys = []string{"dispatch", "route_depth"}

// splitDispatch reads the dispatcher's parameters and returns the others.
func splitDispatch(params map[string]string) (dispatch.Config, map[string]string, error) {
	own := map[string]string{}
	for _, k := range dispatchKeys {
		if v, ok := params[k]; ok {
			own[k] = v
		}
	}
	p := policies.NewParams(own)
	cfg := dispatch.ReadConfig(p)
	if err := p.Done("cluster"); err != nil {
		return dispatch.Config{}, nil, err
	}
	return cfg, ServerParams(params), nil
}
