package policies

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParamDefs(t *testing.T) {
	p := NewParams(map[string]string{"hold": "5s"})
	p.Duration("hold", 30*time.Second, 0, time.Hour, "hold")
	p.String("mode", "a", "mode", "a", "b")
	p.Float("x", 0.5, 0, 1, "x")
	p.Int("n", 3, 1, 9, "n")
	p.Floats("th", []float64{0.1, 0.2}, 0, 1, "th")
	p.Pattern("f", "on", "on|off|pct:<n>", "f")
	p.Int("n", 4, 1, 9, "again") // a second read does not add a definition
	require.NoError(t, p.Done("t"))
	require.Equal(t, []ParamDef{
		{Key: "hold", Default: "30s", Valid: "duration in [0s, 1h0m0s]", Help: "hold"},
		{Key: "mode", Default: "a", Valid: "a|b", Help: "mode", Choices: []string{"a", "b"}},
		{Key: "x", Default: "0.5", Valid: "number in [0, 1]", Help: "x"},
		{Key: "n", Default: "3", Valid: "whole number in [1, 9]", Help: "n"},
		{Key: "th", Default: "0.1,0.2", Valid: "2 comma-separated numbers in [0, 1]", Help: "th"},
		{Key: "f", Default: "on", Valid: "on|off|pct:<n>", Help: "f"},
	}, p.Defs())
}

// Done's errors are *ParamError: callers tell whose key is at fault with
// errors.As (a spec points at the line that sets it), not by their text.
func TestParamError(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    map[string]string
		want ParamError
		text string
	}{
		{"bad value", map[string]string{"n": "12"}, ParamError{Scope: "policy p", Key: "n", Value: "12", Want: "a whole number in [1, 9]"},
			`policy p: parameter n="12": want a whole number in [1, 9]`},
		{"unknown key", map[string]string{"nn": "1"}, ParamError{Scope: "policy p", Key: "nn", Value: "1", Want: "mode (mode (a|b)), n (n)", Unknown: true, hint: " (did you mean n?)"},
			`policy p: unknown parameter "nn" (did you mean n?); valid: mode (mode (a|b)), n (n)`},
		{"bad choice", map[string]string{"mode": "c", "n": "0"}, ParamError{Scope: "policy p", Key: "mode", Value: "c", Want: "one of a, b"},
			`policy p: parameter mode="c": want one of a, b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewParams(tc.m)
			p.String("mode", "a", "mode", "a", "b")
			p.Int("n", 3, 1, 9, "n")
			err := fmt.Errorf("wrapped: %w", p.Done("policy p"))
			var pe *ParamError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.want, *pe)
			require.Equal(t, tc.text, pe.Error())
		})
	}
}
