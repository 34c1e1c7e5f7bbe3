package device

import (
	"context"
	"errors"
	"fmt"
)

// StageSize is the chunk size Transfer stages through pinned host memory.
var StageSize int64 = 4 << 20

// Transfer copies n bytes from src (at srcOff, on srcQ's device) to dst (at
// dstOff, on dstQ's device) and waits for it. Buffers of one device are
// copied on the device (dstQ.Copy), buffers of two devices of one backend
// by one peer copy when srcQ is a PeerCopier; otherwise the bytes are
// staged through two pinned host buffers of dst's device, so reading
// chunk k+1 from the source overlaps writing chunk k to the destination.
func Transfer(ctx context.Context, dstQ Queue, dst Buffer, dstOff int64, srcQ Queue, src Buffer, srcOff, n int64) error {
	if n < 0 || srcOff < 0 || dstOff < 0 || srcOff+n > src.Size() || dstOff+n > dst.Size() {
		return fmt.Errorf("transfer of %d bytes from %d of a %d-byte buffer to %d of a %d-byte buffer: out of range", n, srcOff, src.Size(), dstOff, dst.Size())
	}
	if n == 0 {
		return nil
	}
	if dst.Device() == src.Device() {
		ev, err := dstQ.Copy(dst, dstOff, src, srcOff, n)
		if err != nil {
			return err
		}
		defer ev.Release()
		return ev.Wait(ctx)
	}
	// Two devices of one backend that copy between themselves: one copy.
	if pc, ok := srcQ.(PeerCopier); ok && src.Device().Info().Backend == dst.Device().Info().Backend {
		ev, err := pc.CopyPeer(dst, dstOff, src, srcOff, n)
		if err != nil {
			return err
		}
		defer ev.Release()
		return ev.Wait(ctx)
	}
	chunk := min(StageSize, n)
	var stage [2]HostBuffer
	var pending [2]Event
	defer func() {
		for i := range stage {
			if pending[i] != nil {
				_ = pending[i].Wait(context.Background())
				pending[i].Release()
			}
			if stage[i] != nil {
				_ = stage[i].Release()
			}
		}
	}()
	for k, off := 0, int64(0); off < n; k, off = k+1, off+chunk {
		s := k % 2
		if stage[s] == nil {
			h, err := dst.Device().AllocHost(chunk)
			if err != nil {
				return fmt.Errorf("staging buffer for a transfer: %w", err)
			}
			stage[s] = h
		}
		if pending[s] != nil { // the write from this stage buffer must be done
			err := pending[s].Wait(ctx)
			pending[s].Release()
			pending[s] = nil
			if err != nil {
				return err
			}
		}
		c := min(chunk, n-off)
		buf := stage[s].Bytes()[:c]
		rev, err := srcQ.Read(buf, src, srcOff+off)
		if err != nil {
			return err
		}
		err = rev.Wait(ctx)
		rev.Release()
		if err != nil {
			return err
		}
		if pending[s], err = dstQ.Write(dst, dstOff+off, buf); err != nil {
			pending[s] = nil
			return err
		}
		if err := dstQ.Flush(); err != nil {
			return err
		}
	}
	var errs []error
	for i := range pending {
		if pending[i] != nil {
			errs = append(errs, pending[i].Wait(ctx))
			pending[i].Release()
			pending[i] = nil
		}
	}
	return errors.Join(errs...)
}
