//go:build linux

package fifo

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapMirror maps size bytes (a multiple of the page size) of one memfd twice,
// back to back, inside a reservation of 2*size bytes, so that byte size+i is
// byte i. It returns the 2*size bytes and the function that unmaps them.
func mapMirror(size int) ([]byte, func() error, error) {
	fd, err := unix.MemfdCreate("sluice-fifo", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, fmt.Errorf("memfd_create: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return nil, nil, fmt.Errorf("ftruncate memfd to %d bytes: %w", size, err)
	}
	total := uintptr(2 * size)
	base, err := unix.MmapPtr(-1, 0, nil, total, unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, nil, fmt.Errorf("reserve %d bytes: %w", total, err)
	}
	release := func() error { return unix.MunmapPtr(base, total) }
	for i := range 2 {
		want := unsafe.Add(base, i*size)
		got, err := unix.MmapPtr(fd, 0, want, uintptr(size),
			unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED)
		if err != nil || got != want {
			_ = release()
			if err == nil {
				err = fmt.Errorf("mapped at %p, expected %p", got, want)
			}
			return nil, nil, fmt.Errorf("map memfd copy %d: %w", i, err)
		}
	}
	buf := unsafe.Slice((*byte)(base), 2*size)
	// Check the mirror before trusting it.
	buf[0] = 0xA5
	ok := buf[size] == 0xA5
	buf[0] = 0
	if !ok {
		_ = release()
		return nil, nil, fmt.Errorf("mirrored mapping is not mirrored")
	}
	return buf, release, nil
}
