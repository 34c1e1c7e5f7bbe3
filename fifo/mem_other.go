//go:build !linux

package fifo

import "errors"

// mapMirror is not available on this system: New uses the portable buffer.
func mapMirror(size int) ([]byte, func() error, error) {
	return nil, nil, errors.New("mirrored mapping not supported on this system")
}
