package external

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// process is a running external policy: its standard input, and its
// standard output read line by line under a deadline, so that a process
// that hangs is noticed (the per-decision timeout).
type process struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	w       *bufio.Writer
	out     *os.File
	r       *bufio.Reader
	maxLine int
	line    []byte // a line longer than r's buffer, being put together
	stderr  *tail
	timeout time.Duration
	n       int // lines read
	done    chan struct{}
	waitErr error
}

// tail keeps the last bytes written to it: the process's stderr, shown when
// it fails.
type tail struct {
	mu sync.Mutex
	b  []byte
}

const tailBytes = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*tailBytes {
		t.b = append(t.b[:0], t.b[len(t.b)-tailBytes:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.b
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	return strings.TrimSpace(string(b))
}

// start starts args as a process speaking the protocol.
func start(args []string, timeout time.Duration, maxLine int) (*process, error) {
	cmd := exec.Command(args[0], args[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe rather than StdoutPipe: the reader reads to the end of
	// the output whenever the process ends, independently of Wait.
	out, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = outW
	p := &process{cmd: cmd, in: in, w: bufio.NewWriterSize(in, 64<<10), out: out, r: bufio.NewReaderSize(out, 64<<10),
		maxLine: maxLine, stderr: &tail{}, timeout: timeout, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	outW.Close()
	if err != nil {
		out.Close()
		return nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// send writes one message (a line) and flushes it.
func (p *process) send(msg []byte) error {
	p.w.Write(msg)
	p.w.WriteByte('\n')
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("%w: writing to it: %v", ErrExited, err)
	}
	return nil
}

// next returns the process's next line (without its newline), waiting at
// most the timeout; a line longer than maxLine is ErrFlood.
func (p *process) next() ([]byte, error) {
	p.out.SetReadDeadline(time.Now().Add(p.timeout))
	p.line = p.line[:0]
	for {
		chunk, err := p.r.ReadSlice('\n')
		if len(p.line)+len(chunk) > p.maxLine+1 {
			return nil, fmt.Errorf("%w: a line longer than %d bytes (starts %s)", ErrFlood, p.maxLine, shorten(append(p.line, chunk...)))
		}
		switch {
		case err == nil:
			p.n++
			if len(p.line) > 0 {
				chunk = append(p.line, chunk...)
			}
			return bytes.TrimSuffix(chunk[:len(chunk)-1], []byte{'\r'}), nil
		case err == bufio.ErrBufferFull:
			p.line = append(p.line, chunk...)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, fmt.Errorf("%w: no answer within %v (the timeout parameter)", ErrTimeout, p.timeout)
		default:
			return nil, fmt.Errorf("%w: its output closed (%v)", ErrExited, err)
		}
	}
}

// exitStatus waits briefly for the process to end and describes how it
// ended, with the tail of its stderr.
func (p *process) exitStatus() string {
	select {
	case <-p.done:
	case <-time.After(time.Second):
		return "still running; killed" + p.stderrNote()
	}
	s := "exit status 0"
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		s = ee.ProcessState.String()
	} else if p.waitErr != nil {
		s = p.waitErr.Error()
	}
	return s + p.stderrNote()
}

func (p *process) stderrNote() string {
	if t := p.stderr.String(); t != "" {
		return "; its stderr ends:\n" + t
	}
	return ""
}

// stop ends the process: its input is closed (a well-behaved policy exits
// on end of input), then it is killed if it has not exited within grace.
func (p *process) stop(grace time.Duration) {
	p.in.Close()
	select {
	case <-p.done:
		p.out.Close()
		return
	case <-time.After(grace):
	}
	p.cmd.Process.Kill()
	<-p.done
	p.out.Close()
}

// kill ends the process at once.
func (p *process) kill() {
	p.in.Close()
	p.cmd.Process.Kill()
	<-p.done
	p.out.Close()
}

// shorten returns b as text for an error message: at most 200 bytes.
func shorten(b []byte) string {
	const n = 200
	if len(b) > n {
		return fmt.Sprintf("%q... (%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%q", b)
}
