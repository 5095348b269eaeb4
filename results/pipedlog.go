package results

import (
	"io"
	"math"
	"slices"
	"time"

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

// pipedBatch is a run of recorded events and deferrals: items, and the
// GPU lists, reasons and events that do not fit an item that they refer to.
type pipedBatch struct {
	items   []pipedItem
	gpus    []int
	reasons []string
	big     []policies.Event
}

// pipedItem is an event or a deferral in 48 bytes (a policies.Event takes
// 104: the run copies one per event). An event whose numbers do not fit
// (an attempt beyond int32, more than 65,535 GPUs, a failure kind beyond
// a byte) is kept whole in the batch's big events (kind bigKind, ref its index).
type pipedItem struct {
	t       time.Duration
	job     policies.JobID
	gpu     int
	attempt int32
	ref     int32 // the first of the event's GPUs in the batch's gpus, or its big event
	reason  int32 // the event's or deferral's reason in the batch's reasons
	ngpus   uint16
	kind    uint8 // a policies.EventKind, deferKind or bigKind
	shared  bool
	failure uint8
}

// Item kinds besides policies.EventKind's.
const (
	deferKind = 254 // a Defer action: job, gpu, reason
	bigKind   = 255 // an event kept whole
)

// pipedBatchLen is a batch's length: 192 kB of items, each batch handed
// over with two channel operations (each waking a goroutine: some tens of
// µs on a virtual machine).
const pipedBatchLen = 4096

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
				b.log(l, &b.items[i])
			}
			clear(b.reasons) // drop the references to strings
			clear(b.big)
			p.free <- pipedBatch{items: b.items[:0], gpus: b.gpus[:0], reasons: b.reasons[:0], big: b.big[:0]}
		}
		p.done <- l.Flush()
	}()
	return p
}

// log hands it to l.
func (b *pipedBatch) log(l *EventLog, it *pipedItem) {
	switch it.kind {
	case bigKind:
		l.Event(b.big[it.ref])
	case deferKind:
		l.Action(policies.Action{Kind: policies.Defer, Job: it.job, GPU: it.gpu, Reason: b.reasons[it.reason]})
	default:
		e := policies.Event{Kind: policies.EventKind(it.kind), T: it.t, Job: it.job, Attempt: int(it.attempt),
			Shared: it.shared, Failure: policies.Failure(it.failure), GPU: it.gpu}
		if it.ngpus > 0 {
			e.GPUs = b.gpus[it.ref : it.ref+int32(it.ngpus)]
		}
		if it.reason >= 0 {
			e.Reason = b.reasons[it.reason]
		}
		l.Event(e)
	}
}

// next returns the current batch's next item, to be filled in.
func (p *PipedEventLog) next() *pipedItem {
	if len(p.cur.items) == cap(p.cur.items) {
		p.full <- p.cur
		p.cur = <-p.free
	}
	p.cur.items = p.cur.items[:len(p.cur.items)+1]
	return &p.cur.items[len(p.cur.items)-1]
}

// reasonOf returns reason's index in the current batch's reasons (the
// same reason as the one before shares its entry).
func (p *PipedEventLog) reasonOf(reason string) int32 {
	if n := len(p.cur.reasons); n == 0 || p.cur.reasons[n-1] != reason {
		p.cur.reasons = append(p.cur.reasons, reason)
	}
	return int32(len(p.cur.reasons) - 1)
}

// fits reports whether e's numbers fit an item (a policies.Failure is one
// byte, as the item's).
func fits(e *policies.Event) bool {
	return e.Kind > 0 && e.Kind < deferKind && e.Attempt >= math.MinInt32 && e.Attempt <= math.MaxInt32 &&
		len(e.GPUs) <= math.MaxUint16
}

// Event implements the Recorder.
func (p *PipedEventLog) Event(e policies.Event) { p.EventAt(&e) }

// EventAt implements InPlaceRecorder: Event, e read in place.
func (p *PipedEventLog) EventAt(e *policies.Event) {
	if p.flushed {
		return
	}
	it := p.next()
	if !fits(e) || len(p.cur.gpus)+len(e.GPUs) > math.MaxInt32 {
		big := *e
		big.GPUs = slices.Clone(e.GPUs)
		*it = pipedItem{kind: bigKind, ref: int32(len(p.cur.big))}
		p.cur.big = append(p.cur.big, big)
		return
	}
	*it = pipedItem{t: e.T, job: e.Job, attempt: int32(e.Attempt), gpu: e.GPU, kind: uint8(e.Kind),
		shared: e.Shared, failure: uint8(e.Failure), reason: -1}
	if len(e.GPUs) > 0 {
		it.ref, it.ngpus = int32(len(p.cur.gpus)), uint16(len(e.GPUs))
		p.cur.gpus = append(p.cur.gpus, e.GPUs...)
	}
	if e.Reason != "" {
		it.reason = p.reasonOf(e.Reason)
	}
}

// Action implements the Recorder: deferrals are logged, other actions
// show as events.
func (p *PipedEventLog) Action(a policies.Action) {
	if a.Kind != policies.Defer || p.flushed {
		return
	}
	it := p.next()
	*it = pipedItem{job: a.Job, gpu: a.GPU, kind: deferKind, reason: p.reasonOf(a.Reason)}
}

// TakeDeferralChanges implements the loop's DeferralChangeRecorder, as
// EventLog's does.
func (p *PipedEventLog) TakeDeferralChanges() bool { return true }

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
