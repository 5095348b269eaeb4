// Package csvhead reads CSV files by column name, one row at a time: the
// header line maps each trimmed column name (a UTF-8 byte-order mark
// removed) to its column, the columns a reader needs are checked once, and
// each row's cells are then read by name, with the row's line for errors.
// It is the one such reader of the module's input files (measured pairs,
// solo windows and speeds, Lucid's tables, the artifact's catalog, stacking
// measurements); the trace log readers map their headers with its Index.
package csvhead

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Reader reads a CSV file's rows by column name.
type Reader struct {
	// Name is the file, as errors name it.
	Name string
	// Head is the header line as read.
	Head []string
	// Line is the file line of the row Next read last.
	Line int
	cr   *csv.Reader
	col  map[string]int
	rec  []string
}

// NewReader reads the header line from cr (set its options, such as
// Comment, first); name is the file as errors name it. Every column in
// need must be in the header: else the error reads
// `NAME: header: missing column "C"`. A name given twice is an error
// (Index).
func NewReader(cr *csv.Reader, name string, need ...string) (*Reader, error) {
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		want := ""
		if len(need) > 0 {
			want = " with columns " + strings.Join(need, ",")
		}
		return nil, fmt.Errorf("%s: the file is empty: want a CSV header line%s", name, want)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	col, err := Index(head)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", name, err)
	}
	r := &Reader{Name: name, Head: head, cr: cr, col: col}
	for _, c := range need {
		if _, ok := r.col[c]; !ok {
			return nil, fmt.Errorf("%s: header: missing column %q", name, c)
		}
	}
	return r, nil
}

// Index maps a header's trimmed column names (a UTF-8 byte-order mark
// removed) to their index. A name given twice is an error, the one rule of
// every table reader of the module (a column read by name must be one
// column); the map then still holds every name at its first column, for
// callers that only sniff a file's format.
func Index(head []string) (map[string]int, error) {
	col := make(map[string]int, len(head))
	var err error
	for j, h := range head {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if i, dup := col[h]; dup {
			if err == nil {
				err = fmt.Errorf("header names column %q twice (columns %d and %d)", h, i+1, j+1)
			}
			continue
		}
		col[h] = j
	}
	return col, err
}

// Next reads the next row; it returns false at the end of the file. A
// malformed row is an error naming the file and line.
func (r *Reader) Next() (bool, error) {
	rec, err := r.cr.Read()
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return false, fmt.Errorf("%s:%d: %w", r.Name, pe.Line, pe.Err)
		}
		return false, fmt.Errorf("%s: %w", r.Name, err)
	}
	r.rec = rec
	r.Line, _ = r.cr.FieldPos(0)
	return true, nil
}

// Each calls fn for every remaining row, in order, and stops at the first
// error, a malformed row's or fn's.
func (r *Reader) Each(fn func() error) error {
	for {
		ok, err := r.Next()
		if err != nil || !ok {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

// Has reports whether the header has column c.
func (r *Reader) Has(c string) bool { _, ok := r.col[c]; return ok }

// Get returns the current row's cell of column c, trimmed; "" when the
// header lacks c or the row is short of it.
func (r *Reader) Get(c string) string {
	i, ok := r.col[c]
	if !ok || i >= len(r.rec) {
		return ""
	}
	return strings.TrimSpace(r.rec[i])
}

// Record is the current row as read.
func (r *Reader) Record() []string { return r.rec }
