package traces

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// heliosTimeLayout is how Helios's cluster_log.csv writes times.
const heliosTimeLayout = "2006-01-02 15:04:05"

// ReadHelios reads a SenseTime Helios cluster_log.csv (Saturn, Venus, Earth
// or Uranus; Lucid's cluster_full_log.csv and Helios's Philly conversion too):
// columns job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,
// start_time,end_time,duration,queue. It needs gpu_num, submit_time and
// either duration or start_time and end_time; job_id (else jobname, else the
// row number), state, start_time and end_time are optional, other columns
// are ignored.
//
// submit_time is a time like "2020-04-01 00:00:07" (or a number of seconds);
// Submit is measured from the earliest kept job. The run time is duration
// (seconds), or end_time − start_time when duration is empty. gpu_num 0 (a
// CPU job) is kept with GPUs 0. A job whose start_time is empty (or
// None/NaN) never started, one with neither duration nor end_time has no end
// time; both are skipped and counted in Log.Skipped, as are empty submit
// times and negative run times. Malformed values are errors naming the file,
// line and column.
func ReadHelios(r io.Reader, name string) (*Log, error) {
	t, err := openCSV(r, 0, name, "empty log: want a Helios header (job_id,...,gpu_num,...,submit_time,...,duration)", "gpu_num", "submit_time")
	if err != nil {
		return nil, err
	}
	if !t.has("duration") && !(t.has("start_time") && t.has("end_time")) {
		return nil, fmt.Errorf("%s (or start_time and end_time)", t.lacks("duration"))
	}
	idCol := "job_id"
	if !t.has(idCol) {
		idCol = "jobname"
	}
	l := &Log{Name: name}
	var jobs []timedJob
	seen := map[string]int{}
	err = t.each(func(row csvRow) error {
		l.Records++
		g, err := row.gpus("gpu_num")
		if err != nil {
			return err
		}
		s, err := row.field("submit_time")
		if err != nil {
			return err
		}
		submit, ok, err := heliosTime(s)
		if err != nil {
			return row.errorf("submit_time", "%v", err)
		}
		if !ok {
			l.skip(SkipNoSubmitTime)
			return nil
		}
		var start, end time.Time
		var started, ended bool
		if v, ok := row.optional("start_time"); ok {
			if start, started, err = heliosTime(v); err != nil {
				return row.errorf("start_time", "%v", err)
			}
			if !started {
				l.skip(SkipNeverStarted)
				return nil
			}
		}
		if v, ok := row.optional("end_time"); ok {
			if end, ended, err = heliosTime(v); err != nil {
				return row.errorf("end_time", "%v", err)
			}
		}
		var dur time.Duration
		d, _ := row.optional("duration")
		switch {
		case !absent(d):
			v, ok := parseSeconds(d)
			if !ok {
				if f, err := strconv.ParseFloat(d, 64); err == nil && f < 0 {
					l.skip(SkipEndBeforeStart)
					return nil
				}
				return row.errorf("duration", "%q is not a number of seconds in [0, 1e9]", d)
			}
			dur = secondsToDuration(v)
		case started && ended:
			if end.Before(start) {
				l.skip(SkipEndBeforeStart)
				return nil
			}
			dur = end.Sub(start)
		default:
			l.skip(SkipNoEndTime)
			return nil
		}
		id, _ := row.optional(idCol)
		if id == "" {
			id = "line" + fmt.Sprint(row.line)
		}
		if prev, dup := seen[id]; dup {
			return row.errorf(idCol, "%q repeats line %d", id, prev)
		}
		seen[id] = row.line
		status, _ := row.optional("state")
		jobs = append(jobs, timedJob{submit: submit, job: LogJob{ID: id, Duration: dur, GPUs: g, Status: status}})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l.finish(jobs)
}

// absent reports whether a CSV value stands for a missing value.
func absent(v string) bool {
	switch v {
	case "", "None", "none", "null", "NaN", "nan", "NaT":
		return true
	}
	return false
}

// heliosTime parses a time like "2020-04-01 00:00:07" or a number of seconds
// (since any origin). It reports ok=false for an absent value.
func heliosTime(v string) (time.Time, bool, error) {
	if absent(v) {
		return time.Time{}, false, nil
	}
	if t, err := time.Parse(heliosTimeLayout, v); err == nil {
		return t, true, nil
	}
	if s, ok := parseSeconds(v); ok {
		return time.Unix(0, 0).UTC().Add(secondsToDuration(s)), true, nil
	}
	return time.Time{}, false, fmt.Errorf("%q is not a time like 2020-04-01 00:00:07 or a number of seconds", v)
}

// ReadHeliosFile reads a Helios cluster_log.csv file.
func ReadHeliosFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("helios log: %w", err)
	}
	defer f.Close()
	return ReadHelios(f, path)
}
