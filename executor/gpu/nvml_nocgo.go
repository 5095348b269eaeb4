//go:build !(nvml && cgo && linux)

package gpu

import "fmt"

// openNVMLLib reports that this binary cannot use NVML: go-nvml needs cgo on
// Linux, and it is compiled in only with the nvml build tag, so that
// simulating needs no C compiler and builds without the GPU bindings.
func openNVMLLib() (nvmlLib, error) {
	return nil, fmt.Errorf("%w: this aegis was built without NVML (it needs Linux, cgo and the nvml build tag); rebuild with make gpu-build (go build -tags nvml, CGO_ENABLED=1, a C compiler)", ErrNVMLUnavailable)
}
