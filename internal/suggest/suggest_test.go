package suggest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDidYouMean(t *testing.T) {
	keys := []string{"hold", "window", "thresholds", "median_ape", "policy"}
	for _, tc := range []struct{ key, want string }{
		{"hodl", " (did you mean hold?)"},
		{"windw", " (did you mean window?)"},
		{"polcy", " (did you mean policy?)"},
		{"median", " (did you mean median_ape?)"}, // a shortening
		{"banana", ""},
		{"", ""},
		{string(make([]byte, 100)), ""}, // too long to be a typo
	} {
		require.Equal(t, tc.want, DidYouMean(tc.key, keys), tc.key)
	}
	require.Empty(t, DidYouMean("hold", nil))
}
