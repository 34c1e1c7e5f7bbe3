package flowmodel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/sluicehq/sluice/device"
)

// Local runs flow-models on this process's devices. The zero value is
// ready to use and offers every device.
type Local struct {
	// Only, when set, lists the device IDs offered (a worker's --devices).
	Only []string
}

// Devices lists this process's devices (those in Only, when set) as a
// hierarchy.
func (l Local) Devices(ctx context.Context) (HostInfo, error) {
	host, _ := os.Hostname()
	ds := discover(ctx)
	if len(l.Only) > 0 {
		var keep []device.Info
		for _, d := range ds {
			if contains(l.Only, d.ID) {
				keep = append(keep, d)
			}
		}
		ds = keep
	}
	return Tree(host, ds), nil
}

// Map places m on a local device; see Host.
func (l Local) Map(ctx context.Context, m *Model, id string) (Instance, error) {
	return l.MapLocal(ctx, m, id)
}

// MapLocal is Map returning the concrete *LocalInstance, whose buffers the
// caller may replace with its own (Bind).
func (l Local) MapLocal(ctx context.Context, m *Model, id string) (*LocalInstance, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	hi, err := l.Devices(ctx)
	if err != nil {
		return nil, err
	}
	info, err := pick(hi, m, id)
	if err != nil {
		return nil, err
	}
	in := &LocalInstance{m: m, info: info, bufs: map[string]device.Buffer{}, host: map[string][]byte{}, own: map[string]bool{}}
	if info.Backend == "cpu" {
		fn, ok := builtin(m.Kernel.Builtin)
		if !ok {
			return nil, fmt.Errorf("flow-model %s: no Go built-in %q (registered: %v)", m.Name, m.Kernel.Builtin, builtinNames())
		}
		in.fn = fn
		for _, s := range m.streams() {
			in.host[s.Name] = make([]byte, s.Bytes())
		}
		return in, nil
	}
	if err := in.setupDevice(ctx); err != nil {
		return nil, errors.Join(err, in.Release(ctx))
	}
	return in, nil
}

// streams returns the inputs then the outputs.
func (m *Model) streams() []Stream { return append(append([]Stream(nil), m.In...), m.Out...) }

// LocalInstance is a flow-model mapped onto a device of this process.
type LocalInstance struct {
	m    *Model
	info device.Info

	mu   sync.Mutex
	dev  device.Device
	q    device.Queue
	prog device.Program
	k    device.Kernel
	bufs map[string]device.Buffer // device buffers by stream
	own  map[string]bool          // buffers the instance allocated
	host map[string][]byte        // built-ins: host memory by stream
	fn   BuiltinFunc
}

// setupDevice opens the device, builds the kernel and allocates buffers.
func (in *LocalInstance) setupDevice(ctx context.Context) error {
	m := in.m
	d, err := openDevice(ctx, in.info.ID)
	if err != nil {
		return err
	}
	in.dev = d
	if in.q, err = d.NewQueue(); err != nil {
		return err
	}
	src := device.Source{Name: m.Name + ".cl", Text: m.Kernel.OpenCL}
	if in.info.Backend == "cuda" {
		src = device.Source{Name: m.Name + ".cu", Text: m.Kernel.CUDA}
	}
	if in.prog, err = d.Build(ctx, src, m.Kernel.Options); err != nil {
		return fmt.Errorf("flow-model %s: %w", m.Name, err)
	}
	if in.k, err = in.prog.Kernel(m.Kernel.Entry); err != nil {
		return fmt.Errorf("flow-model %s: entry %q: %w (kernels: %v)", m.Name, m.Kernel.Entry, err, in.prog.Kernels())
	}
	for _, s := range m.streams() {
		b, err := d.Alloc(s.Bytes(), device.ReadWrite)
		if err != nil {
			return fmt.Errorf("flow-model %s: stream %s: %w", m.Name, s.Name, err)
		}
		in.bufs[s.Name], in.own[s.Name] = b, true
	}
	return nil
}

// Device describes the device.
func (in *LocalInstance) Device() device.Info { return in.info }

// Model returns the mapped flow-model.
func (in *LocalInstance) Model() *Model { return in.m }

// DeviceHandle returns the opened device (nil for Go built-ins).
func (in *LocalInstance) DeviceHandle() device.Device { return in.dev }

// stream checks a stream name and the size of data for it (-1: any).
func (in *LocalInstance) stream(name string, size int) (Stream, error) {
	s, _, ok := in.m.Stream(name)
	if !ok {
		return s, fmt.Errorf("flow-model %s has no stream %q (streams: %s)", in.m.Name, name, in.m.streamNames())
	}
	if size >= 0 && int64(size) != s.Bytes() {
		return s, fmt.Errorf("flow-model %s: stream %s holds %d %s tokens (%d bytes): found %d bytes", in.m.Name, name, s.Length, s.Type, s.Bytes(), size)
	}
	return s, nil
}

// Buffer returns the device buffer now behind a stream (nil for built-ins).
func (in *LocalInstance) Buffer(stream string) device.Buffer {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.bufs[stream]
}

// Bind makes b, a buffer of the instance's device of at least the
// stream's size, the stream's buffer; the instance frees the buffer it
// had and never frees b. Swap pairs exchange bound buffers too.
func (in *LocalInstance) Bind(stream string, b device.Buffer) error {
	s, err := in.stream(stream, -1)
	if err != nil {
		return err
	}
	if in.dev == nil {
		return fmt.Errorf("flow-model %s runs as a Go built-in: it has no device buffers to bind", in.m.Name)
	}
	if b.Size() < s.Bytes() {
		return fmt.Errorf("bind %s: buffer of %d bytes: expected at least %d", stream, b.Size(), s.Bytes())
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.own[stream] {
		in.bufs[stream].Release()
	}
	in.bufs[stream], in.own[stream] = b, false
	return nil
}

// Write fills a stream's buffer.
func (in *LocalInstance) Write(ctx context.Context, stream string, data []byte) error {
	if _, err := in.stream(stream, len(data)); err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.fn != nil {
		copy(in.host[stream], data)
		return nil
	}
	ev, err := in.q.Write(in.bufs[stream], 0, data)
	if err != nil {
		return err
	}
	defer ev.Release()
	return ev.Wait(ctx)
}

// Read returns a stream's contents.
func (in *LocalInstance) Read(ctx context.Context, stream string) ([]byte, error) {
	s, err := in.stream(stream, -1)
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]byte, s.Bytes())
	if in.fn != nil {
		copy(out, in.host[stream])
		return out, nil
	}
	ev, err := in.q.Read(out, in.bufs[stream], 0)
	if err != nil {
		return nil, err
	}
	defer ev.Release()
	return out, ev.Wait(ctx)
}

// Fire runs the kernel iterations times with the swap pairs exchanged
// between iterations.
func (in *LocalInstance) Fire(ctx context.Context, iterations int) error {
	if iterations < 1 {
		iterations = 1
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for it := 0; it < iterations; it++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if it > 0 {
			in.swap()
		}
		var err error
		if in.fn != nil {
			err = in.fireBuiltin()
		} else {
			err = in.launch()
		}
		if err != nil {
			return fmt.Errorf("flow-model %s: iteration %d: %w", in.m.Name, it+1, err)
		}
	}
	if in.fn != nil {
		return nil
	}
	return in.q.Finish()
}

// swap exchanges the buffers of every swap pair.
func (in *LocalInstance) swap() {
	for _, p := range in.m.Swap {
		if in.fn != nil {
			in.host[p.Out], in.host[p.In] = in.host[p.In], in.host[p.Out]
			continue
		}
		in.bufs[p.Out], in.bufs[p.In] = in.bufs[p.In], in.bufs[p.Out]
		in.own[p.Out], in.own[p.In] = in.own[p.In], in.own[p.Out]
	}
}

// launch sets the kernel's arguments and enqueues one launch.
func (in *LocalInstance) launch() error {
	i := 0
	for _, s := range in.m.streams() {
		if err := in.k.SetArg(i, in.bufs[s.Name]); err != nil {
			return fmt.Errorf("argument %d (%s): %w", i, s.Name, err)
		}
		i++
	}
	for _, p := range in.m.Params {
		var v any = p.arg()
		if p.Local > 0 {
			v = device.Local(p.Local)
		}
		if err := in.k.SetArg(i, v); err != nil {
			return fmt.Errorf("argument %d (%s): %w", i, p.Name, err)
		}
		i++
	}
	r := device.Range{Global: in.m.Range.Global, Local: in.m.Range.Local}
	if len(r.Global) == 0 {
		r.Global = []int{in.m.Out[0].Length}
	}
	if len(r.Local) == 0 {
		r.Local = nil // the driver chooses
	}
	ev, err := in.q.Launch(in.k, r)
	if err != nil {
		return err
	}
	ev.Release()
	return nil
}

// fireBuiltin calls the Go built-in once.
func (in *LocalInstance) fireBuiltin() error {
	var ins, outs [][]byte
	for _, s := range in.m.In {
		ins = append(ins, in.host[s.Name])
	}
	for _, s := range in.m.Out {
		outs = append(outs, in.host[s.Name])
	}
	params := map[string]float64{}
	for _, p := range in.m.Params {
		params[p.Name] = p.Value
	}
	return in.fn(params, ins, outs)
}

// Release frees the instance's own buffers, kernel, program and queue.
func (in *LocalInstance) Release(context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	var errs []error
	if in.q != nil {
		errs = append(errs, in.q.Release())
		in.q = nil
	}
	for name, b := range in.bufs {
		if in.own[name] {
			errs = append(errs, b.Release())
		}
		delete(in.bufs, name)
	}
	if in.k != nil {
		errs = append(errs, in.k.Release())
		in.k = nil
	}
	if in.prog != nil {
		errs = append(errs, in.prog.Release())
		in.prog = nil
	}
	return errors.Join(errs...)
}
