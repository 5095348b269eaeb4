package strictyaml

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

type inner struct {
	B float64 `yaml:"b"`
}

type doc struct {
	A     string  `yaml:"a"`
	N     int     `yaml:"n"`
	In    inner   `yaml:"in"`
	List  []inner `yaml:"list"`
	Flag  bool    `yaml:"flag,omitempty"`
	Skip  string  `yaml:"-"`
	Other uint8   `yaml:"other"`
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "f.yaml: empty document"},
		{"~\n", "f.yaml: empty document"},
		{"a: x\n---\na: y\n", "f.yaml:2: a second YAML document; want one"},
		{"a: x\nbee: 1\n", `f.yaml:2: unknown key "bee"; valid keys: a, n, in, list, flag, other`},
		{"in:\n  bb: 1\n", `f.yaml:2: unknown key "bb" in in; valid keys: b (did you mean b?)`},
		{"a: x\na: y\n", "f.yaml:2: a: given twice (first at line 1)"},
		{"n: 1.5\n", `f.yaml:1: n: want a whole number, got "1.5"`},
		{"other: 300\n", `f.yaml:1: other: want a whole number from 0 to 255, got "300"`},
		{"in: 3\n", `f.yaml:1: in: want a mapping with keys b, got "3"`},
		{"list:\n  - b: x\n", `f.yaml:2: list[0].b: want a number, got "x"`},
		{"flag: maybe\n", `f.yaml:1: flag: want true or false, got "maybe"`},
		{"a: [\n", "f.yaml:"},
	} {
		var d doc
		_, err := Decode([]byte(tc.in), "f.yaml", &d)
		require.ErrorContains(t, err, tc.want, "%q", tc.in)
	}
}

func TestDecodeAndKeys(t *testing.T) {
	in := "base: &b\n  b: 2\na: x\nn: 3\nin:\n  <<: *b\nlist:\n  - b: 1\n"
	var d struct {
		Base inner   `yaml:"base"`
		A    string  `yaml:"a"`
		N    int     `yaml:"n"`
		In   inner   `yaml:"in"`
		List []inner `yaml:"list"`
	}
	root, err := Decode([]byte(in), "f.yaml", &d)
	require.NoError(t, err)
	require.Equal(t, "x", d.A)
	require.Equal(t, 3, d.N)
	require.Equal(t, 2.0, d.In.B, "a merged key")
	require.Equal(t, []inner{{1}}, d.List)
	require.Equal(t, 4, KeyLine(root, "n"))
	require.Equal(t, 2, KeyLine(root, "in", "b"), "a merged key's line is where it is written")
	require.Equal(t, 5, KeyLine(root, "in", "nope"), "the deepest present parent")
	require.True(t, HasKey(root, "list"))
	require.False(t, HasKey(root, "flag"))
	k, v := MappingKey(root.Content[0], "a")
	require.Equal(t, 3, k.Line)
	require.Equal(t, "x", v.Value)
	k, v = MappingKey(root.Content[0], "zz")
	require.Nil(t, k)
	require.Nil(t, v)
}

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Write(&b, inner{B: 1.5}, "made by a test\nline two"))
	require.Equal(t, "# made by a test\n# line two\nb: 1.5\n", b.String())
	b.Reset()
	require.NoError(t, Write(&b, inner{B: 1.5}, ""))
	require.Equal(t, "b: 1.5\n", b.String())
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"a: x\n", "in:\n  b: 1\n", "list: [{b: 1}]\n", "x: &a [*a]\n", "<<: {a: 1}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d doc
		_, _ = Decode([]byte(s), "f.yaml", &d) // no panic
	})
}
