package cuda

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/device"
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
type GeneratedActor struct {
	// Prelude is the generated code placed before the user's source.
	Prelude string
	// Text is the user's source, rewritten (line for line).
	Text string
	// Name is the user's file name.
	Name string
	// Groups (G) and Items (I) shape one launch: G firings.
	Groups, Items int
	// HasInit says whether the source defines INIT.
	HasInit bool
	// Inputs and Outputs are the ports in declaration order.
	Inputs, Outputs []device.PortLayout
}

// Source returns the device.Source to build.
func (k *GeneratedActor) Source() device.Source {
	return device.Source{Name: k.Name, Prelude: k.Prelude, Text: k.Text}
}

var cuScalar = map[string]string{
	"u8": "unsigned char", "i8": "signed char", "u16": "unsigned short", "i16": "short",
	"u32": "unsigned int", "i32": "int", "u64": "unsigned long long", "i64": "long long",
	"f32": "float", "f64": "double", "c64": "float2", "c128": "double2",
}

var cuVector = map[string]string{"f32": "float", "f64": "double", "i32": "int", "u32": "uint", "i8": "char", "u8": "uchar", "i16": "short", "u16": "ushort", "i64": "longlong", "u64": "ulonglong"}

// cuType returns the CUDA C spelling of a token type and, for types that
// need one, a struct definition.
func cuType(t graph.TokenType, tag string) (ctype, def string, err error) {
	if s, ok := cuScalar[t.Name]; ok {
		return s, "", nil
	}
	if n, ok := strings.CutPrefix(t.Name, "bytes"); ok {
		return "struct " + tag, fmt.Sprintf("struct %s { unsigned char b[%s]; };\n", tag, n), nil
	}
	if strings.HasPrefix(t.Name, "[") {
		i := strings.Index(t.Name, "]")
		n, elem := t.Name[1:i], t.Name[i+1:]
		if s, ok := cuScalar[elem]; ok && !strings.HasSuffix(s, "2") {
			if v, ok := cuVector[elem]; ok && (n == "2" || n == "4") && t.Size == sizeOf(elem)*atoi(n) {
				return v + n, "", nil
			}
			return "struct " + tag, fmt.Sprintf("struct %s { %s v[%s]; };\n", tag, s, n), nil
		}
	}
	return "", "", fmt.Errorf("token type %s has no CUDA C equivalent", t.Name)
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

var cIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// GenerateActor makes the CUDA kernel of actor a, placed by pl (nil: one
// block of one thread), from the user's Listing-2-style source read from
// file name.
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
	fmt.Fprintf(&b, "// sluice: generated CUDA prelude for actor %s (%d blocks × %d threads)\n", a.Name, k.Groups, k.Items)
	b.WriteString("typedef unsigned long long sl_size_t;\n")
	b.WriteString("static __device__ __forceinline__ unsigned get_local_id(int d) { return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z; }\n")
	b.WriteString("static __device__ __forceinline__ unsigned get_group_id(int d) { return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z; }\n")
	b.WriteString("static __device__ __forceinline__ unsigned get_local_size(int d) { return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z; }\n")
	b.WriteString("static __device__ __forceinline__ unsigned get_num_groups(int d) { return d == 0 ? gridDim.x : d == 1 ? gridDim.y : gridDim.z; }\n")
	b.WriteString("#define IN ,\n")
	b.WriteString("#define CAPTURE(p) __SL_CAPTURE(p)\n#define __SL_CAPTURE(p) (p##__p + p##__off + (sl_size_t)blockIdx.x * p##_RATE)\n")
	b.WriteString("#define RESERVE(p, blk) __SL_RESERVE(p, blk)\n#define __SL_RESERVE(p, blk) (p##__p + p##__off + (sl_size_t)blockIdx.x * p##_RATE + (sl_size_t)(blk) * p##_BLOCK)\n")
	b.WriteString("#define FOREACH(spec) __SL_FOREACH(spec)\n#define __SL_FOREACH(v, p) p##_FOREACH(v)\n")
	b.WriteString("#define BLOCK_COUNT(p) __SL_PASTE(p, _BLOCKS)\n#define __SL_PASTE(a, b) a##b\n")
	layout := func(p *graph.Port) (device.PortLayout, error) {
		if !cIdent.MatchString(p.Name) {
			return device.PortLayout{}, fmt.Errorf("actor %s port %q: expected a C identifier as port name for a CUDA kernel", a.Name, p.Name)
		}
		if p.Rate.IsDynamic() || p.Rate.IsCSDF() || p.Rate.Sum() <= 0 {
			return device.PortLayout{}, fmt.Errorf("actor %s port %s: rate %v: the CUDA kernel actor needs a fixed (SDF) rate > 0", a.Name, p.Name, p.Rate)
		}
		upper := strings.ToUpper(p.Name)
		ct, def, err := cuType(p.Type, "sl_token_"+p.Name)
		if err != nil {
			return device.PortLayout{}, fmt.Errorf("actor %s port %s: %w", a.Name, p.Name, err)
		}
		l := device.PortLayout{Port: p, CType: ct, Rate: p.Rate.At(0)}
		b.WriteString(def)
		fmt.Fprintf(&b, "typedef %s TOKEN_%s_t;\n#define PORT_%s %s\n#define TOKEN_%s_RATE %d\n#define %s_RATE %d\n",
			ct, upper, p.Name, p.Name, upper, l.Rate, p.Name, l.Rate)
		if p.Dir == graph.Out {
			l.Block = p.Block
			if l.Block <= 0 {
				l.Block = l.Rate
			}
			if l.Rate%l.Block != 0 {
				return device.PortLayout{}, fmt.Errorf("actor %s port %s: block %d does not divide rate %d", a.Name, p.Name, l.Block, l.Rate)
			}
			l.Blocks = l.Rate / l.Block
			l.Distribution = graph.Strided
			if pl != nil && pl.Distribution[p.Name] != "" {
				l.Distribution = pl.Distribution[p.Name]
			}
			fmt.Fprintf(&b, "#define BLOCK_%s_SIZE %d\n#define BLOCK_%s_COUNT %d\n#define %s_BLOCK %d\n#define %s_BLOCKS %d\n",
				upper, l.Block, upper, l.Blocks, p.Name, l.Block, p.Name, l.Blocks)
			switch l.Distribution {
			case graph.Strided: // block k to thread k mod I
				fmt.Fprintf(&b, "#define %s_FOREACH(v) for (int v = (int)threadIdx.x; v < %d; v += (int)blockDim.x)\n", p.Name, l.Blocks)
			case graph.Consecutive: // thread i takes a run of ceil(B/I) blocks
				fmt.Fprintf(&b, "#define %s_FOREACH(v) for (int v = (int)threadIdx.x * ((%d + (int)blockDim.x - 1) / (int)blockDim.x), v##_end = min(v + (%d + (int)blockDim.x - 1) / (int)blockDim.x, %d); v < v##_end; v++)\n",
					p.Name, l.Blocks, l.Blocks, l.Blocks)
			default:
				return device.PortLayout{}, fmt.Errorf("actor %s port %s: distribution %q: expected strided or consecutive", a.Name, p.Name, l.Distribution)
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
	params := func(ls ...[]device.PortLayout) string {
		var ps []string
		for _, l := range ls {
			for _, x := range l {
				ps = append(ps, fmt.Sprintf("TOKEN_%s_t *%s__p, sl_size_t %s__off", strings.ToUpper(x.Port.Name), x.Port.Name, x.Port.Name))
			}
		}
		return strings.Join(ps, ", ")
	}
	text, fire := rewriteEntry(src, "FIRE", params(k.Inputs, k.Outputs))
	if !fire {
		return nil, fmt.Errorf("%s: actor %s: expected a `void FIRE()` procedure", name, a.Name)
	}
	text, k.HasInit = rewriteEntry(text, "INIT", params(k.Outputs))
	k.Text = text
	k.Prelude = b.String()
	return k, nil
}

// rewriteEntry turns "void NAME()" or "void NAME(void)" into an extern "C"
// kernel with the given parameters, on the same line.
func rewriteEntry(src, name, params string) (string, bool) {
	re := regexp.MustCompile(`(^|\n)([ \t]*)void[ \t]+` + name + `[ \t]*\([ \t]*(?:void)?[ \t]*\)`)
	found := false
	out := re.ReplaceAllStringFunc(src, func(m string) string {
		found = true
		sub := re.FindStringSubmatch(m)
		return sub[1] + sub[2] + `extern "C" __global__ void ` + name + "(" + params + ")"
	})
	return out, found
}

var _ device.ActorCompiler = (*Device)(nil)

// CompileActor generates the actor's CUDA prelude for placement pl
// (GenerateActor), builds it with NVRTC (-default-device) and returns the
// FIRE (and INIT) kernels as a device.ActorKernel. A compile error is a
// *device.BuildError at the user's file and line.
func (d *Device) CompileActor(ctx context.Context, a *graph.Actor, pl *graph.Placement, impl graph.Impl) (device.ActorKernel, error) {
	if impl.Kind != graph.ImplCUDA {
		return nil, fmt.Errorf("actor %s: %s implementation: %w (expected a CUDA kernel on %s)", a.Name, impl.Kind, device.ErrUnsupported, d.info)
	}
	name, text, err := device.KernelSource(a, impl)
	if err != nil {
		return nil, err
	}
	ga, err := GenerateActor(a, pl, name, text)
	if err != nil {
		return nil, err
	}
	if mt := d.cu.MaxThreadsPerBlock; mt > 0 && ga.Items > mt {
		return nil, fmt.Errorf("actor %s: %d threads per block: expected at most %d on %s", a.Name, ga.Items, mt, d.info)
	}
	p, err := d.Build(ctx, ga.Source(), "-default-device")
	if err != nil {
		return nil, fmt.Errorf("actor %s: %w", a.Name, err)
	}
	ca := &compiledActor{ga: ga, prog: p.(*Program)}
	fire, err := p.Kernel("FIRE")
	if err != nil {
		_ = p.Release()
		return nil, fmt.Errorf("actor %s: %w", a.Name, err)
	}
	ca.fire = fire.(*Kernel)
	if ga.HasInit {
		k, err := p.Kernel("INIT")
		if err != nil {
			_ = ca.Release()
			return nil, fmt.Errorf("actor %s: %w", a.Name, err)
		}
		ca.init = k.(*Kernel)
	}
	return ca, nil
}

// compiledActor is the device.ActorKernel of a CUDA kernel actor.
type compiledActor struct {
	ga         *GeneratedActor
	prog       *Program
	fire, init *Kernel
	once       sync.Once
	err        error
}

func (c *compiledActor) Groups() int                  { return c.ga.Groups }
func (c *compiledActor) Items() int                   { return c.ga.Items }
func (c *compiledActor) Range(g int) device.Range     { return device.Groups(g, c.ga.Items) }
func (c *compiledActor) Fire() device.Kernel          { return c.fire }
func (c *compiledActor) Inputs() []device.PortLayout  { return c.ga.Inputs }
func (c *compiledActor) Outputs() []device.PortLayout { return c.ga.Outputs }
func (c *compiledActor) Log() string                  { return c.prog.Log() }
func (c *compiledActor) Generated() *GeneratedActor   { return c.ga }
func (c *compiledActor) Init() device.Kernel {
	if c.init == nil {
		return nil
	}
	return c.init
}

func (c *compiledActor) Bind(k device.Kernel, ws []device.Window) error {
	return c.ga.Bind(k, k.Name() == "INIT", ws)
}

func (c *compiledActor) Release() error {
	c.once.Do(func() {
		var errs []error
		if c.fire != nil {
			errs = append(errs, c.fire.Release())
		}
		if c.init != nil {
			errs = append(errs, c.init.Release())
		}
		errs = append(errs, c.prog.Release())
		c.err = errors.Join(errs...)
	})
	return c.err
}

// Bind sets the port arguments of the actor's FIRE kernel (init false:
// inputs then outputs) or INIT kernel (init true: outputs): for each port
// its window's buffer and token offset.
func (g *GeneratedActor) Bind(k device.Kernel, init bool, ws []device.Window) error {
	n := len(g.Inputs) + len(g.Outputs)
	if init {
		n = len(g.Outputs)
	}
	if len(ws) != n {
		return fmt.Errorf("binding %s of %s: %d windows: expected %d", k.Name(), g.Name, len(ws), n)
	}
	for i, w := range ws {
		if w.Off < 0 {
			return fmt.Errorf("binding %s of %s: window %d at token offset %d: expected ≥ 0", k.Name(), g.Name, i, w.Off)
		}
		if err := k.SetArg(2*i, w.Buf); err != nil {
			return err
		}
		if err := k.SetArg(2*i+1, uint64(w.Off)); err != nil {
			return err
		}
	}
	return nil
}
