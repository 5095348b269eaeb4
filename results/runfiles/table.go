// Package runfiles reads the files a results directory holds back into
// memory: CSV tables by column name (cells.csv, normalized.csv, jobs.csv,
// telemetry.csv, ...), telemetry.csv samples and events.jsonl lines. Readers
// tolerate extra columns; a missing column or a bad value is an error naming
// the file, line and column.
package runfiles

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/aegis-sched/aegis/internal/csvhead"
)

// Table is a CSV file read by column name: a header line, then rows of the
// same width.
type Table struct {
	// Name is the file the table came from, as errors name it.
	Name   string
	Header []string
	index  map[string]int
	rows   [][]string
	lines  []int // line number of each row
}

// ReadTable reads the CSV file at path; every column in required must be in
// its header.
func ReadTable(path string, required ...string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTable(path, f, required...)
}

// ParseTable reads a CSV table from r; name is used in errors. The header
// is read as csvhead reads every table of the module: names trimmed, a
// column named twice an error.
func ParseTable(name string, r io.Reader, required ...string) (*Table, error) {
	h, err := csvhead.NewReader(csv.NewReader(r), name)
	if err != nil {
		return nil, err
	}
	head := h.Head
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff")
	}
	t := &Table{Name: name, Header: head}
	t.index, _ = csvhead.Index(head) // NewReader checked it
	for _, c := range required {
		if _, ok := t.index[c]; !ok {
			return nil, fmt.Errorf("%s:1: missing column %q (have %s)", name, c, strings.Join(head, ","))
		}
	}
	err = h.Each(func() error {
		t.rows = append(t.rows, h.Record())
		t.lines = append(t.lines, h.Line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// Has reports whether the table has a column.
func (t *Table) Has(col string) bool { _, ok := t.index[col]; return ok }

// Line is the file line of row i.
func (t *Table) Line(i int) int { return t.lines[i] }

// Where names row i's file and line, for error messages.
func (t *Table) Where(i int) string { return fmt.Sprintf("%s:%d", t.Name, t.lines[i]) }

// Records is the header, then every row, as read.
func (t *Table) Records() [][]string { return append([][]string{t.Header}, t.rows...) }

// Row is row i's cells as read (not trimmed).
func (t *Table) Row(i int) []string { return t.rows[i] }

// String returns row i's value of a column, "" when the table lacks it.
func (t *Table) String(i int, col string) string {
	k, ok := t.index[col]
	if !ok {
		return ""
	}
	return t.rows[i][k]
}

// Float returns row i's value of a numeric column. An empty cell, a missing
// column or a value that is not a finite number is an error naming the file,
// line and column.
func (t *Table) Float(i int, col string) (float64, error) {
	v, err := t.OptFloat(i, col)
	if err == nil && math.IsNaN(v) {
		return 0, fmt.Errorf("%s: column %s: empty, want a number", t.Where(i), col)
	}
	return v, err
}

// OptFloat is Float, but an empty cell gives NaN (e.g. jct_s of a job that
// never finished).
func (t *Table) OptFloat(i int, col string) (float64, error) {
	k, ok := t.index[col]
	if !ok {
		return 0, fmt.Errorf("%s: missing column %q", t.Name, col)
	}
	s := strings.TrimSpace(t.rows[i][k])
	if s == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: column %s: %q is not a finite number", t.Where(i), col, s)
	}
	return v, nil
}

// Int returns row i's value of an integer column, with errors like Float's.
func (t *Table) Int(i int, col string) (int, error) {
	k, ok := t.index[col]
	if !ok {
		return 0, fmt.Errorf("%s: missing column %q", t.Name, col)
	}
	s := strings.TrimSpace(t.rows[i][k])
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s: column %s: %q is not an integer", t.Where(i), col, s)
	}
	return v, nil
}
