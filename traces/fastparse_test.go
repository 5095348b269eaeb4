package traces

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTrimSpaceIsTrimSpace holds trimSpace to strings.TrimSpace on fields
// that start or end with every kind of white space, control bytes,
// printable ASCII's edges, DEL and non-ASCII runes.
func TestTrimSpaceIsTrimSpace(t *testing.T) {
	parts := []string{"", " ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u2000", "\u3000", "\x00", "\x1f", "!", "~", "\x7f",
		"a", "0", "é", "\xff", "\xc2", "w1", "resnet50_bs64"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		var sb strings.Builder
		for range rng.IntN(4) {
			sb.WriteString(parts[rng.IntN(len(parts))])
		}
		s := sb.String()
		require.Equal(t, strings.TrimSpace(s), trimSpace(s), "%q", s)
	}
}

// TestPlainDecimalIsParseFloat: where plainDecimal reads a number, it is
// strconv.ParseFloat's to the bit, and it reads every plain decimal of up
// to 15 digits (random ones, and the edges: leading and trailing zeros,
// the largest, a point first or last, signs, exponents, spaces).
func TestPlainDecimalIsParseFloat(t *testing.T) {
	check := func(s string, plain bool) {
		t.Helper()
		v, ok := plainDecimal(s)
		if plain {
			require.True(t, ok, "%q", s)
		}
		if ok {
			want, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err, "%q", s)
			require.Equal(t, math.Float64bits(want), math.Float64bits(v), "%q", s)
		}
	}
	for _, s := range []string{"0", "00", "007", "1", "36", "9651710", "999999999999999", "0.5", "0.05", "1.50", "123456789.012345",
		"0.00000000000001", "99999999999999.9"} {
		check(s, true)
	}
	for _, s := range []string{"", ".", ".5", "5.", "1..2", "1.2.3", "+1", "-1", "1e5", "1E5", " 1", "1 ", "0x10", "1_000", "inf", "NaN",
		"1234567890123456", "0.1234567890123456", "9999999999999999999999"} {
		_, ok := plainDecimal(s)
		require.False(t, ok, "%q", s)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	for range 100000 {
		n := 1 + rng.IntN(18)
		s := digits(n)
		if k := rng.IntN(n + 1); k > 0 && k < n && rng.IntN(2) == 0 {
			s = s[:k] + "." + s[k:]
		}
		check(s, n <= 15)
	}
}

// FuzzTrimSpace holds trimSpace to strings.TrimSpace on any field.
func FuzzTrimSpace(f *testing.F) {
	for _, s := range []string{"", " a ", "resnet50_bs64", "\u00a0x", "x\u3000", "\x7f", "\xff", "!~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, strings.TrimSpace(s), trimSpace(s), "%q", s)
	})
}

// FuzzPlainDecimal: where plainDecimal reads a number from any string,
// strconv.ParseFloat reads the same bits, and a string of 1-15 digits, or
// of digits, a point and digits with at most 15 digits in all, is read.
func FuzzPlainDecimal(f *testing.F) {
	for _, s := range []string{"0", "007", "0.05", "123456789.012345", "99999999999999.9", ".5", "5.", "1e5", "-1", "1234567890123456", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := plainDecimal(s)
		if !ok {
			whole, frac, dot := strings.Cut(s, ".")
			digits := func(x string) bool {
				return x != "" && strings.Trim(x, "0123456789") == ""
			}
			plain := digits(whole) && (!dot || digits(frac)) && len(whole)+len(frac) <= 15
			require.False(t, plain, "%q is a plain decimal, not read", s)
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, "%q", s)
		require.Equal(t, math.Float64bits(want), math.Float64bits(v), "%q", s)
	})
}
