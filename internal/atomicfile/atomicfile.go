// Package atomicfile writes a file all or nothing: the content goes to a
// temporary file beside the file's path, which replaces the path in one
// rename once it is complete, so a reader sees the old file or the new
// one, never part of one. How durable the result is (fsync of the file
// before the rename, of the directory after it) is the caller's choice,
// because the journal needs both and the results' files neither.
package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Options say how a File is written.
type Options struct {
	// SyncFile fsyncs the file before the rename: after a crash the path
	// holds the old content or the whole new one, never an empty file.
	SyncFile bool
	// SyncDir fsyncs the directory after the rename, making the rename
	// itself durable.
	SyncDir bool
	// Temp, when not "", is the temporary file's path (truncated if it
	// exists, e.g. left by a writer that was killed); else a new hidden
	// file ".NAME.tmp-*" beside the path.
	Temp string
}

// File is a file being written under a temporary name. Write fills it;
// Commit (or Publish) puts it in place; Abort, safe to defer, removes it
// unless it was put in place.
type File struct {
	f    *os.File
	path string
	o    Options
	done bool
}

// Create starts writing path.
func Create(path string, o Options) (*File, error) {
	var f *os.File
	var err error
	if o.Temp != "" {
		f, err = os.OpenFile(o.Temp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	} else {
		f, err = os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	}
	if err != nil {
		return nil, err
	}
	return &File{f: f, path: path, o: o}, nil
}

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Publish makes the temporary file readable by all (mode 0644), syncs it
// if asked, renames it to the path and syncs the directory if asked; the
// file stays open for writing more (the journal appends to it). On error
// the temporary file is removed and the path is as it was.
func (f *File) Publish() (*os.File, error) {
	err := f.f.Chmod(0o644)
	if err == nil && f.o.SyncFile {
		err = f.f.Sync()
	}
	if err == nil {
		err = os.Rename(f.f.Name(), f.path)
	}
	if err != nil {
		f.Abort()
		return nil, err
	}
	f.done = true
	if f.o.SyncDir {
		if err := syncDir(filepath.Dir(f.path)); err != nil {
			f.f.Close()
			return nil, err
		}
	}
	return f.f, nil
}

// Commit is Publish, then Close: the file is in place and closed.
func (f *File) Commit() error {
	if err := f.f.Chmod(0o644); err != nil {
		f.Abort()
		return err
	}
	if f.o.SyncFile {
		if err := f.f.Sync(); err != nil {
			f.Abort()
			return err
		}
	}
	if err := f.f.Close(); err != nil {
		os.Remove(f.f.Name())
		f.done = true
		return err
	}
	f.done = true
	if err := os.Rename(f.f.Name(), f.path); err != nil {
		os.Remove(f.f.Name())
		return err
	}
	if f.o.SyncDir {
		return syncDir(filepath.Dir(f.path))
	}
	return nil
}

// Abort closes and removes the temporary file; after Commit or Publish it
// does nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// WriteFile writes b to path all or nothing.
func WriteFile(path string, b []byte, o Options) error {
	return Write(path, o, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// Write writes path all or nothing with what write writes to the file
// (unbuffered): path changes only if write returns nil and the file is
// committed; write's own error is returned as it is.
func Write(path string, o Options, write func(io.Writer) error) error {
	f, err := Create(path, o)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// syncDir fsyncs directory dir, making a rename in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
