// Package suggest proposes the valid name a misspelled one most likely
// meant: a YAML key, a policy parameter, a command-line flag.
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean suggests the valid key closest to key when it is a likely typo
// (edit distance at most 2, or a third of the key's length) or a shortening
// of it (median for median_ape): " (did you mean KEY?)", else "".
func DidYouMean(key string, keys []string) string {
	best, bestD := "", 1<<30
	for _, k := range keys {
		d := editDistance(key, k)
		if len(key) >= 3 && strings.HasPrefix(k, key) {
			d = 0
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" || bestD > max(2, len(best)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30 // not a typo of a key; spare the work
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
