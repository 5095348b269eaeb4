package experiments

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/aegis-sched/aegis/internal/buildinfo"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies/registry"
	"github.com/aegis-sched/aegis/traces"
)

// A cell's key is the sha256 of everything that determines the bytes of
// its outputs, each input by content: the trace, the server or cluster
// (every GPU type's memory, telemetry, catalog and interference model),
// the policy and its parameters (and an external policy's files, by
// content: registry.Inputs), the truth settings, the interference
// model the config runs, the seed, whether telemetry is written, and the
// build of the program. Labels, cell directory names and the rest of the
// spec file are not part of it: a finished cell is reused by any spec that
// asks for the same simulation, and by no other.

// keyInputs are the parts of the keys shared by a spec's cells, computed
// once per run.
type keyInputs struct {
	build  string   // the program (RunOptions.Build or the executable's hash)
	server string   // hash of the server's or cluster's content (serverContent)
	traces []string // hash of each trace (or stacking sequence) by index
}

// typeContent is what the simulator reads of a GPU type: its memory,
// whether it has pressure telemetry, and its catalog and interference
// model by content (a user type's files, or the built-in ones, which the
// build covers). File names are not part of it.
type typeContent struct {
	Name         string  `json:"type"`
	MemoryMiB    float64 `json:"memory_mib"`
	Pressure     bool    `json:"pressure_telemetry"`
	Catalog      string  `json:"catalog_sha256"`
	Interference string  `json:"interference_sha256"`
}

// serverContent is a server or cluster by content.
type serverContent struct {
	Cluster    bool          // a cluster (dispatcher and per-server policies) or one server
	Servers    []int         // GPUs per server
	ServerType []int         // each server's index into Types
	Types      []typeContent // the GPU types
}

// typeContentOf reads GPU type t's catalog and interference model.
func typeContentOf(t models.GPUType) (typeContent, error) {
	cat, err := models.CatalogFor(t)
	if err != nil {
		return typeContent{}, err
	}
	inter, err := models.InterferenceFor(t)
	if err != nil {
		return typeContent{}, err
	}
	ch, err := catalogHash(cat)
	if err != nil {
		return typeContent{}, fmt.Errorf("GPU type %s: %w", t.Name, err)
	}
	mh, err := modelHash(inter)
	if err != nil {
		return typeContent{}, fmt.Errorf("GPU type %s: %w", t.Name, err)
	}
	return typeContent{Name: t.Name, MemoryMiB: t.MemoryMiB, Pressure: t.Pressure, Catalog: ch, Interference: mh}, nil
}

// serverContentOf is the spec's server or cluster by content.
func (s *resolved) serverContentOf() (serverContent, error) { return contentOf(s.server, s.cluster) }

// contentOf is a server, or a cluster when c is not nil, by content.
func contentOf(srv models.Server, c *models.Cluster) (serverContent, error) {
	sc := serverContent{Servers: []int{srv.GPUs}, ServerType: []int{0}}
	types := []models.GPUType{srv.Type}
	if c != nil {
		sc = serverContent{Cluster: true, Servers: c.Servers, ServerType: c.ServerType}
		types = c.Types
	}
	for _, t := range types {
		tc, err := typeContentOf(t)
		if err != nil {
			return sc, err
		}
		sc.Types = append(sc.Types, tc)
	}
	return sc, nil
}

// keyInputs hashes the server and the traces as they are now (a test may
// have shortened a trace after LoadSpec); build "" means the running
// program's build (buildID).
func (p *Plan) keyInputs(build string) (*keyInputs, error) {
	if build == "" {
		build = buildID()
	}
	sc, err := p.serverContentOf()
	if err != nil {
		return nil, err
	}
	h, err := hashJSON(sc)
	if err != nil {
		return nil, err
	}
	k := &keyInputs{build: build, server: h}
	if k.traces, err = p.p.traceHashes(); err != nil {
		return nil, err
	}
	return k, nil
}

// traceHashes are the content hashes of a stacking spec's sequences, as
// loaded.
func (s *stackPlan) traceHashes() ([]string, error) { return s.hashes, nil }

// traceHashes are the content hashes of a trace spec's traces.
func (s *tracePlan) traceHashes() ([]string, error) {
	var hs []string
	for _, t := range s.trs {
		h, err := traceHash(t)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// cellKey is cell c's key (see keyInputs).
func (p *Plan) cellKey(k *keyInputs, c Cell) (string, error) { return p.p.key(k, c) }

// key is a stacking cell's key: its sequence, server, replay
// configuration, model and build.
func (s *stackPlan) key(k *keyInputs, c Cell) (string, error) {
	cfg, err := s.stackConfig(c.Point, c.Seed)
	if err != nil {
		return "", err
	}
	cfg.GPU = models.GPUType{} // in Server, by content
	mh, err := modelHash(cfg.Interference)
	if err != nil {
		return "", err
	}
	return hashJSON(struct {
		Sequence, Server string
		Config           any
		Model, Build     string
	}{k.traces[c.trace], k.server, cfg, mh, k.build})
}

// key is a trace cell's key: its trace, server (a swept one by content),
// models, policy and its inputs, parameters, truth, seed and build.
func (s *tracePlan) key(k *keyInputs, c Cell) (string, error) {
	r, err := s.runOf(c)
	if err != nil {
		return "", err
	}
	server := k.server
	if r.Cluster != s.cluster || r.Server != s.server {
		// A swept server or cluster, by content.
		sc, err := contentOf(r.Server, r.Cluster)
		if err != nil {
			return "", err
		}
		if server, err = hashJSON(sc); err != nil {
			return "", err
		}
	}
	mh, err := modelHash(r.Interference)
	if err != nil {
		return "", err
	}
	files, err := registry.Inputs(c.Policy, r.Params)
	if err != nil {
		return "", err
	}
	return hashJSON(struct {
		Trace, Server, Policy string
		Params                map[string]string
		// PolicyFiles: the content of an external policy's program
		// (registry.Inputs); absent for the built-in policies, whose
		// code the build covers, so their keys are as before.
		PolicyFiles string `json:",omitempty"`
		Truth       any
		Model       string
		Seed        uint64
		Telemetry   bool
		Build       string
		// Combine: a refit's telemetry combination (its u1 and δ); absent
		// otherwise, so other cells' keys are as before.
		Combine *models.TelemetryParams `json:",omitempty"`
	}{k.traces[c.trace], server, c.Policy, r.Params, files, r.Truth, mh, c.Seed, s.Telemetry, k.build, r.Combine})
}

// cellKeys sets the key of each cell.
func (p *Plan) cellKeys(k *keyInputs, cells []Cell) error {
	for i := range cells {
		key, err := p.cellKey(k, cells[i])
		if err != nil {
			return fmt.Errorf("cell %s: %w", cells[i].ID, err)
		}
		cells[i].Key = key
	}
	return nil
}

// traceHash is the sha256 of trace t in our CSV format.
func traceHash(t *traces.Trace) (string, error) {
	h := sha256.New() // streamed: a million-job trace is never held as CSV
	if err := traces.WriteCSV(h, t); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// catalogHash hashes a workload catalog's content: every workload, in id
// order.
func catalogHash(c *models.Catalog) (string, error) {
	ws := make([]*models.Workload, 0, c.Len())
	for _, id := range c.IDs() {
		w, _ := c.Get(id)
		ws = append(ws, w)
	}
	return hashJSON(ws)
}

// modelHash hashes an interference model's type and parameters ("" for
// none: each GPU type's own, which the server's content covers).
func modelHash(m models.Interference) (string, error) {
	if m == nil {
		return "", nil
	}
	return hashJSON(struct {
		Type  string
		Model models.Interference
	}{fmt.Sprintf("%T", m), m})
}

// hashJSON hashes v's JSON form.
func hashJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("key of %T: %w", v, err)
	}
	return hashBytes(b), nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// buildID identifies the running program's build for cells' keys: the
// sha256 of the source it was built from where make build stamped it (so a
// rebuild of the same source, say after a commit that changed only
// documents, reuses every cell), else the executable's (executableHash).
func buildID() string {
	if s := buildinfo.Read().Source; s != "" {
		return s
	}
	return executableHash()
}

// executableHash identifies the running program's file ("" when
// unreadable), once per process: the program that runs does not change
// while it runs.
var executableHash = sync.OnceValue(hashExecutable)

// hashExecutable is the sha256 of contentIDText and the content part of
// the executable's Go build ID (buildinfo.ContentID: the go command's hash
// of the file's bytes, read from a few kB of it), else the sha256 of the
// whole file (some 30 MB: 40 ms of CPU a command, which a go build or go
// run binary otherwise spent on every run).
func hashExecutable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	if id, ok := buildinfo.ContentID(p); ok {
		return hashBytes([]byte(contentIDText + id))
	}
	return hashFile(p)
}

// contentIDText prefixes a Go content ID where it is hashed, so that the
// hash is no file's sha256.
const contentIDText = "go build content ID "

// hashFile is the sha256 of file p ("" when unreadable).
func hashFile(p string) string {
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
