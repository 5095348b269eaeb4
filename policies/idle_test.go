package policies

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIdleGPUs(t *testing.T) {
	v := &View{GPUs: []GPU{{Index: 0, Jobs: []JobID{3}}, {Index: 1}, {Index: 2}, {Index: 3}}}
	for _, tc := range []struct {
		name  string
		taken []bool
		n     int
		want  []int
	}{
		{"lowest idle first", []bool{false, false, false, false}, 2, []int{1, 2}},
		{"skips taken", []bool{false, true, false, false}, 2, []int{2, 3}},
		{"all idle ones", []bool{false, false, false, false}, 3, []int{1, 2, 3}},
		{"too few", []bool{false, false, true, false}, 3, nil},
		{"busy GPU never", []bool{false, false, false, false}, 4, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, v.IdleGPUs(tc.taken, tc.n))
		})
	}
}
