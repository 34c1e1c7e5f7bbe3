package opencl

import (
	"regexp"
	"strings"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/kernelgen"
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
type GeneratedActor = kernelgen.Actor

// ActorKernel is the former name of GeneratedActor.
//
// Deprecated: use GeneratedActor (device.ActorKernel is the compiled,
// backend-neutral actor that Device.CompileActor returns).
type ActorKernel = GeneratedActor

// PortLayout is how one port's tokens of one invocation lie in its buffer
// (the backend-neutral device.PortLayout).
type PortLayout = device.PortLayout

var cScalar = map[string]string{
	"u8": "uchar", "i8": "char", "u16": "ushort", "i16": "short", "u32": "uint", "i32": "int",
	"u64": "ulong", "i64": "long", "f32": "float", "f64": "double", "c64": "float2", "c128": "double2",
}

// clVector spells [n]elem as OpenCL C's vector type, for the widths it has.
func clVector(_ graph.TokenType, _, n, s string) (string, bool) {
	switch n {
	case "2", "3", "4", "8", "16":
		return s + n, true
	}
	return "", false
}

// dialect is how OpenCL C spells a kernel actor.
var dialect = &kernelgen.Dialect{
	Lang: "OpenCL", A: "an OpenCL", Kind: graph.ImplOpenCL,
	Banner:  "// sluice: generated prelude for actor %s (%d work-groups × %d work-items)\n",
	SizeT:   "size_t",
	GroupID: "get_group_id(0)", LocalID: "get_local_id(0)", LocalSize: "get_local_size(0)",
	Scalars: cScalar, Byte: "uchar", Vector: clVector,
	Pointer: "__global ", OffType: "ulong", NoParams: "void",
	Entry:   "__kernel void ",
	Prepare: qualifyPointers,
	Items:   "work-items per work-group",
}

// GenerateActor makes the kernel of actor a, placed by pl (nil: one
// work-group of one work-item), from the user's Listing-2-style source
// read from file name.
func GenerateActor(a *graph.Actor, pl *graph.Placement, name, src string) (*GeneratedActor, error) {
	return dialect.Generate(a, pl, name, src)
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
