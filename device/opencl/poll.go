package opencl

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/device"
)

// poll waits for e by polling its status, so ctx can cancel the wait
// without a purego callback or a goroutine stuck in clWaitForEvents.
func poll(ctx context.Context, e *Event) error {
	if e.q != nil {
		_ = e.q.Flush() // a command never submitted never completes
	}
	d := time.Microsecond
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		s, err := e.Status()
		if err != nil {
			return err
		}
		if s == device.Complete {
			return nil
		}
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if d < time.Millisecond {
			d *= 2
		}
	}
}
