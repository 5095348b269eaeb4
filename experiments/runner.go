package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aegis-sched/aegis/experiments/assemble"
	"github.com/aegis-sched/aegis/internal/atomicfile"
	"github.com/aegis-sched/aegis/internal/buildinfo"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/page"
	"github.com/aegis-sched/aegis/results/plots"
	"github.com/aegis-sched/aegis/results/rundir"
)

// RunOptions control RunPlan.
type RunOptions struct {
	// Out is the output directory.
	Out string
	// Jobs is how many cells run at once; 0 means GOMAXPROCS. The outputs
	// do not depend on it.
	Jobs int
	// Force reruns cells whose outputs exist with the same key.
	Force bool
	// Build identifies the program in cells' keys; empty means the
	// running executable's sha256 (a test sets its own to see a new build
	// rerun cells).
	Build string
	// Shard and Shards select a deterministic part of the cells: those
	// whose index modulo Shards is Shard (0-based). Shards 0 runs all.
	Shard, Shards int
	// Progress, when set, is called after each cell (done of total, the
	// cells skipped as already done included), from one goroutine at a
	// time.
	Progress func(done, total int)
}

// Report says what RunPlan did.
type Report struct {
	Cells   int // cells of this run (of the shard, when sharded)
	Ran     int // cells simulated
	Skipped int // cells whose outputs existed with the same key
	Files   []string
}

// cellRecord is a cell's cell.json.
type cellRecord struct {
	Spec   string            `json:"spec"` // the spec that ran it
	Key    string            `json:"key"`  // hash of everything that determines the cell's outputs
	Cell   Cell              `json:"cell"`
	Params map[string]string `json:"params"`
	Truth  map[string]string `json:"truth"`
	Events int               `json:"events"`
}

// RunPlan runs a compiled spec's cells (or one shard of them) into opt.Out: each
// cell's simulate outputs under cells/ID/ (written to a temporary directory
// and renamed, so that an interrupted run leaves no half-written cell), then
// run.json and, for a whole run, the combined files (Combine). Cells whose
// outputs exist with the same key (see keyInputs: the content of everything
// that determines them, the build included) are skipped unless opt.Force. When ctx is cancelled no new cell
// starts, the running ones stop at their next step (leaving no directory)
// and an error wrapping ctx's is returned.
func RunPlan(ctx context.Context, p *Plan, opt RunOptions) (*Report, error) {
	if opt.Shards < 0 || opt.Shards > 0 && (opt.Shard < 0 || opt.Shard >= opt.Shards) {
		return nil, fmt.Errorf("shard %d/%d: want 0 <= I < N", opt.Shard, opt.Shards)
	}
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	cellsDir := filepath.Join(opt.Out, "cells")
	if err := os.MkdirAll(cellsDir, 0o755); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	keys, err := p.keyInputs(opt.Build)
	if err != nil {
		return nil, err
	}
	meta, err := p.meta(opt, keys)
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
		if !opt.Force && cellDone(cellsDir, c) {
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
				err := p.runCell(ctx, cellsDir, c)
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
	if err := writeRunFile(opt.Out, meta); err != nil {
		return rep, err
	}
	rep.Files = append(rep.Files, filepath.Join(opt.Out, rundir.RunFile))
	if opt.Shards > 0 {
		err := page.Write(opt.Out, meta.Page())
		rep.Files = append(rep.Files, filepath.Join(opt.Out, page.Name))
		return rep, err
	}
	files, err := Finish(opt.Out, meta)
	rep.Files = append(rep.Files, files...)
	return rep, err
}

// Finish writes a whole run's combined files (Combine), draws the spec's
// figures into dir and then its page (README.md, Meta.Page); it returns
// the paths written.
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
	if files = append(files, figs...); err != nil {
		return files, err
	}
	return append(files, filepath.Join(dir, page.Name)), page.Write(dir, m.Page())
}

// cellDone reports whether cell c's outputs exist with its key.
func cellDone(dir string, c Cell) bool {
	b, err := os.ReadFile(filepath.Join(dir, c.ID, rundir.CellFile))
	if err != nil {
		return false
	}
	var rec cellRecord
	if json.Unmarshal(b, &rec) != nil {
		return false
	}
	return c.Key != "" && rec.Key == c.Key
}

// runCell runs cell c and writes its directory atomically, its record
// (cell.json) last.
func (p *Plan) runCell(ctx context.Context, dir string, c Cell) error {
	files, rec, err := p.p.run(ctx, c)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	files[rundir.CellFile] = append(b, '\n')
	return writeDirAtomic(filepath.Join(dir, c.ID), files)
}

// run replays a stacking cell.
func (s *stackPlan) run(_ context.Context, c Cell) (map[string][]byte, cellRecord, error) {
	files, err := s.runStackCell(c)
	return files, cellRecord{Spec: s.Name, Key: c.Key, Cell: c, Truth: s.truthSettings(c)}, err
}

// run simulates a trace cell.
func (s *tracePlan) run(ctx context.Context, c Cell) (map[string][]byte, cellRecord, error) {
	r, err := s.runOf(c)
	if err != nil {
		return nil, cellRecord{}, err
	}
	r.Trace, r.Seed = s.trs[c.trace], c.Seed
	var events, tel bytes.Buffer
	if s.Telemetry {
		r.Telemetry = &tel
	}
	o, err := assemble.Simulate(ctx, r, &events)
	if err != nil {
		return nil, cellRecord{}, err
	}
	files, err := o.Files(events.Bytes())
	if err != nil {
		return nil, cellRecord{}, err
	}
	if s.Telemetry {
		files[rundir.Telemetry] = tel.Bytes()
	}
	return files, cellRecord{Spec: s.Name, Key: c.Key, Cell: c, Params: r.Params,
		Truth: s.truthSettings(c), Events: o.Events}, nil
}

// writeDirAtomic writes a cell's files into dir all or nothing
// (results.WriteDir: a temporary directory beside dir that replaces it
// whole, so that no file of an earlier run survives); until then a reader
// sees the old cell or none.
func writeDirAtomic(dir string, files map[string][]byte) error {
	return results.WriteDir(dir, func(string) bool { return true }, func(tmp string) error {
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
	if err := atomicfile.WriteFile(path, b, atomicfile.Options{}); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// writeRunFile writes dir's run.json, naming the commit keptCommit says.
func writeRunFile(dir string, meta *Meta) error {
	meta.Tool.Commit = keptCommit(dir, meta.Tool)
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, rundir.RunFile), append(b, '\n'))
}

// keptCommit is the commit run.json names for a run made by tool: the one
// the directory's run.json already names when that build was the same
// (its source, the build sha256, is then that commit's), so that rerunning
// committed results at a later commit of the same source (a commit of
// documents, tests or results) leaves them byte-identical; tool's own when
// the build differs, there is no run.json to read, or the one recorded is
// of a modified checkout ("-dirty") and tool's is not.
func keptCommit(dir string, tool rundir.Tool) string {
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunFile))
	if err != nil {
		return tool.Commit
	}
	var old struct {
		Tool rundir.Tool `json:"tool"`
	}
	if json.Unmarshal(b, &old) != nil || old.Tool.Build == "" || old.Tool.Build != tool.Build || old.Tool.Commit == "" {
		return tool.Commit
	}
	if dirty := func(c string) bool { return strings.HasSuffix(c, "-dirty") }; dirty(old.Tool.Commit) && !dirty(tool.Commit) {
		return tool.Commit
	}
	return old.Tool.Commit
}

// Meta is run.json: what made an output directory.
type Meta struct {
	Tool     rundir.Tool        `json:"tool"`
	Spec     *Spec              `json:"spec"`
	SpecFile string             `json:"spec_file"`
	SpecHash string             `json:"spec_hash"`
	SpecText string             `json:"spec_text"`
	Server   ServerInfo         `json:"server"`
	Traces   []rundir.TraceInfo `json:"traces"`
	Models   []ModelInfo        `json:"models"`
	Seeds    []uint64           `json:"seeds"`
	Sweep    []string           `json:"sweep_params,omitempty"`
	Shard    string             `json:"shard,omitempty"` // "I/N" for a shard's directory
	Cells    []Cell             `json:"cells"`
	Configs  []CellSetting      `json:"cell_settings"`
	// Refits identifies ModelUncertainty's refit models.
	Refits *RefitInfo `json:"model_refits,omitempty"`
}

// RefitInfo identifies the refit models a spec's model_uncertainty runs.
type RefitInfo struct {
	Source string `json:"source"` // the embedded refit set (models.RefitsFor)
	// FileSHA256 is the content hash of the Source file (absent in
	// run.json files written before it was recorded).
	FileSHA256 string   `json:"file_sha256,omitempty"`
	Seed       uint64   `json:"seed"` // its resampling seed
	Models     []string `json:"interference_sha256"`
	// SteadySaturation are the refits' steady saturations u1 (absent
	// when the set refits the speed model only).
	SteadySaturation []float64 `json:"steady_saturation,omitempty"`
	// DepthOverlap are the refits' depth terms δ (absent when the set
	// does not refit δ).
	DepthOverlap []float64 `json:"depth_overlap,omitempty"`
}

// ServerInfo is the simulated server.
type ServerInfo struct {
	Spec      string  `json:"spec"`
	Type      string  `json:"type"`
	GPUs      int     `json:"gpus"`
	MemoryMiB float64 `json:"memory_mib"`
	Pressure  bool    `json:"pressure_telemetry"`
	// Catalog and Interference hash the (first) GPU type's workload
	// catalog and interference model by content.
	Catalog      string `json:"catalog_sha256"`
	Interference string `json:"interference_sha256"`
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
	Types []rundir.ClusterType `json:"types"`
}

// ClusterGroup is a run of equal servers of a cluster.
type ClusterGroup struct {
	Type    string `json:"type"`
	GPUs    int    `json:"gpus_per_server"`
	Servers int    `json:"servers"`
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

// clusterInfo describes the spec's cluster for run.json (sc: its content).
func (s *resolved) clusterInfo(sc serverContent) *ClusterInfo {
	c := s.cluster
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
	for k, t := range sc.Types {
		ci.Types = append(ci.Types, rundir.ClusterType{Type: t.Name, GPUs: gpus[k], MemoryMiB: t.MemoryMiB, Pressure: t.Pressure,
			Catalog: t.Catalog, Interference: t.Interference})
	}
	return ci
}

// ToolInfo names the running program (internal/buildinfo): its module,
// version, Go version and commit.
func ToolInfo() rundir.Tool {
	in := buildinfo.Read()
	return rundir.Tool{Module: in.Module, Version: in.Version, GoVersion: in.GoVersion, Commit: in.Commit}
}

// meta builds run.json's content; its cells carry their keys.
func (p *Plan) meta(opt RunOptions, keys *keyInputs) (*Meta, error) {
	m := &Meta{Tool: ToolInfo(), Spec: p.Spec, SpecFile: dataName(p.file), SpecHash: p.hash, SpecText: string(p.raw),
		Seeds: p.Seeds, Sweep: p.SweepParams(), Cells: p.Cells()}
	m.Tool.Build = keys.build
	if err := p.cellKeys(keys, m.Cells); err != nil {
		return nil, err
	}
	sc, err := p.serverContentOf()
	if err != nil {
		return nil, err
	}
	t0 := sc.Types[0]
	m.Server = ServerInfo{Spec: p.Server, Type: t0.Name, GPUs: p.server.GPUs, MemoryMiB: t0.MemoryMiB, Pressure: t0.Pressure,
		Catalog: t0.Catalog, Interference: t0.Interference}
	if p.cluster != nil {
		m.Server.Spec, m.Server.Cluster = p.Cluster, p.clusterInfo(sc)
	}
	if opt.Shards > 0 {
		m.Shard = strconv.Itoa(opt.Shard) + "/" + strconv.Itoa(opt.Shards)
	}
	if err := p.p.describe(m, keys, t0.Catalog); err != nil {
		return nil, err
	}
	return m, nil
}

// describe adds a stacking run's sequences, model and cells' settings to
// run.json's m (catalog: the GPU type's catalog hash).
func (s *stackPlan) describe(m *Meta, keys *keyInputs, catalog string) error {
	for i, q := range s.seqs {
		m.Traces = append(m.Traces, rundir.TraceInfo{Name: q.Name, Source: "stacking sequence from " + dataName(s.dir),
			Jobs: len(q.Jobs), SHA256: keys.traces[i]})
	}
	mh, err := modelHash(s.inter)
	if err != nil {
		return err
	}
	m.Models = append(m.Models, ModelInfo{Config: "stacking", Interference: mh, Catalog: catalog})
	for _, c := range m.Cells {
		m.Configs = append(m.Configs, CellSetting{ID: c.ID, Truth: s.truthSettings(c)})
	}
	return nil
}

// describe adds a trace run's traces, refits, models and cells' settings
// to run.json's m (catalog: the first GPU type's catalog hash).
func (s *tracePlan) describe(m *Meta, keys *keyInputs, catalog string) error {
	for i, t := range s.trs {
		src := sourceName(s.Traces[i].Trace)
		if src == "" {
			src = fmt.Sprintf("generated: like %s, %d jobs, seed %d, max %d GPUs", s.Traces[i].Like, s.Traces[i].Jobs, s.Traces[i].Seed, cmpOr(s.Traces[i].MaxGPUs, 2))
		}
		m.Traces = append(m.Traces, rundir.TraceInfo{Name: s.Traces[i].Name, Source: src, Jobs: len(t.Jobs), SHA256: keys.traces[i]})
	}
	if len(s.refits) > 0 {
		set, _, err := models.RefitsFor(s.server.Type)
		if err != nil {
			return err
		}
		m.Refits = &RefitInfo{Source: s.refitFile, FileSHA256: models.RefitsFileSHA256(s.refitFile), Seed: set.Seed}
		for _, r := range s.refits {
			h, err := modelHash(r)
			if err != nil {
				return err
			}
			m.Refits.Models = append(m.Refits.Models, h)
		}
		m.Refits.SteadySaturation = s.refitSteady
		m.Refits.DepthOverlap = s.refitDepth
	}
	for i, c := range s.Configs {
		mi := ModelInfo{Config: c.Label, File: sourceName(c.Model), FileSHA256: s.models[i].hash, Catalog: catalog}
		r, err := s.cellRun(i, nil)
		if err != nil {
			return err
		}
		if mi.Interference, err = modelHash(r.Interference); err != nil {
			return err
		}
		if r.Interference == nil {
			mi.Interference = "per GPU type (server.cluster.types)"
		}
		m.Models = append(m.Models, mi)
	}
	for _, c := range m.Cells {
		r, err := s.runOf(c)
		if err != nil {
			return err
		}
		m.Configs = append(m.Configs, CellSetting{ID: c.ID, Params: r.Params, Truth: s.truthSettings(c)})
	}
	return nil
}

// ReadMeta reads a directory's run.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no %s: not a spec run's output directory (or the run did not finish)", dir, rundir.RunFile)
		}
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, rundir.RunFile), err)
	}
	if m.Spec == nil || len(m.Cells) == 0 {
		return nil, fmt.Errorf("%s: no spec or no cells", filepath.Join(dir, rundir.RunFile))
	}
	return &m, nil
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
