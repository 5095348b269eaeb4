package experiments

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/aegis-sched/aegis/models"
)

// dataName names file or folder p in run.json so that run.json is the same
// on any machine: "shared:REL" below the shared data folder
// (models.SharedDir), p itself when relative, REL when p is absolute and
// below the working directory, else p's base name (run.json's content
// hashes identify the data).
func dataName(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Base(p)
	}
	if d, ok := models.SharedDir(); ok {
		if rel, ok := below(d, abs); ok {
			return "shared:" + rel
		}
	}
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, ok := below(wd, abs); ok {
			return rel
		}
	}
	return filepath.Base(p)
}

// below returns p relative to root (slash-separated) when p is root or
// below it.
func below(root, p string) (string, bool) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// sourceName is dataName for a path written in the spec (relative ones are
// relative to the spec's folder and kept as written).
func sourceName(p string) string {
	if filepath.IsAbs(p) {
		return dataName(p)
	}
	return filepath.ToSlash(p)
}
