package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/traces"
)

// halved is an interference model under which a job alone runs at half
// speed.
type halved struct{}

func (halved) Rate(_ models.Profile, co []models.Profile) float64 { return 0.5 / float64(1+len(co)) }

// rateOn gives the interference model's Rate bit for bit for the active
// jobs on a GPU, in the GPU's order: catalog workloads, one to four jobs
// on the GPU (some not active yet, a job alone among them), several
// models (one under which a job alone runs slower), more combinations than
// a rateMemo has entries; and with one or two co-runners under a pressure
// model the rate is the remembered one (an entry changed by hand is what
// it gives), the table grown from its first size to its largest.
func TestRateOnIsRate(t *testing.T) {
	cat := models.A100()
	var ids []string
	for _, id := range cat.IDs() {
		if w, _ := cat.Get(id); w.GPUs == 1 {
			ids = append(ids, id)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	specs := make([]traces.Job, 300)
	for i := range specs {
		specs[i] = traces.Job{ID: fmt.Sprint(i), Workload: ids[r.IntN(len(ids))], GPUs: 1}
	}
	rho := models.DefaultPressureParams()
	rho.NWayExponent = 0.7
	for _, tc := range []struct {
		name string
		m    models.Interference
	}{
		{"default", models.DefaultInterference()},
		{"rho 0.7", &models.PressureModel{P: rho}},
		{"legacy", models.LegacyInterference()},
		{"none", models.NoInterference{}},
		{"below 1 alone", halved{}}, // rateOn's shortcut for a lone job is a PressureModel's only
	} {
		m := tc.m
		t.Run(tc.name, func(t *testing.T) {
			srv, err := models.ParseServer("a100-40gb:1")
			require.NoError(t, err)
			s, err := New(Config{Server: srv, Catalog: cat, Truth: DefaultTruth(), Seed: 1, Interference: m}, specs)
			require.NoError(t, err)
			for i := range specs { // every job an attempt on GPU 0
				s.jobs[i].run = int32(i)
				s.atts = append(s.atts, runState{w: s.jobs[i].info0.w})
				s.view.Jobs[i].On = []int{0}
			}
			tt := s.typ(0)
			remembered, sizes := 0, []int{}
			for range 20000 {
				on := r.Perm(len(specs))[:1+r.IntN(4)]
				s.view.GPUs[0].Jobs = s.view.GPUs[0].Jobs[:0]
				for _, o := range on {
					s.view.GPUs[0].Jobs = append(s.view.GPUs[0].Jobs, policies.JobID(o))
					s.view.Jobs[o].Active = r.IntN(5) > 0
				}
				id := on[r.IntN(len(on))]
				self := &s.atts[id].w.PerGPU[0]
				var co []models.Profile
				var cos []*models.Profile
				for _, o := range on {
					if o != id && s.view.Jobs[o].Active {
						co = append(co, s.atts[o].w.PerGPU[0])
						cos = append(cos, &s.atts[o].w.PerGPU[0])
					}
				}
				want := m.Rate(*self, co)
				got := s.rateOn(0, tt, id, self)
				require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%+v beside %+v", *self, co)
				if _, ok := m.(*models.PressureModel); !ok || len(cos) == 0 || len(cos) > 2 {
					continue
				}
				var co1 *models.Profile
				if len(cos) == 2 {
					co1 = cos[1]
				}
				if n := len(s.rates[0].slots); len(sizes) == 0 || sizes[len(sizes)-1] != n {
					sizes = append(sizes, n)
				}
				e := s.rates[0].slot(self, cos[0], co1)
				require.Equal(t, rateEntry{self: self, co0: cos[0], co1: co1, rate: got}, *e)
				e.rate = -1
				require.Equal(t, -1.0, s.rateOn(0, tt, id, self), "the remembered rate")
				e.rate = got
				remembered++
			}
			if _, ok := m.(*models.PressureModel); ok {
				require.Greater(t, remembered, 10000)
				var want []int
				for b := rateMemoMinBits; b <= rateMemoMaxBits; b++ {
					want = append(want, 1<<b)
				}
				require.Equal(t, want, sizes, "grown from its first size to its largest")
			}
		})
	}
}
