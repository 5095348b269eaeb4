package models

import "fmt"

// Interference is a truth model of co-location slowdown: the progress rate
// (1 = solo speed) of a job whose GPU profile is self on a GPU it shares with
// co-runners whose profiles are co. Multi-GPU jobs progress at the minimum of
// their GPUs' rates; the simulator takes care of that.
type Interference interface {
	Rate(self Profile, co []Profile) float64
}

// NoInterference is the baseline model: every job runs at solo speed
// whatever shares its GPU.
type NoInterference struct{}

// Rate returns 1.
func (NoInterference) Rate(Profile, []Profile) float64 { return 1 }

// MaxPairSlowdown bounds what one co-runner may cost a job under an
// interference model: beside any one other workload of its catalog, a job
// runs at least at 1/MaxPairSlowdown of its solo speed. The measured co-runs
// stay below 3×; a model far beyond (intercept 50 stretches a job e^50
// times) would carry simulated time past the int64 nanoseconds it is
// counted in.
const MaxPairSlowdown = 1000

// CheckSlowdown checks m against MaxPairSlowdown on every pair of cat's
// workloads (each GPU's profile of the one beside each of the other's).
func CheckSlowdown(m Interference, cat *Catalog) error {
	co := make([]Profile, 1)
	for _, a := range cat.IDs() {
		wa, _ := cat.Get(a)
		for _, b := range cat.IDs() {
			wb, _ := cat.Get(b)
			co[0] = wb.PerGPU[0]
			for _, p := range wa.PerGPU {
				if r := m.Rate(p, co); !(r >= 1.0/MaxPairSlowdown) || r > 1 {
					return fmt.Errorf("the interference model runs %s beside %s at %.3g of its solo speed; want at most %d times slower and never faster", a, b, r, MaxPairSlowdown)
				}
			}
		}
	}
	return nil
}
