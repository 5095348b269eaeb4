package results

import "github.com/aegis-sched/aegis/policies"

// Progress is a Recorder that counts the jobs a run has finished and
// calls Report with that count and the jobs known (aegis simulate's and
// aegis exec's progress on a terminal).
type Progress struct {
	// Report is called after every finished job.
	Report func(done, total int)
	done   int
	total  int
}

// NewProgress returns a Progress over total jobs reporting to report.
func NewProgress(total int, report func(done, total int)) *Progress {
	return &Progress{Report: report, total: total}
}

// Add counts one more job known (a live queue's).
func (p *Progress) Add() { p.total++ }

// Event implements Recorder.
func (p *Progress) Event(e policies.Event) { p.EventAt(&e) }

// EventAt implements InPlaceRecorder: Event, e read in place.
func (p *Progress) EventAt(e *policies.Event) {
	if e.Kind == policies.JobFinished {
		p.done++
		p.Report(p.done, p.total)
	}
}

// Action implements Recorder.
func (*Progress) Action(policies.Action) {}

// TakeDeferralChanges implements the loop's DeferralChangeRecorder: the
// progress line reads no deferral.
func (*Progress) TakeDeferralChanges() bool { return true }
