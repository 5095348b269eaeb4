package policies

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/internal/suggest"
)

// Params are a policy's key=value settings, as given by --set or a spec.
// A policy reads each key it knows with one of the typed getters, then calls
// Done, which reports keys it did not read and any bad value, listing the
// valid keys.
type Params struct {
	m    map[string]string
	used map[string]string // key -> help
	defs []ParamDef        // in the order first read
	bad  *ParamError       // the first bad value, its Scope set by Done
}

// ParamError is a bad parameter: a value its reader refuses or, when
// Unknown, a key it does not read. Callers find it with errors.As to tell
// whose parameter is at fault (Scope) and which key (Key), e.g. to point at
// the line of a spec that sets it.
type ParamError struct {
	// Scope is who reads the key: "policy aegis", "cluster" (the
	// dispatcher's keys), "truth" (the simulator's truth settings).
	Scope string
	Key   string
	Value string // as given
	// Want says what a valid value looks like; for an unknown key, the
	// valid keys with their help.
	Want    string
	Unknown bool
	// hint is a did-you-mean suffix for an unknown key.
	hint string
}

func (e *ParamError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("%s: unknown parameter %q%s; valid: %s", e.Scope, e.Key, e.hint, e.Want)
	}
	return fmt.Sprintf("%s: parameter %s=%q: want %s", e.Scope, e.Key, e.Value, e.Want)
}

// ParamDef describes a parameter as the policy reads it: its key, default,
// valid values and a one-line help. Params records one per key read, so a
// policy's parameters are listed from the code that reads them (aegis
// policies).
type ParamDef struct {
	Key, Default, Valid, Help string
	// Choices are the allowed values of a parameter restricted to a list.
	Choices []string
}

// Defs lists the parameters read so far, in the order first read.
func (p *Params) Defs() []ParamDef { return slices.Clone(p.defs) }

// def records a parameter's definition the first time it is read.
func (p *Params) def(d ParamDef) {
	for _, e := range p.defs {
		if e.Key == d.Key {
			return
		}
	}
	p.defs = append(p.defs, d)
}

// NewParams wraps raw settings.
func NewParams(m map[string]string) *Params {
	return &Params{m: m, used: map[string]string{}}
}

// ParseSets parses --set "key=value" strings into a map; a repeated key is
// an error.
func ParseSets(sets []string) (map[string]string, error) { return ParseFlagSets("--set", sets) }

// ParseFlagSets parses "key=value" strings given with the flag flag (named
// in errors) into a map; a repeated key is an error.
func ParseFlagSets(flag string, sets []string) (map[string]string, error) {
	m := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want key=value", flag, s)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s %q: key %q given twice", flag, s, k)
		}
		m[k] = strings.TrimSpace(v)
	}
	return m, nil
}

func (p *Params) get(key, help string) (string, bool) {
	p.used[key] = help
	v, ok := p.m[key]
	return v, ok
}

func (p *Params) fail(key, v, want string) {
	if p.bad == nil {
		p.bad = &ParamError{Key: key, Value: v, Want: want}
	}
}

// String reads a string parameter restricted to one of choices (any value when
// choices is empty).
func (p *Params) String(key, def, help string, choices ...string) string {
	valid := "any text"
	if len(choices) > 0 {
		valid = strings.Join(choices, "|")
	}
	p.def(ParamDef{Key: key, Default: def, Valid: valid, Help: help, Choices: slices.Clone(choices)})
	if len(choices) > 0 {
		help += " (" + strings.Join(choices, "|") + ")"
	}
	v, ok := p.get(key, help)
	if !ok {
		return def
	}
	if len(choices) > 0 && !slices.Contains(choices, v) {
		p.fail(key, v, "one of "+strings.Join(choices, ", "))
		return def
	}
	return v
}

// Pattern reads a string parameter of a form that valid describes (e.g.
// "pressure|nf|util:<pct>"); the caller checks the value.
func (p *Params) Pattern(key, def, valid, help string) string {
	p.def(ParamDef{Key: key, Default: def, Valid: valid, Help: help})
	v, ok := p.get(key, help+" ("+valid+")")
	if !ok {
		return def
	}
	return v
}

// Float reads a number in [lo, hi].
func (p *Params) Float(key string, def, lo, hi float64, help string) float64 {
	p.def(ParamDef{Key: key, Default: strconv.FormatFloat(def, 'g', -1, 64), Valid: fmt.Sprintf("number in [%g, %g]", lo, hi), Help: help})
	v, ok := p.get(key, help)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) { // NaN fails too
		p.fail(key, v, fmt.Sprintf("a number in [%g, %g]", lo, hi))
		return def
	}
	return f
}

// Int reads a whole number in [lo, hi].
func (p *Params) Int(key string, def, lo, hi int, help string) int {
	p.def(ParamDef{Key: key, Default: strconv.Itoa(def), Valid: fmt.Sprintf("whole number in [%d, %d]", lo, hi), Help: help})
	v, ok := p.get(key, help)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.fail(key, v, fmt.Sprintf("a whole number in [%d, %d]", lo, hi))
		return def
	}
	return n
}

// Duration reads a duration such as "30s" or a plain number of seconds, in
// [lo, hi].
func (p *Params) Duration(key string, def, lo, hi time.Duration, help string) time.Duration {
	p.def(ParamDef{Key: key, Default: def.String(), Valid: fmt.Sprintf("duration in [%v, %v]", lo, hi), Help: help})
	v, ok := p.get(key, help)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if f, ferr := strconv.ParseFloat(v, 64); ferr == nil {
		// A plain number of seconds; bounded before conversion so that it
		// cannot overflow.
		d, err = time.Duration(f*float64(time.Second)), nil
		if !(f >= lo.Seconds() && f <= hi.Seconds()) {
			err = strconv.ErrRange
		}
	}
	if err != nil || d < lo || d > hi {
		p.fail(key, v, fmt.Sprintf("a duration in [%v, %v] such as 30s, or a number of seconds", lo, hi))
		return def
	}
	return d
}

// Floats reads a comma-separated list of exactly n numbers in [lo, hi].
func (p *Params) Floats(key string, def []float64, lo, hi float64, help string) []float64 {
	ds := make([]string, len(def))
	for i, f := range def {
		ds[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	p.def(ParamDef{Key: key, Default: strings.Join(ds, ","), Valid: fmt.Sprintf("%d comma-separated numbers in [%g, %g]", len(def), lo, hi), Help: help})
	v, ok := p.get(key, help)
	if !ok {
		return def
	}
	parts := strings.Split(v, ",")
	if len(parts) != len(def) {
		p.fail(key, v, fmt.Sprintf("%d comma-separated numbers", len(def)))
		return def
	}
	out := make([]float64, len(parts))
	for i, s := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(f >= lo && f <= hi) {
			p.fail(key, v, fmt.Sprintf("%d comma-separated numbers in [%g, %g]", len(def), lo, hi))
			return def
		}
		out[i] = f
	}
	return out
}

// Done reports the first bad value, or any key that was never read, listing
// the valid keys: a *ParamError of scope (e.g. "policy aegis").
func (p *Params) Done(scope string) error {
	if p.bad != nil {
		e := *p.bad
		e.Scope = scope
		return &e
	}
	for _, k := range slices.Sorted(maps.Keys(p.m)) {
		if _, ok := p.used[k]; !ok {
			return &ParamError{Scope: scope, Key: k, Value: p.m[k], Want: p.Valid(), Unknown: true,
				hint: suggest.DidYouMean(k, slices.Sorted(maps.Keys(p.used)))}
		}
	}
	return nil
}

// Valid lists the keys read so far with their help, e.g. "hold (seconds)".
func (p *Params) Valid() string {
	if len(p.used) == 0 {
		return "none"
	}
	var s []string
	for _, k := range slices.Sorted(maps.Keys(p.used)) {
		s = append(s, k+" ("+p.used[k]+")")
	}
	return strings.Join(s, ", ")
}
