package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// terminal reports whether w is a terminal that shows progress: an
// *os.File on a character device, or a writer that says it is one (a
// test's fake terminal). Anything else (a file, a pipe, a buffer) gets
// no progress: the output stays what a script reads.
func terminal(w io.Writer) bool {
	if t, ok := w.(interface{ Terminal() bool }); ok {
		return t.Terminal()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newBar returns a progress bar of total steps named name on w when w is
// a terminal (count done / total, rate and time left, redrawn at most
// every 100 ms), else nil.
func newBar(w io.Writer, name string, total int, opts ...progressbar.Option) *progressbar.ProgressBar {
	if !terminal(w) {
		return nil
	}
	return progressbar.NewOptions(total, append([]progressbar.Option{progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(name),
		progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionSetWidth(30)}, opts...)...)
}

// barLog writes log lines above a progress bar: it clears the bar's line
// before each write, and the bar draws itself again at its next step.
type barLog struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (l barLog) Write(p []byte) (int, error) {
	l.bar.Clear()
	return l.w.Write(p)
}
