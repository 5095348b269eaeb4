package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	in := `goos: linux
BenchmarkGrowth/aegis/jobs=10000-2   	       1	5000000000 ns/op	2000000000 cpu-ns/op	  100 events/s
BenchmarkGrowth/aegis/jobs=1000-2    	       5	 150000000 ns/op
BenchmarkEngine-2 1 5 ns/op
BenchmarkGrowth/exclusive/jobs=1000  	      10	  10000000 ns/op
BenchmarkGrowth/aegis/loaded/jobs=1000-2    	       1	 900000000 ns/op	 300000000 cpu-ns/op
`
	pts, err := parse(strings.NewReader(in), "b.txt")
	require.NoError(t, err)
	require.Equal(t, []point{{"aegis", false, 1000, 1.5e8}, {"aegis", false, 10000, 2e9}, {"aegis", true, 1000, 3e8},
		{"exclusive", false, 1000, 1e7}}, pts)

	for _, bad := range []string{
		"BenchmarkGrowth/aegis-2 1 5 ns/op",
		"BenchmarkGrowth/aegis/jobs=x-2 1 5 ns/op",
		"BenchmarkGrowth/aegis/heavy/jobs=10-2 1 5 ns/op",
		"BenchmarkGrowth/aegis/jobs=10-2 1 -5 ns/op",
	} {
		_, err := parse(strings.NewReader(bad), "b.txt")
		require.ErrorContains(t, err, "b.txt:1")
	}
}
