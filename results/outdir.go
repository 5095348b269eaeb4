package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/aegis-sched/aegis/internal/atomicfile"
)

// OutDir is an output directory written all or nothing. A run writes its
// files under Path, a temporary directory created beside the target (same
// parent, so renames stay on one file system); Commit puts it in the
// target's place at the end, and Discard (or a failed Commit) removes
// everything the OutDir created, including parent directories it had to
// make. Until Commit the target is untouched, so a run that fails midway
// leaves nothing new behind.
//
// A rerun replaces the target as a whole: no file of an earlier run stays
// beside the new ones. So that a target pointed at a folder of other files
// never loses them, an existing target may hold only entries that owned
// reports as this kind of output's (NewOutDir and Commit refuse others).
// Typical use:
//
//	d, err := results.NewOutDir(out, owned)
//	if err != nil { return err }
//	defer d.Discard()
//	... write files under d.Path() ...
//	return d.Commit()
type OutDir struct {
	target, tmp string
	created     string // the topmost parent directory NewOutDir made, or ""
	owned       func(name string) bool
	done        bool
}

// NewOutDir prepares writing the directory target all or nothing: it creates
// the missing parents of target and a temporary directory beside it. An
// existing target that is not a directory, or that holds an entry owned
// does not claim (nil claims none), is an error.
func NewOutDir(target string, owned func(name string) bool) (*OutDir, error) {
	if target == "" {
		return nil, errors.New("output: empty directory name")
	}
	target = filepath.Clean(target)
	if owned == nil {
		owned = func(string) bool { return false }
	}
	if err := checkReplace(target, owned); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	parent := filepath.Dir(target)
	created, err := mkdirAllReport(parent)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	removeStale(parent, "."+filepath.Base(target)+".tmp-")
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".tmp-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		if created != "" {
			os.RemoveAll(created)
		}
		return nil, fmt.Errorf("output: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it private
		os.RemoveAll(tmp)
		if created != "" {
			os.RemoveAll(created)
		}
		return nil, fmt.Errorf("output: %w", err)
	}
	return &OutDir{target: target, tmp: tmp, created: created, owned: owned}, nil
}

// removeStale removes the temporary directories prefix+PID-N in parent
// whose process PID no longer runs: what a process killed while writing
// (a SIGKILL mid-cell) left; nothing else removes them. A directory of a
// running process, or without a PID in its name, is left alone.
func removeStale(parent, prefix string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		ps, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(ps)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// Path is the temporary directory to write the run's files into.
func (d *OutDir) Path() string { return d.tmp }

// Target is the directory the files appear in after Commit.
func (d *OutDir) Target() string { return d.target }

// Discard removes the temporary directory and any parent directory NewOutDir
// created. It does nothing after a successful Commit, so it can be deferred.
func (d *OutDir) Discard() {
	if d.done {
		return
	}
	d.done = true
	os.RemoveAll(d.tmp)
	if d.created != "" {
		os.RemoveAll(d.created)
	}
}

// Commit moves the written files into the target. On error the target is as
// it was before and everything the OutDir created is removed.
func (d *OutDir) Commit() error {
	if d.done {
		return errors.New("output: directory already committed or discarded")
	}
	err := d.commit()
	if err != nil {
		d.Discard()
		return fmt.Errorf("output %s: %w", d.target, err)
	}
	d.done = true
	return nil
}

func (d *OutDir) commit() error {
	if err := checkReplace(d.target, d.owned); err != nil {
		return err
	}
	if _, err := os.Lstat(d.target); errors.Is(err, fs.ErrNotExist) {
		return os.Rename(d.tmp, d.target)
	}
	// The old target goes into a second temporary directory, so that a
	// failed move can put it back.
	old, err := os.MkdirTemp(filepath.Dir(d.target), "."+filepath.Base(d.target)+".old-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(old)
	prev := filepath.Join(old, "prev")
	if err := os.Rename(d.target, prev); err != nil {
		return err
	}
	if err := os.Rename(d.tmp, d.target); err != nil {
		if err2 := os.Rename(prev, d.target); err2 != nil {
			return fmt.Errorf("%w (and the old directory stays at %s: %v)", err, prev, err2)
		}
		return err
	}
	return nil
}

// checkReplace reports why an existing target may not be replaced: it is
// not a directory, or it holds an entry owned does not claim.
func checkReplace(target string, owned func(string) bool) error {
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s exists and is not a directory", target)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !owned(e.Name()) {
			return fmt.Errorf("%s holds %s, which this command does not write; a rerun replaces the whole directory, so give a new or empty one (or remove it)",
				target, e.Name())
		}
	}
	return nil
}

// WriteDir writes the directory target all or nothing: fill writes the files
// into the directory it is given (a temporary one beside target), and only
// when it returns nil does that directory replace target. See OutDir.
func WriteDir(target string, owned func(name string) bool, fill func(dir string) error) error {
	d, err := NewOutDir(target, owned)
	if err != nil {
		return err
	}
	defer d.Discard()
	if err := fill(d.Path()); err != nil {
		return err
	}
	return d.Commit()
}

// mkdirAllReport is os.MkdirAll that also returns the topmost directory it
// created ("" when dir existed).
func mkdirAllReport(dir string) (string, error) {
	dir = filepath.Clean(dir)
	top := ""
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		top = p
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		if top != "" {
			os.RemoveAll(top)
		}
		return "", err
	}
	return top, nil
}

// WriteFile writes the file path all or nothing: write fills a temporary
// file beside path (through a buffer), which replaces path only when write
// returns nil and everything reached the disk; on error it is removed and
// path is as it was.
func WriteFile(path string, write func(w io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return OutputError(path, nil)
	}
	f, err := atomicfile.Create(path, atomicfile.Options{})
	if err != nil {
		return OutputError(path, err)
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return OutputError(path, err)
	}
	if err := f.Commit(); err != nil {
		return OutputError(path, err)
	}
	return nil
}

// OutputError is the error of writing the file path through a temporary
// file beside it (err, from an operation on that file; nil when path is a
// directory): it names path, the user's file, and not the temporary file,
// which the user never asked for, and says when path is a directory.
func OutputError(path string, err error) error {
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		return fmt.Errorf("output %s: is a directory, not a file", path)
	}
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &le):
		err = le.Err
	case errors.As(err, &pe):
		err = pe.Err
	}
	return fmt.Errorf("output %s: %w", path, err)
}
