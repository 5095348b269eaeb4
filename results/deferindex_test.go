package results

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// TestDeferIndex checks the index against a map under random look-ups,
// additions and removals (slots reused), guessing and not, and that a
// repeated sequence of look-ups is served by the guesses, not the map.
func TestDeferIndex(t *testing.T) {
	for _, noGuess := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		x := newDeferIndex[int]()
		x.noGuess = noGuess
		ref := map[deferKey]int{}
		slot := map[deferKey]int32{}
		for i := range 20000 {
			k := deferKey{policies.JobID(rng.IntN(6)), rng.IntN(8) - 1}
			s := x.get(k)
			v, ok := ref[k]
			require.Equal(t, ok, s >= 0, "noGuess %v step %d key %v", noGuess, i, k)
			switch {
			case !ok:
				slot[k] = x.add(k, i)
				ref[k] = i
			case rng.IntN(3) == 0:
				require.Equal(t, v, *x.val(s), "noGuess %v step %d key %v", noGuess, i, k)
				require.Equal(t, slot[k], s)
				x.remove(s)
				delete(ref, k)
				delete(slot, k)
			default:
				require.Equal(t, v, *x.val(s), "noGuess %v step %d key %v", noGuess, i, k)
				*x.val(s) = i
				ref[k] = i
			}
		}
		require.Equal(t, len(ref), x.at.n)
	}

	y := newDeferIndex[int]()
	var keys []deferKey
	for g := range 8 {
		keys = append(keys, deferKey{7, g}, deferKey{9, g})
	}
	for _, k := range keys {
		require.Equal(t, int32(-1), y.get(k))
		y.add(k, int(k.job)*100+k.gpu)
	}
	require.Equal(t, len(keys), y.hashed)
	for range 100 {
		for _, k := range keys {
			s := y.get(k)
			require.Equal(t, int(k.job)*100+k.gpu, *y.val(s))
		}
	}
	// The first look-up of the second round has no guess yet (the last
	// key was added, and nothing followed it); every other one is guessed.
	require.Equal(t, len(keys)+1, y.hashed)
}

// refDeferrals is the collector's and event log's deferral bookkeeping done
// the plain way (a map per look-up), as they were before deferIndex: the
// reference TestDeferralsMatchReference compares them with.
type refDeferrals struct {
	decision  int
	decidedAt time.Duration
	open      map[deferKey]*refEpisode
	episodes  map[string]int
	spans     map[string]int
	logged    map[deferKey]string
	lines     []string
	now       time.Duration
}

type refEpisode struct {
	reason string
	start  time.Duration
	last   int
}

func refSpan(start, end time.Duration) int {
	n := 1
	if end > start {
		n += max(0, int((end-1)/sec-start/sec))
	}
	return n
}

func (r *refDeferrals) decide(now time.Duration) {
	for k, e := range r.open {
		if e.last != r.decision {
			r.spans[e.reason] += refSpan(e.start, r.decidedAt)
			delete(r.open, k)
		}
	}
	r.decision++
	r.decidedAt = now
}

func (r *refDeferrals) deferral(k deferKey, reason string) {
	if e, ok := r.open[k]; ok {
		if e.reason == reason && (e.last == r.decision-1 || e.last == r.decision) {
			e.last = r.decision
		} else {
			r.spans[e.reason] += refSpan(e.start, r.decidedAt)
			*e = refEpisode{reason, r.decidedAt, r.decision}
			r.episodes[reason]++
		}
	} else {
		r.open[k] = &refEpisode{reason, r.decidedAt, r.decision}
		r.episodes[reason]++
	}
	if last, ok := r.logged[k]; !ok || last != reason {
		r.logged[k] = reason
		r.lines = append(r.lines, fmt.Sprintf(`{"t":%s,"event":"defer","job":%d,"gpu":%d,"reason":%q}`,
			secs(r.now), k.job, k.gpu, reason))
	}
}

func (r *refDeferrals) started(job policies.JobID) {
	for k := range r.logged {
		if k.job == job {
			delete(r.logged, k)
		}
	}
}

func (r *refDeferrals) decisions() map[string]int {
	out := map[string]int{}
	for k, v := range r.spans {
		out[k] = v
	}
	for _, e := range r.open {
		end := r.decidedAt
		if e.last == r.decision {
			end++
		}
		out[e.reason] += refSpan(e.start, end)
	}
	return out
}

// TestDeferralsMatchReference drives the collector and the event log with
// random decisions that mostly repeat the previous one's deferrals (in
// order, with some dropped, added, reordered or given another reason) and
// random starts, and compares the deferral episodes, the decisions they
// spanned and the logged deferrals with the plain bookkeeping; and the
// same decisions given as changes (TakeDeferralChanges: Defers for the new
// deferrals and those of jobs started since, Undefers for the ended ones,
// of one GPU or, for a job no longer deferred, of all its GPUs),
// with and without a decision grid (without: against the collector given
// every deferral).
func TestDeferralsMatchReference(t *testing.T) {
	reasons := []string{"memory", "pressure", "hold"}
	for _, gpus := range []int{9, 48} { // 48: jobs with more open episodes than walkEpisodes
		t.Run(fmt.Sprint("gpus=", gpus), func(t *testing.T) { deferralsMatchReference(t, reasons, gpus) })
	}
}

func deferralsMatchReference(t *testing.T, reasons []string, gpus int) {
	longest := 0 // the most open episodes of a job, with changes
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 11))
		jobs := make([]policies.Job, 6)
		for i := range jobs {
			jobs[i].ID = policies.JobID(i)
		}
		var log, clog bytes.Buffer
		el, cel := NewEventLog(&log), NewEventLog(&clog)
		c, cc := NewCollector(jobs, el), NewCollector(jobs, cel)
		c.SetDecisionGrid(sec)
		cc.SetDecisionGrid(sec)
		ng, ngc := NewCollector(jobs), NewCollector(jobs) // no grid
		require.True(t, cc.TakeDeferralChanges())
		require.True(t, ngc.TakeDeferralChanges())
		all := []*Collector{c, cc, ng, ngc}
		ref := &refDeferrals{open: map[deferKey]*refEpisode{}, episodes: map[string]int{}, spans: map[string]int{},
			logged: map[deferKey]string{}}
		type act struct {
			k      deferKey
			reason string
		}
		var prev []act
		now := time.Duration(0)
		for range 400 {
			now += time.Duration(1+rng.IntN(1500)) * time.Millisecond
			started := map[policies.JobID]bool{}
			if rng.IntN(8) == 0 {
				e := policies.Event{Kind: policies.JobStarted, T: now, Job: policies.JobID(rng.IntN(len(jobs))),
					Attempt: 1, GPUs: []int{0}}
				for _, x := range all {
					x.Event(e)
				}
				ref.started(e.Job)
				started[e.Job] = true
			}
			for _, x := range all {
				x.Event(policies.Event{Kind: policies.Wakeup, T: now})
				x.Decision(now)
			}
			ref.now = now
			ref.decide(now)
			var cur []act
			for _, a := range prev {
				switch rng.IntN(20) {
				case 0: // dropped
				case 1:
					cur = append(cur, act{a.k, reasons[rng.IntN(len(reasons))]})
				default:
					cur = append(cur, a)
				}
			}
			if rng.IntN(10) == 0 && len(cur) > 1 {
				i, j := rng.IntN(len(cur)), rng.IntN(len(cur))
				cur[i], cur[j] = cur[j], cur[i]
			}
			for range rng.IntN(3 + gpus/6) {
				k := deferKey{policies.JobID(rng.IntN(len(jobs))), rng.IntN(gpus) - 1}
				if !containsKey(cur, func(a act) bool { return a.k == k }) {
					cur = append(cur, act{k, reasons[rng.IntN(len(reasons))]})
				}
			}
			was := map[deferKey]string{}
			for _, a := range prev {
				was[a.k] = a.reason
			}
			for _, a := range cur {
				d := policies.Action{Kind: policies.Defer, Job: a.k.job, GPU: a.k.gpu, Reason: a.reason}
				c.Action(d)
				ng.Action(d)
				ref.deferral(a.k, a.reason)
				if r, ok := was[a.k]; !ok || r != a.reason || started[a.k.job] || rng.IntN(10) == 0 { // a change, or a repeat
					cc.Action(d)
					ngc.Action(d)
				}
				delete(was, a.k)
			}
			inCur := map[policies.JobID]bool{}
			for _, a := range cur {
				inCur[a.k.job] = true
			}
			whole := map[policies.JobID]bool{} // undeferred on all GPUs at once
			for _, a := range prev {
				if _, ok := was[a.k]; !ok {
					continue
				}
				u := policies.Action{Kind: policies.Undefer, Job: a.k.job, GPU: a.k.gpu}
				if !inCur[a.k.job] && (whole[a.k.job] || rng.IntN(2) == 0) {
					if whole[a.k.job] {
						continue
					}
					whole[a.k.job], u.GPU = true, policies.AllGPUs
				}
				cc.Action(u)
				ngc.Action(u)
			}
			prev = cur
			for _, x := range []*Collector{cc, ngc} { // each job's list and its count
				for _, j := range jobs {
					first, n := x.jobEps.Get(int(j.ID)), 0
					for s := first; s >= 0; s = x.eps.val(s).next {
						require.Equal(t, j.ID, x.eps.key(s).job)
						n++
					}
					if first >= 0 {
						require.Equal(t, int32(n), x.eps.val(first).n, "seed %d job %d", seed, j.ID)
					}
					longest = max(longest, n)
				}
			}
		}
		for i, x := range []*EventLog{el, cel} {
			require.NoError(t, x.Flush())
			s := []*Collector{c, cc}[i].Summary()
			require.Equal(t, ref.episodes, s.Deferrals, "seed %d", seed)
			require.Equal(t, ref.decisions(), s.DeferralDecisions, "seed %d", seed)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace([]*bytes.Buffer{&log, &clog}[i].String()), "\n") {
				if strings.Contains(l, `"event":"defer"`) {
					got = append(got, l)
				}
			}
			require.Equal(t, ref.lines, got, "seed %d", seed)
			require.NotEmpty(t, got)
		}
		require.Equal(t, ng.Summary().Deferrals, ngc.Summary().Deferrals, "seed %d", seed)
		require.Equal(t, ng.Summary().DeferralDecisions, ngc.Summary().DeferralDecisions, "seed %d", seed)
	}
	if gpus > walkEpisodes {
		require.Greater(t, longest, walkEpisodes)
	}
}

func containsKey[T any](xs []T, f func(T) bool) bool {
	for _, x := range xs {
		if f(x) {
			return true
		}
	}
	return false
}

// BenchmarkRepeatedDefer records decisions that repeat the previous one's
// deferrals of one job on every GPU (the collector and the event log), per
// deferral: the cost must not grow with the GPUs (the open episodes).
func BenchmarkRepeatedDefer(b *testing.B) {
	for _, gpus := range []int{8, 1000} {
		b.Run(fmt.Sprintf("gpus=%d", gpus), func(b *testing.B) {
			c := NewCollector([]policies.Job{{ID: 0}}, NewEventLog(io.Discard))
			c.SetDecisionGrid(sec)
			b.ReportAllocs()
			now := time.Duration(0)
			for i := 0; b.Loop(); i++ {
				g := i % gpus
				if g == 0 {
					now += sec
					c.Decision(now)
				}
				c.Action(policies.Action{Kind: policies.Defer, Job: 0, GPU: g, Reason: "pressure"})
			}
		})
	}
}

// The slot table finds what a map finds under random puts and removals of
// many keys (the table grows; removals shift keys back across the
// wrap-around), jobs and GPUs large and small, GPU -1 included.
func TestSlotTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tb slotTable
	ref := map[deferKey]int32{}
	var live []deferKey
	for i := range 200000 {
		job := policies.JobID(rng.IntN(3000))
		if rng.IntN(10) == 0 {
			job = policies.JobID(rng.Int64N(1 << 40))
		}
		k := deferKey{job, rng.IntN(1000) - 1}
		want, ok := ref[k]
		got := tb.get(k)
		if !ok {
			want = -1
		}
		require.Equal(t, want, got, "step %d key %v", i, k)
		switch {
		case !ok && rng.IntN(2) == 0:
			tb.put(k, int32(i))
			ref[k] = int32(i)
			live = append(live, k)
		case len(live) > 0 && rng.IntN(2) == 0:
			j := rng.IntN(len(live))
			r := live[j]
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
			tb.remove(r)
			delete(ref, r)
		}
		require.Equal(t, len(ref), tb.n)
		if len(live) > 0 {
			k := live[rng.IntN(len(live))]
			require.Equal(t, ref[k], tb.get(k), "step %d live key %v", i, k)
		}
	}
	for k, s := range ref {
		require.Equal(t, s, tb.get(k))
	}
}

// A collector that takes deferrals as changes has its own index and its
// event log's look up in their tables only (no guesses: handed changes,
// their look-ups rarely repeat); without changes both guess.
func TestDeferralChangesIndexesDoNotGuess(t *testing.T) {
	for _, c := range []struct {
		name    string
		forward []Recorder
		changes bool
	}{
		{"changes", []Recorder{NewEventLog(io.Discard)}, true},
		{"a forward without changes", []Recorder{NewEventLog(io.Discard), everyDeferral{}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := NewCollector(nil, c.forward...)
			require.Equal(t, c.changes, col.TakeDeferralChanges())
			require.Equal(t, c.changes, col.eps.noGuess)
			require.Equal(t, c.changes, c.forward[0].(*EventLog).defers.noGuess)
		})
	}
}

// everyDeferral is a recorder that takes every deferral (no changes).
type everyDeferral struct{}

func (everyDeferral) Event(policies.Event)   {}
func (everyDeferral) Action(policies.Action) {}

// A removed slot keeps its value (remove does not zero it: every reader
// checks live), and add and addUnindexed write every field of the slot they
// reuse: a slot freed after it was indexed, guessed from and given a value
// comes back live, with the new key, value and indexing, and no guess.
func TestDeferIndexReusesSlots(t *testing.T) {
	type val struct {
		reason string
		n      int32
	}
	for _, tc := range []struct {
		name    string
		indexed bool
	}{{"add", true}, {"addUnindexed", false}} {
		t.Run(tc.name, func(t *testing.T) {
			x := newDeferIndex[val]()
			a := x.add(deferKey{1, 2}, val{"a", 5})
			b := x.add(deferKey{1, 3}, val{"b", 6})
			require.Equal(t, b, x.slots[a].next) // guessed: b after a
			x.remove(b)
			x.remove(a)
			require.False(t, x.slots[a].live)
			require.Equal(t, val{"a", 5}, *x.val(a)) // not zeroed
			require.Equal(t, int32(-1), x.get(deferKey{1, 2}))
			k := deferKey{4, 0}
			var s int32
			if tc.indexed {
				s = x.add(k, val{"c", 7})
			} else {
				s = x.addUnindexed(k, val{"c", 7})
			}
			require.Equal(t, a, s) // the last freed
			require.Equal(t, deferSlot[val]{key: k, live: true, indexed: tc.indexed, next: -1, val: val{"c", 7}}, x.slots[s])
			want := int32(-1)
			if tc.indexed {
				want = s
			}
			require.Equal(t, want, x.at.get(k))
		})
	}
}

// same is ==, for strings that share their bytes and equal ones that do
// not, of equal and different lengths, empty ones included.
func TestSame(t *testing.T) {
	hold := "hold"
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{hold, hold, true},
		{hold, strings.Clone(hold), true},
		{hold, "hole", false},
		{hold, "holds", false},
		{hold[:2], "ho", true},
		{"", "", true},
		{"", hold[:0], true},
		{"", "x", false},
	} {
		require.Equal(t, tc.want, same(tc.a, tc.b), "%q %q", tc.a, tc.b)
		require.Equal(t, tc.a == tc.b, same(tc.a, tc.b), "%q %q", tc.a, tc.b)
	}
}
