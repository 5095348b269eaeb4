package registry

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewErrors(t *testing.T) {
	_, err := New("aegys", nil)
	require.ErrorContains(t, err, `unknown policy "aegys" (did you mean aegis?) (known: aegis, bestfit, exclusive, external, horus, lucid)`)
	_, err = New("exclusive", map[string]string{"x": "1"})
	require.ErrorContains(t, err, `unknown parameter "x"`)
	_, err = NewDispatcher("exclusive", map[string]string{"dispatch": "worst"}, []int{2, 2})
	require.ErrorContains(t, err, `cluster: parameter dispatch="worst"`)
}

// Every known policy builds with its defaults and lists its parameters;
// Builtin is Names without external, the one that runs a program.
func TestNames(t *testing.T) {
	require.Equal(t, []string{"aegis", "bestfit", "exclusive", "external", "horus", "lucid"}, Names())
	require.Equal(t, []string{"aegis", "bestfit", "exclusive", "horus", "lucid"}, Builtin())
	for _, n := range Builtin() {
		p, err := New(n, nil)
		require.NoError(t, err, n)
		require.NoError(t, Close(p))
		require.NotEmpty(t, Summary(n))
		_, err = Params(n, nil)
		require.NoError(t, err, n)
	}
	// The dispatcher's keys are not the servers' policies'.
	require.Equal(t, map[string]string{"hold": "5s"}, ServerParams(map[string]string{"dispatch": "firstfit", "route_depth": "2", "hold": "5s"}))
}
