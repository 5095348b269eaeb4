// Package rundir is the layout of a results directory, its one home: the
// names of its files and of the metric columns its CSVs share, the
// provenance of an aegis simulate --out or aegis exec directory
// (simulate.json, exec.json) and the label of normalized.csv's geometric
// mean rows. Every writer and reader of such a directory (experiments,
// results, plots, compare, the command line) names them from here.
package rundir

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The files of a results directory.
const (
	RunFile      = "run.json"      // a spec run's provenance (experiments.Meta)
	CellFile     = "cell.json"     // a spec cell's key, written when it is complete
	SimulateFile = "simulate.json" // an aegis simulate --out directory's provenance (SimulateMeta)
	ExecFile     = "exec.json"     // an aegis exec run directory's provenance (ExecMeta)
	Cells        = "cells.csv"     // a spec run's summary per cell
	Jobs         = "jobs.csv"      // every job's outcome
	Normalized   = "normalized.csv"
	Summary      = "summary.csv"
	Deferrals    = "deferrals.csv"
	Events       = "events.jsonl"
	Telemetry    = "telemetry.csv"
	Stability    = "stability.csv"
	Thresholds   = "thresholds.csv" // a stacking spec's
)

// The metric columns of summary.csv, cells.csv and normalized.csv, in
// seconds.
const (
	MakespanS  = "makespan_s"
	MeanJCTS   = "mean_jct_s"
	P95JCTS    = "p95_jct_s"
	MeanQueueS = "mean_queue_s"
	P95QueueS  = "p95_queue_s"
	MeanExecS  = "mean_exec_s"
	P95ExecS   = "p95_exec_s"
)

// NormalizedTo is normalized.csv's last column: the label of the config
// each row is normalized to (the spec's normalize).
const NormalizedTo = "normalized_to"

// GeoMean is the trace label of normalized.csv's rows that hold the
// geometric mean over traces.
const GeoMean = "geomean"

// Tool is the program that made an output directory.
type Tool struct {
	Module    string `json:"module"`
	Version   string `json:"version"`
	GoVersion string `json:"go"`
	// Commit is the source commit (git describe --always --dirty, stamped
	// by make build; else the Go toolchain's VCS stamp); "" when unknown.
	// A spec run's run.json keeps the commit it names while reruns are of
	// the same build.
	Commit string `json:"commit"`
	// Build is the sha256 of the source the program that ran the cells was
	// built from (make build stamps it), else of its executable (part of
	// every cell's key).
	Build string `json:"build_sha256,omitempty"`
}

// Line describes the tool on a page.
func (t Tool) Line() string {
	return fmt.Sprintf("%s %s, commit `%s`, build sha256 `%s`", t.Module, t.Version, cmp.Or(t.Commit, "unknown"), cmp.Or(t.Build, "unknown"))
}

// TraceInfo identifies a trace by content.
type TraceInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Jobs   int    `json:"jobs"`
	SHA256 string `json:"sha256"` // of the trace in our CSV format
}

// ClusterType is one GPU type of a server or cluster, with its truth's
// provenance.
type ClusterType struct {
	Type         string  `json:"type"`
	GPUs         int     `json:"gpus"`
	MemoryMiB    float64 `json:"memory_mib"`
	Pressure     bool    `json:"pressure_telemetry"`
	Catalog      string  `json:"catalog_sha256"`
	Interference string  `json:"interference_sha256"` // of its own model (a config's model file replaces it)
}

// SimulateMeta is simulate.json: what made an aegis simulate --out
// directory. Like run.json it names data by content hash and relative
// path, never by absolute path or date.
type SimulateMeta struct {
	Tool   Tool      `json:"tool"`
	Trace  TraceInfo `json:"trace"`
	Server string    `json:"server"` // TYPE:COUNT, or the cluster
	// Types are the GPU types with their catalog's and interference
	// model's content hashes.
	Types  []ClusterType     `json:"gpu_types"`
	Policy string            `json:"policy"`
	Params map[string]string `json:"params"` // as given (--set); the rest at their defaults
	Truth  map[string]string `json:"truth"`  // as given (--truth); the rest at their defaults
	Seed   uint64            `json:"seed"`
}

// ExecMeta is exec.json: what made an aegis exec run directory. aegis exec
// writes it with the page at the end of the run and of every resume,
// while the run directory is still locked.
type ExecMeta struct {
	// Tool is the build that last ended the run (the first run's or a
	// resume's).
	Tool Tool `json:"tool"`
	// Trace is the trace the run started with; its SHA256 is empty for
	// a live queue (--trace -) or when the first executor did not end.
	Trace TraceInfo `json:"trace"`
	// GPUs says what the jobs ran on: emulated TYPE:COUNT, or this
	// machine's GPUs and the telemetry source.
	GPUs string `json:"gpus"`
	// Emulated is true when the GPUs were modelled (aegis fake-train).
	Emulated bool `json:"emulated"`
	// Types are the emulated GPUs' type with its models' content hashes.
	Types []ClusterType `json:"gpu_types,omitempty"`
	// Settings are the journaled command line (aegis exec --resume
	// continues with them).
	Settings map[string]string `json:"settings"`
	// Resumes counts the aegis exec --resume that ended the run again.
	Resumes int `json:"resumes"`
}

// ReadSimulate reads dir's simulate.json; an error wrapping
// fs.ErrNotExist when there is none.
func ReadSimulate(dir string) (*SimulateMeta, error) {
	m := new(SimulateMeta)
	if err := readJSON(filepath.Join(dir, SimulateFile), m); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadExec reads dir's exec.json; an error wrapping fs.ErrNotExist when
// there is none.
func ReadExec(dir string) (*ExecMeta, error) {
	m := new(ExecMeta)
	if err := readJSON(filepath.Join(dir, ExecFile), m); err != nil {
		return nil, err
	}
	return m, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
