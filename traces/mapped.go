package traces

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"unsafe"
)

// wholeInput is an input given whole, as one string: newRecords splits it
// in place instead of copying it (a trace file mapped into memory,
// loadMapped).
type wholeInput struct {
	*strings.Reader
	s string
}

// loadMapped reads the CSV trace file f (path) from its pages mapped into
// memory (mapFile) instead of copying the file into fresh memory: where
// each new page costs a fault, as on the virtual machines the docs
// measure on, copying a 24,000-job file cost more than reading it. The
// result is the same trace (readCSV over the same bytes), and it points
// into no byte of the mapping, which is gone when loadMapped returns
// (readCSV copies ids and workloads out of its input:
// TestReadCSVCopiesOutOfInput, TestLoadMappedIsLoad). ok is false, and f
// is to be read as before (its offset unchanged), for a file that cannot
// be mapped (not a regular file, empty, above 1 GiB, or an OS without
// mapFile), a JSON Lines trace, a line longer than MaxLine, or any error
// (read again, the error is the one the reader gives, not one that could
// point into the mapping). A file cut short while mapped (its pages gone:
// SIGBUS) is an error, not a crash.
func loadMapped(f *os.File, path string) (t *Trace, ok bool, err error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > 1<<30 {
		return nil, false, nil
	}
	data, unmap, err := mapFile(f, int(st.Size()))
	if err != nil {
		return nil, false, nil
	}
	defer unmap()
	return parseMapped(data, path)
}

// parseMapped reads the trace in m, the whole file path mapped into
// memory, as Load reads the file, or says ok false (loadMapped).
func parseMapped(m []byte, path string) (t *Trace, ok bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			t, ok, err = nil, true, fmt.Errorf("trace: %s changed while it was read (%v)", path, r)
		}
	}()
	peek := m[:min(len(m), 1<<16)]
	data := unsafe.String(unsafe.SliceData(m), len(m)) // read only
	if notATrace(path, peek) != nil || detectFormat(path, peek) == FormatJSONL || longLine(data) {
		return nil, false, nil
	}
	rows, size := estimateRows(int64(len(m)), peek), len(m)
	t, err = readCSV(wholeInput{strings.NewReader(data), data}, path, rows, size)
	if err != nil {
		return nil, false, nil
	}
	return t, true, nil
}

// longLine reports whether s has a line longer than MaxLine bytes (its
// line break not counted), which limitLines refuses.
func longLine(s string) bool {
	for len(s) > MaxLine {
		i := strings.IndexByte(s[:MaxLine+1], '\n')
		if i < 0 {
			return true
		}
		s = s[i+1:]
	}
	return false
}
