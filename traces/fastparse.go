package traces

import "strings"

// trimSpace is strings.TrimSpace, without its call for a field that
// starts and ends with a printable ASCII byte (every field of the usual
// trace), which it returns as it is: TrimSpace trims Unicode white space,
// which is an ASCII byte up to ' ' or starts with a byte of 0x80 or more.
func trimSpace(s string) string {
	if n := len(s); n > 0 && s[0]-'!' < '~'-'!'+1 && s[n-1]-'!' < '~'-'!'+1 {
		return s
	}
	return strings.TrimSpace(s)
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// plainDecimal returns the value of s when it is digits, or digits, a
// point and digits, at most 15 digits in all, and whether it is: the
// float64 strconv.ParseFloat returns for it (the mantissa and its power
// of ten are exact in a float64, and ParseFloat then divides one by the
// other, as here: TestPlainDecimalIsParseFloat). A submission time in a
// trace is usually such a number.
func plainDecimal(s string) (float64, bool) {
	n := len(s)
	var m uint64
	i := 0
	for i < n && s[i]-'0' < 10 {
		m = 10*m + uint64(s[i]-'0')
		i++
	}
	switch {
	case i == 0 || n > 16:
		return 0, false
	case i == n: // digits only
		if n > 15 {
			return 0, false
		}
		return float64(m), true
	case s[i] != '.' || i == n-1:
		return 0, false
	}
	for j := i + 1; j < n; j++ {
		if s[j]-'0' >= 10 {
			return 0, false
		}
		m = 10*m + uint64(s[j]-'0')
	}
	return float64(m) / pow10[n-i-1], true
}
