// Package gogen writes the Go program equivalent to a graph: the same
// actors, ports, channels and mapping built with package graph's API, the
// built-in actors of package actors, and a call to runtime.Run. The page of
// `sluice ui` ("Generate Go") and `sluice gen go FILE` use it.
//
// Actors that have no implementation yet (a graph still being designed) get
// a Go function that keeps a core busy for the actor's cost and writes
// zeros, as runs from the workbench do; the program says so beside each.
package gogen

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/graph"
)

// Options tunes the program written.
type Options struct {
	// Iterations is the default of the program's -iterations flag (0: until
	// the sources end their streams).
	Iterations int64
	// Source names the file the graph came from, for the program's comment.
	Source string
}

// Generate returns the gofmt-formatted source of a main package that builds
// g, places its actors by m (nil: all on the CPU) and runs it. Graph features
// the generator does not write (conditional patterns, shared variables) are
// reported as an error naming each actor or graph concerned.
func Generate(g *graph.Graph, m *graph.Mapping, opts Options) ([]byte, error) {
	if err := unsupported(g, g.Name); err != nil {
		return nil, err
	}
	body := &writer{}
	body.graphFunc(g, "buildGraph")
	body.mappingFunc(m)
	body.placeholders()
	w := &writer{}
	w.header(g, m, opts, body.usesTime, bytes.Contains(body.buf.Bytes(), []byte("math.")))
	w.buf.Write(body.buf.Bytes())
	src, err := format.Source(w.buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gogen: the generated source does not format: %w\n%s", err, w.buf.Bytes())
	}
	return src, nil
}

// unsupported lists the features of g (and its composites) that Generate
// does not write.
func unsupported(g *graph.Graph, path string) error {
	var probs []string
	var walk func(g *graph.Graph, path string)
	walk = func(g *graph.Graph, path string) {
		if len(g.Shared) > 0 {
			probs = append(probs, fmt.Sprintf("graph %s: shared variables: expected none, found %d (not written by the Go generator)", path, len(g.Shared)))
		}
		for _, a := range g.Actors {
			if a.Pattern != nil {
				probs = append(probs, fmt.Sprintf("actor %s.%s: a conditional pattern (not written by the Go generator)", path, a.Name))
			}
			if a.Sub != nil {
				walk(a.Sub, path+"."+a.Name)
			}
		}
	}
	walk(g, path)
	if len(probs) > 0 {
		return fmt.Errorf("gogen: %s", strings.Join(probs, "; "))
	}
	return nil
}

// writer accumulates the program's source.
type writer struct {
	buf      bytes.Buffer
	taken    map[string]bool // function names used
	pending  []pendingGraph  // subgraphs still to write
	synth    []*graph.Actor  // actors given a placeholder Go function
	usesTime bool
}

type pendingGraph struct {
	g    *graph.Graph
	name string
}

func (w *writer) p(format string, args ...any) {
	fmt.Fprintf(&w.buf, format, args...)
	w.buf.WriteByte('\n')
}

func (w *writer) header(g *graph.Graph, m *graph.Mapping, opts Options, usesTime, usesMath bool) {
	from := "the graph " + strconv.Quote(g.Name)
	if opts.Source != "" {
		from += " (" + opts.Source + ")"
	}
	w.p("// Command %s runs %s", goName(g.Name), from)
	w.p("// with sluice's Go API: the same actors, ports, channels and mapping as")
	w.p("// the YAML, built with package graph and run by package runtime. Written")
	w.p("// by sluice's Go generator.")
	w.p("package main")
	w.p("")
	w.p("import (")
	imports := []string{"context", "flag", "fmt", "os", "os/signal"}
	if usesMath {
		imports = append(imports, "math")
	}
	if usesTime {
		imports = append(imports, "time")
	}
	for _, imp := range imports {
		w.p("%q", imp)
	}
	w.p("")
	w.p(`_ "github.com/sluicehq/sluice/actors" // the built-in actors (use:)`)
	if needsDevices(g, m) {
		w.p(`_ "github.com/sluicehq/sluice/device/all" // OpenCL and CUDA backends for kernel actors`)
	}
	w.p(`"github.com/sluicehq/sluice/graph"`)
	w.p(`"github.com/sluicehq/sluice/runtime"`)
	w.p(")")
	w.p("")
	w.p("func main() {")
	w.p("iterations := flag.Int64(\"iterations\", %d, \"graph iterations to run (0: until the sources end their streams)\")", opts.Iterations)
	w.p("flag.Parse()")
	w.p("g := buildGraph()")
	w.p("if err := g.Validate(); err != nil {")
	w.p("fmt.Fprintln(os.Stderr, err)")
	w.p("os.Exit(1)")
	w.p("}")
	w.p("ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)")
	w.p("defer stop()")
	w.p("if _, err := runtime.Run(ctx, g, runtime.Options{Iterations: *iterations, Mapping: mapping()}); err != nil {")
	w.p("fmt.Fprintln(os.Stderr, err)")
	w.p("os.Exit(1)")
	w.p("}")
	w.p("}")
	w.p("")
}

// needsDevices reports whether some actor has a kernel implementation or
// some placement names a device other than the CPU.
func needsDevices(g *graph.Graph, m *graph.Mapping) bool {
	if m != nil {
		for _, pl := range m.Actors {
			if pl.Device != "" && pl.Device != "cpu" || pl.Impl == graph.ImplOpenCL || pl.Impl == graph.ImplCUDA {
				return true
			}
		}
	}
	var has func(g *graph.Graph) bool
	has = func(g *graph.Graph) bool {
		for _, a := range g.Actors {
			if a.Sub != nil && has(a.Sub) {
				return true
			}
			if _, ok := a.Impl(graph.ImplOpenCL); ok {
				return true
			}
			if _, ok := a.Impl(graph.ImplCUDA); ok {
				return true
			}
		}
		return false
	}
	return has(g)
}

// graphFunc writes func name() *graph.Graph building g, then the functions
// of its composites' subgraphs.
func (w *writer) graphFunc(g *graph.Graph, name string) {
	w.p("// %s builds the graph %q.", name, g.Name)
	w.p("func %s() *graph.Graph {", name)
	w.p("g := graph.New(%q)", g.Name)
	for _, a := range g.Actors {
		w.actor(a)
	}
	for _, b := range g.Inputs {
		w.p("g.Expose(graph.In, %q, %q, %q, \"\")", b.Name, b.Actor, b.Port)
	}
	for _, b := range g.Outputs {
		w.p("g.Expose(graph.Out, %q, %q, %q, \"\")", b.Name, b.Actor, b.Port)
	}
	for _, c := range g.Channels {
		w.channel(c)
	}
	w.p("return g")
	w.p("}")
	w.p("")
	for len(w.pending) > 0 {
		next := w.pending[0]
		w.pending = w.pending[1:]
		w.graphFunc(next.g, next.name)
	}
}

// funcName returns base, or base followed by a number when base is taken.
func (w *writer) funcName(base string) string {
	if w.taken == nil {
		w.taken = map[string]bool{"buildGraph": true, "main": true, "mapping": true, "placeholder": true}
	}
	name := base
	for i := 2; w.taken[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	w.taken[name] = true
	return name
}

// actor writes the statements adding a to g, its ports and its fields.
func (w *writer) actor(a *graph.Actor) {
	v := "a"
	var opts []string
	if a.Stateful {
		opts = append(opts, "graph.Stateful()")
	}
	if a.IO {
		opts = append(opts, "graph.IO()")
	}
	if a.Cost > 0 {
		w.usesTime = true
		opts = append(opts, "graph.WithCost("+durationLit(a.Cost)+")")
	}
	if a.Sub != nil {
		sub := w.funcName("build" + title(goName(a.Name)))
		w.pending = append(w.pending, pendingGraph{a.Sub, sub})
		opts = append(opts, "graph.Composite("+sub+"())")
	}
	for _, im := range a.Impls {
		if im.Kind == graph.ImplGo && im.Func == nil {
			w.p("// %s's Go function %q must be registered (runtime.RegisterFunc) by this program.", a.Name, im.Source)
		}
		opts = append(opts, "graph.WithImpl("+implLit(im)+")")
	}
	if len(a.Impls) == 0 && a.Sub == nil {
		w.synth = append(w.synth, a)
		w.usesTime = true
		opts = append(opts, "graph.WithFunc(runtime.FireFunc(placeholder))")
	}
	if a.StateDecl != nil {
		opts = append(opts, fmt.Sprintf("graph.WithState(%d, %s, %d)", a.StateDecl.Size, bytesLit(a.StateDecl.Init), a.StateDecl.Lifetime))
	}
	w.p("{")
	w.p("%s := g.AddActor(%s)", v, strings.Join(append([]string{strconv.Quote(a.Name)}, opts...), ", "))
	for _, p := range a.Ports() {
		w.port(v, p)
	}
	if a.Iterations != 0 {
		w.p("%s.Iterations = %d", v, a.Iterations)
	}
	if len(a.Swap) > 0 {
		w.p("%s.Swap = %s", v, stringMapLit(a.Swap))
	}
	if len(a.Attrs) > 0 {
		w.p("%s.Attrs = %s", v, stringMapLit(a.Attrs))
	}
	w.p("}")
}

func (w *writer) port(v string, p *graph.Port) {
	dir := "graph.In"
	if p.Dir == graph.Out {
		dir = "graph.Out"
	}
	call := fmt.Sprintf("%s.AddPort(%q, %s, graph.MustTokenType(%q), %s, \"\")", v, p.Name, dir, p.Type.String(), rateLit(p.Rate))
	if p.Block == 0 && p.History == 0 {
		w.p("%s", call)
		return
	}
	w.p("{")
	w.p("p := %s", call)
	if p.Block != 0 {
		w.p("p.Block = %d", p.Block)
	}
	if p.History != 0 {
		w.p("p.History = %d", p.History)
	}
	w.p("}")
}

func (w *writer) channel(c *graph.Channel) {
	from, to := c.From.FullName(), c.To.FullName()
	args := []string{strconv.Quote(from), strconv.Quote(to)}
	if c.Name != "" && c.Name != from+"->"+to {
		args = append(args, "graph.Named("+strconv.Quote(c.Name)+")")
	}
	if c.Capacity != 0 {
		args = append(args, fmt.Sprintf("graph.Capacity(%d)", c.Capacity))
	}
	if c.Initial != 0 {
		args = append(args, fmt.Sprintf("graph.Initial(%d)", c.Initial))
	}
	if len(c.InitialData) > 0 {
		args = append(args, "graph.InitialData("+bytesLit(c.InitialData)+")")
	}
	w.p("g.JoinNames(%s)", strings.Join(args, ", "))
}

// mappingFunc writes func mapping() *graph.Mapping (nil without m).
func (w *writer) mappingFunc(m *graph.Mapping) {
	w.p("// mapping places the actors (nil: every actor on the CPU).")
	w.p("func mapping() *graph.Mapping {")
	if m == nil || len(m.Actors) == 0 {
		w.p("return nil")
		w.p("}")
		return
	}
	w.p("return &graph.Mapping{Name: %q, Actors: map[string]*graph.Placement{", m.Name)
	names := make([]string, 0, len(m.Actors))
	for n := range m.Actors {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w.p("%q: %s,", n, placementLit(m.Actors[n]))
	}
	w.p("}}")
	w.p("}")
}

// placeholders writes the Go function standing for actors without an
// implementation, when some actor needs it.
func (w *writer) placeholders() {
	if len(w.synth) == 0 {
		return
	}
	names := make([]string, len(w.synth))
	for i, a := range w.synth {
		names[i] = a.Name
	}
	w.p("")
	w.p("// placeholder stands for the computation of the actors that have no")
	w.p("// implementation yet (%s): each firing keeps a core busy", strings.Join(names, ", "))
	w.p("// for the actor's cost and writes zeros to its outputs. Replace it by the")
	w.p("// actor's own function.")
	w.p("func placeholder(f *runtime.Firing) error {")
	w.p("for i := range f.NumOut() {")
	w.p("clear(f.Out(i))")
	w.p("}")
	w.p("for end := time.Now().Add(f.Actor().Cost); time.Now().Before(end); {")
	w.p("}")
	w.p("return nil")
	w.p("}")
}
