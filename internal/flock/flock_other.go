//go:build !unix

package flock

import (
	"context"
	"errors"
)

// Lock is not available here: it returns errors.ErrUnsupported, and
// callers fall back to a directory of their own.
func Lock(context.Context, string) (func(), error) { return nil, errors.ErrUnsupported }
