package cu

import "unsafe"

// ptrFromC converts an address returned by C (memory Go does not manage) to
// an unsafe.Pointer. The indirection keeps go vet's unsafeptr check quiet
// about the one conversion that is legitimately from a C address.
func ptrFromC(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// cString reads a NUL-terminated C string.
func cString(p uintptr) string {
	if p == 0 {
		return ""
	}
	b := (*[1 << 20]byte)(ptrFromC(p))
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	return string(b[:n])
}

// cBytes returns a NUL-terminated copy of s.
func cBytes(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
