package traces

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aegis-sched/aegis/internal/csvhead"
	"github.com/aegis-sched/aegis/internal/suggest"
	"github.com/aegis-sched/aegis/models"
)

// GenerateMixed draws n jobs from a catalog: workloads uniformly at random
// among the 1-GPU workloads, except that each job needs two GPUs with
// probability p2 (then drawn among 2-GPU workloads), with exponential
// inter-arrival times of the given mean. The first job arrives at 0. The same
// seed gives the same trace.
func GenerateMixed(cat *models.Catalog, n int, meanGap time.Duration, p2 float64, seed uint64) (*Trace, error) {
	var one, two []string
	for _, id := range cat.IDs() {
		w, _ := cat.Get(id)
		switch w.GPUs {
		case 1:
			one = append(one, id)
		case 2:
			two = append(two, id)
		}
	}
	if len(one) == 0 || (p2 > 0 && len(two) == 0) {
		return nil, fmt.Errorf("generate: catalog lacks 1-GPU or 2-GPU workloads")
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	t := &Trace{Name: fmt.Sprintf("mixed-%d-seed%d", n, seed)}
	var at time.Duration
	for i := range n {
		if i > 0 {
			gap := rng.ExpFloat64() * meanGap.Seconds()
			at += time.Duration(math.Round(gap)) * time.Second
		}
		pool, g := one, 1
		if rng.Float64() < p2 {
			pool, g = two, 2
		}
		t.Jobs = append(t.Jobs, Job{ID: strconv.Itoa(i), Submit: at, Workload: pool[rng.IntN(len(pool))], GPUs: g})
	}
	return t, nil
}

// Demo parameters: 60 jobs, a job every 120 s on average, 5 % needing two
// GPUs, seed 1. traces/data/demo.csv is GenerateMixed's output for these
// (a test regenerates it).
const (
	demoJobs = 60
	demoGap  = 120 * time.Second
	demoP2   = 0.05
	demoSeed = 1
)

//go:embed data/demo.csv
var demoCSV []byte

// The AEGIS paper's three 60-job one-server traces, copied unchanged from
// shared/traces/aegis-representative (see NOTICE for provenance: job order,
// workloads and GPU counts are exact, submit offsets other than the first and
// the last are estimates). Their columns are index, workload_id, num_gpus,
// submit_offset_s and submit_confidence; the job ids are the index (the rows
// are in index order with non-decreasing offsets, a test checks it).
var (
	//go:embed data/philly_60jobs.csv
	phillyCSV []byte
	//go:embed data/saturn_60jobs.csv
	saturnCSV []byte
	//go:embed data/venus_60jobs.csv
	venusCSV []byte
)

// The three 60-job traces the AEGIS paper replayed on its legacy 8 × 11 GB
// server (Table 6), derived by traces/internal/genlegacy (see NOTICE):
// Saturn's exactly as replayed; Philly's and Venus's as their measured
// Exclusive runs submitted them (submission gaps rounded to whole seconds;
// Venus with its 5.9-h idle gap shortened to 600 s, as replayed). Columns:
// index, workload_id (a legacy-11gb catalog workload), num_gpus,
// submit_offset_s and source (trace or replay).
var (
	//go:embed data/legacy_philly_60jobs.csv
	legacyPhillyCSV []byte
	//go:embed data/legacy_saturn_60jobs.csv
	legacySaturnCSV []byte
	//go:embed data/legacy_venus_60jobs.csv
	legacyVenusCSV []byte
)

// builtins maps built-in trace names to their embedded CSV.
func builtins() map[string][]byte {
	return map[string][]byte{"demo": demoCSV, "philly": phillyCSV, "saturn": saturnCSV, "venus": venusCSV,
		"legacy-philly": legacyPhillyCSV, "legacy-saturn": legacySaturnCSV, "legacy-venus": legacyVenusCSV}
}

// Load returns a built-in trace by name (see BuiltinNames), or reads a trace
// file from path: JSON Lines when the name ends in .jsonl or the file starts
// with '{', else our CSV format. A production log or a CSV log without
// workloads is refused with the command that makes a trace of it.
func Load(nameOrPath string) (*Trace, error) {
	if b, ok := builtins()[nameOrPath]; ok {
		t, err := ReadCSV(bytes.NewReader(b), nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("built-in trace: %w", err)
		}
		t.Name = nameOrPath
		return t, nil
	}
	if _, err := os.Stat(nameOrPath); err != nil {
		return nil, fmt.Errorf("trace %q%s is neither a built-in (%s) nor a readable file: %w", nameOrPath,
			suggest.DidYouMean(nameOrPath, BuiltinList()), BuiltinNames(), err)
	}
	f, err := os.Open(nameOrPath)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	if t, ok, err := loadMapped(f, nameOrPath); ok {
		return t, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	peek, err := br.Peek(1 << 16)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if err := notATrace(nameOrPath, peek); err != nil {
		return nil, err
	}
	r := limitLines(br)
	if detectFormat(nameOrPath, peek) == FormatJSONL {
		return ReadJSONL(r, nameOrPath)
	}
	rows, size := rowsIn(f, peek)
	return readCSV(r, nameOrPath, rows, size)
}

// rowsIn estimates the rows of file f from its size and the lines of its
// start, peek, and returns its size: room for them is made once instead of
// regrown row by row. Each is 0 when unknown; rows at most a few million,
// size at most 1 GiB.
func rowsIn(f *os.File, peek []byte) (rows, size int) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, 0
	}
	return estimateRows(st.Size(), peek), int(min(st.Size(), 1<<30))
}

// estimateRows estimates the rows of a file of size bytes from the lines
// of its start, peek (rowsIn).
func estimateRows(size int64, peek []byte) int {
	lines := bytes.Count(peek, []byte{'\n'})
	if lines < 2 {
		return 0
	}
	est := size * int64(lines) / int64(len(peek))
	return int(min(est+est/10+16, 1<<22))
}

// notATrace recognizes the production logs and the workload-less CSV logs
// that people give where a trace is wanted (from the start of the file, b),
// and says what turns them into one.
func notATrace(path string, b []byte) error {
	switch detectFormat(path, b) {
	case FormatPhilly:
		return fmt.Errorf("%s is a Philly cluster_job_log, not a trace: cut a trace from it with aegis trace select --format philly --input %s", path, path)
	case FormatHelios:
		return fmt.Errorf("%s is a Helios cluster log, not a trace: cut a trace from it with aegis trace select --format helios --input %s", path, path)
	case FormatCSV:
		head, _ := csvhead.Index(strings.Split(firstLine(b), ",")) // which advice only
		_, dur := head["duration_s"]
		_, wl := head["workload_id"]
		if dur && !wl {
			return fmt.Errorf("%s is a job log without workloads (duration_s, no workload_id), not a trace: map it onto the catalog with aegis trace map --input %s", path, path)
		}
	}
	return nil
}

// BuiltinNames lists the built-in traces, comma-separated.
func BuiltinNames() string { return strings.Join(BuiltinList(), ", ") }

// BuiltinList lists the built-in traces' names.
func BuiltinList() []string {
	var names []string
	for _, n := range []string{"demo", "philly", "saturn", "venus", "legacy-philly", "legacy-saturn", "legacy-venus"} {
		if _, ok := builtins()[n]; ok {
			names = append(names, n)
		}
	}
	return names
}
