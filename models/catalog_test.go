package models

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestA100Catalog(t *testing.T) {
	c := A100()
	require.Equal(t, 53, c.Len())
	w, ok := c.Get("gpt2_large_wiki_bs8_2gpu")
	require.True(t, ok)
	require.Equal(t, 2, w.GPUs)
	require.Equal(t, 28330.0, w.PerGPU[0].PeakMiB)
	require.Equal(t, 16458.0, w.PerGPU[1].PeakMiB)
	require.Equal(t, 28330.0, w.PeakMiB())
	v, _ := c.Get("vgg16_imagenet_bs128_1gpu")
	require.Equal(t, 0.0, v.Estimates.Analytical, "40000 means unavailable")
	require.Equal(t, Medium, v.Lucid)
	for _, id := range c.IDs() {
		w, _ := c.Get(id)
		require.Len(t, w.PerGPU, w.GPUs, id)
		require.Positive(t, w.SoloS, id)
		require.Positive(t, w.PerGPU[0].PeakMiB, id)
	}
}

func TestReadCatalogErrors(t *testing.T) {
	head := strings.Join(catalogCols, ",") + "\n"
	for name, tc := range map[string]struct{ in, err string }{
		"bad header":  {"x\n", "header"},
		"bad number":  {head + "w,1,0,abc,1,0,0,0,0,0,0,0,0,0,0,tiny\n", "c.csv:2: column solo_s"},
		"bad class":   {head + "w,1,0,10,1,0,0,0,0,0,0,0,0,0,0,huge\n", "c.csv:2: column lucid_class"},
		"gpu range":   {head + "w,1,1,10,1,0,0,0,0,0,0,0,0,0,0,tiny\n", "c.csv:2"},
		"gpu missing": {head + "w,2,0,10,1,0,0,0,0,0,0,0,0,0,0,tiny\n", "no row for gpu 1"},
		"gpu twice":   {head + "w,1,0,10,1,0,0,0,0,0,0,0,0,0,0,tiny\nw,1,0,10,1,0,0,0,0,0,0,0,0,0,0,tiny\n", "c.csv:3: workload w: second row"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadCatalog(bytes.NewReader([]byte(tc.in)), "c.csv")
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func FuzzReadCatalog(f *testing.F) {
	head := strings.Join(catalogCols, ",") + "\n"
	f.Add([]byte(head + "w,1,0,10,1,0.1,0.2,0.1,0.2,0.1,0.2,30,0,0,0,tiny\n"))
	f.Add([]byte(head + "w,2,0,10,1,0,0,0,0,0,0,0,0,0,0,jumbo\nw,2,1,10,1,0,0,0,0,0,0,0,0,0,0,jumbo\n"))
	f.Add([]byte("# comment\n" + head))
	f.Add([]byte(head + "w,1,0,NaN,1,0,0,0,0,0,0,0,0,0,0,tiny\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ReadCatalog(bytes.NewReader(b), "fuzz.csv")
		if err != nil {
			require.Contains(t, err.Error(), "fuzz.csv")
			return
		}
		for _, id := range c.IDs() {
			w, _ := c.Get(id)
			require.Len(t, w.PerGPU, w.GPUs)
			require.Positive(t, w.SoloS)
			require.False(t, math.IsInf(w.SoloS, 0))
			for _, p := range w.PerGPU {
				require.LessOrEqual(t, p.SMACT.P95, 1.0)
			}
		}
	})
}

func FuzzReadGPUType(f *testing.F) {
	f.Add([]byte("name: my-gpu\nmemory_mib: 24576\npressure: false\n"))
	f.Add([]byte("name: x\nmemory_mib: 1\npressure: true\nextra: 1\n"))
	f.Add([]byte("name: [\n"))
	dir := f.TempDir() // one folder for all inputs: a temporary folder per input cost 90 % of the time
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := readGPUType(b, "fuzz.yaml", dir)
		if err != nil {
			require.Contains(t, err.Error(), "fuzz.yaml")
			return
		}
		require.GreaterOrEqual(t, g.MemoryMiB, 256.0)
	})
}

func TestParseServer(t *testing.T) {
	s, err := ParseServer("a100-40gb:3")
	require.NoError(t, err)
	require.Equal(t, 40960.0, s.Type.MemoryMiB)
	require.Equal(t, 3, s.GPUs)
	for _, bad := range []string{"a100-40gb", "a100-40gb:0", "a100-40gb:x", "a100-40gb:3x", "v100:1", "missing.yaml:2"} {
		_, err := ParseServer(bad)
		require.Error(t, err, bad)
	}
	p := filepath.Join(t.TempDir(), "g.yaml")
	require.NoError(t, os.WriteFile(p, []byte("name: rtx-24gb\nmemory_mib: 24576\npressure: false\n"), 0o644))
	s, err = ParseServer(p + ":8")
	require.NoError(t, err)
	require.Equal(t, "rtx-24gb", s.Type.Name)
	require.Equal(t, 24576.0, s.Type.MemoryMiB)
	require.Equal(t, 8, s.GPUs)
}

func TestNewCatalog(t *testing.T) {
	w, ok := A100().Get("xception_imagenet_bs32_1gpu")
	require.True(t, ok)
	c := *w
	c.SoloS = 160
	cat, err := NewCatalog([]Workload{c})
	require.NoError(t, err)
	got, ok := cat.Get(c.ID)
	require.True(t, ok)
	require.Equal(t, 160.0, got.SoloS)
	got.PerGPU[0].PeakMiB = 1
	require.NotEqual(t, 1.0, w.PerGPU[0].PeakMiB, "profiles are copied")
	for _, bad := range []Workload{{}, {ID: "x", GPUs: 1}, {ID: "x", GPUs: 1, PerGPU: []Profile{{}}}} {
		_, err := NewCatalog([]Workload{bad})
		require.Error(t, err)
	}
	_, err = NewCatalog([]Workload{c, c})
	require.ErrorContains(t, err, "given twice")
}
