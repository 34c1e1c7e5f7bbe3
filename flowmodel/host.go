package flowmodel

import (
	"context"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/device"
)

// Host is a place that runs flow-models: this process (Local) or a worker
// reached over NATS (Remote). Both offer the same calls.
type Host interface {
	// Devices returns the host's device hierarchy.
	Devices(ctx context.Context) (HostInfo, error)
	// Map places m on the device with the given ID ("" picks the first
	// device that meets m's requirements), allocating its buffers and
	// building its kernel.
	Map(ctx context.Context, m *Model, deviceID string) (Instance, error)
}

// Instance is a flow-model mapped onto a device.
type Instance interface {
	// Device describes the device the model runs on.
	Device() device.Info
	// Write fills an input (or output) stream's buffer; data must have the
	// stream's size.
	Write(ctx context.Context, stream string, data []byte) error
	// Read returns a stream's buffer contents.
	Read(ctx context.Context, stream string) ([]byte, error)
	// Fire runs the kernel iterations times (at least once), exchanging
	// the buffers of each swap pair between iterations, and waits for it.
	Fire(ctx context.Context, iterations int) error
	// Release frees the instance's buffers and kernel.
	Release(ctx context.Context) error
}

// Query returns the devices of h able to run m, walking host → platform →
// device.
func Query(ctx context.Context, h Host, m *Model) ([]device.Info, error) {
	hi, err := h.Devices(ctx)
	if err != nil {
		return nil, err
	}
	return hi.Match(m)
}

// discovery serialises device discovery and opening: concurrent
// device.Discover calls crash some OpenCL drivers (PoCL).
var discovery struct {
	sync.Mutex
	open map[string]device.Device
}

// discover lists this process's devices.
func discover(ctx context.Context) []device.Info {
	discovery.Lock()
	defer discovery.Unlock()
	return device.Devices(ctx)
}

// openDevice opens a device once per process and shares it: devices stay
// open for the life of the process.
func openDevice(ctx context.Context, id string) (device.Device, error) {
	discovery.Lock()
	defer discovery.Unlock()
	if d, ok := discovery.open[id]; ok {
		return d, nil
	}
	d, err := device.Open(ctx, id)
	if err != nil {
		return nil, err
	}
	if discovery.open == nil {
		discovery.open = map[string]device.Device{}
	}
	discovery.open[id] = d
	return d, nil
}

// OpenDevice opens the device with the given ID the way Local does (once per
// process, discovery serialised), for callers that allocate buffers on it
// beside flow-models (the shell's virtual buffers).
func OpenDevice(ctx context.Context, id string) (device.Device, error) {
	return openDevice(ctx, id)
}

// pick returns the device to map m on: id when given and able, else the
// first able device.
func pick(hi HostInfo, m *Model, id string) (device.Info, error) {
	ok, err := hi.Match(m)
	if id == "" {
		if err != nil {
			return device.Info{}, err
		}
		return ok[0], nil
	}
	for _, p := range hi.Platforms {
		for _, d := range p.Devices {
			if d.ID == id {
				if err := m.Check(d); err != nil {
					return device.Info{}, fmt.Errorf("flow-model %s cannot run on %w", m.Name, err)
				}
				return d, nil
			}
		}
	}
	var ids []string
	for _, d := range ok {
		ids = append(ids, d.ID)
	}
	return device.Info{}, fmt.Errorf("host %s has no device %q (able devices: %v)", hi.Host, id, ids)
}

// Limited is a Host that refuses flow-models whose streams exceed a size,
// for hosts that serve untrusted clients (sluice worker --max-stream).
type Limited struct {
	Host
	// MaxStream is the largest stream in bytes (0: no limit).
	MaxStream int64
}

// Map refuses m when one of its streams is larger than MaxStream, else maps
// it on the wrapped host.
func (l Limited) Map(ctx context.Context, m *Model, id string) (Instance, error) {
	if l.MaxStream > 0 {
		for _, s := range m.streams() {
			if s.Bytes() > l.MaxStream {
				return nil, fmt.Errorf("flow-model %s: stream %s of %s: this host accepts at most %s per stream", m.Name, s.Name, device.Size(s.Bytes()), device.Size(l.MaxStream))
			}
		}
	}
	return l.Host.Map(ctx, m, id)
}
