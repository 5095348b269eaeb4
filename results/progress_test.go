package results

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// Progress counts finished jobs, nothing else, against the jobs known.
func TestProgress(t *testing.T) {
	var got [][2]int
	p := NewProgress(2, func(done, total int) { got = append(got, [2]int{done, total}) })
	p.Event(policies.Event{Kind: policies.JobStarted})
	p.Event(policies.Event{Kind: policies.JobFinished})
	p.Add()
	p.Event(policies.Event{Kind: policies.JobFailed})
	p.Event(policies.Event{Kind: policies.JobFinished})
	p.Action(policies.Action{})
	require.Equal(t, [][2]int{{1, 2}, {2, 3}}, got)
}
