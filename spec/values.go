package spec

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

// encodeValues encodes a list of initial token values of type t as
// little-endian bytes, returning the bytes and the number of tokens.
//
// Scalars are numbers; complex values are [re, im] or strings such as
// "1+2i"; vectors ([N]elem) are lists of N elements; opaque bytesN tokens are
// lists of N integers 0..255 or hex strings of N bytes.
func (p *yp) encodeValues(t graph.TokenType, n *yaml.Node, what string) ([]byte, int, bool) {
	n = p.Node(n)
	if n == nil {
		return nil, 0, false
	}
	if n.Kind != yaml.SequenceNode {
		p.Errorf(n, "%s: expected a list of initial token values, found %s", what, yamlpos.Kind(n))
		return nil, 0, false
	}
	if int64(len(n.Content))*int64(t.Size) > maxInitialData {
		p.Errorf(n, "%s: %d tokens of %d bytes: initial data is limited to %d bytes", what, len(n.Content), t.Size, maxInitialData)
		return nil, 0, false
	}
	elem, count := t.Name, 1
	switch {
	case strings.HasPrefix(t.Name, "["):
		i := strings.Index(t.Name, "]")
		count, _ = strconv.Atoi(t.Name[1:i])
		elem = t.Name[i+1:]
	case strings.HasPrefix(t.Name, "bytes"):
		elem, count = "bytes", t.Size
	}
	buf := make([]byte, 0, len(n.Content)*t.Size)
	ok := true
	for i, c := range n.Content {
		w := fmt.Sprintf("%s[%d]", what, i)
		var k bool
		switch {
		case elem == "bytes":
			buf, k = p.encodeBytes(buf, c, count, w)
		case count > 1 || strings.HasPrefix(t.Name, "["):
			cn := p.Node(c)
			if cn == nil {
				return nil, 0, false
			}
			if cn.Kind != yaml.SequenceNode || len(cn.Content) != count {
				p.Errorf(cn, "%s: expected a list of %d %s values for a %s token, found %s", w, count, elem, t.Name, yamlpos.Kind(cn))
				ok = false
				continue
			}
			k = true
			for j, e := range cn.Content {
				var kk bool
				buf, kk = p.encodeScalar(buf, elem, e, fmt.Sprintf("%s[%d]", w, j))
				k = k && kk
			}
		default:
			buf, k = p.encodeScalar(buf, elem, c, w)
		}
		ok = ok && k
	}
	return buf, len(n.Content), ok
}

func (p *yp) encodeBytes(buf []byte, n *yaml.Node, size int, what string) ([]byte, bool) {
	n = p.Node(n)
	if n == nil {
		return buf, false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		b, err := hex.DecodeString(strings.TrimPrefix(n.Value, "0x"))
		if err != nil || len(b) != size {
			p.Errorf(n, "%s: expected %d bytes as hex digits, found %s", what, size, yamlpos.Kind(n))
			return buf, false
		}
		return append(buf, b...), true
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) != size {
		p.Errorf(n, "%s: expected a list of %d bytes (0..255) or a hex string, found %s", what, size, yamlpos.Kind(n))
		return buf, false
	}
	ok := true
	for _, e := range n.Content {
		v, k := p.Int(e, what, 0, 255)
		ok = ok && k
		buf = append(buf, byte(v))
	}
	return buf, ok
}

func (p *yp) encodeScalar(buf []byte, elem string, n *yaml.Node, what string) ([]byte, bool) {
	le := binary.LittleEndian
	ints := map[string]struct {
		bits   int
		signed bool
	}{"u8": {8, false}, "i8": {8, true}, "u16": {16, false}, "i16": {16, true}, "u32": {32, false}, "i32": {32, true}, "u64": {64, false}, "i64": {64, true}}
	if in, ok := ints[elem]; ok {
		n = p.Node(n)
		if n == nil {
			return buf, false
		}
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			p.Errorf(n, "%s: expected an integer for %s, found %s", what, elem, yamlpos.Kind(n))
			return buf, false
		}
		var u uint64
		if in.signed {
			var v int64
			lo, hi := int64(-1)<<(in.bits-1), int64(uint64(1)<<(in.bits-1)-1)
			if err := n.Decode(&v); err != nil || v < lo || v > hi {
				p.Errorf(n, "%s: %s out of range for %s: expected %d to %d", what, yamlpos.Clip(n.Value), elem, lo, hi)
				return buf, false
			}
			u = uint64(v)
		} else {
			var v uint64
			hi := uint64(math.MaxUint64) >> (64 - in.bits)
			if err := n.Decode(&v); err != nil || v > hi {
				p.Errorf(n, "%s: %s out of range for %s: expected 0 to %d", what, yamlpos.Clip(n.Value), elem, hi)
				return buf, false
			}
			u = v
		}
		switch in.bits {
		case 8:
			return append(buf, byte(u)), true
		case 16:
			return le.AppendUint16(buf, uint16(u)), true
		case 32:
			return le.AppendUint32(buf, uint32(u)), true
		}
		return le.AppendUint64(buf, u), true
	}
	switch elem {
	case "f32":
		v, ok := p.Number(n, what)
		if ok && math.Abs(v) > math.MaxFloat32 && !math.IsInf(v, 0) {
			p.Errorf(n, "%s: %g out of range for f32", what, v)
			return buf, false
		}
		return le.AppendUint32(buf, math.Float32bits(float32(v))), ok
	case "f64":
		v, ok := p.Number(n, what)
		return le.AppendUint64(buf, math.Float64bits(v)), ok
	case "c64", "c128":
		re, im, ok := p.complexValue(n, what)
		if elem == "c64" {
			buf = le.AppendUint32(buf, math.Float32bits(float32(re)))
			return le.AppendUint32(buf, math.Float32bits(float32(im))), ok
		}
		buf = le.AppendUint64(buf, math.Float64bits(re))
		return le.AppendUint64(buf, math.Float64bits(im)), ok
	}
	p.Errorf(n, "%s: cannot write values of token type %s", what, elem)
	return buf, false
}

// complexValue reads [re, im], a real number, or a string such as "1+2i".
func (p *yp) complexValue(n *yaml.Node, what string) (float64, float64, bool) {
	n = p.Node(n)
	if n == nil {
		return 0, 0, false
	}
	switch {
	case n.Kind == yaml.SequenceNode && len(n.Content) == 2:
		re, ok1 := p.Number(n.Content[0], what+" (real part)")
		im, ok2 := p.Number(n.Content[1], what+" (imaginary part)")
		return re, im, ok1 && ok2
	case n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float"):
		re, ok := p.Number(n, what)
		return re, 0, ok
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
		c, err := strconv.ParseComplex(strings.ReplaceAll(n.Value, " ", ""), 128)
		if err == nil {
			return real(c), imag(c), true
		}
	}
	p.Errorf(n, "%s: expected a complex value as [re, im], a number or a string such as \"1+2i\", found %s", what, yamlpos.Kind(n))
	return 0, 0, false
}
