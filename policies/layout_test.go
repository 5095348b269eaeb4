package policies

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestJobSize keeps Job's one-byte fields packed into one word: a
// million-job run keeps several lists of every job (the backend's view,
// the loop's snapshot, a cluster dispatcher's), 24 bytes a job each more
// when State, LastFailure, FailedShared and Active take a word apiece.
func TestJobSize(t *testing.T) {
	require.EqualValues(t, 1, unsafe.Sizeof(State(0)))
	require.EqualValues(t, 1, unsafe.Sizeof(Failure(0)))
	require.LessOrEqual(t, unsafe.Sizeof(Job{}), uintptr(208))
}
