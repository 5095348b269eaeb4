package policies

import (
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
