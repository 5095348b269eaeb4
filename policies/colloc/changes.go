package colloc

import (
	"slices"

	"github.com/aegis-sched/aegis/policies"
)

// deferBook keeps a scheduler's deferrals of the previous decision and of
// the current one, by job, to report them as changes
// (policies.DeferralChanges): a loaded decision defers the same waiting
// jobs on the same GPUs for the same reasons as the one before, and only
// what differs is listed.
type deferBook struct {
	// prev and cur are the jobs deferred in the previous decision and in
	// this one, in the order they were first deferred; each job's reasons
	// by GPU ("" where not deferred) are in prevR, curR.
	prev, cur   []bookJob
	prevR, curR []Reason
	look        int // where in prev to look for the next job first
}

// bookJob is one job's deferrals in a decision.
type bookJob struct {
	job      policies.JobID
	attempts int // the job's Attempts then
	at, n    int // its reasons: R[at : at+n], by GPU
	// deferred counts its deferrals, -1 until told (deferBook.deferred):
	// an entry given before the walk over its GPUs (Scheduler.keepFrom)
	// may have none, and is then as if the job had no entry.
	deferred int
	// again counts, when told (deferred ≥ 0), its deferrals on GPUs the
	// previous decision also deferred it on (in was): when they are all
	// the previous decision's, none of those ended, and finish need not
	// compare every GPU's reasons to find one.
	again int
	// other is its entry in the other decision (prev: cur's, cur: prev's),
	// -1 if none.
	other int
}

// job gives j an entry of n GPUs in cur (j is not in it yet) and returns
// its reasons by GPU there (none yet) and in the previous decision (nil:
// its deferrals are all to be listed: it had none then, or an attempt of
// it started since). The first stays valid until the next call.
func (b *deferBook) job(j *policies.Job, n int) (mine, was []Reason) {
	c, at := len(b.cur), len(b.curR)
	b.cur = append(b.cur, bookJob{})
	e := &b.cur[c] // written in place, not built aside and copied
	e.job, e.attempts, e.at, e.n, e.other, e.deferred = j.ID, j.Attempts, at, n, -1, -1
	if p := b.find(j.ID); p >= 0 && b.prev[p].other < 0 {
		b.prev[p].other, e.other = c, p
		if q := &b.prev[p]; q.attempts == j.Attempts && q.n == n {
			was = b.prevR[q.at : q.at+n]
		}
	}
	b.curR = slices.Grow(b.curR, n)[:at+n]
	mine = b.curR[at:]
	clear(mine)
	return mine, was
}

// deferred records that the job last given an entry (job) was deferred
// on n of its GPUs in this decision, again of them on GPUs the previous
// decision deferred it on (its was).
func (b *deferBook) deferred(n, again int) {
	c := &b.cur[len(b.cur)-1]
	c.deferred, c.again = n, again
}

// find returns job's entry in prev, -1 if none: decisions defer their jobs
// in the same order, so it looks after the last one found first.
func (b *deferBook) find(job policies.JobID) int {
	for i := range b.prev {
		p := b.look + i
		if p >= len(b.prev) {
			p -= len(b.prev)
		}
		if b.prev[p].job == job {
			b.look = p + 1
			return p
		}
	}
	return -1
}

// finish appends an Undefer for each deferral of the previous decision that
// this one did not make (one with AllGPUs for a job it did not defer), and
// makes this decision the previous one.
func (b *deferBook) finish(acts []policies.Action) []policies.Action {
	for i := range b.prev {
		p := &b.prev[i]
		if p.deferred == 0 {
			continue // nothing to end
		}
		if p.other < 0 || b.cur[p.other].deferred == 0 {
			acts = append(acts, policies.Action{Kind: policies.Undefer, Job: p.job, GPU: policies.AllGPUs})
			continue
		}
		c := &b.cur[p.other]
		if c.again == p.deferred { // each of p's deferrals made again (both told: p's is positive)
			continue
		}
		now := b.curR[c.at : c.at+c.n]
		for g, r := range b.prevR[p.at : p.at+p.n] {
			if r != Admitted && (g >= len(now) || now[g] == Admitted) {
				acts = append(acts, policies.Action{Kind: policies.Undefer, Job: p.job, GPU: g})
			}
		}
	}
	b.prev, b.cur = b.cur, b.prev[:0]
	b.prevR, b.curR = b.curR, b.prevR[:0]
	for i := range b.prev {
		b.prev[i].other = -1
	}
	b.look = 0
	return acts
}
