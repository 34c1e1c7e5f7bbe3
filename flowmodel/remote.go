package flowmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/internal/wire"
)

// Writes and reads travel in internal/wire's parts: at most wire.Chunk
// bytes a message, each naming its offset and the stream's total length
// (wire.SetPart), reassembled in order with the bounds checked before
// anything is allocated (wire.Assembly).

// Subject returns the NATS subject a host named name serves flow-models on.
func Subject(name string) string { return "sluice.flowmodel." + name }

// Server serves a Host's flow-models to Remote clients over NATS.
type Server struct {
	h      Host
	sub    *nats.Subscription
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	next      int64
	instances map[string]Instance
	writes    map[string]*wire.Assembly // pending chunked writes by id/stream
	reads     map[string][]byte         // streams being read in parts, by id/stream
	// maxStream bounds a written stream (the host's Limited.MaxStream,
	// else MaxServedStream).
	maxStream int64
}

// Bounds of what one client may ask of a Server: a written stream's size
// (unless the host is Limited to less), the instances mapped at once, the
// streams staged at once and a fire request's iterations.
const (
	MaxServedStream    = 1 << 30
	MaxServedInstances = 256
	MaxStagedStreams   = 64
	MaxFireIterations  = 1 << 20
)

// Serve answers flow-model requests for h on Subject(name) of conn until
// Close. A worker serves Local{} under its own name.
func Serve(conn *nats.Conn, name string, h Host) (*Server, error) {
	if _, err := wire.Subject("sluice", "flowmodel", name); err != nil {
		return nil, fmt.Errorf("flowmodel: serve %s: %w", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{h: h, ctx: ctx, cancel: cancel, instances: map[string]Instance{}, writes: map[string]*wire.Assembly{}, reads: map[string][]byte{}, maxStream: MaxServedStream}
	if l, ok := h.(Limited); ok && l.MaxStream > 0 && l.MaxStream < s.maxStream {
		s.maxStream = l.MaxStream
	}
	sub, err := conn.Subscribe(Subject(name), s.handle)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("flowmodel: serve %s: %w", name, err)
	}
	s.sub = sub
	return s, conn.Flush()
}

// Close stops serving and releases every instance still mapped.
func (s *Server) Close() error {
	err := s.sub.Unsubscribe()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, in := range s.instances {
		err = errors.Join(err, in.Release(context.Background()))
		delete(s.instances, id)
	}
	return err
}

// handle dispatches one request; map and fire run in their own goroutine
// so that a long firing does not hold up other instances.
func (s *Server) handle(m *nats.Msg) {
	switch m.Header.Get("Op") {
	case "map", "fire":
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.reply(m)
		}()
	default:
		s.reply(m)
	}
}

// reply runs a request and answers it; a request that panics the host
// is answered with the panic, and the server goes on.
func (s *Server) reply(m *nats.Msg) {
	data, err := func() (data []byte, err error) {
		defer func() {
			if p := recover(); p != nil {
				data, err = nil, fmt.Errorf("internal error handling a %q request: %v", m.Header.Get("Op"), p)
			}
		}()
		return s.do(m)
	}()
	r := nats.NewMsg(m.Reply)
	r.Data = data
	if err != nil {
		r.Header.Set("Error", err.Error())
	}
	_ = m.RespondMsg(r)
}

type mapRequest struct {
	Model  *Model `json:"model"`
	Device string `json:"device"`
}

type mapReply struct {
	ID     string      `json:"id"`
	Device device.Info `json:"device"`
}

// do runs one request.
func (s *Server) do(m *nats.Msg) ([]byte, error) {
	h := m.Header
	op, id, stream := h.Get("Op"), h.Get("Id"), h.Get("Stream")
	switch op {
	case "devices":
		hi, err := s.h.Devices(s.ctx)
		if err != nil {
			return nil, err
		}
		return json.Marshal(hi)
	case "map":
		var req mapRequest
		if err := json.Unmarshal(m.Data, &req); err != nil || req.Model == nil {
			return nil, fmt.Errorf("map: expected a JSON model and device: %v", err)
		}
		s.mu.Lock()
		n := len(s.instances)
		s.mu.Unlock()
		if n >= MaxServedInstances {
			return nil, fmt.Errorf("map: %d flow-model instances are mapped here: expected at most %d at once (release some)", n, MaxServedInstances)
		}
		in, err := s.h.Map(s.ctx, req.Model, req.Device)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.next++
		id := strconv.FormatInt(s.next, 10)
		s.instances[id] = in
		s.mu.Unlock()
		return json.Marshal(mapReply{ID: id, Device: in.Device()})
	}
	in, err := s.instance(id)
	if err != nil {
		return nil, err
	}
	switch op {
	case "write":
		return nil, s.write(in, id+"/"+stream, stream, m)
	case "read":
		return s.read(in, id+"/"+stream, stream, h.Get(wire.PartOffset))
	case "fire":
		n, err := strconv.Atoi(h.Get("Iterations"))
		if err != nil || n < 0 || n > MaxFireIterations {
			return nil, fmt.Errorf("fire: iterations %q: expected 0 to %d", h.Get("Iterations"), MaxFireIterations)
		}
		return nil, in.Fire(s.ctx, n)
	case "release":
		s.mu.Lock()
		delete(s.instances, id)
		s.mu.Unlock()
		return nil, in.Release(s.ctx)
	}
	return nil, fmt.Errorf("unknown operation %q: expected devices, map, write, read, fire or release", op)
}

// instance returns a mapped instance by ID.
func (s *Server) instance(id string) (Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok {
		return nil, fmt.Errorf("no flow-model instance %q (released, or the worker restarted)", id)
	}
	return in, nil
}

// write stages one part and writes the stream once all have come.
func (s *Server) write(in Instance, key, stream string, m *nats.Msg) error {
	off, total, err := wire.PartOf(m.Header)
	if err != nil {
		return fmt.Errorf("write %s: %w", stream, err)
	}
	if int64(total) > s.maxStream {
		return fmt.Errorf("write %s: a stream of %d bytes: expected at most %d", stream, total, s.maxStream)
	}
	s.mu.Lock()
	a := s.writes[key]
	if a == nil {
		if len(s.writes) >= MaxStagedStreams {
			s.mu.Unlock()
			return fmt.Errorf("write %s: %d streams are being written here: expected at most %d at once", stream, len(s.writes), MaxStagedStreams)
		}
		a = &wire.Assembly{}
		s.writes[key] = a
	}
	buf, done, err := a.Add(off, total, m.Data, int(s.maxStream))
	if done || err != nil {
		delete(s.writes, key)
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write %s: %w", stream, err)
	}
	if !done {
		return nil
	}
	return in.Write(s.ctx, stream, buf)
}

// read answers one chunk of a stream, reading it from the instance at
// offset 0.
func (s *Server) read(in Instance, key, stream, offs string) ([]byte, error) {
	off, err := strconv.Atoi(offs)
	if err != nil || off < 0 {
		return nil, fmt.Errorf("read %s: offset %q: expected a byte offset", stream, offs)
	}
	s.mu.Lock()
	buf, ok := s.reads[key]
	s.mu.Unlock()
	if off == 0 || !ok {
		if buf, err = in.Read(s.ctx, stream); err != nil {
			return nil, err
		}
	}
	if off > len(buf) {
		return nil, fmt.Errorf("read %s: offset %d beyond its %d bytes", stream, off, len(buf))
	}
	end := min(off+wire.Chunk, len(buf))
	s.mu.Lock()
	if end == len(buf) {
		delete(s.reads, key)
	} else {
		s.reads[key] = buf
	}
	s.mu.Unlock()
	return buf[off:end], nil
}

// Remote is a Host served by Serve on the other end of a NATS connection.
type Remote struct {
	// Conn is the connection to the broker tree.
	Conn *nats.Conn
	// Name is the serving host's name (a worker's name).
	Name string
}

// request sends one request and returns the reply's data or its error.
func (r Remote) request(ctx context.Context, op string, hdr map[string]string, data []byte) ([]byte, error) {
	m := nats.NewMsg(Subject(r.Name))
	m.Header.Set("Op", op)
	for k, v := range hdr {
		m.Header.Set(k, v)
	}
	m.Data = data
	resp, err := r.Conn.RequestMsgWithContext(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("flow-model host %s: %s: %w", r.Name, op, err)
	}
	if e := resp.Header.Get("Error"); e != "" {
		return nil, fmt.Errorf("flow-model host %s: %s: %s", r.Name, op, e)
	}
	return resp.Data, nil
}

// mapHeader lets wire.SetPart fill a request's header map.
type mapHeader map[string]string

func (h mapHeader) Get(k string) string { return h[k] }
func (h mapHeader) Set(k, v string)     { h[k] = v }

// Devices returns the remote host's device hierarchy.
func (r Remote) Devices(ctx context.Context) (HostInfo, error) {
	b, err := r.request(ctx, "devices", nil, nil)
	if err != nil {
		return HostInfo{}, err
	}
	var hi HostInfo
	return hi, json.Unmarshal(b, &hi)
}

// Map places m on a device of the remote host.
func (r Remote) Map(ctx context.Context, m *Model, id string) (Instance, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	req, err := json.Marshal(mapRequest{Model: m, Device: id})
	if err != nil {
		return nil, err
	}
	b, err := r.request(ctx, "map", nil, req)
	if err != nil {
		return nil, err
	}
	var rep mapReply
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("flow-model host %s: map: bad reply: %w", r.Name, err)
	}
	return &remoteInstance{r: r, id: rep.ID, info: rep.Device, m: m}, nil
}

// remoteInstance is an Instance on a remote host.
type remoteInstance struct {
	r        Remote
	id       string
	info     device.Info
	m        *Model
	released atomic.Bool
}

func (in *remoteInstance) Device() device.Info { return in.info }

func (in *remoteInstance) Write(ctx context.Context, stream string, data []byte) error {
	for i := range wire.Parts(len(data)) {
		hdr := map[string]string{"Id": in.id, "Stream": stream}
		wire.SetPart(mapHeader(hdr), i*wire.Chunk, len(data))
		if _, err := in.r.request(ctx, "write", hdr, wire.Part(data, i)); err != nil {
			return err
		}
	}
	return nil
}

func (in *remoteInstance) Read(ctx context.Context, stream string) ([]byte, error) {
	s, _, ok := in.m.Stream(stream)
	if !ok {
		return nil, fmt.Errorf("flow-model %s has no stream %q (streams: %s)", in.m.Name, stream, in.m.streamNames())
	}
	total := int(min(s.Bytes(), wire.MaxMessage+1))
	var a wire.Assembly
	for off := 0; ; {
		b, err := in.r.request(ctx, "read", map[string]string{"Id": in.id, "Stream": stream, wire.PartOffset: strconv.Itoa(off)}, nil)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 && total > 0 {
			return nil, fmt.Errorf("flow-model host %s: read %s: short reply at byte %d of %d", in.r.Name, stream, off, total)
		}
		out, done, err := a.Add(off, total, b, 0)
		if err != nil {
			return nil, fmt.Errorf("flow-model host %s: read %s: %w", in.r.Name, stream, err)
		}
		if done {
			return out, nil
		}
		off += len(b)
	}
}

func (in *remoteInstance) Fire(ctx context.Context, iterations int) error {
	_, err := in.r.request(ctx, "fire", map[string]string{"Id": in.id, "Iterations": strconv.Itoa(iterations)}, nil)
	return err
}

func (in *remoteInstance) Release(ctx context.Context) error {
	if in.released.Swap(true) {
		return nil
	}
	_, err := in.r.request(ctx, "release", map[string]string{"Id": in.id}, nil)
	return err
}
