package cluster

import (
	"fmt"
	"os"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// ServiceName is the NATS micro service name every worker registers.
const ServiceName = "sluice-worker"

// Limits are what a worker accepts.
type Limits struct {
	// MaxStream is the largest stream (bytes over one port in one job) the
	// worker accepts; 0 means no limit.
	MaxStream int64 `json:"max_stream,omitempty"`
	// MaxTime is the longest a job may run on the worker; 0 means no limit.
	MaxTime time.Duration `json:"max_time_ns,omitempty"`
}

// WorkerInfo is what a worker advertises (in its micro service metadata
// and on its info endpoint).
type WorkerInfo struct {
	// Name is the worker's name, unique in the tree.
	Name string `json:"name"`
	// Broker is the name of the broker the worker is connected to.
	Broker string `json:"broker"`
	// Devices are the devices the worker lends, with every field of
	// `sluice devices`.
	Devices []device.Info `json:"devices"`
	// Limits are the worker's limits.
	Limits Limits `json:"limits"`
	// Jobs is the number of jobs running now.
	Jobs int `json:"jobs"`
	// DataAddr, when set, is where the worker accepts direct TCP data
	// streams (else tokens go over NATS).
	DataAddr string `json:"data_addr,omitempty"`
}

// BrokerInfo is what a broker answers on the brokers subject.
type BrokerInfo struct {
	// Name is the broker's server name.
	Name string `json:"name"`
	// Parent is the name of its parent broker ("" for a root).
	Parent string `json:"parent,omitempty"`
}

// PortSpec is one port of a shipped actor.
type PortSpec struct {
	// Name, Type (graph.TokenType's name), Rate (graph.Rate's String) and
	// Block are the graph.Port's.
	Name  string `json:"name"`
	Type  string `json:"type"`
	Rate  string `json:"rate"`
	Block int    `json:"block,omitempty"`
}

// ImplSpec is one implementation of a shipped actor; kernels carry their
// source text.
type ImplSpec struct {
	// Kind, Source, Entry and Params are the graph.Impl's; Code is a
	// kernel's source text (Source then names it only).
	Kind   graph.ImplKind `json:"kind"`
	Source string         `json:"source,omitempty"`
	Code   []byte         `json:"code,omitempty"`
	Entry  string         `json:"entry,omitempty"`
	Params map[string]any `json:"params,omitempty"`
}

// ActorSpec is an actor as shipped to a worker: everything the worker
// needs to rebuild it.
type ActorSpec struct {
	// The fields are the graph.Actor's; Inputs and Outputs in port order.
	Name       string            `json:"name"`
	Inputs     []PortSpec        `json:"inputs,omitempty"`
	Outputs    []PortSpec        `json:"outputs,omitempty"`
	Stateful   bool              `json:"stateful,omitempty"`
	IO         bool              `json:"io,omitempty"`
	Impls      []ImplSpec        `json:"impls,omitempty"`
	Attrs      map[string]string `json:"attrs,omitempty"`
	Iterations int               `json:"iterations,omitempty"`
	Swap       map[string]string `json:"swap,omitempty"`
}

// StreamSpec describes one port's stream in a job.
type StreamSpec struct {
	// Capacity is the channel capacity in tokens (the credit window).
	Capacity int `json:"capacity"`
	// Bytes is the stream's size when the job's firings are known, else -1.
	Bytes int64 `json:"bytes"`
}

// RunRequest asks a worker to run one actor.
type RunRequest struct {
	// Job identifies the job (its subjects are sluice.u.USER.job.JOB.*,
	// USER the requester's, subjects.go); Client
	// names the client; Actor is the actor; Device the worker's device ID.
	Job    string    `json:"job"`
	Client string    `json:"client"`
	Actor  ActorSpec `json:"actor"`
	Device string    `json:"device"`
	// Impl, WorkGroups, WorkItems and Replicas are the placement's.
	Impl       graph.ImplKind `json:"impl,omitempty"`
	WorkGroups int            `json:"work_groups,omitempty"`
	WorkItems  int            `json:"work_items,omitempty"`
	Replicas   int            `json:"replicas,omitempty"`
	// Distribution maps output port → block distribution (kernel actors).
	Distribution map[string]graph.Distribution `json:"distribution,omitempty"`
	// Target is the number of firings; -1 runs until the inputs end.
	Target int64        `json:"target"`
	Ins    []StreamSpec `json:"ins"`
	Outs   []StreamSpec `json:"outs"`
	// Chunk is the largest data message in bytes.
	Chunk int `json:"chunk"`
	// Flush is the output streams' flush timeout (internal/wire.Batch):
	// 0 is wire.DefaultFlush, negative sends every firing at once.
	Flush time.Duration `json:"flush_ns,omitempty"`
	// Transport is "tcp" (direct data streams to the worker's DataAddr) or
	// "nats" (chunks over NATS).
	Transport string `json:"transport"`
	// Trace asks for the firings' times in the result.
	Trace bool `json:"trace,omitempty"`
	// Resume, when set, is the actor's snapshot to restore: the worker
	// starts it at the snapshot's firing (docs/recovery.md).
	Resume *runtime.ActorSnapshot `json:"resume,omitempty"`
}

// RunReply is a worker's answer to a RunRequest.
type RunReply struct {
	// OK is set when the worker took the job; else Error says why not.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// DataAddr and Secret open the job's direct TCP data streams.
	DataAddr string `json:"data_addr,omitempty"`
	Secret   string `json:"secret,omitempty"`
}

// JobResult is what a worker publishes when a job ends.
type JobResult struct {
	// Firings and Busy are the actor's on the worker; Error, when set, is
	// why the job failed.
	Firings int64         `json:"firings"`
	Busy    time.Duration `json:"busy_ns"`
	Error   string        `json:"error,omitempty"`
	// Cut says the job failed because its data path was cut (chunks lost
	// in transit): the client treats it as a lost worker.
	Cut bool `json:"cut,omitempty"`
	// Spans are the firings' [start, duration] in ns from the job's start,
	// and their indices (when the request asked for a trace; at most
	// MaxSpans).
	Spans [][3]int64 `json:"spans,omitempty"`
}

// MaxSpans bounds the firing times a job brings back for a trace.
const MaxSpans = 200000

// specOf ships an actor: its ports, flags and implementations, reading
// kernel sources so the worker needs no file of the client's.
func specOf(a *graph.Actor) (ActorSpec, error) {
	s := ActorSpec{Name: a.Name, Stateful: a.Stateful, IO: a.IO, Attrs: a.Attrs, Iterations: a.Iterations, Swap: a.Swap}
	for _, p := range a.Inputs {
		s.Inputs = append(s.Inputs, PortSpec{Name: p.Name, Type: p.Type.Name, Rate: p.Rate.String(), Block: p.Block})
	}
	for _, p := range a.Outputs {
		s.Outputs = append(s.Outputs, PortSpec{Name: p.Name, Type: p.Type.Name, Rate: p.Rate.String(), Block: p.Block})
	}
	for _, im := range a.Impls {
		is := ImplSpec{Kind: im.Kind, Source: im.Source, Entry: im.Entry, Params: im.Params}
		switch im.Kind {
		case graph.ImplOpenCL, graph.ImplCUDA:
			code, err := os.ReadFile(im.Source)
			if err != nil {
				return s, fmt.Errorf("actor %s: reading its %s kernel to ship it: %w", a.Name, im.Kind, err)
			}
			is.Code = code
		case graph.ImplGo:
			if im.Source == "" {
				// A function attached in code cannot travel: the worker
				// resolves Go actors by registered name.
				continue
			}
		}
		s.Impls = append(s.Impls, is)
	}
	if len(s.Impls) == 0 && len(a.Impls) > 0 {
		return s, fmt.Errorf("actor %s: its only implementation is a Go function attached in code, which cannot be shipped to a worker: expected a built-in, a kernel, or a function registered by name (runtime.RegisterFunc) on both sides", a.Name)
	}
	return s, nil
}

// build rebuilds a shipped actor in g; kernel sources go to dir.
func (s ActorSpec) build(g *graph.Graph, dir string) (*graph.Actor, error) {
	a := g.AddActor(s.Name)
	a.Stateful, a.IO, a.Attrs, a.Iterations, a.Swap = s.Stateful, s.IO, s.Attrs, s.Iterations, s.Swap
	add := func(ps []PortSpec, dir graph.Direction) error {
		for _, p := range ps {
			t, err := graph.ParseTokenType(p.Type)
			if err != nil {
				return fmt.Errorf("actor %s port %s: %w", s.Name, p.Name, err)
			}
			r, err := graph.ParseRate(p.Rate)
			if err != nil {
				return fmt.Errorf("actor %s port %s: %w", s.Name, p.Name, err)
			}
			a.AddPort(p.Name, dir, t, r, "").Block = p.Block
		}
		return nil
	}
	if err := add(s.Inputs, graph.In); err != nil {
		return nil, err
	}
	if err := add(s.Outputs, graph.Out); err != nil {
		return nil, err
	}
	for i, is := range s.Impls {
		im := graph.Impl{Kind: is.Kind, Source: is.Source, Entry: is.Entry, Params: is.Params}
		if is.Code != nil {
			ext := ".cl"
			if is.Kind == graph.ImplCUDA {
				ext = ".cu"
			}
			path := fmt.Sprintf("%s/%s-%d%s", dir, sanitize(s.Name), i, ext)
			if err := os.WriteFile(path, is.Code, 0o600); err != nil {
				return nil, fmt.Errorf("actor %s: writing its kernel: %w", s.Name, err)
			}
			im.Source = path
		}
		a.Impls = append(a.Impls, im)
	}
	return a, nil
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
