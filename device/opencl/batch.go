package opencl

import (
	"fmt"

	"github.com/sluicehq/sluice/device"
)

var _ device.Batcher = (*Queue)(nil)
var _ device.Retainer = (*Event)(nil)

// BeginBatch starts a batch (device.Batcher). OpenCL has no graphs:
// launches go to the queue at once, without a cl_event each, and EndBatch
// marks their end. replay is ignored.
func (q *Queue) BeginBatch(replay bool) { q.batched = 0 }

// LaunchQuiet enqueues k over r without creating an event.
func (q *Queue) LaunchQuiet(k device.Kernel, r device.Range, wait ...device.Event) error {
	kk, ok := k.(*Kernel)
	if !ok || kk.dev.pc != q.dev.pc {
		return fmt.Errorf("launch of kernel %s on %s: expected a kernel built for this device", k.Name(), q.dev.info)
	}
	w, err := q.waits(wait)
	if err != nil {
		return err
	}
	if err := q.q.EnqueueKernel(kk.k, sizes(r.Offset), sizes(r.Global), sizes(r.Local), w, nil); err != nil {
		return fmt.Errorf("launch of kernel %s on %s: %w", k.Name(), q.dev.info, err)
	}
	q.batched++
	return nil
}

// EndBatch returns a marker after the batch's launches, or nil when there
// were none.
func (q *Queue) EndBatch() (device.Event, error) {
	if q.batched == 0 {
		return nil, nil
	}
	q.batched = 0
	return q.Marker()
}
