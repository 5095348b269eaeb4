// Package golden compares what tests produce with golden files under a
// package's testdata/, and rewrites those files when the tests run with
// -update: the one -update flag of every package's tests (import it from
// _test.go files only). A difference is reported as the first differing
// lines, whether the golden file holds the text itself (File) or only
// hashes of texts (Hashes).
package golden

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ instead of comparing with them")

// Update reports whether the tests run with -update: a test then writes
// what it produces as the new golden files instead of comparing.
func Update() bool { return *update }

// context is how many lines around the first difference Diff shows.
const context = 3

// File compares got with the golden file at path, failing with the first
// differing lines (Diff); with -update it writes got to path instead.
func File(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with go test -run '%s' -update)", err, t.Name())
	}
	if d := Diff(want, got); d != "" {
		t.Errorf("%s differs from what the test produced (go test -run '%s' -update rewrites it):\n%s", path, t.Name(), d)
	}
}

// Diff returns "" when want and got are equal, else their first
// differing line and a few lines around it, of each side, numbered.
func Diff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	w, g := lines(want), lines(got)
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d (golden: %d lines, now: %d)\n", i+1, len(w), len(g))
	show := func(name string, ls []string) {
		fmt.Fprintf(&b, "%s:\n", name)
		for k := max(0, i-context); k < min(len(ls), i+context+1); k++ {
			mark := " "
			if k == i {
				mark = ">"
			}
			fmt.Fprintf(&b, "%s%5d  %s\n", mark, k+1, ls[k])
		}
	}
	show("golden", w)
	show("now", g)
	return b.String()
}

// lines splits b into lines, a final line without a newline marked so.
func lines(b []byte) []string {
	s := strings.Split(string(b), "\n")
	if s[len(s)-1] == "" {
		return s[:len(s)-1]
	}
	s[len(s)-1] += " (no newline at end)"
	return s
}

// block is how many lines a block hash of Hashes covers.
const block = 16

// Hashes is a golden file of hashes of texts too many or too large to
// keep: a line per key, "key  sha256  n  b1,b2,...", with the text's
// SHA-256, its line count and a short hash of each block of 16 lines, so
// that a changed text is reported with its first differing block, as it
// is now. Check may be called from parallel subtests.
type Hashes struct {
	path   string
	header string
	want   map[string]entry
	mu     sync.Mutex
	got    map[string]entry
}

type entry struct {
	sum    string
	n      int
	blocks []string
}

// OpenHashes reads the golden hashes at path (unless the tests run with
// -update); header, a comment, heads the file when it is rewritten.
func OpenHashes(t testing.TB, path, header string) *Hashes {
	t.Helper()
	h := &Hashes{path: path, header: header, got: map[string]entry{}}
	if *update {
		return h
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (write it with go test -run '%s' -update)", err, t.Name())
	}
	defer f.Close()
	h.want = map[string]entry{}
	sc := bufio.NewScanner(f)
	for k := 1; sc.Scan(); k++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "  ")
		if len(f) != 4 {
			t.Fatalf("%s:%d: want key  sha256  lines  blocks, got %q", path, k, line)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("%s:%d: line count %q: %v", path, k, f[2], err)
		}
		h.want[f[0]] = entry{sum: f[1], n: n, blocks: strings.Split(f[3], ",")}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return h
}

// hash returns text's entry.
func hash(text []byte) entry {
	sum := sha256.Sum256(text)
	e := entry{sum: hex.EncodeToString(sum[:])}
	ls := bytes.SplitAfter(text, []byte("\n"))
	if len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	e.n = len(ls)
	for i := 0; i < len(ls); i += block {
		s := sha256.Sum256(bytes.Join(ls[i:min(i+block, len(ls))], nil))
		e.blocks = append(e.blocks, hex.EncodeToString(s[:4]))
	}
	if len(e.blocks) == 0 {
		e.blocks = []string{"-"}
	}
	return e
}

// Check compares text with the golden hash of key, failing with the first
// differing block of lines as the text has them now.
func (h *Hashes) Check(t testing.TB, key string, text []byte) {
	t.Helper()
	if msg := h.check(key, text); msg != "" {
		// -update rewrites the whole file: with the whole test only.
		t.Errorf("%s (go test -run '^%s$' -update rewrites the hashes)", msg, strings.SplitN(t.Name(), "/", 2)[0])
	}
}

// check records text's hash under key and returns what is wrong with it,
// "" if nothing.
func (h *Hashes) check(key string, text []byte) string {
	if strings.Contains(key, "  ") || strings.Contains(key, "\n") {
		return fmt.Sprintf("golden key %q: no double spaces or newlines", key)
	}
	e := hash(text)
	h.mu.Lock()
	h.got[key] = e
	h.mu.Unlock()
	if *update {
		return ""
	}
	w, ok := h.want[key]
	switch {
	case !ok:
		return fmt.Sprintf("%s: no golden hash for %s", h.path, key)
	case w.sum != e.sum:
		return fmt.Sprintf("%s changed (%s):\n%s", key, h.path, firstBlock(w, e, text))
	}
	return ""
}

// firstBlock describes where text (now) first differs from the text
// hashed as w: the first block whose hash differs, its lines as they are
// now.
func firstBlock(w, e entry, text []byte) string {
	i := 0
	for i < len(w.blocks) && i < len(e.blocks) && w.blocks[i] == e.blocks[i] {
		i++
	}
	ls := lines(text)
	from, to := i*block, min((i+1)*block, len(ls))
	var b strings.Builder
	fmt.Fprintf(&b, "golden: %d lines, now: %d; the first difference is in lines %d-%d, now:\n", w.n, e.n, from+1, max(from+1, to))
	for k := from; k < to; k++ {
		fmt.Fprintf(&b, "%5d  %s\n", k+1, ls[k])
	}
	if from >= len(ls) {
		b.WriteString("       (no such lines now: the text is shorter)\n")
	}
	return b.String()
}

// Close ends a run of checks: with -update it writes every key checked,
// sorted (so a run of some subtests only writes only theirs); otherwise, if t has not failed, it fails on golden keys no test
// checked.
func (h *Hashes) Close(t testing.TB) {
	t.Helper()
	if *update {
		keys := make([]string, 0, len(h.got))
		for k := range h.got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var b strings.Builder
		for _, l := range strings.Split(h.header, "\n") {
			fmt.Fprintf(&b, "# %s\n", l)
		}
		for _, k := range keys {
			e := h.got[k]
			fmt.Fprintf(&b, "%s  %s  %d  %s\n", k, e.sum, e.n, strings.Join(e.blocks, ","))
		}
		if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if t.Failed() {
		return
	}
	for _, k := range h.stale() {
		t.Errorf("%s: golden hash of %s, which no test produced (go test -run '%s' -update drops it)", h.path, k, t.Name())
	}
}

// stale returns the golden keys no check has produced, sorted.
func (h *Hashes) stale() []string {
	var keys []string
	for k := range h.want {
		if _, ok := h.got[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
