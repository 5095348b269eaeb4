package sim

import (
	"unsafe"

	"github.com/aegis-sched/aegis/models"
)

// rateMemo remembers a GPU type's pressure-model rates (RateMemo's) of a
// job beside one or two co-runners, by the profiles they were computed
// for: a direct-mapped table keyed by the profiles' addresses. A job's
// profile on a GPU is an entry of its workload's PerGPU in a catalog,
// which is never written once loaded, so the same addresses hold the same
// numbers and a remembered rate is the one RateMemo computes, bit for bit
// (the co-runners in the GPU's order, which the sums follow). A loaded
// run asks again and again for the rates of the same few thousand
// workload pairs, each time a job on their GPU starts or ends. The table
// starts small (a short run pays for little) and doubles, up to
// rateMemoMaxBits, each time it has missed a sixteenth as many times as it
// has entries.
type rateMemo struct {
	slots  []rateEntry
	bits   uint
	misses int
}

// The rateMemo's first and largest sizes, as bits of its slot numbers.
const (
	rateMemoMinBits = 8
	rateMemoMaxBits = 13
)

// rateEntry is a rateMemo entry: the rate of self beside co0 and, unless
// it is nil, co1. An empty entry has no self.
type rateEntry struct {
	self, co0, co1 *models.Profile
	rate           float64
}

// slot is the entry of self beside co0 and co1 (nil for one co-runner).
func (m *rateMemo) slot(self, co0, co1 *models.Profile) *rateEntry {
	h := uint64(uintptr(unsafe.Pointer(self)))*0x9e3779b97f4a7c15 ^
		uint64(uintptr(unsafe.Pointer(co0)))*0xbf58476d1ce4e5b9 ^
		uint64(uintptr(unsafe.Pointer(co1)))*0x94d049bb133111eb
	return &m.slots[h>>(64-m.bits)]
}

// missed counts a miss, doubling the table (its entries kept) once the
// misses since the last doubling reach a sixteenth of its size.
func (m *rateMemo) missed() {
	if m.misses++; m.misses < len(m.slots)/16 || m.bits >= rateMemoMaxBits {
		return
	}
	old := m.slots
	m.bits++
	m.slots, m.misses = make([]rateEntry, 1<<m.bits), 0
	for _, e := range old {
		if e.self != nil {
			*m.slot(e.self, e.co0, e.co1) = e
		}
	}
}

// pressure reports whether the type's interference model is a
// PressureModel (under which a job alone runs at rate 1).
func (tt *TypeTruth) pressure() bool {
	_, ok := tt.Interference.(*models.PressureModel)
	return ok
}

// rateOn is the interference model's rate of job id, of profile self, on
// GPU g of type tt beside the other active jobs there: a PressureModel's
// through the type's memos (rateMemo's for one or two co-runners, 1 alone,
// as RateMemo gives it), any other model's Rate.
func (s *Sim) rateOn(g int, tt *TypeTruth, id int, self *models.Profile) float64 {
	jobs := s.view.GPUs[g].Jobs
	if len(jobs) == 1 && int(jobs[0]) == id && tt.pressure() { // alone: no co-runner to gather
		return 1 // RateMemo's rate of a job alone
	}
	cos := s.coOf[:0]
	for _, o := range jobs {
		if int(o) != id && s.view.Jobs[o].Active {
			cos = append(cos, s.profileOn(int(o), g))
		}
	}
	s.coOf = cos
	pm, ok := tt.Interference.(*models.PressureModel)
	if !ok {
		return tt.Interference.Rate(*self, s.coValues(cos))
	}
	if len(cos) == 0 {
		return 1 // RateMemo's rate of a job alone
	}
	k := 0
	if s.typeOf != nil {
		k = int(s.typeOf[g])
	}
	if s.memos == nil {
		s.memos = make([]*models.PressureMemo, len(s.types))
		s.rates = make([]*rateMemo, len(s.types))
	}
	if s.memos[k] == nil {
		s.memos[k] = new(models.PressureMemo)
		s.rates[k] = &rateMemo{slots: make([]rateEntry, 1<<rateMemoMinBits), bits: rateMemoMinBits}
	}
	if len(cos) > 2 {
		return pm.RateMemo(s.memos[k], *self, s.coValues(cos))
	}
	var co1 *models.Profile
	if len(cos) == 2 {
		co1 = cos[1]
	}
	e := s.rates[k].slot(self, cos[0], co1)
	if e.self == self && e.co0 == cos[0] && e.co1 == co1 {
		return e.rate
	}
	r := pm.RateMemo(s.memos[k], *self, s.coValues(cos))
	m := s.rates[k]
	m.missed()
	*m.slot(self, cos[0], co1) = rateEntry{self: self, co0: cos[0], co1: co1, rate: r}
	return r
}

// coValues is the profiles of cos, in order (in the scratch s.co).
func (s *Sim) coValues(cos []*models.Profile) []models.Profile {
	co := s.co[:0]
	for _, p := range cos {
		co = append(co, *p)
	}
	s.co = co
	return co
}
