package models

import (
	"fmt"
	"os"
	"path/filepath"
)

// SharedDir locates the project's read-only shared data folder (the one
// holding calibration/ and traces/): $AEGIS_SHARED if set, else a folder named
// "shared" beside the working directory or any of its parents. It reports
// false when none is found.
func SharedDir() (string, bool) {
	if d := os.Getenv("AEGIS_SHARED"); d != "" {
		return d, isDir(filepath.Join(d, "calibration"))
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		s := filepath.Join(filepath.Dir(d), "shared")
		if isDir(filepath.Join(s, "calibration")) {
			return s, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// SharedDirError explains why SharedDir found no shared data folder: a set
// $AEGIS_SHARED without calibration/ in it, or no "shared" folder beside the
// working directory or its parents.
func SharedDirError() error {
	if d := os.Getenv("AEGIS_SHARED"); d != "" {
		return fmt.Errorf("AEGIS_SHARED=%s has no calibration/ folder (the shared data folder holds calibration/ and traces/)", d)
	}
	wd, _ := os.Getwd()
	return fmt.Errorf("no shared data folder (one named shared with calibration/ in it) beside %s or its parents; set AEGIS_SHARED to it", wd)
}
