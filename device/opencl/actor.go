package opencl

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

// GeneratedActor is an SDF actor written against the ETH kernel-actor API (INIT,
// FIRE, CAPTURE, RESERVE, FOREACH over an output port's blocks, PORT_x,
// TOKEN_X_t) made into OpenCL C: a generated prelude of constants, types and
// macros for the actor's ports and its placement (G work-groups, I
// work-items per group, strided or consecutive block distribution), plus
// the user's source with INIT and FIRE turned into kernels. One kernel
// invocation computes G firings, one per work-group; the work-items of a
// group share the firing's input tokens and compute its output blocks.
//
// The user's source, Listing-2 style:
//
//	void FIRE() {
//	    TOKEN_IN1_t *rbuf = CAPTURE(PORT_in1);
//	    FOREACH(blk IN PORT_out1) {
//	        TOKEN_OUT1_t *wbuf = RESERVE(PORT_out1, blk);
//	        wbuf[0] = rbuf[0] * blk;  // BLOCK_OUT1_SIZE tokens per block
//	    }
//	}
//
// FIRE becomes __kernel void FIRE(__global TOKEN_IN1_t *in1__p, ulong
// in1__off, ..., __global TOKEN_OUT1_t *out1__p, ulong out1__off, ...) —
// inputs then outputs, in declaration order, each a buffer and the token
// offset of the invocation's window in it (device.ActorKernel's argument
// convention; CAPTURE and RESERVE add the offset, so a port's window may lie
// anywhere in a ring buffer). Ports are reached only through CAPTURE and
// RESERVE: the parameters' names are the port's name with a suffix, so a
// local variable may be named like its port (TOKEN_Y_t *y = RESERVE(PORT_y,
// b)) — and INIT (optional) a kernel over the
// outputs only. Pointers to TOKEN_X_t get the __global qualifier. The
// rewrite keeps every line where it was, so build errors point at the
// user's file and line.
type GeneratedActor struct {
	// Prelude is the generated code placed before the user's source.
	Prelude string
	// Text is the user's source, rewritten (line for line).
	Text string
	// Name is the user's file name.
	Name string
	// Groups (G) and Items (I) shape one invocation: G firings.
	Groups, Items int
	// HasInit says whether the source defines INIT.
	HasInit bool
	// Inputs and Outputs are the kernel's buffer arguments in order; FIRE
	// takes Inputs then Outputs, INIT takes Outputs.
	Inputs, Outputs []PortLayout
}

// ActorKernel is the former name of GeneratedActor.
//
// Deprecated: use GeneratedActor (device.ActorKernel is the compiled,
// backend-neutral actor that Device.CompileActor returns).
type ActorKernel = GeneratedActor

// PortLayout is how one port's tokens of one invocation lie in its buffer
// (the backend-neutral device.PortLayout).
type PortLayout = device.PortLayout

// Source returns the device.Source to build.
func (k *GeneratedActor) Source() device.Source {
	return device.Source{Name: k.Name, Prelude: k.Prelude, Text: k.Text}
}

// Range returns the launch shape: G work-groups of I work-items.
func (k *GeneratedActor) Range() device.Range { return device.Groups(k.Groups, k.Items) }

var cScalar = map[string]string{
	"u8": "uchar", "i8": "char", "u16": "ushort", "i16": "short", "u32": "uint", "i32": "int",
	"u64": "ulong", "i64": "long", "f32": "float", "f64": "double", "c64": "float2", "c128": "double2",
}

// cType returns the OpenCL C spelling of a token type and, for types that
// need one, a struct definition.
func cType(t graph.TokenType, tag string) (ctype, def string, err error) {
	if s, ok := cScalar[t.Name]; ok {
		return s, "", nil
	}
	if n, ok := strings.CutPrefix(t.Name, "bytes"); ok {
		return "struct " + tag, fmt.Sprintf("struct %s { uchar b[%s]; };\n", tag, n), nil
	}
	if strings.HasPrefix(t.Name, "[") {
		i := strings.Index(t.Name, "]")
		n, elem := t.Name[1:i], t.Name[i+1:]
		s, ok := cScalar[elem]
		if ok && !strings.HasSuffix(s, "2") {
			switch n {
			case "2", "3", "4", "8", "16":
				return s + n, "", nil
			}
			return "struct " + tag, fmt.Sprintf("struct %s { %s v[%s]; };\n", tag, s, n), nil
		}
	}
	return "", "", fmt.Errorf("token type %s has no OpenCL C equivalent", t.Name)
}

var cIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// GenerateActor makes the kernel of actor a, placed by pl (nil: one
// work-group of one work-item), from the user's Listing-2-style source
// read from file name.
func GenerateActor(a *graph.Actor, pl *graph.Placement, name, src string) (*GeneratedActor, error) {
	k := &GeneratedActor{Name: name, Groups: 1, Items: 1}
	if pl != nil {
		if pl.WorkGroups > 0 {
			k.Groups = pl.WorkGroups
		}
		if pl.WorkItems > 0 {
			k.Items = pl.WorkItems
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// sluice: generated prelude for actor %s (%d work-groups × %d work-items)\n", a.Name, k.Groups, k.Items)
	b.WriteString("#define IN ,\n")
	b.WriteString("#define CAPTURE(p) __SL_CAPTURE(p)\n#define __SL_CAPTURE(p) (p##__p + p##__off + (size_t)get_group_id(0) * p##_RATE)\n")
	b.WriteString("#define RESERVE(p, blk) __SL_RESERVE(p, blk)\n#define __SL_RESERVE(p, blk) (p##__p + p##__off + (size_t)get_group_id(0) * p##_RATE + (size_t)(blk) * p##_BLOCK)\n")
	b.WriteString("#define FOREACH(spec) __SL_FOREACH(spec)\n#define __SL_FOREACH(v, p) p##_FOREACH(v)\n")
	b.WriteString("#define BLOCK_COUNT(p) __SL_PASTE(p, _BLOCKS)\n#define __SL_PASTE(a, b) a##b\n")
	layout := func(p *graph.Port) (PortLayout, error) {
		if !cIdent.MatchString(p.Name) {
			return PortLayout{}, fmt.Errorf("actor %s port %q: expected a C identifier as port name for an OpenCL kernel", a.Name, p.Name)
		}
		if p.Rate.IsDynamic() || p.Rate.IsCSDF() || p.Rate.Sum() <= 0 {
			return PortLayout{}, fmt.Errorf("actor %s port %s: rate %v: the OpenCL kernel actor needs a fixed (SDF) rate > 0", a.Name, p.Name, p.Rate)
		}
		upper := strings.ToUpper(p.Name)
		ct, def, err := cType(p.Type, "sl_token_"+p.Name)
		if err != nil {
			return PortLayout{}, fmt.Errorf("actor %s port %s: %w", a.Name, p.Name, err)
		}
		l := PortLayout{Port: p, CType: ct, Rate: p.Rate.At(0)}
		b.WriteString(def)
		fmt.Fprintf(&b, "typedef %s TOKEN_%s_t;\n#define PORT_%s %s\n#define TOKEN_%s_RATE %d\n#define %s_RATE %d\n",
			ct, upper, p.Name, p.Name, upper, l.Rate, p.Name, l.Rate)
		if p.Dir == graph.Out {
			l.Block = p.Block
			if l.Block <= 0 {
				l.Block = l.Rate
			}
			if l.Rate%l.Block != 0 {
				return PortLayout{}, fmt.Errorf("actor %s port %s: block %d does not divide rate %d", a.Name, p.Name, l.Block, l.Rate)
			}
			l.Blocks = l.Rate / l.Block
			l.Distribution = graph.Strided
			if pl != nil && pl.Distribution[p.Name] != "" {
				l.Distribution = pl.Distribution[p.Name]
			}
			fmt.Fprintf(&b, "#define BLOCK_%s_SIZE %d\n#define BLOCK_%s_COUNT %d\n#define %s_BLOCK %d\n#define %s_BLOCKS %d\n",
				upper, l.Block, upper, l.Blocks, p.Name, l.Block, p.Name, l.Blocks)
			switch l.Distribution {
			case graph.Strided: // block k to work-item k mod I
				fmt.Fprintf(&b, "#define %s_FOREACH(v) for (int v = (int)get_local_id(0); v < %d; v += (int)get_local_size(0))\n", p.Name, l.Blocks)
			case graph.Consecutive: // work-item i takes a run of ceil(B/I) blocks
				fmt.Fprintf(&b, "#define %s_FOREACH(v) for (int v = (int)get_local_id(0) * ((%d + (int)get_local_size(0) - 1) / (int)get_local_size(0)), v##_end = min(v + (%d + (int)get_local_size(0) - 1) / (int)get_local_size(0), %d); v < v##_end; v++)\n",
					p.Name, l.Blocks, l.Blocks, l.Blocks)
			default:
				return PortLayout{}, fmt.Errorf("actor %s port %s: distribution %q: expected strided or consecutive", a.Name, p.Name, l.Distribution)
			}
		}
		return l, nil
	}
	for _, p := range a.Inputs {
		l, err := layout(p)
		if err != nil {
			return nil, err
		}
		k.Inputs = append(k.Inputs, l)
	}
	for _, p := range a.Outputs {
		l, err := layout(p)
		if err != nil {
			return nil, err
		}
		k.Outputs = append(k.Outputs, l)
	}
	params := func(ls ...[]PortLayout) string {
		var ps []string
		for _, l := range ls {
			for _, x := range l {
				ps = append(ps, fmt.Sprintf("__global TOKEN_%s_t *%s__p, ulong %s__off", strings.ToUpper(x.Port.Name), x.Port.Name, x.Port.Name))
			}
		}
		if len(ps) == 0 {
			return "void"
		}
		return strings.Join(ps, ", ")
	}
	text, fire := rewriteEntry(qualifyPointers(src), "FIRE", params(k.Inputs, k.Outputs))
	if !fire {
		return nil, fmt.Errorf("%s: actor %s: expected a `void FIRE()` procedure", name, a.Name)
	}
	text, k.HasInit = rewriteEntry(text, "INIT", params(k.Outputs))
	k.Text = text
	k.Prelude = b.String()
	return k, nil
}

// tokenPointer finds pointers to token types: "TOKEN_X_t *", "const TOKEN_X_t *".
var (
	tokenPointer = regexp.MustCompile(`\b(?:const\s+)?TOKEN_\w+_t\s*\*`)
	qualified    = regexp.MustCompile(`\b(?:__global|global|__local|local|__constant|constant|__private|private)\s+$`)
)

// qualifyPointers adds __global to pointers to token types that have no
// address-space qualifier (CAPTURE and RESERVE point into global memory).
func qualifyPointers(src string) string {
	var b strings.Builder
	last := 0
	for _, m := range tokenPointer.FindAllStringIndex(src, -1) {
		b.WriteString(src[last:m[0]])
		if !qualified.MatchString(src[max(0, m[0]-16):m[0]]) {
			b.WriteString("__global ")
		}
		b.WriteString(src[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(src[last:])
	return b.String()
}

// rewriteEntry turns "void NAME()" or "void NAME(void)" into a kernel with
// the given parameters, on the same line.
func rewriteEntry(src, name, params string) (string, bool) {
	re := regexp.MustCompile(`(^|\n)([ \t]*)void[ \t]+` + name + `[ \t]*\([ \t]*(?:void)?[ \t]*\)`)
	found := false
	out := re.ReplaceAllStringFunc(src, func(m string) string {
		found = true
		sub := re.FindStringSubmatch(m)
		return sub[1] + sub[2] + "__kernel void " + name + "(" + params + ")"
	})
	return out, found
}
