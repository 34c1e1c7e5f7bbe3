package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/sluicehq/sluice/internal/cu"
)

// The pool's first-fit allocator hands out aligned, disjoint blocks and
// merges freed neighbours back into one run.
func TestPoolAllocator(t *testing.T) {
	const size = 1 << 20
	p := newPool(cu.DevicePtr(1<<32), size)
	r := rand.New(rand.NewPCG(7, 8))
	type blk struct {
		ptr cu.DevicePtr
		n   int64
	}
	var live []blk
	for range 5000 {
		if len(live) > 0 && r.IntN(3) == 0 {
			i := r.IntN(len(live))
			p.release(live[i].ptr)
			live = append(live[:i], live[i+1:]...)
			continue
		}
		n := int64(1 + r.IntN(20000))
		ptr, ok := p.alloc(n)
		if !ok {
			continue
		}
		if ptr%poolAlign != 0 || ptr < p.base || int64(ptr-p.base)+n > size {
			t.Fatalf("block %#x of %d bytes outside the pool or misaligned", ptr, n)
		}
		for _, b := range live {
			if ptr < b.ptr+cu.DevicePtr(b.n) && b.ptr < ptr+cu.DevicePtr(n) {
				t.Fatalf("block %#x+%d overlaps %#x+%d", ptr, n, b.ptr, b.n)
			}
		}
		live = append(live, blk{ptr, n})
	}
	for _, b := range live {
		p.release(b.ptr)
	}
	if sz, used, largest, n := p.stats(); used != 0 || largest != sz || n != 0 || len(p.free) != 1 {
		t.Fatalf("after freeing everything: used %d, largest %d of %d, %d blocks, %d runs", used, largest, sz, n, len(p.free))
	}
	if _, ok := p.alloc(size + 1); ok {
		t.Fatal("a block larger than the pool was served")
	}
}
