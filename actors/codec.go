package actors

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// Tokens are stored in memory in the machine's byte order (windows are typed
// views of the channel buffers); the codecs below read and write elements in
// that order.
var ne = binary.NativeEndian

// putElem stores v into b as one element of the given type (saturating for
// integer types).
func putElem(b []byte, elem string, v float64) {
	switch elem {
	case "u8":
		b[0] = fromFloat[uint8](v)
	case "i8":
		b[0] = byte(fromFloat[int8](v))
	case "u16":
		ne.PutUint16(b, fromFloat[uint16](v))
	case "i16":
		ne.PutUint16(b, uint16(fromFloat[int16](v)))
	case "u32":
		ne.PutUint32(b, fromFloat[uint32](v))
	case "i32":
		ne.PutUint32(b, uint32(fromFloat[int32](v)))
	case "u64":
		ne.PutUint64(b, fromFloat[uint64](v))
	case "i64":
		ne.PutUint64(b, uint64(fromFloat[int64](v)))
	case "f32":
		ne.PutUint32(b, math.Float32bits(float32(v)))
	case "f64":
		ne.PutUint64(b, math.Float64bits(v))
	}
}

// appendElem appends the text form of the element at the start of b: the
// shortest decimal that reads back to the same value.
func appendElem(dst, b []byte, elem string) []byte {
	switch elem {
	case "u8":
		return strconv.AppendUint(dst, uint64(b[0]), 10)
	case "i8":
		return strconv.AppendInt(dst, int64(int8(b[0])), 10)
	case "u16":
		return strconv.AppendUint(dst, uint64(ne.Uint16(b)), 10)
	case "i16":
		return strconv.AppendInt(dst, int64(int16(ne.Uint16(b))), 10)
	case "u32":
		return strconv.AppendUint(dst, uint64(ne.Uint32(b)), 10)
	case "i32":
		return strconv.AppendInt(dst, int64(int32(ne.Uint32(b))), 10)
	case "u64":
		return strconv.AppendUint(dst, ne.Uint64(b), 10)
	case "i64":
		return strconv.AppendInt(dst, int64(ne.Uint64(b)), 10)
	case "f32":
		return strconv.AppendFloat(dst, float64(math.Float32frombits(ne.Uint32(b))), 'g', -1, 32)
	case "f64":
		return strconv.AppendFloat(dst, math.Float64frombits(ne.Uint64(b)), 'g', -1, 64)
	}
	return dst
}

// parseElem parses the text s into one element stored at the start of b.
// Integers must be integers in range; floats accept anything ParseFloat does.
// The returned error does not keep s.
func parseElem(b, s []byte, elem string) error {
	s = bytes.TrimSpace(s)
	s = bytes.Trim(s, `"`)
	if len(s) == 0 {
		return fmt.Errorf("empty field: expected a number")
	}
	str := unsafe.String(&s[0], len(s)) // not retained: errors copy it
	var err error
	switch elem {
	case "f32":
		var v float64
		v, err = strconv.ParseFloat(str, 32)
		ne.PutUint32(b, math.Float32bits(float32(v)))
	case "f64":
		var v float64
		v, err = strconv.ParseFloat(str, 64)
		ne.PutUint64(b, math.Float64bits(v))
	case "u8", "u16", "u32", "u64":
		var v uint64
		v, err = strconv.ParseUint(str, 10, 8*elemSize(elem))
		switch elem {
		case "u8":
			b[0] = byte(v)
		case "u16":
			ne.PutUint16(b, uint16(v))
		case "u32":
			ne.PutUint32(b, uint32(v))
		default:
			ne.PutUint64(b, v)
		}
	default:
		var v int64
		v, err = strconv.ParseInt(str, 10, 8*elemSize(elem))
		switch elem {
		case "i8":
			b[0] = byte(v)
		case "i16":
			ne.PutUint16(b, uint16(v))
		case "i32":
			ne.PutUint32(b, uint32(v))
		default:
			ne.PutUint64(b, uint64(v))
		}
	}
	if err != nil {
		return fmt.Errorf("field %q: expected a %s number", string(s), elem)
	}
	return nil
}
