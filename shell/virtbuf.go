package shell

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/sluicehq/sluice/device"
)

// VirtBuf is a virtual buffer: Len tokens of Type that stay resident
// between commands, on the shell's device when it has one, else in host
// memory.
type VirtBuf struct {
	Name string
	Type string
	Len  int
	dev  device.Buffer // on the shell's device, or nil
	host []byte        // when the shell has no device
}

// Bytes returns the buffer's size in bytes.
func (v *VirtBuf) Bytes() int64 { return int64(v.Len) * int64(tokenSize(v.Type)) }

// ensureDevice opens the shell's device for virtual buffers on first use
// (mu held): Options.Device, else the first OpenCL device, else none
// (host memory).
func (s *Shell) ensureDevice(ctx context.Context) error {
	if s.devReady {
		return nil
	}
	id := s.o.Device
	if id == "" {
		hi, err := s.host.Devices(ctx)
		if err != nil {
			return err
		}
		for _, p := range hi.Platforms {
			for _, d := range p.Devices {
				if id == "" && d.Backend == "opencl" {
					id = d.ID
				}
			}
		}
	}
	if id != "" && id != "host" {
		d, err := s.openDevice(ctx, id)
		if err != nil {
			return err
		}
		q, err := d.NewQueue()
		if err != nil {
			return err
		}
		s.dev, s.q = d, q
	}
	s.devReady = true
	return nil
}

// create makes a virtual buffer (mu held).
func (s *Shell) create(ctx context.Context, name, typ string, n int) error {
	if _, ok := s.bufs[name]; ok {
		return fmt.Errorf("virtual buffer %q exists: delete it first", name)
	}
	if tokenSize(typ) == 0 {
		return fmt.Errorf("type %q: expected one of u8, i8, u16, i16, u32, i32, f32, u64, i64, f64, c64, c128", typ)
	}
	if n <= 0 {
		return fmt.Errorf("length %d: expected a positive number of tokens", n)
	}
	if err := s.ensureDevice(ctx); err != nil {
		return err
	}
	v := &VirtBuf{Name: name, Type: typ, Len: n}
	if s.dev != nil {
		b, err := s.dev.Alloc(v.Bytes(), device.ReadWrite)
		if err != nil {
			return err
		}
		v.dev = b
		// Zero it, as host buffers are.
		if err := s.put(ctx, v, make([]byte, v.Bytes())); err != nil {
			return err
		}
	} else {
		v.host = make([]byte, v.Bytes())
	}
	s.bufs[name] = v
	return nil
}

// get reads a virtual buffer's contents (mu held).
func (s *Shell) get(ctx context.Context, v *VirtBuf) ([]byte, error) {
	if v.dev == nil {
		return append([]byte(nil), v.host...), nil
	}
	out := make([]byte, v.Bytes())
	ev, err := s.q.Read(out, v.dev, 0)
	if err != nil {
		return nil, err
	}
	defer ev.Release()
	return out, ev.Wait(ctx)
}

// put writes a virtual buffer's contents (mu held).
func (s *Shell) put(ctx context.Context, v *VirtBuf, b []byte) error {
	if int64(len(b)) != v.Bytes() {
		return fmt.Errorf("virtual buffer %s holds %d bytes: found %d", v.Name, v.Bytes(), len(b))
	}
	if v.dev == nil {
		copy(v.host, b)
		return nil
	}
	ev, err := s.q.Write(v.dev, 0, b)
	if err != nil {
		return err
	}
	defer ev.Release()
	return ev.Wait(ctx)
}

// buf returns a virtual buffer by name (mu held).
func (s *Shell) buf(name string) (*VirtBuf, error) {
	v, ok := s.bufs[name]
	if !ok {
		return nil, fmt.Errorf("no virtual buffer %q (have: %v)", name, s.names())
	}
	return v, nil
}

func (s *Shell) names() []string {
	var n []string
	for k := range s.bufs {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// virtbuf runs the virtbuf command.
func (s *Shell) virtbuf(ctx context.Context, args []string) error {
	usage := errors.New("usage: virtbuf list | create NAME TYPE LEN | fill NAME FILE | dump NAME FILE | swap A B | delete NAME | delete --all")
	if len(args) == 0 {
		return usage
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case args[0] == "list" && len(args) == 1:
		where := "host memory"
		if s.dev != nil {
			where = s.dev.Info().ID
		}
		for _, n := range s.names() {
			v := s.bufs[n]
			fmt.Fprintf(s.o.Out, "%s\t%s\t%d\t%s\t%s\n", v.Name, v.Type, v.Len, device.Size(v.Bytes()), where)
		}
		return nil
	case args[0] == "create" && len(args) == 4:
		var n int
		if _, err := fmt.Sscan(args[3], &n); err != nil {
			return fmt.Errorf("virtbuf create: length %q: expected a number of tokens", args[3])
		}
		return s.create(ctx, args[1], args[2], n)
	case args[0] == "fill" && len(args) == 3:
		v, err := s.buf(args[1])
		if err != nil {
			return err
		}
		b, err := readData(s.path(args[2]), v.Type, v.Bytes())
		if err != nil {
			return err
		}
		return s.put(ctx, v, b)
	case args[0] == "dump" && len(args) == 3:
		v, err := s.buf(args[1])
		if err != nil {
			return err
		}
		b, err := s.get(ctx, v)
		if err != nil {
			return err
		}
		return writeData(s.path(args[2]), v.Type, b)
	case args[0] == "swap" && len(args) == 3:
		a, err := s.buf(args[1])
		if err != nil {
			return err
		}
		b, err := s.buf(args[2])
		if err != nil {
			return err
		}
		if a.Type != b.Type || a.Len != b.Len {
			return fmt.Errorf("virtbuf swap: %s is %d %s, %s is %d %s: expected equal shapes", a.Name, a.Len, a.Type, b.Name, b.Len, b.Type)
		}
		a.dev, b.dev = b.dev, a.dev
		a.host, b.host = b.host, a.host
		return nil
	case args[0] == "delete" && len(args) == 2 && args[1] == "--all":
		for _, n := range s.names() {
			s.release(n)
		}
		return nil
	case args[0] == "delete" && len(args) == 2:
		if _, err := s.buf(args[1]); err != nil {
			return err
		}
		s.release(args[1])
		return nil
	}
	return usage
}

// release frees and forgets a virtual buffer (mu held).
func (s *Shell) release(name string) {
	if v := s.bufs[name]; v.dev != nil {
		v.dev.Release()
	}
	delete(s.bufs, name)
}
