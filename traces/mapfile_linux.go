package traces

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f into memory, read-only, its
// pages mapped at once (MAP_POPULATE), and returns them with the function
// that unmaps them. Neither they nor anything pointing into them may be
// used after.
func mapFile(f *os.File, size int) ([]byte, func(), error) {
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, err
	}
	return m, func() { syscall.Munmap(m) }, nil
}
