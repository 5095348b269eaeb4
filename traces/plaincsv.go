package traces

import (
	"encoding/csv"
	"io"
	"strings"
)

// records reads CSV records: *csv.Reader, or plainCSV for input without
// quotes.
type records interface {
	Read() ([]string, error)
	FieldPos(field int) (line, column int)
}

// newRecords returns a reader of r's CSV records as openCSV reads them
// (encoding/csv with '#' comments, any number of fields per record, the
// record reused). Input with no double quote, the usual trace, is read
// whole and split at commas and line ends without encoding/csv: the same
// records and lines (TestPlainCSVIsCSV), one string for the whole input
// instead of one per record, which the fields share; a wholeInput is split
// where it lies.
func newRecords(r io.Reader, size int) records {
	var data string
	var err error
	if w, ok := r.(wholeInput); ok {
		data = w.s
	} else {
		var sb strings.Builder // its String is the bytes read, not a copy
		sb.Grow(size + 1)      // + 1: the read that finds the end
		_, err = io.Copy(&sb, r)
		data = sb.String()
	}
	if err != nil || strings.IndexByte(data, '"') >= 0 {
		var src io.Reader = strings.NewReader(data)
		if err != nil { // the error comes after the data, as it did
			src = io.MultiReader(src, errReader{err})
		}
		cr := csv.NewReader(src)
		cr.Comment = '#'
		cr.FieldsPerRecord = -1
		cr.ReuseRecord = true
		return cr
	}
	return &plainCSV{s: data}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// plainCSV splits CSV input without quotes into records as encoding/csv
// does: a record per line ("\r\n" read as "\n", a last "\r" dropped),
// fields split at every comma, empty lines and lines starting with '#'
// skipped.
type plainCSV struct {
	s       string
	pos     int
	line    int // lines read so far
	recLine int // the line of the record Read returned last
	rec     []string
}

func (p *plainCSV) Read() ([]string, error) {
	for p.pos < len(p.s) {
		ln := p.s[p.pos:]
		if i := strings.IndexByte(ln, '\n'); i >= 0 {
			ln = ln[:i]
			p.pos += i + 1
		} else {
			p.pos = len(p.s)
		}
		p.line++
		ln = strings.TrimSuffix(ln, "\r")
		if ln == "" || ln[0] == '#' {
			continue
		}
		p.recLine = p.line
		rec := p.rec[:0]
		for {
			i := strings.IndexByte(ln, ',')
			if i < 0 {
				break
			}
			rec = append(rec, ln[:i])
			ln = ln[i+1:]
		}
		p.rec = append(rec, ln)
		return p.rec, nil
	}
	return nil, io.EOF
}

// FieldPos returns the line of the last record read (column 1: only the
// line is used).
func (p *plainCSV) FieldPos(int) (line, column int) { return p.recLine, 1 }
