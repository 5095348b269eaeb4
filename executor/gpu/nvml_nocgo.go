//go:build !(cgo && linux)

package gpu

import "fmt"

// openNVMLLib reports that this binary cannot use NVML: go-nvml needs cgo on
// Linux.
func openNVMLLib() (nvmlLib, error) {
	return nil, fmt.Errorf("%w: this aegis was built without cgo (CGO_ENABLED=0) or for a system other than Linux; rebuild on Linux with CGO_ENABLED=1 (make gpu-build)", ErrNVMLUnavailable)
}
