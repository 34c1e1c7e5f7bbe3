package cu

import (
	"errors"
	"fmt"
	"strconv"
	"unsafe"
)

// Result is a CUDA driver result code (CUresult). Non-zero values are
// errors; the common ones have named constants (ErrOutOfMemory,
// ErrInvalidValue, …) that errors.Is matches through an *Error. Its text
// is the driver's name for the code (cuGetErrorName), e.g.
// "CUDA_ERROR_OUT_OF_MEMORY (2)".
type Result int32

// Named driver results (from cuda.h).
const (
	Success                   Result = 0
	ErrInvalidValue           Result = 1
	ErrOutOfMemory            Result = 2
	ErrNotInitialized         Result = 3
	ErrDeinitialized          Result = 4
	ErrStubLibrary            Result = 34
	ErrNoDevice               Result = 100
	ErrInvalidDevice          Result = 101
	ErrDeviceNotLicensed      Result = 102
	ErrInvalidImage           Result = 200
	ErrInvalidContext         Result = 201
	ErrMapFailed              Result = 205
	ErrNoBinaryForGPU         Result = 209
	ErrInvalidPTX             Result = 218
	ErrUnsupportedPTXVersion  Result = 222
	ErrInvalidSource          Result = 300
	ErrFileNotFound           Result = 301
	ErrInvalidHandle          Result = 400
	ErrNotFound               Result = 500
	ErrNotReady               Result = 600
	ErrIllegalAddress         Result = 700
	ErrLaunchOutOfResources   Result = 701
	ErrLaunchTimeout          Result = 702
	ErrPeerAccessUnsupported  Result = 217
	ErrPeerAccessEnabled      Result = 704
	ErrHostMemoryAlreadyReg   Result = 712
	ErrLaunchFailed           Result = 719
	ErrNotPermitted           Result = 800
	ErrNotSupported           Result = 801
	ErrStreamCaptureUnsupport Result = 900
	ErrStreamCaptureInvalid   Result = 901
	ErrStreamCaptureMerge     Result = 902
	ErrStreamCaptureUnmatched Result = 903
	ErrStreamCaptureUnjoined  Result = 904
	ErrStreamCaptureIsolation Result = 905
	ErrStreamCaptureImplicit  Result = 906
	ErrCapturedEvent          Result = 907
	ErrStreamCaptureWrongThrd Result = 908
	ErrUnknown                Result = 999
)

var resultNames = map[Result]string{
	217: "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
	3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 34: "CUDA_ERROR_STUB_LIBRARY",
	100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE", 102: "CUDA_ERROR_DEVICE_NOT_LICENSED",
	200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT", 205: "CUDA_ERROR_MAP_FAILED",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU", 218: "CUDA_ERROR_INVALID_PTX", 222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	300: "CUDA_ERROR_INVALID_SOURCE", 301: "CUDA_ERROR_FILE_NOT_FOUND", 400: "CUDA_ERROR_INVALID_HANDLE",
	500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY", 700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	712: "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 719: "CUDA_ERROR_LAUNCH_FAILED",
	800: "CUDA_ERROR_NOT_PERMITTED", 801: "CUDA_ERROR_NOT_SUPPORTED",
	900: "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 901: "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
	902: "CUDA_ERROR_STREAM_CAPTURE_MERGE", 903: "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
	904: "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 905: "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
	906: "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 907: "CUDA_ERROR_CAPTURED_EVENT",
	908: "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 999: "CUDA_ERROR_UNKNOWN",
}

// Name returns the code's symbolic name: from the table above, else from
// the driver (cuGetErrorName), else the number.
func (r Result) Name() string {
	if n, ok := resultNames[r]; ok {
		return n
	}
	if fn.GetErrorName != 0 {
		var p uintptr
		if call(fn.GetErrorName, uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 && p != 0 {
			return cString(p)
		}
	}
	return "CUresult " + strconv.Itoa(int(r))
}

// Description returns the driver's explanation (cuGetErrorString), or "".
func (r Result) Description() string {
	if fn.GetErrorString == 0 {
		return ""
	}
	var p uintptr
	if call(fn.GetErrorString, uintptr(r), uintptr(unsafe.Pointer(&p))) == 0 && p != 0 {
		return cString(p)
	}
	return ""
}

// Error returns e.g. "CUDA_ERROR_OUT_OF_MEMORY (2)".
func (r Result) Error() string { return r.Name() + " (" + strconv.Itoa(int(r)) + ")" }

// Error is a failed driver call: which function, and what it returned. It
// unwraps to the Result, so errors.Is(err, cu.ErrOutOfMemory) works.
type Error struct {
	// Op is the driver function, e.g. "cuMemAlloc".
	Op string
	// Result is the code it returned.
	Result Result
	// Detail adds context (a size, a name).
	Detail string
}

// Error renders the operation, the named result and any detail.
func (e *Error) Error() string {
	s := e.Op
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	s += ": " + e.Result.Error()
	if d := e.Result.Description(); d != "" {
		s += ": " + d
	}
	return s
}

// Unwrap returns the Result.
func (e *Error) Unwrap() error { return e.Result }

func check(op string, r Result) error {
	if r == 0 {
		return nil
	}
	return &Error{Op: op, Result: r}
}

func checkf(op string, r Result, format string, args ...any) error {
	if r == 0 {
		return nil
	}
	return &Error{Op: op, Result: r, Detail: fmt.Sprintf(format, args...)}
}

// IsOutOfMemory reports whether err says memory ran out.
func IsOutOfMemory(err error) bool { return errors.Is(err, ErrOutOfMemory) }

// NVRTCResult is an NVRTC result code (nvrtcResult).
type NVRTCResult int32

// Named NVRTC results.
const (
	NVRTCSuccess                NVRTCResult = 0
	NVRTCErrOutOfMemory         NVRTCResult = 1
	NVRTCErrProgramCreation     NVRTCResult = 2
	NVRTCErrInvalidInput        NVRTCResult = 3
	NVRTCErrInvalidProgram      NVRTCResult = 4
	NVRTCErrInvalidOption       NVRTCResult = 5
	NVRTCErrCompilation         NVRTCResult = 6
	NVRTCErrBuiltinOperation    NVRTCResult = 7
	NVRTCErrNoNameExpressions   NVRTCResult = 8
	NVRTCErrNameExpressionsDone NVRTCResult = 9
	NVRTCErrInvalidNameExpr     NVRTCResult = 10
	NVRTCErrInternal            NVRTCResult = 11
)

// Error returns the NVRTC name of the code, e.g. "NVRTC_ERROR_COMPILATION (6)".
func (r NVRTCResult) Error() string {
	s := ""
	if nv.GetErrorString != 0 {
		p, _, _ := syscallN(nv.GetErrorString, uintptr(r))
		s = cString(p)
	}
	if s == "" {
		s = "nvrtcResult"
	}
	return s + " (" + strconv.Itoa(int(r)) + ")"
}
