package results

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// The piped event log writes an EventLog's bytes: random events and
// actions (every kind, repeated and changing deferral reasons, GPU lists
// the caller overwrites after each call, attempts beyond an item's int32)
// over several batches.
func TestPipedEventLogIsEventLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 30))
	var plain, piped bytes.Buffer
	l, p := NewEventLog(&plain), NewPipedEventLog(&piped)
	gpus := make([]int, 4)
	reasons := []string{"memory", "pressure", `say "why"`}
	now := time.Duration(0)
	for i := range 5 * pipedBatchLen {
		now += time.Duration(rng.IntN(3)) * time.Millisecond
		job := policies.JobID(rng.IntN(50))
		n := 1 + rng.IntN(len(gpus))
		for k := range n {
			gpus[k] = rng.IntN(8)
		}
		if rng.IntN(3) == 0 {
			a := policies.Action{Kind: policies.ActionKind(1 + rng.IntN(4)), Job: job, GPU: rng.IntN(8) - 1,
				Reason: reasons[rng.IntN(len(reasons))], GPUs: gpus[:n], At: now}
			l.Action(a)
			p.Action(a)
			continue
		}
		e := policies.Event{Kind: policies.EventKind(1 + rng.IntN(8)), T: now, Job: job, Attempt: 1 + rng.IntN(3),
			GPUs: gpus[:n], Shared: rng.IntN(2) == 0, Failure: policies.OOM, GPU: rng.IntN(8),
			Reason: reasons[rng.IntN(len(reasons))]}
		if rng.IntN(50) == 0 { // kept whole: numbers beyond an item's
			e.Attempt = 1<<33 + i
		}
		l.Event(e)
		p.Event(e)
		for k := range gpus { // the caller reuses its list
			gpus[k] = -1 - i
		}
	}
	require.NoError(t, l.Flush())
	require.NoError(t, p.Flush())
	require.NoError(t, p.Flush(), "a second Flush")
	require.Greater(t, plain.Len(), 100*pipedBatchLen)
	require.Equal(t, plain.String(), piped.String())
	p.Event(policies.Event{Kind: policies.JobArrived, T: now, Job: 1}) // after Flush: ignored
	require.Equal(t, plain.Len(), piped.Len())
}

// A write error is the piped log's Flush's, as the EventLog's.
func TestPipedEventLogWriteError(t *testing.T) {
	w := chunkWriter{failAt: 2}
	p := NewPipedEventLog(&w)
	for i := range 5000 {
		p.Event(policies.Event{Kind: policies.JobArrived, T: time.Duration(i) * time.Millisecond, Job: policies.JobID(i)})
	}
	require.EqualError(t, p.Flush(), "disk full")
	require.EqualError(t, p.Flush(), "disk full")
	require.Len(t, w.writes, 2, "no write after the error")
}
