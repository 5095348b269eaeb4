package results

import (
	"io"

	"github.com/aegis-sched/aegis/policies"
)

// PipedEventLog is an EventLog whose lines are formatted and written on a
// goroutine of its own, so that the run that records does not wait for
// them: with a second core the event log (a sixth of `aegis simulate`'s
// work, its lines and their writes) runs beside the simulation. Events
// and deferrals are handed over in batches, in the order they came, to
// one EventLog, so the bytes are that EventLog's (TestPipedEventLogIsEventLog).
// The events' GPU lists are copied when they are recorded: the recorder's
// caller may reuse them afterwards.
//
// Flush must be called once the run is over (and may be called again): it
// hands over what is left, waits for the lines to be written and reports
// the first write error. Until then the writer belongs to the log's
// goroutine.
type PipedEventLog struct {
	cur     pipedBatch
	full    chan pipedBatch // batches to log, in order
	free    chan pipedBatch // logged batches, to refill
	done    chan error      // the EventLog's Flush, once every batch is logged
	flushed bool
	err     error
}

// pipedBatch is a run of recorded events and deferrals, gpus holding
// their events' GPU lists.
type pipedBatch struct {
	items []pipedItem
	gpus  []int
}

// pipedItem is an event, or (isDefer) a Defer action's Job, GPU and
// Reason in e's fields of those names: the only actions an EventLog logs.
type pipedItem struct {
	e       policies.Event
	isDefer bool
}

// pipedBatchLen is a batch's length: some 100 kB of items, each handed
// over with two channel operations.
const pipedBatchLen = 1024

// NewPipedEventLog writes to w from a goroutine it starts; call Flush at
// the end.
func NewPipedEventLog(w io.Writer) *PipedEventLog {
	const batches = 3 // one being filled, one being logged, one waiting
	p := &PipedEventLog{full: make(chan pipedBatch, batches), free: make(chan pipedBatch, batches), done: make(chan error, 1)}
	p.cur = pipedBatch{items: make([]pipedItem, 0, pipedBatchLen)}
	for range batches - 1 {
		p.free <- pipedBatch{items: make([]pipedItem, 0, pipedBatchLen)}
	}
	l := NewEventLog(w)
	go func() {
		for b := range p.full {
			for i := range b.items {
				it := &b.items[i]
				if it.isDefer {
					l.Action(policies.Action{Kind: policies.Defer, Job: it.e.Job, GPU: it.e.GPU, Reason: it.e.Reason})
				} else {
					l.Event(it.e)
				}
				it.e = policies.Event{} // drop the references to strings and GPU lists
			}
			p.free <- pipedBatch{items: b.items[:0], gpus: b.gpus[:0]}
		}
		p.done <- l.Flush()
	}()
	return p
}

// add appends it to the current batch and hands the batch over when full.
func (p *PipedEventLog) add(it pipedItem) {
	if p.flushed {
		return
	}
	p.cur.items = append(p.cur.items, it)
	if len(p.cur.items) == cap(p.cur.items) {
		p.full <- p.cur
		p.cur = <-p.free
	}
}

// Event implements the Recorder.
func (p *PipedEventLog) Event(e policies.Event) {
	if len(e.GPUs) > 0 {
		n := len(p.cur.gpus)
		p.cur.gpus = append(p.cur.gpus, e.GPUs...)
		e.GPUs = p.cur.gpus[n:len(p.cur.gpus):len(p.cur.gpus)]
	}
	p.add(pipedItem{e: e})
}

// Action implements the Recorder: deferrals are logged, other actions
// show as events.
func (p *PipedEventLog) Action(a policies.Action) {
	if a.Kind == policies.Defer {
		p.add(pipedItem{e: policies.Event{Job: a.Job, GPU: a.GPU, Reason: a.Reason}, isDefer: true})
	}
}

// Flush hands over the lines not logged yet, waits until they are
// written and reports the first write error.
func (p *PipedEventLog) Flush() error {
	if !p.flushed {
		p.flushed = true
		if len(p.cur.items) > 0 {
			p.full <- p.cur
		}
		p.cur = pipedBatch{}
		close(p.full)
		p.err = <-p.done
	}
	return p.err
}
