package executor

import "errors"

// ErrInjected is the error a journal made to fail by FailJournalAfter
// returns.
var ErrInjected = errors.New("injected I/O error")

// FailJournalAfter makes x's journal fail every write after n more
// successful ones; the failing write writes half its bytes first (a torn
// line, as a full disk leaves).
func FailJournalAfter(x *Executor, n int) { x.j.w = &faultyWriter{syncWriter: x.j.w, left: n} }

type faultyWriter struct {
	syncWriter
	left int
}

func (w *faultyWriter) Write(b []byte) (int, error) {
	if w.left <= 0 {
		n, _ := w.syncWriter.Write(b[:len(b)/2])
		return n, ErrInjected
	}
	w.left--
	return w.syncWriter.Write(b)
}
