package device

import (
	"context"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/graph"
)

// ActorCompiler is implemented by devices that run kernel actors (OpenCL,
// CUDA): it turns an actor's kernel implementation into an ActorKernel,
// ready to launch on the device's queues. The runtime type-asserts a
// Device to ActorCompiler for every actor mapped to it with a kernel
// implementation.
type ActorCompiler interface {
	// CompileActor generates the actor's kernel prelude (ports, token
	// types, the work-group × work-item shape and block distribution of
	// pl), builds it with the user's source impl and returns the kernels.
	// pl may be nil (one work-group of one work-item). impl.Source names the
	// user's file; its text is read from that file, or taken from impl.Func
	// when that is a string (sources held in code). A compile error is a
	// *BuildError whose diagnostics point at the user's file and line.
	CompileActor(ctx context.Context, a *graph.Actor, pl *graph.Placement, impl graph.Impl) (ActorKernel, error)
}

// ActorKernel is a compiled kernel actor. One invocation of its Fire kernel
// computes up to Groups() consecutive firings, one per work-group (the ETH
// mapping's G), each with Items() work-items (I).
//
// Argument convention, shared by every backend: each port of the actor is
// bound to a Window (a device buffer and a token offset); firing j of an
// invocation (its work-group j) reads input i at tokens
// [Off + j·rate, Off + (j+1)·rate) of the input's window, and writes output
// o likewise. Fire takes the windows of Inputs() then Outputs(), in
// declaration order; Init takes those of Outputs() only. Bind sets them;
// the values are captured when the kernel is launched, so one kernel may be
// re-bound and launched again at once (in-order queues).
//
// An ActorKernel is not safe for concurrent use: the runtime binds and
// launches it from one goroutine.
type ActorKernel interface {
	// Groups returns G, the most firings one invocation computes.
	Groups() int
	// Items returns I, the work-items per work-group (per firing).
	Items() int
	// Range returns the launch shape of an invocation of g firings
	// (1 ≤ g ≤ Groups()): g work-groups of Items() work-items.
	Range(g int) Range
	// Fire returns the kernel computing firings.
	Fire() Kernel
	// Init returns the kernel that fills the outputs' initial tokens (ETH
	// INIT), or nil when the actor has none.
	Init() Kernel
	// Inputs and Outputs describe the ports' windows, in declaration order.
	Inputs() []PortLayout
	Outputs() []PortLayout
	// Bind sets the port arguments of k (Fire or Init) to ws: for Fire
	// len(Inputs())+len(Outputs()) windows, for Init len(Outputs()).
	Bind(k Kernel, ws []Window) error
	// Log returns the build log (warnings), mapped to the user's lines.
	Log() string
	// Release frees the kernels and the program; later calls do nothing.
	Release() error
}

// Window is where a port's tokens lie for one launch: Off is the offset, in
// tokens, of firing 0's first token in Buf.
type Window struct {
	Buf Buffer
	Off int64
}

// PortLayout is how one port's tokens of one invocation lie in its window:
// g consecutive firings of Rate tokens; for outputs each firing's tokens are
// Blocks blocks of Block tokens, dealt to the work-items by Distribution.
type PortLayout struct {
	// Port is the graph port.
	Port *graph.Port
	// CType is the kernel language's spelling of one token ("float", …).
	CType string
	// Rate is the tokens per firing; Block the tokens per block (outputs).
	Rate, Block int
	// Blocks is the blocks per firing (outputs).
	Blocks int
	// Distribution says how blocks are spread over work-items (outputs).
	Distribution graph.Distribution
}

// TokenSize returns the size of one token in bytes.
func (p PortLayout) TokenSize() int64 { return int64(p.Port.Type.Size) }

// Bytes returns the bytes g firings move on the port.
func (p PortLayout) Bytes(g int) int64 { return int64(g) * int64(p.Rate) * int64(p.Port.Type.Size) }

// KernelSource returns the text of a kernel implementation: impl.Func when
// it is a string, else the contents of the file impl.Source.
func KernelSource(a *graph.Actor, impl graph.Impl) (name, text string, err error) {
	name = impl.Source
	if s, ok := impl.Func.(string); ok {
		if name == "" {
			name = a.Name + "." + string(impl.Kind)
		}
		return name, s, nil
	}
	if name == "" {
		return "", "", fmt.Errorf("actor %s: %s implementation names no source file", a.Name, impl.Kind)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", "", fmt.Errorf("actor %s: reading %s kernel: %w", a.Name, impl.Kind, err)
	}
	return name, string(b), nil
}
