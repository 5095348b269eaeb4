package experiments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/plots"
)

// RunOptions control RunSpec.
type RunOptions struct {
	// Out is the output directory.
	Out string
	// Jobs is how many cells run at once; 0 means GOMAXPROCS. The outputs
	// do not depend on it.
	Jobs int
	// Force reruns cells whose outputs exist for the same spec.
	Force bool
	// Shard and Shards select a deterministic part of the cells: those
	// whose index modulo Shards is Shard (0-based). Shards 0 runs all.
	Shard, Shards int
	// Progress, when set, is called after each cell (done of total, the
	// cells skipped as already done included), from one goroutine at a
	// time.
	Progress func(done, total int)
}

// Report says what RunSpec did.
type Report struct {
	Cells   int // cells of this run (of the shard, when sharded)
	Ran     int // cells simulated
	Skipped int // cells whose outputs existed for the same spec
	Files   []string
}

// CellFile is the file in each cell's directory that records what made it;
// a cell directory without it is not a finished cell.
const CellFile = "cell.json"

// cellRecord is a cell's cell.json.
type cellRecord struct {
	Spec     string            `json:"spec"`
	SpecHash string            `json:"spec_hash"`
	Key      string            `json:"key"` // hash of everything that determines the cell's outputs
	Cell     Cell              `json:"cell"`
	Params   map[string]string `json:"params"`
	Truth    map[string]string `json:"truth"`
	Events   int               `json:"events"`
}

// RunSpec runs a spec's cells (or one shard of them) into opt.Out: each
// cell's simulate outputs under cells/ID/ (written to a temporary directory
// and renamed, so that an interrupted run leaves no half-written cell), then
// run.json and, for a whole run, the combined files (Combine). Cells whose
// outputs exist for the same spec hash and cell are skipped unless
// opt.Force. When ctx is cancelled the running cells finish, no new one
// starts and ctx's error is returned.
func RunSpec(ctx context.Context, s *Spec, opt RunOptions) (*Report, error) {
	if opt.Shards < 0 || opt.Shards > 0 && (opt.Shard < 0 || opt.Shard >= opt.Shards) {
		return nil, fmt.Errorf("shard %d/%d: want 0 <= I < N", opt.Shard, opt.Shards)
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	// Cells are reused only when this very program made them: a changed
	// simulator must not be answered with old outputs.
	s.tool = executableHash()
	cellsDir := filepath.Join(opt.Out, "cells")
	if err := os.MkdirAll(cellsDir, 0o755); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	meta, err := s.meta(opt)
	if err != nil {
		return nil, err
	}
	var todo []Cell
	rep := &Report{}
	for _, c := range meta.Cells {
		if opt.Shards > 0 && c.Index%opt.Shards != opt.Shard {
			continue
		}
		rep.Cells++
		if !opt.Force && s.cellDone(cellsDir, c) {
			rep.Skipped++
			continue
		}
		todo = append(todo, c)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		done  = rep.Skipped
	)
	if opt.Progress != nil {
		opt.Progress(done, rep.Cells)
	}
	next := make(chan Cell)
	var wg sync.WaitGroup
	for range min(jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				err := s.runCell(cellsDir, c)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("cell %s: %w", c.ID, err)
					cancel()
				}
				if err == nil {
					done++
					rep.Ran++
					if opt.Progress != nil {
						opt.Progress(done, rep.Cells)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, c := range todo {
		select {
		case next <- c:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return rep, first
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return rep, err
	}
	if err := writeFileAtomic(filepath.Join(opt.Out, RunFile), append(b, '\n')); err != nil {
		return rep, err
	}
	rep.Files = append(rep.Files, filepath.Join(opt.Out, RunFile))
	if opt.Shards > 0 {
		return rep, nil
	}
	files, err := Finish(opt.Out, meta)
	rep.Files = append(rep.Files, files...)
	return rep, err
}

// Finish writes a whole run's combined files (Combine) and draws the spec's
// figures into dir; it returns the paths written.
func Finish(dir string, m *Meta) ([]string, error) {
	files, err := Combine(dir, m)
	if err != nil {
		return files, err
	}
	format := m.Spec.Plots
	if format == "" {
		format = "svg"
	}
	if len(m.Spec.Figures) > 0 {
		figs, err := plots.DrawDir(dir, format, m.Spec.Figures...)
		if files = append(files, figs...); err != nil {
			return files, err
		}
	}
	figs, err := plots.DrawSweeps(dir, format, m.Spec.SweepFigures...)
	return append(files, figs...), err
}

// cellDone reports whether cell c's outputs exist for this spec.
func (s *Spec) cellDone(dir string, c Cell) bool {
	b, err := os.ReadFile(filepath.Join(dir, c.ID, CellFile))
	if err != nil {
		return false
	}
	var rec cellRecord
	if json.Unmarshal(b, &rec) != nil {
		return false
	}
	return rec.SpecHash == s.hash && rec.Key == s.cellKey(c)
}

// cellKey hashes everything that determines a cell's outputs.
func (s *Spec) cellKey(c Cell) string {
	if s.Stacking != nil {
		cfg, err := s.stackConfig(c.Point, c.Seed)
		if err != nil {
			return ""
		}
		b, _ := json.Marshal(struct {
			Sequence, Server string
			Config           any
			Model, Tool      string
		}{s.trHash[c.trace], s.server.String(), cfg, modelHash(cfg.Interference), s.tool})
		return hashBytes(b)
	}
	r, err := s.cellRun(c.config, c.Point)
	if err != nil {
		return ""
	}
	b, _ := json.Marshal(struct {
		Trace     string
		Server    string
		Policy    string
		Params    map[string]string
		Truth     any
		Model     string
		Seed      uint64
		Telemetry bool
		Tool      string
	}{s.trHash[c.trace], s.serverKey(), c.Policy, r.Params, r.Truth, modelHash(r.Interference), c.Seed, s.Telemetry, s.tool})
	return hashBytes(b)
}

// executableHash hashes the running program's file ("" when unreadable).
func executableHash() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// modelHash hashes an interference model's parameters.
func modelHash(m models.Interference) string {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Sprintf("%T", m)
	}
	return hashBytes(append([]byte(fmt.Sprintf("%T", m)), b...))
}

// runCell simulates cell c and writes its directory atomically.
func (s *Spec) runCell(dir string, c Cell) error {
	if s.Stacking != nil {
		files, err := s.runStackCell(c)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(cellRecord{Spec: s.Name, SpecHash: s.hash, Key: s.cellKey(c), Cell: c,
			Truth: s.truthSettings(c)}, "", "  ")
		if err != nil {
			return err
		}
		files[CellFile] = append(b, '\n')
		return writeDirAtomic(filepath.Join(dir, c.ID), files)
	}
	r, err := s.cellRun(c.config, c.Point)
	if err != nil {
		return err
	}
	r.Trace, r.Seed = s.trs[c.trace], c.Seed
	var events, tel bytes.Buffer
	if s.Telemetry {
		r.Telemetry = &tel
	}
	o, err := assemble.Simulate(r, &events)
	if err != nil {
		return err
	}
	files, err := o.Files(events.Bytes())
	if err != nil {
		return err
	}
	if s.Telemetry {
		files["telemetry.csv"] = tel.Bytes()
	}
	rec := cellRecord{Spec: s.Name, SpecHash: s.hash, Key: s.cellKey(c), Cell: c, Params: r.Params,
		Truth: s.truthSettings(c), Events: o.Events}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	files[CellFile] = append(b, '\n')
	return writeDirAtomic(filepath.Join(dir, c.ID), files)
}

// writeDirAtomic writes a cell's files into dir all or nothing
// (results.WriteDir: a temporary directory beside dir, renamed into place).
// An old dir is removed first, so that no file of an earlier run survives;
// until the rename a reader sees no cell.json there, that is no finished
// cell.
func writeDirAtomic(dir string, files map[string][]byte) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return results.WriteDir(dir, func(tmp string) error {
		for _, n := range sortedKeys(files) {
			if err := os.WriteFile(filepath.Join(tmp, n), files[n], 0o644); err != nil {
				return fmt.Errorf("output: %w", err)
			}
		}
		return nil
	})
}

// writeFileAtomic writes a file under a temporary name and renames it.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("output: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// RunFile is the provenance file of a spec's output directory.
const RunFile = "run.json"

// Meta is run.json: what made an output directory.
type Meta struct {
	Tool     Tool          `json:"tool"`
	Spec     *Spec         `json:"spec"`
	SpecFile string        `json:"spec_file"`
	SpecHash string        `json:"spec_hash"`
	SpecText string        `json:"spec_text"`
	Server   ServerInfo    `json:"server"`
	Traces   []TraceInfo   `json:"traces"`
	Models   []ModelInfo   `json:"models"`
	Seeds    []uint64      `json:"seeds"`
	Sweep    []string      `json:"sweep_params,omitempty"`
	Shard    string        `json:"shard,omitempty"` // "I/N" for a shard's directory
	Cells    []Cell        `json:"cells"`
	Configs  []CellSetting `json:"cell_settings"`
}

// Tool is the program that made an output directory.
type Tool struct {
	Module    string `json:"module"`
	Version   string `json:"version"`
	GoVersion string `json:"go"`
	Revision  string `json:"vcs_revision,omitempty"`
	Modified  string `json:"vcs_modified,omitempty"`
}

// ServerInfo is the simulated server.
type ServerInfo struct {
	Spec      string  `json:"spec"`
	Type      string  `json:"type"`
	GPUs      int     `json:"gpus"`
	MemoryMiB float64 `json:"memory_mib"`
	Pressure  bool    `json:"pressure_telemetry"`
	// Cluster describes a spec's cluster (Spec is then the cluster,
	// Type, MemoryMiB and Pressure its first GPU type's, GPUs all of
	// them).
	Cluster *ClusterInfo `json:"cluster,omitempty"`
}

// ClusterInfo is a simulated cluster.
type ClusterInfo struct {
	Servers int `json:"servers"`
	// Groups lists the servers in order, runs of equal servers as one.
	Groups []ClusterGroup `json:"groups"`
	// Types lists the GPU types with their truth's provenance.
	Types []ClusterType `json:"types"`
}

// ClusterGroup is a run of equal servers of a cluster.
type ClusterGroup struct {
	Type    string `json:"type"`
	GPUs    int    `json:"gpus_per_server"`
	Servers int    `json:"servers"`
}

// ClusterType is one GPU type of a cluster.
type ClusterType struct {
	Type         string  `json:"type"`
	GPUs         int     `json:"gpus"`
	MemoryMiB    float64 `json:"memory_mib"`
	Pressure     bool    `json:"pressure_telemetry"`
	Catalog      string  `json:"catalog_sha256"`
	Interference string  `json:"interference_sha256"` // of its own model (a config's model file replaces it)
}

// TraceInfo identifies a trace by content.
type TraceInfo struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Jobs   int    `json:"jobs"`
	SHA256 string `json:"sha256"` // of the trace in our CSV format
}

// ModelInfo identifies a config's models.
type ModelInfo struct {
	Config       string `json:"config"`
	File         string `json:"file,omitempty"`
	FileSHA256   string `json:"file_sha256,omitempty"`
	Interference string `json:"interference_sha256"` // of the model's parameters
	Catalog      string `json:"catalog_sha256"`      // of the workload catalog
}

// CellSetting is one cell's full settings.
type CellSetting struct {
	ID     string            `json:"id"`
	Params map[string]string `json:"params"`
	Truth  map[string]string `json:"truth,omitempty"`
}

// clusterInfo describes cluster c for run.json.
func clusterInfo(c models.Cluster) (*ClusterInfo, error) {
	ci := &ClusterInfo{Servers: len(c.Servers)}
	for i, n := range c.Servers {
		k := c.ServerType[i]
		if g := len(ci.Groups) - 1; g >= 0 && ci.Groups[g].GPUs == n && ci.Groups[g].Type == c.Types[k].Name {
			ci.Groups[g].Servers++
			continue
		}
		ci.Groups = append(ci.Groups, ClusterGroup{Type: c.Types[k].Name, GPUs: n, Servers: 1})
	}
	gpus := make([]int, len(c.Types))
	for i, n := range c.Servers {
		gpus[c.ServerType[i]] += n
	}
	for k, t := range c.Types {
		cat, err := models.CatalogFor(t)
		if err != nil {
			return nil, err
		}
		cb, err := json.Marshal(cat)
		if err != nil {
			return nil, err
		}
		inter, err := models.InterferenceFor(t)
		if err != nil {
			return nil, err
		}
		ci.Types = append(ci.Types, ClusterType{Type: t.Name, GPUs: gpus[k], MemoryMiB: t.MemoryMiB, Pressure: t.Pressure,
			Catalog: hashBytes(cb), Interference: modelHash(inter)})
	}
	return ci, nil
}

// ToolInfo reads the running program's module version and VCS stamp.
func ToolInfo() Tool {
	t := Tool{Module: "github.com/aegis-sched/aegis", Version: "(unknown)", GoVersion: runtime.Version()}
	bi, ok := readBuildInfo()
	if !ok {
		return t
	}
	t.Module, t.Version = bi.Main.Path, bi.Main.Version
	if t.Module == "" {
		t.Module = "github.com/aegis-sched/aegis"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			t.Revision = s.Value
		case "vcs.modified":
			t.Modified = s.Value
		}
	}
	return t
}

// meta builds run.json's content.
func (s *Spec) meta(opt RunOptions) (*Meta, error) {
	m := &Meta{Tool: ToolInfo(), Spec: s, SpecFile: filepath.ToSlash(s.file), SpecHash: s.hash, SpecText: string(s.raw),
		Seeds: s.Seeds, Sweep: s.SweepParams(), Cells: s.Cells()}
	m.Server = ServerInfo{Spec: s.Server, Type: s.server.Type.Name, GPUs: s.server.GPUs,
		MemoryMiB: s.server.Type.MemoryMiB, Pressure: s.server.Type.Pressure}
	if s.cluster != nil {
		ci, err := clusterInfo(*s.cluster)
		if err != nil {
			return nil, err
		}
		m.Server.Spec, m.Server.Cluster = s.Cluster, ci
	}
	if opt.Shards > 0 {
		m.Shard = strconv.Itoa(opt.Shard) + "/" + strconv.Itoa(opt.Shards)
	}
	if s.Stacking != nil {
		for i, q := range s.seqs {
			m.Traces = append(m.Traces, TraceInfo{Name: q.Name, Source: "stacking sequence from " + filepath.ToSlash(s.stackDir),
				Jobs: len(q.Jobs), SHA256: s.trHash[i]})
		}
		m.Models = append(m.Models, ModelInfo{Config: "stacking", Interference: modelHash(s.stackInter)})
		for _, c := range m.Cells {
			m.Configs = append(m.Configs, CellSetting{ID: c.ID, Truth: s.truthSettings(c)})
		}
		return m, nil
	}
	for i, t := range s.trs {
		src := s.Traces[i].Trace
		if src == "" {
			src = fmt.Sprintf("generated: like %s, %d jobs, seed %d, max %d GPUs", s.Traces[i].Like, s.Traces[i].Jobs, s.Traces[i].Seed, cmpOr(s.Traces[i].MaxGPUs, 2))
		}
		m.Traces = append(m.Traces, TraceInfo{Name: s.Traces[i].Name, Source: src, Jobs: len(t.Jobs), SHA256: s.trHash[i]})
	}
	cat, err := models.CatalogFor(s.server.Type)
	if err != nil {
		return nil, err
	}
	cb, err := json.Marshal(cat)
	if err != nil {
		return nil, err
	}
	for i, c := range s.Configs {
		mi := ModelInfo{Config: c.Label, File: c.Model, FileSHA256: s.models[i].hash, Catalog: hashBytes(cb)}
		r, err := s.cellRun(i, nil)
		if err != nil {
			return nil, err
		}
		mi.Interference = modelHash(r.Interference)
		if r.Interference == nil {
			mi.Interference = "per GPU type (server.cluster.types)"
		}
		m.Models = append(m.Models, mi)
	}
	for _, c := range m.Cells {
		r, err := s.cellRun(c.config, c.Point)
		if err != nil {
			return nil, err
		}
		m.Configs = append(m.Configs, CellSetting{ID: c.ID, Params: r.Params, Truth: s.truthSettings(c)})
	}
	return m, nil
}

// ReadMeta reads a directory's run.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no %s: not a spec run's output directory (or the run did not finish)", dir, RunFile)
		}
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}
	if m.Spec == nil || len(m.Cells) == 0 {
		return nil, fmt.Errorf("%s: no spec or no cells", filepath.Join(dir, RunFile))
	}
	return &m, nil
}

// Merge combines the cells of shard directories (RunSpec with Shards) into
// out and writes the combined files. The shards must come from the same
// spec (equal spec hashes) and together hold every cell exactly once.
func Merge(dirs []string, out string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no directories")
	}
	var base *Meta
	have := map[string]string{} // cell id -> directory
	for _, d := range dirs {
		m, err := ReadMeta(d)
		if err != nil {
			return nil, err
		}
		if base == nil {
			base = m
		} else if m.SpecHash != base.SpecHash {
			return nil, fmt.Errorf("merge: %s has spec hash %.12s, %s has %.12s: not shards of the same spec", d, m.SpecHash, dirs[0], base.SpecHash)
		}
		ents, err := os.ReadDir(filepath.Join(d, "cells"))
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for _, e := range ents {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if _, err := os.Stat(filepath.Join(d, "cells", e.Name(), CellFile)); err != nil {
				continue
			}
			if prev, dup := have[e.Name()]; dup {
				return nil, fmt.Errorf("merge: cell %s is in both %s and %s", e.Name(), prev, d)
			}
			have[e.Name()] = d
		}
	}
	var missing []string
	for _, c := range base.Cells {
		if _, ok := have[c.ID]; !ok {
			missing = append(missing, c.ID)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: %d of %d cells missing (first: %s); merge every shard", len(missing), len(base.Cells), missing[0])
	}
	if err := os.MkdirAll(filepath.Join(out, "cells"), 0o755); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	for _, c := range base.Cells {
		src := filepath.Join(have[c.ID], "cells", c.ID)
		dst := filepath.Join(out, "cells", c.ID)
		if filepath.Clean(src) == filepath.Clean(dst) {
			continue
		}
		files := map[string][]byte{}
		ents, err := os.ReadDir(src)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("merge: %w", err)
			}
			files[e.Name()] = b
		}
		if err := writeDirAtomic(dst, files); err != nil {
			return nil, err
		}
	}
	base.Shard = ""
	b, err := json.MarshalIndent(base, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(out, RunFile), append(b, '\n')); err != nil {
		return nil, err
	}
	files, err := Finish(out, base)
	return append([]string{filepath.Join(out, RunFile)}, files...), err
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
