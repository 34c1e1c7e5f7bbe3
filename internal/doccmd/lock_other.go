//go:build !unix

package doccmd

import "errors"

// lockDir is not available here: binDir then builds into a directory of
// the test binary's own.
func lockDir(string) (func(), error) { return nil, errors.ErrUnsupported }
