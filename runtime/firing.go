package runtime

import (
	"context"
	"errors"

	"github.com/sluicehq/sluice/fifo"
	"github.com/sluicehq/sluice/graph"
)

// ErrEndOfStream is returned by an actor (typically a source) to say that it
// has no more data: the firing that returns it produces nothing, the actor
// stops, and its outputs close, so downstream actors finish after draining.
var ErrEndOfStream = errors.New("end of stream")

// FireFunc implements one firing of an SDF or CSDF actor. It reads the input
// windows and fills the output windows in place (they are views into the
// channels' ring buffers: no copies). The windows are valid only during the
// call.
type FireFunc func(f *Firing) error

// ProcessFunc implements a Kahn process network process: it runs once, reads
// and writes its ports at will (blocking), and returns when done. Returning
// nil closes its outputs (end of stream).
type ProcessFunc func(p *Process) error

// Actor is a Go implementation with state or a life cycle. Fire is called
// once per firing. For a stateless actor mapped with several replicas, Fire
// may be called from several goroutines at once.
type Actor interface {
	Fire(f *Firing) error
}

// Starter is implemented by actors that need setup (open a file, allocate
// state) before the first firing. It is called once per actor.
type Starter interface {
	Start(ctx context.Context) error
}

// Stopper is implemented by actors that release resources after the last
// firing. It is called once per started actor, also after errors.
type Stopper interface {
	Stop() error
}

// Firing is what an SDF/CSDF actor sees during one firing: its input and
// output windows, the firing's index and phase, and its replica.
type Firing struct {
	ctx      context.Context
	run      *run // nil for NewFiring's
	actor    *graph.Actor
	index    int64
	phase    int
	replica  int
	replicas int
	leader   bool
	team     bool
	ins      [][]byte
	outs     [][]byte
}

// NewFiring makes a Firing over the given windows, for unit-testing an
// actor's FireFunc without running a graph. ins[i] and outs[i] are the
// byte windows of the actor's i-th input and output port.
func NewFiring(ctx context.Context, a *graph.Actor, index int64, ins, outs [][]byte) *Firing {
	f := &Firing{ctx: ctx, actor: a, index: index, replicas: 1, leader: true, ins: ins, outs: outs}
	if a != nil {
		f.phase = int(index % int64(a.Phases()))
	}
	return f
}

// Context returns the run's context; long firings should honour it.
func (f *Firing) Context() context.Context { return f.ctx }

// Actor returns the graph actor being fired.
func (f *Firing) Actor() *graph.Actor { return f.actor }

// Index returns the firing's number, counting from 0.
func (f *Firing) Index() int64 { return f.index }

// Phase returns the CSDF phase of this firing (0 for SDF actors).
func (f *Firing) Phase() int { return f.phase }

// Replica returns which replica runs this firing, in [0, Replicas()).
func (f *Firing) Replica() int { return f.replica }

// Replicas returns the actor's number of replicas (team size).
func (f *Firing) Replicas() int { return f.replicas }

// Leader reports whether this firing's outputs count (ACOTES task_leader).
// It is false only in a team with replicated state (graph.TeamReplicate)
// for the replicas that run the firing to keep their state up to date:
// their output windows are scratch space that is dropped, so an actor may
// skip the work that only produces outputs.
func (f *Firing) Leader() bool { return f.leader }

// Team returns how the actor's replicas share the work: graph.TeamReplicate
// when every replica keeps its own state and runs every firing, else
// graph.TeamSplit (one replica per firing; also for a single replica).
func (f *Firing) Team() graph.TeamMode {
	if f.team {
		return graph.TeamReplicate
	}
	return graph.TeamSplit
}

// NumIn returns the number of input windows.
func (f *Firing) NumIn() int { return len(f.ins) }

// NumOut returns the number of output windows.
func (f *Firing) NumOut() int { return len(f.outs) }

// In returns the window of the i-th input port: rate×token-size bytes.
func (f *Firing) In(i int) []byte { return f.ins[i] }

// Out returns the window of the i-th output port, to be filled.
func (f *Firing) Out(i int) []byte { return f.outs[i] }

// Input returns the i-th input window as a slice of T, without copying.
func Input[T any](f *Firing, i int) []T { return fifo.Tokens[T](f.ins[i]) }

// Output returns the i-th output window as a slice of T, without copying.
func Output[T any](f *Firing, i int) []T { return fifo.Tokens[T](f.outs[i]) }

// Process is what a KPN process sees: its ports as FIFO endpoints that it
// reads and writes at will.
type Process struct {
	ctx   context.Context
	run   *run // nil for NewProcess's
	actor *graph.Actor
	ins   []*fifo.Reader
	outs  []*fifo.Writer
}

// NewProcess makes a Process over the given endpoints, for unit tests.
func NewProcess(ctx context.Context, a *graph.Actor, ins []*fifo.Reader, outs []*fifo.Writer) *Process {
	return &Process{ctx: ctx, actor: a, ins: ins, outs: outs}
}

// Context returns the run's context; blocking calls must pass it.
func (p *Process) Context() context.Context { return p.ctx }

// Actor returns the graph actor this process implements.
func (p *Process) Actor() *graph.Actor { return p.actor }

// In returns the reader of the i-th input port.
func (p *Process) In(i int) *fifo.Reader { return p.ins[i] }

// Out returns the writer of the i-th output port.
func (p *Process) Out(i int) *fifo.Writer { return p.outs[i] }

// NumIn returns the number of inputs.
func (p *Process) NumIn() int { return len(p.ins) }

// NumOut returns the number of outputs.
func (p *Process) NumOut() int { return len(p.outs) }

// AllOpen reports whether every input is still open, that is, not yet
// closed-and-drained (ACOTES task_allopen).
func (p *Process) AllOpen() bool {
	for _, r := range p.ins {
		if !r.Open() {
			return false
		}
	}
	return true
}
