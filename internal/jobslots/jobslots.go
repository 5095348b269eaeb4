// Package jobslots maps job ids to small slot numbers, cheaply for the ids
// a run gives: an array by id for ids from 0 below MaxDense, a map for any
// other id (a policy may name any). A Go map by job id had been a few per
// cent of a loaded run's instructions where a look-up comes at every event.
package jobslots

// MaxDense bounds the ids the array covers (64 MiB of it at the most).
const MaxDense = 1 << 24

// Table holds a slot (int32; -1 for none) per id. The zero Table is empty.
// (Not generic over the id's type: a shape-stenciled Table cost a loaded
// Horus run 1.8 M instructions more.)
type Table struct {
	dense []int32 // by id: one more than the slot, 0 for none
	far   map[int]int32
}

// Get returns id's slot, -1 for none.
func (x *Table) Get(id int) int32 {
	if i := int(id); i >= 0 && i < len(x.dense) {
		return x.dense[i] - 1
	}
	if s, ok := x.far[id]; ok {
		return s
	}
	return -1
}

// Set makes s id's slot; a negative s forgets id.
func (x *Table) Set(id int, s int32) {
	i := int(id)
	switch {
	case i >= 0 && i < len(x.dense):
	case i >= 0 && i < MaxDense:
		if s < 0 {
			return
		}
		if i >= cap(x.dense) { // doubled: each id moved about once
			grown := make([]int32, i+1, max(i+1, 2*cap(x.dense), 1024))
			copy(grown, x.dense)
			x.dense = grown
		}
		x.dense = x.dense[:i+1] // zeros past the length
	case s < 0:
		delete(x.far, id)
		return
	default:
		if x.far == nil {
			x.far = make(map[int]int32)
		}
		x.far[id] = s
		return
	}
	x.dense[i] = max(s, -1) + 1
}
