package policytest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// A decision that writes into a job's field or its GPU list is noted; one
// that writes nothing is not.
func TestWriteCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(v *policies.View)
		wrote bool
	}{
		{"nothing", func(*policies.View) {}, false},
		{"a field", func(v *policies.View) { v.Jobs[1].Attempts++ }, true},
		{"a GPU list", func(v *policies.View) { v.Jobs[0].On[0] = 3 }, true},
	} {
		v := &policies.View{Jobs: []policies.Job{{ID: 0, On: []int{1}}, {ID: 1}}}
		var c WriteCheck
		c.Before(v)
		tc.write(v)
		c.After(v)
		require.Equal(t, tc.wrote, len(c.Wrote) > 0, "%s: %v", tc.name, c.Wrote)
	}
}
