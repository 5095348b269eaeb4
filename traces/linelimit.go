package traces

import (
	"bytes"
	"fmt"
	"io"
)

// MaxLine bounds one line of a CSV or JSON Lines file, so that a file
// without line breaks (/dev/zero, a binary file) is an error once the limit
// is read, not an endless read.
const MaxLine = 1 << 20

// lineLimit reads r, failing at the first line longer than MaxLine bytes.
type lineLimit struct {
	r    io.Reader
	line int // the current line, from 1
	cur  int // bytes of the current line so far
}

// limitLines returns r bounded by MaxLine per line (a LineTooLongError).
func limitLines(r io.Reader) io.Reader { return &lineLimit{r: r, line: 1} }

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.cur += len(b)
			break
		}
		if l.cur+i > MaxLine {
			l.cur += i
			break
		}
		l.cur, l.line, b = 0, l.line+1, b[i+1:]
	}
	if l.cur > MaxLine {
		return 0, LineTooLongError{l.line}
	}
	return n, err
}

// LineTooLongError is the error of a line longer than MaxLine.
type LineTooLongError struct{ Line int }

func (e LineTooLongError) Error() string {
	return fmt.Sprintf("line %d is longer than %d bytes, the limit of one line (is it a text file?)", e.Line, MaxLine)
}
