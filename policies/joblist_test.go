package policies

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJobList(t *testing.T) {
	ids := []JobID{4, 7, 9}
	l := ListOf(ids...)
	require.Equal(t, 3, l.Len())
	require.Equal(t, JobID(7), l.At(1))
	var seen []JobID
	for i, id := range l.All() {
		require.Equal(t, ids[i], id)
		if seen = append(seen, id); i == 1 {
			break
		}
	}
	require.Equal(t, []JobID{4, 7}, seen)
	cp := l.AppendTo([]JobID{1})
	require.Equal(t, []JobID{1, 4, 7, 9}, cp)
	cp[1] = 0 // a copy: the list does not change
	require.Equal(t, JobID(4), l.At(0))
	require.Zero(t, JobList{}.Len())
}
