package shell

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// isCSV reports whether a data file is CSV (by its extension); any other
// file is raw little-endian binary.
func isCSV(path string) bool { return strings.EqualFold(filepath.Ext(path), ".csv") }

// readData reads a data file as size bytes of tokens of type typ.
func readData(path, typ string, size int64) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if isCSV(path) {
		if b, err = parseCSV(path, b, typ); err != nil {
			return nil, err
		}
	}
	if int64(len(b)) != size {
		return nil, fmt.Errorf("%s: %d bytes of %s: expected %d bytes (%d tokens)", path, len(b), typ, size, size/int64(tokenSize(typ)))
	}
	return b, nil
}

// writeData writes b (tokens of type typ) to a CSV or raw file.
func writeData(path, typ string, b []byte) error {
	if !isCSV(path) {
		return os.WriteFile(path, b, 0o644)
	}
	var w bytes.Buffer
	vals := scalarsOf(typ)
	es := tokenSize(typ) / vals
	for off := 0; off+tokenSize(typ) <= len(b); off += tokenSize(typ) {
		for v := 0; v < vals; v++ {
			if v > 0 {
				w.WriteByte(',')
			}
			w.WriteString(formatScalar(typ, b[off+v*es:]))
		}
		w.WriteByte('\n')
	}
	return os.WriteFile(path, w.Bytes(), 0o644)
}

// tokenSize is the size of a token type in bytes (0 when unknown).
func tokenSize(t string) int {
	switch t {
	case "u8", "i8":
		return 1
	case "u16", "i16":
		return 2
	case "u32", "i32", "f32":
		return 4
	case "u64", "i64", "f64", "c64":
		return 8
	case "c128":
		return 16
	}
	return 0
}

// scalarsOf is the number of numbers per token (2 for complex types).
func scalarsOf(t string) int {
	if t == "c64" || t == "c128" {
		return 2
	}
	return 1
}

// elem is the scalar type inside a token type.
func elem(t string) string {
	switch t {
	case "c64":
		return "f32"
	case "c128":
		return "f64"
	}
	return t
}

// parseCSV turns comma-, space- or newline-separated numbers into tokens;
// complex tokens take two numbers (re, im).
func parseCSV(path string, text []byte, typ string) ([]byte, error) {
	e := elem(typ)
	es := tokenSize(typ) / scalarsOf(typ)
	var out []byte
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	line := 0
	for sc.Scan() {
		line++
		for f := range strings.FieldsFuncSeq(sc.Text(), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' }) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %q: expected a number", path, line, f)
			}
			buf := make([]byte, es)
			putScalar(e, buf, v)
			out = append(out, buf...)
		}
	}
	return out, sc.Err()
}

func putScalar(t string, b []byte, v float64) {
	le := binary.LittleEndian
	switch t {
	case "u8":
		b[0] = uint8(v)
	case "i8":
		b[0] = uint8(int8(v))
	case "u16":
		le.PutUint16(b, uint16(v))
	case "i16":
		le.PutUint16(b, uint16(int16(v)))
	case "u32":
		le.PutUint32(b, uint32(v))
	case "i32":
		le.PutUint32(b, uint32(int32(v)))
	case "f32":
		le.PutUint32(b, math.Float32bits(float32(v)))
	case "u64":
		le.PutUint64(b, uint64(v))
	case "i64":
		le.PutUint64(b, uint64(int64(v)))
	case "f64":
		le.PutUint64(b, math.Float64bits(v))
	}
}

func formatScalar(t string, b []byte) string {
	le := binary.LittleEndian
	switch elem(t) {
	case "u8":
		return strconv.Itoa(int(b[0]))
	case "i8":
		return strconv.Itoa(int(int8(b[0])))
	case "u16":
		return strconv.Itoa(int(le.Uint16(b)))
	case "i16":
		return strconv.Itoa(int(int16(le.Uint16(b))))
	case "u32":
		return strconv.FormatUint(uint64(le.Uint32(b)), 10)
	case "i32":
		return strconv.Itoa(int(int32(le.Uint32(b))))
	case "f32":
		return strconv.FormatFloat(float64(math.Float32frombits(le.Uint32(b))), 'g', -1, 32)
	case "u64":
		return strconv.FormatUint(le.Uint64(b), 10)
	case "i64":
		return strconv.FormatInt(int64(le.Uint64(b)), 10)
	}
	return strconv.FormatFloat(math.Float64frombits(le.Uint64(b)), 'g', -1, 64)
}
