package cuda

import (
	"context"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/kernelgen"
	"github.com/sluicehq/sluice/graph"
)

// GeneratedActor is an SDF actor written against the ETH kernel-actor API
// (INIT, FIRE, CAPTURE, RESERVE, FOREACH over an output port's blocks,
// PORT_x, TOKEN_X_t) made into CUDA C, the same API as device/opencl's:
// a generated prelude of constants, types and macros for the actor's ports
// and its placement, plus the user's source with INIT and FIRE turned into
// kernels. One launch computes G firings, one per thread block (G blocks of
// I threads); the threads of a block share the firing's input tokens and
// compute its output blocks, dealt strided (block k to thread k mod I) or
// in consecutive runs of ⌈B/I⌉.
//
// FIRE becomes extern "C" __global__ void FIRE(TOKEN_IN1_t *in1__p, unsigned
// long long in1__off, …, TOKEN_OUT1_t *out1__p, unsigned long long
// out1__off, …) — inputs then outputs, in declaration order, each a buffer
// and the token offset of the invocation's window (device.ActorKernel's
// argument convention) — and INIT (optional) a kernel over the outputs only.
// Ports are reached only through CAPTURE and RESERVE (the parameters carry a
// suffix, as in device/opencl), so a local may be named like its port. The
// source is built with NVRTC's -default-device, so helper functions need no
// __device__; get_local_id(0), get_group_id(0), get_local_size(0) and
// get_num_groups(0) are defined as in OpenCL. The rewrite keeps every line
// where it was, so build errors point at the user's file and line.
type GeneratedActor = kernelgen.Actor

var cuScalar = map[string]string{
	"u8": "unsigned char", "i8": "signed char", "u16": "unsigned short", "i16": "short",
	"u32": "unsigned int", "i32": "int", "u64": "unsigned long long", "i64": "long long",
	"f32": "float", "f64": "double", "c64": "float2", "c128": "double2",
}

var cuVectors = map[string]string{"f32": "float", "f64": "double", "i32": "int", "u32": "uint", "i8": "char", "u8": "uchar", "i16": "short", "u16": "ushort", "i64": "longlong", "u64": "ulonglong"}

// cuVector spells [n]elem as CUDA's built-in vector type where it has one
// of that width and size.
func cuVector(t graph.TokenType, elem, n, _ string) (string, bool) {
	if v, ok := cuVectors[elem]; ok && (n == "2" || n == "4") && t.Size == sizeOf(elem)*atoi(n) {
		return v + n, true
	}
	return "", false
}

func sizeOf(elem string) int {
	switch elem {
	case "u8", "i8":
		return 1
	case "u16", "i16":
		return 2
	case "u32", "i32", "f32":
		return 4
	}
	return 8
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// dialect is how CUDA C spells a kernel actor.
var dialect = &kernelgen.Dialect{
	Lang: "CUDA", A: "a CUDA", Kind: graph.ImplCUDA,
	Banner: "// sluice: generated CUDA prelude for actor %s (%d blocks × %d threads)\n",
	Helpers: "typedef unsigned long long sl_size_t;\n" +
		"static __device__ __forceinline__ unsigned get_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }\n" +
		"static __device__ __forceinline__ unsigned get_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }\n" +
		"static __device__ __forceinline__ unsigned get_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }\n" +
		"static __device__ __forceinline__ unsigned get_num_groups(int d) { return d == 0 ? gridDim.x : d == 1 ? gridDim.y : gridDim.z; }\n",
	SizeT:   "sl_size_t",
	GroupID: "blockIdx.x", LocalID: "threadIdx.x", LocalSize: "blockDim.x",
	Scalars: cuScalar, Byte: "unsigned char", Vector: cuVector,
	OffType: "sl_size_t",
	Entry:   `extern "C" __global__ void `,
	Items:   "threads per block",
	Options: "-default-device",
}

// GenerateActor makes the CUDA kernel of actor a, placed by pl (nil: one
// block of one thread), from the user's Listing-2-style source read from
// file name.
func GenerateActor(a *graph.Actor, pl *graph.Placement, name, src string) (*GeneratedActor, error) {
	return dialect.Generate(a, pl, name, src)
}

var _ device.ActorCompiler = (*Device)(nil)

// CompileActor generates the actor's CUDA prelude for placement pl
// (GenerateActor), builds it with NVRTC (-default-device) and returns the
// FIRE (and INIT) kernels as a device.ActorKernel. A compile error is a
// *device.BuildError at the user's file and line.
func (d *Device) CompileActor(ctx context.Context, a *graph.Actor, pl *graph.Placement, impl graph.Impl) (device.ActorKernel, error) {
	ca, err := dialect.Compile(ctx, d, d.info, d.cu.MaxThreadsPerBlock, a, pl, impl)
	if err != nil {
		return nil, err
	}
	return ca, nil
}
