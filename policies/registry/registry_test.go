package registry

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
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

// The built-in policies that observe events, on a server and behind the
// cluster's dispatcher, read them in place (policies.InPlaceObserver,
// policies.InPlaceSelective): the loop then hands them the backend's
// events without a copy of each.
func TestObserversReadInPlace(t *testing.T) {
	for _, n := range []string{"aegis", "exclusive", "horus", "lucid"} {
		p, err := New(n, nil)
		require.NoError(t, err, n)
		d, err := NewDispatcher(n, nil, []int{2, 2})
		require.NoError(t, err, n)
		for _, p := range []policies.Policy{p, d} {
			_, ok := p.(policies.InPlaceObserver)
			require.True(t, ok, "%s (%T) observes in place", n, p)
			_, ok = p.(policies.InPlaceSelective)
			require.True(t, ok, "%s (%T) is asked in place", n, p)
		}
		require.NoError(t, Close(p))
		require.NoError(t, Close(d))
	}
}
