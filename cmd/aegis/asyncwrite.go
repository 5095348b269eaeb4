package main

import (
	"io"
	"os"
	"sync"
)

// asyncWriter writes to w from a goroutine of its own, so that a run
// streaming an output file (jobs.csv, telemetry.csv) does not wait for
// its writes: Write copies p (the run's writers hand over 64 KiB chunks)
// and returns. The writes keep their order; the first error stops them,
// is reported by every later Write and by Close, which waits for the
// writes and must be called once w is no longer written.
type asyncWriter struct {
	w    io.Writer
	full chan []byte
	free chan []byte
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// asyncChunks is how many chunks may wait to be written.
const asyncChunks = 4

func newAsyncWriter(w io.Writer) *asyncWriter {
	a := &asyncWriter{w: w, full: make(chan []byte, asyncChunks), free: make(chan []byte, asyncChunks+1), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for b := range a.full {
			if a.failed() == nil {
				if _, err := a.w.Write(b); err != nil {
					a.mu.Lock()
					a.err = err
					a.mu.Unlock()
				}
			}
			select {
			case a.free <- b[:0]:
			default:
			}
		}
	}()
	return a
}

func (a *asyncWriter) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Write hands a copy of p to the writing goroutine.
func (a *asyncWriter) Write(p []byte) (int, error) {
	if err := a.failed(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	var b []byte
	select {
	case b = <-a.free:
	default:
	}
	a.full <- append(b, p...)
	return len(p), nil
}

// Close waits until every chunk is written and reports the first error.
func (a *asyncWriter) Close() error {
	close(a.full)
	<-a.done
	return a.err
}

// asyncFile is an output file written through an asyncWriter: Close
// waits for the writes, then closes the file.
type asyncFile struct {
	*asyncWriter
	f *os.File
}

func (a *asyncFile) Close() error {
	err := a.asyncWriter.Close()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	return err
}
