package graph

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// TokenType names the fixed-size element carried by a port: a scalar such as
// "f32" or a fixed vector such as "[4]f32". Size is the token's size in bytes.
// Two ports may be joined only when their token types are equal.
type TokenType struct {
	// Name is the canonical spelling: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64
	// c64 c128, "[N]elem" for vectors, or "bytesN" for an opaque N-byte token.
	Name string
	// Size is the size of one token in bytes.
	Size int
}

// String returns the canonical name of the token type.
func (t TokenType) String() string { return t.Name }

// IsZero reports whether the token type is unset.
func (t TokenType) IsZero() bool { return t.Name == "" && t.Size == 0 }

// MaxTokenSize is the largest token, in bytes, that ParseTokenType accepts
// (1 GiB): larger sizes are surely mistakes and would overflow size
// arithmetic.
const MaxTokenSize = 1 << 30

var scalarSizes = map[string]int{
	"u8": 1, "i8": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4, "u64": 8, "i64": 8,
	"f32": 4, "f64": 8, "c64": 8, "c128": 16,
}

// ScalarSize returns the bytes of the scalar token type name (u8 … c128)
// and whether name is one: the one table of scalar types every package
// (actors' element-wise kernels, flow-model streams) reads.
func ScalarSize(name string) (int, bool) {
	s, ok := scalarSizes[name]
	return s, ok
}

// ScalarTypes lists the scalar token type names that ParseTokenType accepts.
func ScalarTypes() []string {
	return []string{"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "c64", "c128"}
}

// ParseTokenType parses a token type name: a scalar (u8, i8, u16, i16, u32,
// i32, u64, i64, f32, f64, c64, c128), a vector "[N]scalar" with N > 0, or an
// opaque "bytesN" of N bytes.
func ParseTokenType(s string) (TokenType, error) {
	s = strings.TrimSpace(s)
	if n, ok := scalarSizes[s]; ok {
		return TokenType{Name: s, Size: n}, nil
	}
	if rest, ok := strings.CutPrefix(s, "bytes"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n <= 0 || n > MaxTokenSize {
			return TokenType{}, fmt.Errorf("token type %q: expected bytesN with N a positive integer up to %d", s, MaxTokenSize)
		}
		return TokenType{Name: s, Size: n}, nil
	}
	if strings.HasPrefix(s, "[") {
		i := strings.Index(s, "]")
		if i > 1 {
			n, err := strconv.Atoi(s[1:i])
			elem, ok := scalarSizes[s[i+1:]]
			if err == nil && n > 0 && ok && n <= MaxTokenSize/elem {
				return TokenType{Name: fmt.Sprintf("[%d]%s", n, s[i+1:]), Size: n * elem}, nil
			}
		}
		return TokenType{}, fmt.Errorf("token type %q: expected [N]scalar with N > 0 and scalar one of %s", s, strings.Join(ScalarTypes(), ", "))
	}
	return TokenType{}, fmt.Errorf("token type %q: expected one of %s, [N]scalar or bytesN", s, strings.Join(ScalarTypes(), ", "))
}

// MustTokenType is ParseTokenType that panics on error; for literals in code.
func MustTokenType(s string) TokenType {
	t, err := ParseTokenType(s)
	if err != nil {
		panic(err)
	}
	return t
}

var kindNames = map[reflect.Kind]string{
	reflect.Uint8: "u8", reflect.Int8: "i8", reflect.Uint16: "u16", reflect.Int16: "i16",
	reflect.Uint32: "u32", reflect.Int32: "i32", reflect.Uint64: "u64", reflect.Int64: "i64",
	reflect.Float32: "f32", reflect.Float64: "f64", reflect.Complex64: "c64", reflect.Complex128: "c128",
}

// TypeOf returns the token type of the Go type T: uint8 → u8, float32 → f32,
// complex64 → c64, [4]float32 → [4]f32, and for any other fixed-size type
// without pointers an opaque bytesN. It panics for types that cannot be
// tokens (those holding pointers, slices, maps, strings or interfaces).
func TypeOf[T any]() TokenType {
	return typeOf(reflect.TypeFor[T]())
}

func typeOf(t reflect.Type) TokenType {
	if name, ok := kindNames[t.Kind()]; ok {
		return TokenType{Name: name, Size: int(t.Size())}
	}
	if t.Kind() == reflect.Array {
		if name, ok := kindNames[t.Elem().Kind()]; ok && t.Len() > 0 {
			return TokenType{Name: fmt.Sprintf("[%d]%s", t.Len(), name), Size: int(t.Size())}
		}
	}
	if !pointerFree(t) || t.Size() == 0 {
		panic(fmt.Sprintf("graph: Go type %v cannot be a token: expected a fixed-size type without pointers", t))
	}
	return TokenType{Name: fmt.Sprintf("bytes%d", t.Size()), Size: int(t.Size())}
}

func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	case reflect.Bool, reflect.Int, reflect.Uint, reflect.Uintptr:
		return true
	}
	_, ok := kindNames[t.Kind()]
	return ok
}
