package graph

// InPort is an input port carrying tokens of Go type T. Connect accepts only
// an OutPort and an InPort of the same T, so a type mismatch does not compile.
type InPort[T any] struct{ p *Port }

// OutPort is an output port carrying tokens of Go type T.
type OutPort[T any] struct{ p *Port }

// Port returns the untyped port.
func (in InPort[T]) Port() *Port { return in.p }

// Port returns the untyped port.
func (out OutPort[T]) Port() *Port { return out.p }

// PortOption configures a port made by AddInput or AddOutput.
type PortOption func(*Port)

// BlockSize sets an output port's block size in tokens.
func BlockSize(tokens int) PortOption { return func(p *Port) { p.Block = tokens } }

// PortAt records where the port was declared.
func PortAt(origin string) PortOption { return func(p *Port) { p.Origin = origin } }

// AddInput adds an input port of token type T (see TypeOf) to the actor.
func AddInput[T any](a *Actor, name string, r Rate, opts ...PortOption) InPort[T] {
	p := a.AddPort(name, In, TypeOf[T](), r, "")
	for _, o := range opts {
		o(p)
	}
	return InPort[T]{p}
}

// AddOutput adds an output port of token type T (see TypeOf) to the actor.
func AddOutput[T any](a *Actor, name string, r Rate, opts ...PortOption) OutPort[T] {
	p := a.AddPort(name, Out, TypeOf[T](), r, "")
	for _, o := range opts {
		o(p)
	}
	return OutPort[T]{p}
}

// Connect joins an output port to an input port of the same token type.
func Connect[T any](g *Graph, from OutPort[T], to InPort[T], opts ...ChannelOption) *Channel {
	return g.Join(from.p, to.p, opts...)
}
