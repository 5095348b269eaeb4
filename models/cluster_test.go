package models

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCluster(t *testing.T) {
	for _, tc := range []struct {
		in      string
		servers []int
		types   []string // each server's GPU type; nil: all a100-40gb
		str     string
		err     string
	}{
		{in: "a100-40gb:8x16", servers: []int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8}, str: "a100-40gb:8x16"},
		{in: "a100-40gb:8x2,a100-40gb:4x1", servers: []int{8, 8, 4}, str: "a100-40gb:8x2,a100-40gb:4x1"},
		{in: "A100-40GB:2x1", servers: []int{2}, str: "a100-40gb:2x1"},
		{in: "", err: "want TYPE:GPUSxSERVERS"},
		{in: "a100-40gb", err: `cluster group "a100-40gb": want TYPE:GPUSxSERVERS`},
		{in: "v100:8x2", err: `cluster group "v100:8x2": GPU type: unknown GPU type "v100"`},
		{in: "a100-40gb:8x1,h200:8x1", err: `cluster group "h200:8x1": GPU type: unknown GPU type "h200"`},
		{in: "a100-40gb:2x1,h200-141gb:8xq", err: `cluster group "h200-141gb:8xq": server count "q"`},
		{in: "a100-40gb:2x1,h200-141gb:q8x1", err: `cluster group "h200-141gb:q8x1": GPUs per server "q8"`},
		{in: "a100-40gb:2x1,h200-141gb", err: `cluster group "h200-141gb": want TYPE:GPUSxSERVERS`},
		{in: "nope.yaml:2x1", err: `cluster group "nope.yaml:2x1": GPU type:`},
		{in: "a100-40gb:8", err: `size "8": want GPUSxSERVERS`},
		{in: "a100-40gb:0x4", err: `GPUs per server "0" is not a whole number in 1..1024`},
		{in: "a100-40gb:8x0", err: `server count "0" is not a whole number in 1..16384`},
		{in: "a100-40gb:8x-1", err: `server count "-1"`},
		{in: "a100-40gb:08x2", err: `GPUs per server "08"`},
		{in: "a100-40gb:8xx2", err: `server count "x2"`},
		{in: "a100-40gb:8x2,", err: `cluster group "": want TYPE:GPUSxSERVERS`},
		{in: "a100-40gb:1024x100", err: "more than 65536 GPUs"},
		{in: "a100-40gb:2x2,h200-141gb:4x1", servers: []int{2, 2, 4}, types: []string{"a100-40gb", "a100-40gb", "h200-141gb"},
			str: "a100-40gb:2x2,h200-141gb:4x1"},
		{in: "h200-141gb:1x1,legacy-11gb:1x1,h200-141gb:1x1", servers: []int{1, 1, 1}, types: []string{"h200-141gb", "legacy-11gb", "h200-141gb"},
			str: "h200-141gb:1x1,legacy-11gb:1x1,h200-141gb:1x1"},
		{in: "a100-40gb:8x1,a100-40gb:8x1", servers: []int{8, 8}, str: "a100-40gb:8x2"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			c, err := ParseCluster(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.servers, c.Servers)
			require.Equal(t, tc.str, c.String())
			types := tc.types
			if types == nil {
				types = slices.Repeat([]string{"a100-40gb"}, len(tc.servers))
			}
			var got []string
			for _, k := range c.ServerType {
				got = append(got, c.Types[k].Name)
			}
			require.Equal(t, types, got)
			require.Equal(t, len(slices.Compact(slices.Sorted(slices.Values(types)))) > 1, c.Mixed())
			require.Equal(t, c.Types[0], c.Type)
			require.Len(t, c.GPUTypes(), c.GPUs())
			total := 0
			for _, n := range tc.servers {
				total += n
			}
			require.Equal(t, total, c.GPUs())
			require.Equal(t, Server{Type: c.Type, GPUs: total}, c.Server())
		})
	}
}

// FuzzParseCluster checks that any input parses into a sane cluster or
// fails with an error, never panics.
func FuzzParseCluster(f *testing.F) {
	for _, s := range []string{"a100-40gb:8x16", "a100-40gb:8x2,a100-40gb:4x1", "x:1x1", ":", "a100-40gb:8x", ",",
		"a100-40gb:8x8,h200-141gb:8x4", "h200-141gb:1x1,legacy-11gb:2x3,h200-141gb:1x1", "a100-40gb:8x1,h200-141gb:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCluster(s)
		if err != nil {
			return
		}
		require.NotEmpty(t, c.Servers)
		require.LessOrEqual(t, c.GPUs(), maxClusterGPUs)
		for _, n := range c.Servers {
			require.True(t, n >= 1 && n <= 1024)
		}
		require.Len(t, c.ServerType, len(c.Servers))
		require.LessOrEqual(t, len(c.Types), maxClusterTypes)
		for _, k := range c.ServerType {
			require.True(t, k >= 0 && k < len(c.Types))
		}
		back, err := ParseCluster(c.String())
		if err != nil {
			return // a GPU type YAML file's name is not its path
		}
		require.Equal(t, c.Servers, back.Servers)
		require.Equal(t, c.ServerType, back.ServerType)
	})
}

// TestClusterSlots: each GPU's index within its server, in server order.
func TestClusterSlots(t *testing.T) {
	for in, want := range map[string][]int{
		"legacy-11gb:8x1":               {0, 1, 2, 3, 4, 5, 6, 7},
		"a100-40gb:2x2,legacy-11gb:3x1": {0, 1, 0, 1, 0, 1, 2},
	} {
		c, err := ParseCluster(in)
		require.NoError(t, err)
		require.Equal(t, want, c.Slots(), in)
	}
}
