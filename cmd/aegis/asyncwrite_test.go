package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// failAfter takes n writes, then fails each.
type failAfter struct {
	bytes.Buffer
	n, writes int
}

func (w *failAfter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.n {
		return 0, errors.New("disk full")
	}
	return w.Buffer.Write(p)
}

// The async writer writes what it was given, in order, though the caller
// reuses its buffer; the first write error is Close's and later Writes'.
func TestAsyncWriter(t *testing.T) {
	var want bytes.Buffer
	w := &failAfter{n: 1 << 30}
	a := newAsyncWriter(w)
	buf := make([]byte, 0, 64)
	for i := range 10000 {
		buf = fmt.Appendf(buf[:0], "line %d\n", i)
		want.Write(buf)
		n, err := a.Write(buf)
		require.NoError(t, err)
		require.Equal(t, len(buf), n)
	}
	require.NoError(t, a.Close())
	require.Equal(t, want.String(), w.String())

	bad := &failAfter{n: 3}
	a = newAsyncWriter(bad)
	var err error
	for i := 0; i < 10000 && err == nil; i++ {
		_, err = a.Write([]byte("x\n"))
	}
	require.EqualError(t, a.Close(), "disk full")
	require.Equal(t, 4, bad.writes, "no write after the error")
	require.Equal(t, "x\nx\nx\n", bad.String())
}
