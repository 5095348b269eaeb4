package loop

import (
	"math"
	"slices"

	"github.com/aegis-sched/aegis/policies"
)

// Snapshot is a policy's private copy of a backend's view. It is refreshed
// incrementally: GPUs and queues on every Update, a job only when an event
// or action touched it (or when it is new), so a decision costs time in
// proportion to what changed, not to the size of the trace.
type Snapshot struct {
	v     policies.View
	dirty []policies.JobID
	all   bool // copy every job on the next Update
	// checks counts the loop's view checks (check); the next full check
	// comes at the nextFull-th.
	checks, nextFull int
	// changed lists the GPUs that check found to differ from the
	// snapshot (when !allGPUs): the ones Update copies.
	changed []int
	allGPUs bool
	// reported lists the GPUs the backend reported changed at this
	// decision (ChangeReporter); turn is the next GPU the guard compares.
	reported []int
	turn     int
	// selfChecked: the backend checks its own bookkeeping (SelfChecker).
	selfChecked bool
	// slab is an arena for the jobs' GPU lists (never reused: a list a
	// policy kept stays as it was).
	slab []int
	// shared: the policy only reads jobs (policies.JobsReader), so the
	// snapshot lists the backend's jobs instead of copies of them.
	shared bool
	// untracked: no one reads dirty (shared jobs, and a backend that
	// checks its own bookkeeping: neither Update nor check reads the
	// touched jobs), so touches do not list them.
	untracked bool
}

// Touch marks the job an event concerns as changed. An event of an unknown
// type marks every job.
func (s *Snapshot) Touch(e policies.Event) { s.touch(e.Kind, e.Job) }

// touch is Touch for an event of kind k about job (the loop's, without a
// copy of the event).
func (s *Snapshot) touch(k policies.EventKind, job policies.JobID) {
	switch k {
	case policies.JobArrived, policies.JobStarted, policies.JobActive, policies.JobFinished,
		policies.JobFailed, policies.JobStopped, policies.PlaceFailed:
		if !s.untracked {
			s.dirty = append(s.dirty, job)
		}
	case policies.Wakeup:
	default:
		s.all = true
	}
}

// TouchAction marks the job an action names as changed.
func (s *Snapshot) TouchAction(a policies.Action) {
	switch a.Kind {
	case policies.Place, policies.Stop:
		if !s.untracked {
			s.dirty = append(s.dirty, a.Job)
		}
	}
}

// Update brings the snapshot up to date with src and returns it. The
// result shares no memory with src that a policy could write to: the
// Telemetry reader is shared (it only appends to the caller's slice), and
// so is the queue, a read-only policies.JobList (its copy cost O(queue) per
// decision).
func (s *Snapshot) Update(src *policies.View) *policies.View {
	v := &s.v
	v.Now, v.Telemetry, v.Pressure = src.Now, src.Telemetry, src.Pressure
	if len(v.GPUs) != len(src.GPUs) {
		v.GPUs = make([]policies.GPU, len(src.GPUs))
		s.allGPUs = true
	}
	if s.allGPUs {
		for g := range src.GPUs {
			copyGPU(&v.GPUs[g], &src.GPUs[g])
		}
	} else {
		for _, g := range s.changed {
			copyGPU(&v.GPUs[g], &src.GPUs[g])
		}
	}
	s.allGPUs = true // until the next check says otherwise
	if s.shared {
		v.Jobs, s.all, s.dirty = src.Jobs, false, s.dirty[:0]
	} else {
		s.updateJobs(src)
	}
	v.Queue = src.Queue // read-only: shared, not copied
	if len(v.Failed) > 0 || len(src.Failed) > 0 {
		v.Failed = append(v.Failed[:0], src.Failed...)
	}
	return v
}

// updateJobs brings the snapshot's copies of the jobs up to date with src.
func (s *Snapshot) updateJobs(src *policies.View) {
	v := &s.v
	if s.all || len(v.Jobs) > len(src.Jobs) {
		v.Jobs = v.Jobs[:0]
		s.all = false
	}
	if n, old := len(src.Jobs), len(v.Jobs); n > old && cap(v.Jobs) >= n {
		v.Jobs = append(v.Jobs, src.Jobs[old:n]...) // one copy, then own GPU lists
		for i := old; i < n; i++ {
			if v.Jobs[i].On != nil {
				v.Jobs[i].On = nil
				s.copyJob(&v.Jobs[i], &src.Jobs[i])
			}
		}
	} else if n > old {
		// New, zeroed memory (grown as append grows): a job not yet
		// submitted (most of them at the first decision) needs only its ID.
		jobs := make([]policies.Job, n, max(n, 2*cap(v.Jobs)))
		copy(jobs, v.Jobs)
		for i := old; i < n; i++ {
			if j := &src.Jobs[i]; unsubmitted(j) {
				jobs[i].ID = j.ID
			} else {
				s.copyJob(&jobs[i], j)
			}
		}
		v.Jobs = jobs
	}
	for _, id := range s.dirty {
		if int(id) >= 0 && int(id) < len(src.Jobs) {
			s.copyJob(&v.Jobs[id], &src.Jobs[id])
		}
	}
	s.dirty = s.dirty[:0]
}

// unsubmitted reports whether j is the zero Job but for its ID, bit for
// bit: how a backend lists a job not yet submitted.
// TestUnsubmittedCoversJob keeps it in step with the fields of
// policies.Job and policies.Profile.
func unsubmitted(j *policies.Job) bool {
	p := &j.Profile
	return j.State == policies.Waiting && j.On == nil && j.Name == "" && j.GPUs == 0 && j.Submit == 0 &&
		j.Attempts == 0 && j.OOMs == 0 && j.LastFailure == policies.NoFailure && j.FailedAt == 0 && !j.FailedShared &&
		j.Started == 0 && !j.Active && j.ActiveAt == 0 &&
		p.Workload == "" && p.Lucid == 0 &&
		math.Float64bits(p.SoloS)|math.Float64bits(p.PeakMiB)|math.Float64bits(p.UtilPct)|
			math.Float64bits(p.SMACT)|math.Float64bits(p.SMOCC)|math.Float64bits(p.DRAMA)|
			math.Float64bits(p.Analytical)|math.Float64bits(p.FakeTensor)|math.Float64bits(p.GPUMemNet) == 0
}

// copyGPU copies src into dst, dst keeping its own job list: field by
// field (the whole struct copied first wrote its job list twice).
func copyGPU(dst, src *policies.GPU) {
	dst.Index, dst.CapacityMiB, dst.UsedMiB = src.Index, src.CapacityMiB, src.UsedMiB
	if jobs := dst.Jobs; len(src.Jobs) == 1 && cap(jobs) > 0 { // most GPUs hold a job or none: no copy call
		dst.Jobs = append(jobs[:0], src.Jobs[0])
		return
	}
	dst.Jobs = append(dst.Jobs[:0], src.Jobs...)
}

// sameGPU reports whether the snapshot's copy a of a GPU equals b.
func sameGPU(a, b *policies.GPU) bool {
	return a.UsedMiB == b.UsedMiB && a.Index == b.Index && a.CapacityMiB == b.CapacityMiB && slices.Equal(a.Jobs, b.Jobs)
}

func (s *Snapshot) copyJob(dst, src *policies.Job) {
	on := dst.On
	*dst = *src
	if src.On == nil {
		dst.On = nil
		return
	}
	if cap(on) < len(src.On) { // a new array, from the arena
		if len(s.slab) < len(src.On) {
			s.slab = make([]int, max(1024, len(src.On)))
		}
		on, s.slab = s.slab[:0:len(src.On)], s.slab[len(src.On):]
	}
	dst.On = append(on[:0], src.On...)
}
