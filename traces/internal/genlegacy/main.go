// Command genlegacy derives the built-in legacy traces
// (traces/data/legacy_{philly,saturn,venus}_60jobs.csv): the three 60-job
// traces the AEGIS paper replayed on its legacy 8 × 11 GB server (Table 6).
//
//   - legacy-saturn is Saturn's trace exactly as replayed
//     (../shared/traces/aegis-legacy/saturn_legacy_60jobs.csv): its
//     submit_time_s and the workload named by its spec file;
//   - legacy-philly and legacy-venus: their job lists were not published, but
//     the measured Exclusive runs recorded every submission
//     (../shared/calibration/aegis/legacy/exclusive_jobs_legacy.csv): the jobs
//     in submission order, each offset the previous one's plus the recorded
//     gap rounded to whole seconds (the trace's resolution; the replayer adds
//     under a second of jitter). On Saturn this rule gives its trace exactly.
//     Venus is the replayed "gapfix600" trace: one idle gap of about 5.9 h
//     shortened to 600 s.
//
// The source column says which: "trace" or "replay".
//
// Usage: go run ./traces/internal/genlegacy -shared ../shared -out traces/data
package main

import (
	"cmp"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/models"
)

func main() {
	shared := flag.String("shared", "../shared", "the shared data folder")
	out := flag.String("out", "traces/data", "folder of the derived traces")
	flag.Parse()
	if err := run(*shared, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genlegacy:", err)
		os.Exit(1)
	}
}

// job is one derived trace row.
type job struct {
	workload string
	offset   int64
}

// replayNames are the Exclusive runs' trace names of the derived traces.
var replayNames = map[string]string{"philly": "philly_legacy", "venus": "venus_gapfix600", "saturn": "saturn_legacy"}

func run(shared, out string) error {
	cat := models.Legacy11GB()
	f, err := os.Open(filepath.Join(shared, "calibration", "aegis", "legacy", "exclusive_jobs_legacy.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	all, err := models.ReadExclusiveJobs(f, f.Name(), cat)
	if err != nil {
		return err
	}
	for _, name := range []string{"philly", "saturn", "venus"} {
		js, src := replayed(all, replayNames[name]), "replay"
		if name == "saturn" {
			if js, err = readSaturn(filepath.Join(shared, "traces", "aegis-legacy", "saturn_legacy_60jobs.csv")); err != nil {
				return err
			}
			src = "trace"
		}
		if len(js) == 0 {
			return fmt.Errorf("no jobs of trace %s", replayNames[name])
		}
		if err := write(filepath.Join(out, "legacy_"+name+"_60jobs.csv"), js, src); err != nil {
			return err
		}
	}
	return nil
}

// replayed is the job list of trace as its Exclusive run submitted it: in
// submission order, offsets accumulating the recorded gaps rounded to
// whole seconds.
func replayed(all []models.ExclusiveJob, trace string) []job {
	var js []models.ExclusiveJob
	for _, j := range all {
		if j.Trace == trace {
			js = append(js, j)
		}
	}
	slices.SortStableFunc(js, func(a, b models.ExclusiveJob) int { return cmp.Compare(a.Submit, b.Submit) })
	out := make([]job, len(js))
	for i, j := range js {
		out[i].workload = j.Workload
		if i > 0 {
			out[i].offset = out[i-1].offset + int64(math.Round(j.Submit-js[i-1].Submit))
		}
	}
	return out
}

// readSaturn reads Saturn's replayed trace: submit_time_s and task_path.
func readSaturn(p string) ([]job, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil || !slices.Equal(head, []string{"submit_time_s", "task_path"}) {
		return nil, fmt.Errorf("%s: want the header submit_time_s,task_path", p)
	}
	var out []job
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		s, err := strconv.ParseFloat(rec[0], 64)
		if err != nil || s != math.Trunc(s) || s < 0 {
			return nil, fmt.Errorf("%s: submit_time_s %q is not a whole number of seconds", p, rec[0])
		}
		out = append(out, job{workload: strings.TrimSuffix(path.Base(rec[1]), ".yaml"), offset: int64(s)})
	}
}

func write(p string, js []job, src string) error {
	var b strings.Builder
	b.WriteString("index,workload_id,num_gpus,submit_offset_s,source\n")
	for i, j := range js {
		fmt.Fprintf(&b, "%d,%s,1,%d,%s\n", i, j.workload, j.offset, src)
	}
	return os.WriteFile(p, []byte(b.String()), 0o644)
}
