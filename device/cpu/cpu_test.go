package cpu_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cpu"
)

func TestCPUAlwaysThere(t *testing.T) {
	rs := device.Discover(context.Background())
	if len(rs) == 0 || rs[0].Backend != "cpu" || len(rs[0].Devices) != 1 {
		t.Fatalf("discovery must list the CPU first: %+v", rs)
	}
	i := rs[0].Devices[0]
	if i.ID != "cpu" || i.Kind != device.CPU || i.ComputeUnits != runtime.NumCPU() || i.Name == "" {
		t.Fatalf("CPU info %+v", i)
	}
	if runtime.GOOS == "linux" && i.GlobalMem <= 0 {
		t.Fatalf("memory from /proc/meminfo missing: %+v", i)
	}
	t.Logf("%+v", i)
}

func TestCPUQueue(t *testing.T) {
	d, err := device.Open(context.Background(), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	q, _ := d.NewQueue()
	a, _ := d.Alloc(64, device.ReadWrite)
	b, _ := d.Alloc(64, device.ReadWrite)
	src := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	ev, err := q.Write(a, 0, src)
	if err != nil || ev.Wait(context.Background()) != nil {
		t.Fatal(err)
	}
	if s, _ := ev.Status(); s != device.Complete {
		t.Fatal("CPU events complete at once")
	}
	if _, err := q.Copy(b, 8, a, 0, 16); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 16)
	if _, err := q.Read(out, b, 8); err != nil || string(out) != "0123456789abcdef" {
		t.Fatalf("read %q %v", out, err)
	}
	s, err := b.Slice(8, 4)
	if err != nil || string(s.(*cpu.Buffer).Bytes()) != "0123" {
		t.Fatalf("slice %v", err)
	}
	m, _ := q.Map(a, 0, 4, device.MapWrite)
	copy(m, "WXYZ")
	if string(a.(*cpu.Buffer).Bytes()[:4]) != "WXYZ" {
		t.Fatal("a CPU mapping is the buffer itself")
	}
	if _, err := q.Write(a, 60, src[:8]); err == nil {
		t.Fatal("a write past the end must fail")
	}
	if _, err := d.Build(context.Background(), device.Source{Text: "x"}, ""); !errors.Is(err, device.ErrUnsupported) {
		t.Fatalf("Build on the CPU: %v", err)
	}
	if _, err := d.Alloc(1<<60, device.ReadWrite); !errors.Is(err, device.ErrOutOfMemory) {
		t.Fatalf("absurd CPU allocation: %v", err)
	}
	h, err := d.AllocHost(32)
	if err != nil || len(h.Bytes()) != 32 {
		t.Fatal(err)
	}
	// Transfer between two CPU buffers goes through Copy.
	if err := device.Transfer(context.Background(), q, a, 0, q, b, 0, 64); err != nil || string(a.(*cpu.Buffer).Bytes()) != string(b.(*cpu.Buffer).Bytes()) {
		t.Fatal(err)
	}
}
