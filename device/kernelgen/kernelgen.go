// Package kernelgen generates kernel actors written against the ETH
// kernel-actor API (INIT, FIRE, CAPTURE, RESERVE, FOREACH over an output
// port's blocks, PORT_x, TOKEN_X_t) for the backends that build C-like
// kernels (device/opencl, device/cuda). What is the same for every backend
// lives here: the ports' layouts and block arithmetic, the validation of a
// placement against the actor (rates, block sizes, G, I, distribution), the
// structure of the generated prelude, the line-for-line rewrite of the
// user's INIT and FIRE into kernels, binding windows to a kernel's
// arguments, and the compiled actor (device.ActorKernel). A Dialect says
// how one kernel language spells it.
package kernelgen

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

// Dialect is how one kernel language spells the generated code.
type Dialect struct {
	// Lang names the language in messages ("OpenCL"); A is it with its
	// article ("an OpenCL").
	Lang, A string
	// Kind is the implementation kind the backend compiles.
	Kind graph.ImplKind
	// Banner is the prelude's first line, a format of the actor's name, G
	// and I.
	Banner string
	// Helpers follows the banner (definitions the macros rely on).
	Helpers string
	// SizeT is the type of token offsets in CAPTURE and RESERVE.
	SizeT string
	// GroupID, LocalID and LocalSize are the expressions of the work-group
	// index, the work-item index within it and the work-items per group.
	GroupID, LocalID, LocalSize string
	// Scalars spells graph's scalar token types ("f32": "float"); Byte is
	// the element type of a bytesN token's struct.
	Scalars map[string]string
	Byte    string
	// Vector spells an array token [n]elem (s: elem's spelling) as a vector
	// type where the language has one; ok false makes it a struct of n
	// elements.
	Vector func(t graph.TokenType, elem, n, s string) (v string, ok bool)
	// Pointer prefixes a port parameter's pointer type ("__global ");
	// OffType is the type of its token offset.
	Pointer, OffType string
	// NoParams is the parameter list of a kernel without ports.
	NoParams string
	// Entry replaces "void " before FIRE and INIT (`__kernel void `).
	Entry string
	// Prepare, when not nil, rewrites the user's source (line for line)
	// before the entries are.
	Prepare func(src string) string
	// Items names the work-items of a group in messages ("work-items per
	// work-group"); Options are the build options of an actor.
	Items, Options string
}

// Actor is a kernel actor made into a dialect's source: a generated
// prelude of constants, types and macros for the actor's ports and its
// placement, plus the user's source with INIT and FIRE turned into kernels.
// One invocation computes G firings, one per work-group, each of I
// work-items.
type Actor struct {
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
	Inputs, Outputs []device.PortLayout
}

// Source returns the device.Source to build.
func (k *Actor) Source() device.Source {
	return device.Source{Name: k.Name, Prelude: k.Prelude, Text: k.Text}
}

// Range returns the launch shape: G work-groups of I work-items.
func (k *Actor) Range() device.Range { return device.Groups(k.Groups, k.Items) }

// Bind sets the port arguments of the actor's FIRE kernel (init false:
// inputs then outputs) or INIT kernel (init true: outputs): for each port
// its window's buffer and token offset.
func (k *Actor) Bind(kn device.Kernel, init bool, ws []device.Window) error {
	n := len(k.Inputs) + len(k.Outputs)
	if init {
		n = len(k.Outputs)
	}
	if len(ws) != n {
		return fmt.Errorf("binding %s of %s: %d windows: expected %d", kn.Name(), k.Name, len(ws), n)
	}
	for i, w := range ws {
		if w.Off < 0 {
			return fmt.Errorf("binding %s of %s: window %d at token offset %d: expected ≥ 0", kn.Name(), k.Name, i, w.Off)
		}
		if err := kn.SetArg(2*i, w.Buf); err != nil {
			return err
		}
		if err := kn.SetArg(2*i+1, uint64(w.Off)); err != nil {
			return err
		}
	}
	return nil
}

var cIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Generate makes the kernel of actor a, placed by pl (nil: one work-group
// of one work-item), from the user's Listing-2-style source read from file
// name.
func (d *Dialect) Generate(a *graph.Actor, pl *graph.Placement, name, src string) (*Actor, error) {
	k := &Actor{Name: name, Groups: 1, Items: 1}
	if pl != nil {
		if pl.WorkGroups > 0 {
			k.Groups = pl.WorkGroups
		}
		if pl.WorkItems > 0 {
			k.Items = pl.WorkItems
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, d.Banner, a.Name, k.Groups, k.Items)
	b.WriteString(d.Helpers)
	b.WriteString("#define IN ,\n")
	fmt.Fprintf(&b, "#define CAPTURE(p) __SL_CAPTURE(p)\n#define __SL_CAPTURE(p) (p##__p + p##__off + (%s)%s * p##_RATE)\n", d.SizeT, d.GroupID)
	fmt.Fprintf(&b, "#define RESERVE(p, blk) __SL_RESERVE(p, blk)\n#define __SL_RESERVE(p, blk) (p##__p + p##__off + (%[1]s)%[2]s * p##_RATE + (%[1]s)(blk) * p##_BLOCK)\n", d.SizeT, d.GroupID)
	b.WriteString("#define FOREACH(spec) __SL_FOREACH(spec)\n#define __SL_FOREACH(v, p) p##_FOREACH(v)\n")
	b.WriteString("#define BLOCK_COUNT(p) __SL_PASTE(p, _BLOCKS)\n#define __SL_PASTE(a, b) a##b\n")
	for _, p := range a.Inputs {
		l, err := d.layout(&b, a, pl, p)
		if err != nil {
			return nil, err
		}
		k.Inputs = append(k.Inputs, l)
	}
	for _, p := range a.Outputs {
		l, err := d.layout(&b, a, pl, p)
		if err != nil {
			return nil, err
		}
		k.Outputs = append(k.Outputs, l)
	}
	if d.Prepare != nil {
		src = d.Prepare(src)
	}
	text, fire := d.rewriteEntry(src, "FIRE", d.params(k.Inputs, k.Outputs))
	if !fire {
		return nil, fmt.Errorf("%s: actor %s: expected a `void FIRE()` procedure", name, a.Name)
	}
	text, k.HasInit = d.rewriteEntry(text, "INIT", d.params(k.Outputs))
	k.Text = text
	k.Prelude = b.String()
	return k, nil
}

// layout checks port p of actor a against placement pl, writes its part of
// the prelude to b and returns its layout.
func (d *Dialect) layout(b *strings.Builder, a *graph.Actor, pl *graph.Placement, p *graph.Port) (device.PortLayout, error) {
	if !cIdent.MatchString(p.Name) {
		return device.PortLayout{}, fmt.Errorf("actor %s port %q: expected a C identifier as port name for %s kernel", a.Name, p.Name, d.A)
	}
	if p.Rate.IsDynamic() || p.Rate.IsCSDF() || p.Rate.Sum() <= 0 {
		return device.PortLayout{}, fmt.Errorf("actor %s port %s: rate %v: the %s kernel actor needs a fixed (SDF) rate > 0", a.Name, p.Name, p.Rate, d.Lang)
	}
	upper := strings.ToUpper(p.Name)
	ct, def, err := d.tokenType(p.Type, "sl_token_"+p.Name)
	if err != nil {
		return device.PortLayout{}, fmt.Errorf("actor %s port %s: %w", a.Name, p.Name, err)
	}
	l := device.PortLayout{Port: p, CType: ct, Rate: p.Rate.At(0)}
	b.WriteString(def)
	fmt.Fprintf(b, "typedef %s TOKEN_%s_t;\n#define PORT_%s %s\n#define TOKEN_%s_RATE %d\n#define %s_RATE %d\n",
		ct, upper, p.Name, p.Name, upper, l.Rate, p.Name, l.Rate)
	if p.Dir != graph.Out {
		return l, nil
	}
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
	fmt.Fprintf(b, "#define BLOCK_%s_SIZE %d\n#define BLOCK_%s_COUNT %d\n#define %s_BLOCK %d\n#define %s_BLOCKS %d\n",
		upper, l.Block, upper, l.Blocks, p.Name, l.Block, p.Name, l.Blocks)
	id, n := "(int)"+d.LocalID, "(int)"+d.LocalSize
	switch l.Distribution {
	case graph.Strided: // block k to work-item k mod I
		fmt.Fprintf(b, "#define %s_FOREACH(v) for (int v = %s; v < %d; v += %s)\n", p.Name, id, l.Blocks, n)
	case graph.Consecutive: // work-item i takes a run of ceil(B/I) blocks
		run := fmt.Sprintf("(%d + %s - 1) / %s", l.Blocks, n, n)
		fmt.Fprintf(b, "#define %s_FOREACH(v) for (int v = %s * (%s), v##_end = min(v + %s, %d); v < v##_end; v++)\n",
			p.Name, id, run, run, l.Blocks)
	default:
		return device.PortLayout{}, fmt.Errorf("actor %s port %s: distribution %q: expected strided or consecutive", a.Name, p.Name, l.Distribution)
	}
	return l, nil
}

// tokenType returns the spelling of a token type and, for types that need
// one, a struct definition (named tag).
func (d *Dialect) tokenType(t graph.TokenType, tag string) (ctype, def string, err error) {
	if s, ok := d.Scalars[t.Name]; ok {
		return s, "", nil
	}
	if n, ok := strings.CutPrefix(t.Name, "bytes"); ok {
		return "struct " + tag, fmt.Sprintf("struct %s { %s b[%s]; };\n", tag, d.Byte, n), nil
	}
	if strings.HasPrefix(t.Name, "[") {
		i := strings.Index(t.Name, "]")
		n, elem := t.Name[1:i], t.Name[i+1:]
		if s, ok := d.Scalars[elem]; ok && !strings.HasSuffix(s, "2") {
			if v, ok := d.Vector(t, elem, n, s); ok {
				return v, "", nil
			}
			return "struct " + tag, fmt.Sprintf("struct %s { %s v[%s]; };\n", tag, s, n), nil
		}
	}
	return "", "", fmt.Errorf("token type %s has no %s C equivalent", t.Name, d.Lang)
}

// params returns the parameter list of a kernel over the ports of ls: for
// each a buffer (the port's name suffixed __p) and a token offset (__off).
func (d *Dialect) params(ls ...[]device.PortLayout) string {
	var ps []string
	for _, l := range ls {
		for _, x := range l {
			ps = append(ps, fmt.Sprintf("%sTOKEN_%s_t *%s__p, %s %s__off", d.Pointer, strings.ToUpper(x.Port.Name), x.Port.Name, d.OffType, x.Port.Name))
		}
	}
	if len(ps) == 0 {
		return d.NoParams
	}
	return strings.Join(ps, ", ")
}

// rewriteEntry turns "void NAME()" or "void NAME(void)" into a kernel with
// the given parameters, on the same line.
func (d *Dialect) rewriteEntry(src, name, params string) (string, bool) {
	re := regexp.MustCompile(`(^|\n)([ \t]*)void[ \t]+` + name + `[ \t]*\([ \t]*(?:void)?[ \t]*\)`)
	found := false
	out := re.ReplaceAllStringFunc(src, func(m string) string {
		found = true
		sub := re.FindStringSubmatch(m)
		return sub[1] + sub[2] + d.Entry + name + "(" + params + ")"
	})
	return out, found
}

// Builder builds programs (a device.Device).
type Builder interface {
	Build(ctx context.Context, src device.Source, options string) (device.Program, error)
}

// Compile generates actor a for placement pl (Generate) from impl, builds
// it with b, a device described by on that runs at most maxItems
// work-items per group (0: no limit), and returns the FIRE (and INIT)
// kernels as a device.ActorKernel. A compile error is a *device.BuildError
// pointing at the user's file and line.
func (d *Dialect) Compile(ctx context.Context, b Builder, on device.Info, maxItems int, a *graph.Actor, pl *graph.Placement, impl graph.Impl) (*Compiled, error) {
	if impl.Kind != d.Kind {
		return nil, fmt.Errorf("actor %s: %s implementation: %w (expected %s kernel on %s)", a.Name, impl.Kind, device.ErrUnsupported, d.A, on)
	}
	name, text, err := device.KernelSource(a, impl)
	if err != nil {
		return nil, err
	}
	ga, err := d.Generate(a, pl, name, text)
	if err != nil {
		return nil, err
	}
	if maxItems > 0 && ga.Items > maxItems {
		return nil, fmt.Errorf("actor %s: %d %s: expected at most %d on %s", a.Name, ga.Items, d.Items, maxItems, on)
	}
	p, err := b.Build(ctx, ga.Source(), d.Options)
	if err != nil {
		return nil, fmt.Errorf("actor %s: %w", a.Name, err)
	}
	ca := &Compiled{ga: ga, prog: p}
	if ca.fire, err = p.Kernel("FIRE"); err != nil {
		_ = p.Release()
		return nil, fmt.Errorf("actor %s: %w", a.Name, err)
	}
	if ga.HasInit {
		if ca.init, err = p.Kernel("INIT"); err != nil {
			ca.init = nil
			_ = ca.Release()
			return nil, fmt.Errorf("actor %s: %w", a.Name, err)
		}
	}
	return ca, nil
}

// Compiled is the device.ActorKernel of a built kernel actor.
type Compiled struct {
	ga         *Actor
	prog       device.Program
	fire, init device.Kernel
	once       sync.Once
	err        error
}

var _ device.ActorKernel = (*Compiled)(nil)

// Groups returns G, the firings per invocation.
func (c *Compiled) Groups() int { return c.ga.Groups }

// Items returns I, the work-items per firing.
func (c *Compiled) Items() int { return c.ga.Items }

// Range returns the launch shape of g ≤ G firings.
func (c *Compiled) Range(g int) device.Range { return device.Groups(g, c.ga.Items) }

// Fire returns the FIRE kernel.
func (c *Compiled) Fire() device.Kernel { return c.fire }

// Init returns the INIT kernel, or nil when the actor has none.
func (c *Compiled) Init() device.Kernel { return c.init }

// Inputs returns the layouts of the input ports, in kernel-argument order.
func (c *Compiled) Inputs() []device.PortLayout { return c.ga.Inputs }

// Outputs returns the layouts of the output ports, in kernel-argument order.
func (c *Compiled) Outputs() []device.PortLayout { return c.ga.Outputs }

// Log returns the build log.
func (c *Compiled) Log() string { return c.prog.Log() }

// Generated returns the generated source of the actor.
func (c *Compiled) Generated() *Actor { return c.ga }

// Bind sets kernel k's buffer and offset arguments to the windows ws
// (FIRE: inputs then outputs; INIT: outputs).
func (c *Compiled) Bind(k device.Kernel, ws []device.Window) error {
	return c.ga.Bind(k, k.Name() == "INIT", ws)
}

// Release frees the kernels and the program; it is idempotent.
func (c *Compiled) Release() error {
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
