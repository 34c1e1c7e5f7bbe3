package cl

import (
	"errors"
	"fmt"
	"strconv"
)

// Status is an OpenCL status code (cl_int). Negative values are errors; every
// named one has a constant (ErrOutOfResources, ErrBuildProgramFailure, …)
// that errors.Is matches through an *Error.
type Status int32

// Error returns the code's name, e.g. "CL_OUT_OF_RESOURCES (-5)".
func (s Status) Error() string {
	if n, ok := statusNames[s]; ok {
		return n + " (" + strconv.Itoa(int(s)) + ")"
	}
	return "OpenCL status " + strconv.Itoa(int(s))
}

// Name returns the code's symbolic name ("CL_OUT_OF_RESOURCES"), or its
// number when the code is not a known one.
func (s Status) Name() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return strconv.Itoa(int(s))
}

// Error is a failed OpenCL call: which function, and the status it returned.
// It unwraps to the Status, so errors.Is(err, cl.ErrInvalidBufferSize) works.
type Error struct {
	// Op is the OpenCL function that failed, e.g. "clCreateBuffer".
	Op string
	// Status is the code it returned.
	Status Status
	// Detail adds context, e.g. the size of the buffer asked for.
	Detail string
}

// Error renders the operation, the named status and any detail.
func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s (%s): %v", e.Op, e.Detail, e.Status)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Status)
}

// Unwrap returns the Status.
func (e *Error) Unwrap() error { return e.Status }

// check turns a status into nil or an *Error.
func check(op string, st int32) error {
	if st == 0 {
		return nil
	}
	return &Error{Op: op, Status: Status(st)}
}

// ErrLibraryNotFound is returned (wrapped) by Load and every call when
// libOpenCL.so.1 cannot be loaded.
var ErrLibraryNotFound = errors.New("OpenCL library not found")

// ErrNoPlatform is returned by Platforms when the library loads but no
// platform (no ICD) is installed.
var ErrNoPlatform = errors.New("no OpenCL platform (no ICD installed)")

// IsOutOfMemory reports whether err is one of the statuses that mean device
// or host memory ran out or a size is beyond what the device allows.
func IsOutOfMemory(err error) bool {
	return errors.Is(err, ErrMemObjectAllocationFailure) || errors.Is(err, ErrOutOfResources) ||
		errors.Is(err, ErrOutOfHostMemory) || errors.Is(err, ErrInvalidBufferSize)
}
