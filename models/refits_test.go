package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmbeddedRefitSets: each built-in GPU type has an embedded refit set
// whose refit 0 (the measurements as they are) is the model the type runs,
// so the refits are of the embedded model; 20 resampled refits follow.
// A type with its own interference model has none.
func TestEmbeddedRefitSets(t *testing.T) {
	for _, tc := range []struct{ gpu, file string }{
		{"a100-40gb", RefitsA100File}, {"h200-141gb", RefitsA100File}, {"legacy-11gb", RefitsLegacyFile},
	} {
		t.Run(tc.gpu, func(t *testing.T) {
			gt, err := LookupGPU(tc.gpu)
			require.NoError(t, err)
			set, file, err := RefitsFor(gt)
			require.NoError(t, err)
			require.Equal(t, tc.file, file)
			require.Len(t, set.Refits, 21)
			inter, err := InterferenceFor(gt)
			require.NoError(t, err)
			emb := inter.(*PressureModel).P
			got := set.Refits[0]
			for _, f := range [][2]float64{{emb.Intercept, got.Intercept}, {emb.CoSMACT, got.CoSMACT}, {emb.CoDRAMA, got.CoDRAMA},
				{emb.CoMem, got.CoMem}, {emb.SelfSMACT, got.SelfSMACT}, {emb.SelfDRAMA, got.SelfDRAMA}, {emb.SelfMem, got.SelfMem},
				{emb.NWayExponent, got.NWayExponent}, {emb.Capacity, got.Capacity}} {
				require.InDelta(t, f[0], f[1], 1e-4, "refit 0 is the embedded model")
			}
			for i, p := range set.Refits[1:] {
				require.NotEqual(t, emb, p, "refit %d resamples", i+1)
			}
		})
	}
	_, _, err := RefitsFor(GPUType{Name: "mine", InterferenceFile: "mine.yaml"})
	require.ErrorContains(t, err, "GPU type mine runs its own interference model (mine.yaml): no bootstrap refits")
}

func TestReadRefits(t *testing.T) {
	const p = "  - {intercept: -4, co_smact: 4, co_drama: 0, co_mem_per_10gib: 0, self_smact: 0, self_drama: 2, self_mem_per_10gib: 0, capacity: 1.2, nway_exponent: 1.3}\n"
	good := "gpu: a100-40gb\nseed: 1\nsource: test\nrefits:\n" + p + p
	f, err := ReadRefits([]byte(good), "r.yaml")
	require.NoError(t, err)
	require.Len(t, f.Refits, 2)
	require.Equal(t, 1.3, f.Refits[1].NWayExponent)
	var b bytes.Buffer
	require.NoError(t, WriteRefits(&b, f, "a comment"))
	again, err := ReadRefits(b.Bytes(), "again.yaml")
	require.NoError(t, err)
	require.Equal(t, f, again, "written refits read back the same")
	withU1, err := ReadRefits([]byte(good+"steady_saturation: [1.2, 1.25]\n"), "r.yaml")
	require.NoError(t, err)
	require.Equal(t, []float64{1.2, 1.25}, withU1.SteadySaturation)
	withDelta, err := ReadRefits([]byte(good+"depth_overlap: [0.2, 0]\n"), "r.yaml")
	require.NoError(t, err)
	require.Equal(t, []float64{0.2, 0}, withDelta.DepthOverlap)
	for _, tc := range []struct{ name, text, want string }{
		{"unknown key", strings.Replace(good, "seed:", "sed:", 1), `r.yaml:2: unknown key "sed"`},
		{"no gpu", strings.Replace(good, "gpu: a100-40gb\n", "", 1), "r.yaml:1: gpu: missing"},
		{"no refits", "gpu: x\nrefits: []\n", "r.yaml:2: refits: missing"},
		{"missing parameter", good + "  - {intercept: 1}\n", "r.yaml:7: refits[2]: missing co_smact"},
		{"bad rho", good + strings.Replace(p, "nway_exponent: 1.3", "nway_exponent: 0", 1), "r.yaml:7: refits[2].nway_exponent: 0, want > 0"},
		{"huge", good + strings.Replace(p, "intercept: -4", "intercept: -400", 1), "r.yaml:7: refits[2].intercept: -400 is not a finite number within ±100"},
		{"wrong kind", strings.Replace(good, "seed: 1", "seed: one", 1), "r.yaml:2: seed:"},
		{"u1 per refit", good + "steady_saturation: [1.2]\n", "r.yaml:7: steady_saturation: 1 values for 2 refits"},
		{"bad u1", good + "steady_saturation: [1.2, -1]\n", "r.yaml:7: steady_saturation[1]: steady_saturation -1"},
		{"δ per refit", good + "depth_overlap: [0.2, 0.2, 0.2]\n", "r.yaml:7: depth_overlap: 3 values for 2 refits"},
		{"bad δ", good + "depth_overlap: [0.2, 11]\n", "r.yaml:7: depth_overlap[1]: depth_overlap 11: want a number in [0, 10]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadRefits([]byte(tc.text), "r.yaml")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func FuzzReadRefits(f *testing.F) {
	f.Add(refitsA100YAML)
	f.Add([]byte("gpu: x\nrefits: [{intercept: 1}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadRefits(data, "f.yaml")
		if err == nil {
			require.NotEmpty(t, r.Refits)
			for _, p := range r.Refits {
				_, err := checkParams(p)
				require.NoError(t, err)
			}
		}
	})
}

// RefitsFileSHA256 hashes the embedded set a name names: the file's bytes.
func TestRefitsFileSHA256(t *testing.T) {
	for _, tc := range []struct{ name, path string }{
		{RefitsA100File, "data/refits_a100.yaml"},
		{RefitsLegacyFile, "data/refits_legacy11gb.yaml"},
		{"models/data/other.yaml", ""},
	} {
		want := ""
		if tc.path != "" {
			b, err := os.ReadFile(tc.path)
			require.NoError(t, err)
			h := sha256.Sum256(b)
			want = hex.EncodeToString(h[:])
		}
		require.Equal(t, want, RefitsFileSHA256(tc.name), tc.name)
	}
}
