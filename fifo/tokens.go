package fifo

import (
	"fmt"
	"unsafe"
)

// Tokens views b as a slice of T without copying (an unsafe
// reinterpretation): len(b) must be a multiple of sizeof(T) and b must be
// aligned for T, or it panics. T must hold no pointers (the ring is not
// scanned by the garbage collector): numbers, arrays and structs of numbers.
// Windows of a FIFO whose TokenSize is sizeof(T) are always aligned.
func Tokens[T any](b []byte) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if sz == 0 {
		panic(fmt.Sprintf("fifo.Tokens[%T]: zero-size type", z))
	}
	if len(b)%sz != 0 {
		panic(fmt.Sprintf("fifo.Tokens[%T]: expected a length that is a multiple of %d bytes, found %d", z, sz, len(b)))
	}
	if len(b) == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%unsafe.Alignof(z) != 0 {
		panic(fmt.Sprintf("fifo.Tokens[%T]: expected %d-byte alignment, found address %p", z, unsafe.Alignof(z), p))
	}
	return unsafe.Slice((*T)(p), len(b)/sz)
}

// Bytes views s as its bytes without copying: len(s)*sizeof(T) bytes.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}
