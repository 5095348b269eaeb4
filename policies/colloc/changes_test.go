package colloc

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// TestDeferBookListsChanges: over random decisions (jobs deferred on random
// GPUs for random reasons, some of them given a new attempt between
// decisions), the previous decision's deferrals with a decision's Defers
// and Undefers (of a GPU, or of all a job's) applied are the decision's
// deferrals; every deferral of a job whose attempt started since is
// listed, and no other deferral that repeats the previous decision's.
func TestDeferBookListsChanges(t *testing.T) {
	type key struct {
		job policies.JobID
		gpu int
	}
	reasons := []Reason{DeferHold, DeferMemory, DeferJobs}
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 3))
		const n = 6
		jobs := make([]policies.Job, 10)
		for i := range jobs {
			jobs[i].ID = policies.JobID(i)
		}
		var b deferBook
		prev := map[key]Reason{}
		listed, repeats, whole := 0, 0, 0
		for range 300 {
			started := map[policies.JobID]bool{}
			if rng.IntN(4) == 0 {
				id := rng.IntN(len(jobs))
				jobs[id].Attempts++
				started[policies.JobID(id)] = true
			}
			cur := map[key]Reason{}
			var acts []policies.Action
			for _, id := range rng.Perm(len(jobs))[:rng.IntN(4)] {
				j := &jobs[id]
				var mine, was []Reason
				told, again := 0, 0
				for g := range n {
					if rng.IntN(3) == 0 {
						continue
					}
					r := reasons[rng.IntN(len(reasons))]
					if r2, ok := prev[key{j.ID, g}]; ok && rng.IntN(4) > 0 {
						r = r2 // mostly the same as before
					}
					cur[key{j.ID, g}] = r
					if mine == nil {
						mine, was = b.job(j, n)
					}
					if told++; was != nil && was[g] != Admitted {
						again++
					}
					if mine[g] = r; was == nil || was[g] != r {
						acts = append(acts, policies.Action{Kind: policies.Defer, Job: j.ID, GPU: g, Reason: string(r)})
					}
				}
				if mine != nil && rng.IntN(3) > 0 { // told (its count read) or not (its reasons walked)
					b.deferred(told, again)
				}
			}
			acts = b.finish(acts)
			got := map[key]Reason{}
			for k, r := range prev {
				got[k] = r
			}
			for _, a := range acts {
				k := key{a.Job, a.GPU}
				switch a.Kind {
				case policies.Defer:
					got[k] = Reason(a.Reason)
					listed++
				case policies.Undefer:
					if a.GPU == policies.AllGPUs {
						whole++
						n := 0
						for k2 := range got {
							if k2.job == a.Job {
								delete(got, k2)
								n++
							}
						}
						require.Positive(t, n, "undefer of job %d, not deferred", a.Job)
						continue
					}
					_, ok := got[k]
					require.True(t, ok, "undefer of %v, not deferred", k)
					delete(got, k)
				}
			}
			require.Equal(t, cur, got, "seed %d", seed)
			for k, r := range cur {
				listedNow := false
				for _, a := range acts {
					listedNow = listedNow || (a.Kind == policies.Defer && a.Job == k.job && a.GPU == k.gpu)
				}
				if started[k.job] {
					require.True(t, listedNow, "seed %d: %v started since, not listed", seed, k)
				} else if r2, ok := prev[k]; ok && r2 == r {
					require.False(t, listedNow, "seed %d: %v repeated, listed", seed, k)
					repeats++
				}
			}
			prev = cur
		}
		require.Positive(t, listed)
		require.Positive(t, repeats)
		require.Positive(t, whole)
	}
}

// An entry given to a job that the decision then defers nowhere (told
// deferred(0)) is as if the job had none: its previous deferrals end with
// one Undefer of all its GPUs, and the next decision has nothing of it to
// end.
func TestDeferBookEntryWithoutDeferrals(t *testing.T) {
	var b deferBook
	j := &policies.Job{ID: 4, Attempts: 1}
	mine, _ := b.job(j, 3)
	mine[0], mine[2] = DeferMemory, DeferHold
	b.deferred(2, 0)
	require.Empty(t, b.finish(nil))
	_, was := b.job(j, 3) // the next decision: nothing deferred
	require.Equal(t, []Reason{DeferMemory, "", DeferHold}, was)
	b.deferred(0, 0)
	require.Equal(t, []policies.Action{{Kind: policies.Undefer, Job: 4, GPU: policies.AllGPUs}}, b.finish(nil))
	require.Empty(t, b.finish(nil))
}

// finish ends a job's deferrals GPU by GPU only when the decision did
// not make each of them again, as its count says (deferred's again), or
// was not told: a hand-changed count is what it reads.
func TestDeferBookEndsOnlyWhatWasNotMadeAgain(t *testing.T) {
	for _, c := range []struct {
		name  string
		told  bool
		again int // as told
		want  []int
	}{
		{"counted", true, 2, []int{1}},
		{"a hand-changed count", true, 3, nil},
		{"not told: the reasons", false, 0, []int{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b deferBook
			j := &policies.Job{ID: 4, Attempts: 1}
			mine, _ := b.job(j, 3)
			mine[0], mine[1], mine[2] = DeferMemory, DeferJobs, DeferHold
			b.deferred(3, 0)
			require.Empty(t, b.finish(nil))
			mine, _ = b.job(j, 3) // GPU 1 deferred no more
			mine[0], mine[2] = DeferMemory, DeferHold
			if c.told {
				b.deferred(2, c.again)
			}
			var got []int
			for _, a := range b.finish(nil) {
				require.Equal(t, policies.Undefer, a.Kind)
				got = append(got, a.GPU)
			}
			require.Equal(t, c.want, got)
		})
	}
}
