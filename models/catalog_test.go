package models

import (
	"bytes"
	"os"
	"os/exec"
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

// The embedded table is exactly what the generator derives from the shared
// source catalog.
func TestEmbeddedCatalogIsDerived(t *testing.T) {
	dir, ok := SharedDir()
	if !ok {
		t.Skip("shared data not found (set AEGIS_SHARED): cannot re-derive the catalog")
	}
	out := filepath.Join(t.TempDir(), "c.csv")
	cmd := exec.Command("go", "run", "./internal/gencatalog", "-in", filepath.Join(dir, "calibration/aegis/workload_catalog_a100.csv"), "-out", out)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, string(msg))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, string(a100CSV), string(b))
}

func TestReadCatalogErrors(t *testing.T) {
	head := strings.Join(catalogCols, ",") + "\n"
	for name, tc := range map[string]struct{ in, err string }{
		"bad header": {"x\n", "header"},
		"bad number": {head + "w,1,0,abc,1,0,0,0,0,0,0,0,0,0,0,tiny\n", "c.csv:2: column solo_s"},
		"bad class":  {head + "w,1,0,10,1,0,0,0,0,0,0,0,0,0,0,huge\n", "c.csv:2: column lucid_class"},
		"gpu range":  {head + "w,1,1,10,1,0,0,0,0,0,0,0,0,0,0,tiny\n", "c.csv:2"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadCatalog(bytes.NewReader([]byte(tc.in)), "c.csv")
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestParseServer(t *testing.T) {
	s, err := ParseServer("a100-40gb:3")
	require.NoError(t, err)
	require.Equal(t, 40960.0, s.Type.MemoryMiB)
	require.Equal(t, 3, s.GPUs)
	for _, bad := range []string{"a100-40gb", "a100-40gb:0", "a100-40gb:x", "a100-40gb:3x", "v100:1"} {
		_, err := ParseServer(bad)
		require.Error(t, err, bad)
	}
}
