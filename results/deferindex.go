package results

import "github.com/aegis-sched/aegis/policies"

// deferKey is a deferral's job and GPU.
type deferKey struct {
	job policies.JobID
	gpu int
}

// deferIndex holds a value per (job, GPU) pair, found in O(1) with no
// hashing when deferrals repeat. A policy that keeps a job waiting defers
// it on the same GPUs, in the same order, decision after decision; so each
// slot remembers the slot looked up right after it last time, and a look-up
// first tries that guess (checked against the slot's key) before the map.
// Slots are reused after remove; a guess that points to a removed or reused
// slot fails the check and falls back to the map.
type deferIndex[T any] struct {
	at    map[deferKey]int32
	slots []deferSlot[T]
	free  []int32
	prev  int32 // the slot looked up or added last, -1 if none
	// hashed counts the look-ups that went to the map (the guess failed).
	hashed int
}

type deferSlot[T any] struct {
	key  deferKey
	live bool
	next int32 // the slot looked up or added right after this one last time, -1 if none
	val  T
}

func newDeferIndex[T any]() deferIndex[T] {
	return deferIndex[T]{at: map[deferKey]int32{}, prev: -1}
}

// get returns the slot of k, or -1 if it has none.
func (x *deferIndex[T]) get(k deferKey) int32 {
	s := int32(-1)
	if x.prev >= 0 {
		if n := x.slots[x.prev].next; n >= 0 {
			if t := &x.slots[n]; t.live && t.key == k {
				s = n
			}
		}
	}
	if s < 0 {
		x.hashed++
		v, ok := x.at[k]
		if !ok {
			return -1
		}
		s = v
	}
	x.follow(s)
	return s
}

// follow records that slot s was looked up after the previous one.
func (x *deferIndex[T]) follow(s int32) {
	if x.prev >= 0 && x.slots[x.prev].next != s {
		x.slots[x.prev].next = s
	}
	x.prev = s
}

// add gives k (which has no slot) a slot holding v and returns it.
func (x *deferIndex[T]) add(k deferKey, v T) int32 {
	var s int32
	if n := len(x.free); n > 0 {
		s = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		s = int32(len(x.slots))
		x.slots = append(x.slots, deferSlot[T]{})
	}
	x.slots[s] = deferSlot[T]{key: k, live: true, next: -1, val: v}
	x.at[k] = s
	x.follow(s)
	return s
}

// val returns slot s's value.
func (x *deferIndex[T]) val(s int32) *T { return &x.slots[s].val }

// remove frees slot s.
func (x *deferIndex[T]) remove(s int32) {
	t := &x.slots[s]
	delete(x.at, t.key)
	var zero T
	t.live, t.val = false, zero
	x.free = append(x.free, s)
}
