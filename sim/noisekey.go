package sim

// noiseKey is the part of a telemetry draw's key that names the job and its
// attempt. Attempts below 256 keep the original packing id<<8 | attempt
// (so outputs stay as they were); later attempts use a second domain with
// the top bit set, id<<24 | attempt, which no job id below 2^39 reaches in
// the first. Distinct (id, attempt) pairs thus get distinct keys for job
// ids below 2^39 and attempts below 2^24.
func noiseKey(id, attempt int) uint64 {
	if attempt < 256 {
		return uint64(id)<<8 | uint64(attempt)
	}
	return 1<<63 | uint64(id)<<24 | uint64(attempt)&(1<<24-1)
}
