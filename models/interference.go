package models

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
