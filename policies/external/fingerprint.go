package external

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Fingerprint identifies by content what an external policy is made of,
// as far as it can be known without running it: every word of the command
// line that names a regular file (the program, a script), for a Python
// script also the .py files beside it (the modules it imports first), and
// the files of Config.Files, which must exist. It is the sha256 of their
// names as given and their contents, "" when there are none (a program
// found on PATH, such as python3, is not read). Cells' keys include it.
func Fingerprint(c Config) (string, error) {
	var paths []string
	for _, a := range c.Args {
		if st, err := os.Stat(a); err != nil || !st.Mode().IsRegular() {
			continue
		}
		paths = append(paths, a)
		if strings.HasSuffix(a, ".py") {
			sib, err := filepath.Glob(filepath.Join(filepath.Dir(a), "*.py"))
			if err != nil {
				return "", err
			}
			paths = append(paths, sib...)
		}
	}
	for _, f := range c.Files {
		if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("policy external: parameter files: %s: not a readable file", f)
		}
		paths = append(paths, f)
	}
	if len(paths) == 0 {
		return "", nil
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	h := sha256.New()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("policy external: %w", err)
		}
		fh := sha256.New()
		_, err = io.Copy(fh, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("policy external: %s: %w", p, err)
		}
		fmt.Fprintf(h, "%s\x00%x\n", filepath.ToSlash(p), fh.Sum(nil))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
