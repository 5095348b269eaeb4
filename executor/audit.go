package executor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Audit checks what --resume guarantees of a run directory whose run is
// over: every job ends exactly once in the journal (finished or stopped),
// a finished job has exactly one attempt whose status file says it exited
// 0, and no started attempt has a live process left. It returns the number
// of jobs and everything wrong, joined.
func Audit(dir string) (jobs int, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	recs, _, err := ReadJournal(bytes.NewReader(b), filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	ends := map[int]int{}
	finished := map[int]bool{}
	var errs []error
	for _, r := range recs {
		switch r.Type {
		case "job":
			jobs++
		case "finished", "stopped":
			ends[r.Job]++
			finished[r.Job] = finished[r.Job] || r.Type == "finished"
		case "started":
			if r.PID > 1 && len(groupMembers(r.PID)) > 0 {
				errs = append(errs, fmt.Errorf("job %d attempt %d: process group %d still has processes", r.Job, r.Attempt, r.PID))
			}
		}
	}
	for id := range jobs {
		if ends[id] != 1 {
			errs = append(errs, fmt.Errorf("job %d ends %d times", id, ends[id]))
		}
		if ok := succeeded(dir, id); finished[id] && ok != 1 {
			errs = append(errs, fmt.Errorf("job %d: %d attempts exited 0", id, ok))
		}
	}
	return jobs, errors.Join(errs...)
}

// succeeded counts the attempts of job id whose status says they exited 0.
func succeeded(dir string, id int) int {
	ok := 0
	for n := 1; ; n++ {
		base := fmt.Sprintf("job%d.%d", id, n)
		st, found, err := readStatus(filepath.Join(dir, "attempts", base+".exit"))
		if !found && err == nil {
			if _, err := os.Stat(filepath.Join(dir, "logs", base+".err")); err != nil {
				return ok // no such attempt: the last was n-1
			}
			continue // it started but recorded no status (killed)
		}
		if err == nil && st.Code == 0 {
			ok++
		}
	}
}
