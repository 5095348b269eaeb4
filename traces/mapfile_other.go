//go:build !linux

package traces

import (
	"errors"
	"os"
)

// mapFile maps files on Linux only: elsewhere Load reads them.
func mapFile(*os.File, int) ([]byte, func(), error) {
	return nil, nil, errors.New("traces: no file mapping on this OS")
}
