package cuda

import (
	"sort"
	"sync"

	"github.com/sluicehq/sluice/internal/cu"
)

// poolAlign is the alignment of pool blocks (cuMemAlloc's is 256 bytes).
const poolAlign = 256

// pool sub-allocates one cuMemAlloc'd region: first fit over a list of free
// runs sorted by offset, merged with their neighbours when freed. It is
// meant for the buffers a graph allocates at setup (channels, staging), so
// that the steady state never calls the driver's allocator; it is not a
// general-purpose allocator (no size classes).
type pool struct {
	mu    sync.Mutex
	base  cu.DevicePtr
	size  int64
	free  []run           // sorted by off
	used  map[int64]int64 // off → size of live blocks
	inUse int64
}

type run struct{ off, n int64 }

func newPool(base cu.DevicePtr, size int64) *pool {
	return &pool{base: base, size: size, free: []run{{0, size}}, used: map[int64]int64{}}
}

func (p *pool) alloc(size int64) (cu.DevicePtr, bool) {
	n := (size + poolAlign - 1) &^ (poolAlign - 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.free {
		if r.n < n {
			continue
		}
		if r.n == n {
			p.free = append(p.free[:i], p.free[i+1:]...)
		} else {
			p.free[i] = run{r.off + n, r.n - n}
		}
		p.used[r.off] = n
		p.inUse += n
		return p.base + cu.DevicePtr(r.off), true
	}
	return 0, false
}

func (p *pool) release(ptr cu.DevicePtr) {
	off := int64(ptr - p.base)
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.used[off]
	if !ok {
		return
	}
	delete(p.used, off)
	p.inUse -= n
	i := sort.Search(len(p.free), func(i int) bool { return p.free[i].off > off })
	p.free = append(p.free, run{})
	copy(p.free[i+1:], p.free[i:])
	p.free[i] = run{off, n}
	if i+1 < len(p.free) && p.free[i].off+p.free[i].n == p.free[i+1].off { // merge right
		p.free[i].n += p.free[i+1].n
		p.free = append(p.free[:i+1], p.free[i+2:]...)
	}
	if i > 0 && p.free[i-1].off+p.free[i-1].n == p.free[i].off { // merge left
		p.free[i-1].n += p.free[i].n
		p.free = append(p.free[:i], p.free[i+1:]...)
	}
}

func (p *pool) stats() (size, used, largest int64, blocks int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.free {
		largest = max(largest, r.n)
	}
	return p.size, p.inUse, largest, len(p.used)
}
