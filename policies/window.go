package policies

import "time"

// Window returns the samples of GPU g's last n seconds; when anchored, it
// starts no earlier than the first activity of the most recently activated
// job on the GPU, so that it describes the current job mix (a departure
// leaves the window as it is: its older samples overstate the pressure
// until they age out, which errs on the safe side).
func Window(v *View, g, n int, anchored bool, dst []Sample) []Sample {
	if !anchored {
		return v.Telemetry.Samples(dst[:0], g, n)
	}
	var anchor time.Duration
	for _, id := range v.GPUs[g].Jobs {
		if j := v.Job(id); j.Active {
			anchor = max(anchor, j.ActiveAt)
		}
	}
	// Samples are taken at or before Now truncated to the second; only
	// those at or after the anchor count, so no more are asked for (a
	// simulator draws each one it is asked for).
	last := v.Now.Truncate(time.Second)
	if anchor > last {
		return dst[:0]
	}
	n = min(n, int((last-anchor)/time.Second)+1)
	dst = v.Telemetry.Samples(dst[:0], g, n)
	skip := 0
	for skip < len(dst) && dst[skip].At < anchor {
		skip++
	}
	return dst[skip:]
}
