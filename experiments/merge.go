package experiments

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/aegis-sched/aegis/results"
	"github.com/aegis-sched/aegis/results/rundir"
)

// Merge combines the cells of shard directories (RunPlan with Shards) into
// out and writes the combined files. The shards must come from the same
// spec (equal spec hashes) and the same build with the same inputs (equal
// cell keys, in run.json and in every cell's cell.json), and together hold
// every cell exactly once. out is written all or nothing: it is built
// beside out and replaces it whole only when everything is written, so a
// refused or failed merge leaves out as it was.
func Merge(dirs []string, out string) ([]string, error) {
	base, from, err := mergeSources(dirs)
	if err != nil {
		return nil, err
	}
	d, err := results.NewOutDir(out, runOwns)
	if err != nil {
		return nil, err
	}
	defer d.Discard()
	tmp := d.Path()
	for _, c := range base.Cells {
		if err := copyDir(filepath.Join(from[c.ID], "cells", c.ID), filepath.Join(tmp, "cells", c.ID)); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
	}
	base.Shard = ""
	b, err := json.MarshalIndent(base, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, rundir.RunFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	files, err := Finish(tmp, base)
	if err != nil {
		return nil, shardError(err, tmp, out, base, from)
	}
	if err := d.Commit(); err != nil {
		return nil, err
	}
	paths := []string{filepath.Join(out, rundir.RunFile)}
	for _, f := range files {
		paths = append(paths, filepath.Join(out, strings.TrimPrefix(f, tmp+string(filepath.Separator))))
	}
	return paths, nil
}

// shardError is err, from the merge's files built in tmp, naming the
// files the user has: a cell's file by its shard's path (the copy in tmp
// is gone when the merge fails), anything else by out's.
func shardError(err error, tmp, out string, base *Meta, from map[string]string) error {
	msg := err.Error()
	for _, c := range base.Cells {
		cp := filepath.Join(tmp, "cells", c.ID) + string(filepath.Separator)
		if strings.Contains(msg, cp) {
			msg = strings.ReplaceAll(msg, cp, filepath.Join(from[c.ID], "cells", c.ID)+string(filepath.Separator))
			msg += "; rerun that shard"
		}
	}
	msg = strings.ReplaceAll(msg, tmp, out)
	if msg == err.Error() {
		return err
	}
	return &renamedError{msg: "merge: " + msg, err: err}
}

// renamedError is an error whose message names other paths than the
// error it wraps.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// mergeSources reads the shards' run.json, checks that they are one run's
// (sameRun) and finds each cell's shard, checking its cell.json.
func mergeSources(dirs []string) (*Meta, map[string]string, error) {
	if len(dirs) == 0 {
		return nil, nil, errors.New("merge: no directories")
	}
	metas := make([]*Meta, len(dirs))
	for i, d := range dirs {
		m, err := ReadMeta(d)
		if err != nil {
			return nil, nil, err
		}
		if i > 0 {
			if err := sameRun(metas[0], m, dirs[0], d); err != nil {
				return nil, nil, err
			}
		}
		metas[i] = m
	}
	base := metas[0]
	from := map[string]string{} // cell id -> shard directory
	var missing []string
	for _, c := range base.Cells {
		for _, d := range dirs {
			p := filepath.Join(d, "cells", c.ID, rundir.CellFile)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if prev, dup := from[c.ID]; dup {
				return nil, nil, fmt.Errorf("merge: cell %s is in both %s and %s", c.ID, prev, d)
			}
			if err := checkCellFile(p, c.Key); err != nil {
				return nil, nil, fmt.Errorf("merge: %w; rerun that shard", err)
			}
			from[c.ID] = d
		}
		if _, ok := from[c.ID]; !ok {
			missing = append(missing, c.ID)
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("merge: %d of %d cells missing (first: %s); merge every shard", len(missing), len(base.Cells), missing[0])
	}
	return base, from, nil
}

// sameRun reports why shard m (in dir) is not of the same run as base (in
// baseDir): another spec, another build, or other inputs.
func sameRun(base, m *Meta, baseDir, dir string) error {
	if m.SpecHash != base.SpecHash {
		return fmt.Errorf("merge: %s has spec hash %.12s, %s has %.12s: not shards of the same spec", dir, m.SpecHash, baseDir, base.SpecHash)
	}
	if m.Tool.Build != base.Tool.Build {
		return fmt.Errorf("merge: %s was run by build %.12s (commit %s), %s by build %.12s (commit %s): not shards of the same build; rerun them with one aegis",
			dir, m.Tool.Build, cmp.Or(m.Tool.Commit, "unknown"), baseDir, base.Tool.Build, cmp.Or(base.Tool.Commit, "unknown"))
	}
	if len(m.Cells) != len(base.Cells) {
		return fmt.Errorf("merge: %s has %d cells, %s has %d: not shards of the same run", dir, len(m.Cells), baseDir, len(base.Cells))
	}
	for i, c := range m.Cells {
		if b := base.Cells[i]; c.ID != b.ID || c.Key != b.Key {
			return fmt.Errorf("merge: cell %s has key %.12s in %s, cell %s has %.12s in %s: the shards ran with other inputs (a trace, GPU type, catalog or model file changed between them); rerun them",
				c.ID, c.Key, dir, b.ID, b.Key, baseDir)
		}
	}
	return nil
}

// checkCellFile checks that the cell.json at p is whole and has key.
func checkCellFile(p, key string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var rec cellRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("%s: damaged: %w", p, err)
	}
	if rec.Key != key {
		return fmt.Errorf("%s: key %.12s, but the shard's run.json says %.12s: the cell was made by another build or with other inputs", p, rec.Key, key)
	}
	return nil
}

// runOwns reports whether an entry of an existing merge output is one a
// merge writes: the cells, run.json, combined files and figures.
func runOwns(name string) bool {
	if name == "cells" || name == rundir.RunFile {
		return true
	}
	switch filepath.Ext(name) {
	case ".csv", ".md", ".tex", ".svg", ".png", ".pdf":
		return true
	}
	return false
}

// copyDir copies the files of directory src into a new directory dst.
func copyDir(src, dst string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
