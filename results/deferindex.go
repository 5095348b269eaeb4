package results

import (
	"math/bits"

	"github.com/aegis-sched/aegis/policies"
)

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
	at    slotTable
	slots []deferSlot[T]
	free  []int32
	prev  int32 // the slot looked up or added last, -1 if none
	// noGuess: look up in the table only (and keep no guesses), for
	// look-ups that rarely repeat a sequence (deferrals as changes).
	noGuess bool
	// hashed counts the look-ups that went to the map (the guess failed).
	hashed int
}

type deferSlot[T any] struct {
	key  deferKey
	live bool
	// indexed: the key is in the table (addUnindexed leaves it out, for a
	// user that finds the slot its own way until it calls index).
	indexed bool
	next    int32 // the slot looked up or added right after this one last time, -1 if none
	val     T
}

func newDeferIndex[T any]() deferIndex[T] {
	return deferIndex[T]{prev: -1}
}

// get returns the slot of k, or -1 if it has none.
func (x *deferIndex[T]) get(k deferKey) int32 {
	if x.noGuess {
		return x.at.get(k)
	}
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
		if s = x.at.get(k); s < 0 {
			return -1
		}
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
	t := &x.slots[s] // (field by field, as addUnindexed)
	t.key, t.live, t.indexed, t.next = k, true, true, -1
	t.val = v
	x.at.put(k, s)
	if !x.noGuess {
		x.follow(s)
	}
	return s
}

// addUnindexed gives k (which has no slot) a slot holding v, not in the
// table (get does not find it until index), and returns it.
func (x *deferIndex[T]) addUnindexed(k deferKey, v T) int32 {
	var s int32
	if n := len(x.free); n > 0 {
		s = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		s = int32(len(x.slots))
		x.slots = append(x.slots, deferSlot[T]{})
	}
	// Field by field: a composite value of a generic slot is built in a
	// temporary and copied (a typed copy when T holds pointers).
	t := &x.slots[s]
	t.key, t.live, t.indexed, t.next = k, true, false, -1
	t.val = v
	return s
}

// index puts slot s's key in the table, if it is not.
func (x *deferIndex[T]) index(s int32) {
	if t := &x.slots[s]; !t.indexed {
		t.indexed = true
		x.at.put(t.key, s)
	}
}

// key returns slot s's key.
func (x *deferIndex[T]) key(s int32) deferKey { return x.slots[s].key }

// val returns slot s's value.
func (x *deferIndex[T]) val(s int32) *T { return &x.slots[s].val }

// remove frees slot s. Its value is left as it is (every reader of a slot
// checks live, and add writes the value again): zeroing it was a typed
// copy at each removal. (A freed logged's reason string stays referenced
// until its slot is reused.)
func (x *deferIndex[T]) remove(s int32) {
	t := &x.slots[s]
	if t.indexed {
		x.at.remove(t.key)
	}
	t.live = false
	x.free = append(x.free, s)
}

// slotTable maps keys to slots: open addressing with linear probing and
// deletion by shifting back (no tombstones), and a multiplicative hash of
// the key's two integers, cheaper than a Go map's hashing of the 16-byte
// key (the deferrals' look-ups that miss the guess were a tenth of Horus's
// runs on a backlog).
type slotTable struct {
	keys  []deferKey
	slots []int32 // -1: empty
	shift uint    // 64 − log2(len(keys))
	n     int
}

// home is k's first place in a table of 2^(64−shift) places.
func home(k deferKey, shift uint) int {
	h := (uint64(k.job)<<32 ^ uint64(k.gpu)) * 0x9e3779b97f4a7c15
	return int(h >> shift)
}

// get returns k's slot, -1 if it has none.
func (t *slotTable) get(k deferKey) int32 {
	if t.n == 0 {
		return -1
	}
	mask := len(t.keys) - 1
	for i := home(k, t.shift); ; i = (i + 1) & mask {
		switch {
		case t.slots[i] < 0:
			return -1
		case t.keys[i] == k:
			return t.slots[i]
		}
	}
}

// put gives k (which has none) slot s.
func (t *slotTable) put(k deferKey, s int32) {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := len(t.keys) - 1
	i := home(k, t.shift)
	for t.slots[i] >= 0 {
		i = (i + 1) & mask
	}
	t.keys[i], t.slots[i] = k, s
	t.n++
}

// remove drops k, which has a slot, shifting back the keys after it that
// would no longer be found past the gap.
func (t *slotTable) remove(k deferKey) {
	mask := len(t.keys) - 1
	i := home(k, t.shift)
	for t.keys[i] != k || t.slots[i] < 0 {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.slots[j] >= 0; j = (j + 1) & mask {
		// The key at j may fill the gap at i if its home is not in (i, j].
		if h := home(t.keys[j], t.shift); (j-h)&mask >= (j-i)&mask {
			t.keys[i], t.slots[i] = t.keys[j], t.slots[j]
			i = j
		}
	}
	t.slots[i] = -1
	t.n--
}

// grow doubles the table (at first 64 places) and places the keys again.
func (t *slotTable) grow() {
	keys, slots := t.keys, t.slots
	size := max(64, 2*len(keys))
	t.keys, t.slots, t.n = make([]deferKey, size), make([]int32, size), 0
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for i := range t.slots {
		t.slots[i] = -1
	}
	for i, s := range slots {
		if s >= 0 {
			t.put(keys[i], s)
		}
	}
}
