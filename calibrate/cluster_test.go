package calibrate

import (
	"math"
	"testing"

	"github.com/sluicehq/sluice/machine"
)

func fakeHost() *Host {
	return &Host{Hostname: "h", NumCPU: 2, Workers: 2, Parallelism: 2, Availability: 1, FiringNs: 20, EmptyFiringNs: 20,
		RoundNs: 40, PortNs: 40, WakeNs: 40_000, MemBandwidth: 10e9}
}

// TestClusterModel checks that measured links become worker processors
// and credit links a mapping's worker placements resolve to, and that the
// model survives a round trip through its YAML.
func TestClusterModel(t *testing.T) {
	r := &Result{Host: fakeHost(), Links: []*Link{
		{Worker: "w1", Units: 4, Transport: "tcp", HopNs: 40_000, StartLatencyNs: 30_400, Bandwidth: 1.5e9},
		{Worker: "cpu", Units: 1, Transport: "nats", HopNs: 90_000, StartLatencyNs: 80_000, Bandwidth: 0.2e9},
	}}
	m := r.Model()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	w1 := m.Resolve("worker:w1/cpu")
	if w1 == nil || w1.Name != "w1" || w1.Units != 4 || !w1.Pool || len(w1.AddressSpace) != 0 {
		t.Fatalf("worker:w1/cpu resolves to %+v: expected pool processor w1 with 4 units", w1)
	}
	if p := m.Resolve("worker:cpu"); p == nil || p.Name != "cpu-cpu" {
		t.Errorf("worker:cpu resolves to %v: expected cpu-cpu (the host's cpu has the name)", p)
	}
	ic := m.Interconnect("net-w1")
	if ic == nil || !ic.Credits || ic.StartLatency != 30 || ic.Bandwidth != 1500 || ic.ClockHz != 1e6 || ic.RoutingOf("cpu", false) != machine.StoreAndForward {
		t.Fatalf("net-w1 = %+v: expected a credit link of 30 µs and 1500 bytes/µs, relayed by cpu", ic)
	}
	if r, err := m.Route("w1", "cpu-cpu"); err != nil || len(r) != 2 {
		t.Errorf("route w1 → cpu-cpu: %v, %v: expected two hops through cpu", r, err)
	}
	back, err := machine.Parse("cluster.yaml", r.YAML())
	if err != nil {
		t.Fatal(err)
	}
	if ic2 := back.Interconnect("net-w1"); ic2 == nil || !ic2.Credits || ic2.StartLatency != 30 {
		t.Errorf("net-w1 read back as %+v", ic2)
	}
	if back.Calibration["worker_w1_transport"] != "tcp" || back.Calibration["worker_w1_hop_ns"] != "4e+04" {
		t.Errorf("calibration %v: expected the worker's figures", back.Calibration)
	}
}

// TestFitLatency checks that the fitted start latency makes the model's
// hop probe come out at the measured hop, and that a hop the model cannot
// reach with a positive latency gives 0.
func TestFitLatency(t *testing.T) {
	// Below the pools' spin time plus a wake-up (30 + 40 µs here) a hop
	// keeps the units polling; above it they park and pay the wake-up,
	// so the simulated hop jumps there: 20 µs gets the nearest it can.
	for _, hop := range []float64{20_000, 150_000} {
		l := &Link{Worker: "w1", Units: 2, HopNs: hop, Bandwidth: 1e9}
		r := &Result{Host: fakeHost(), Links: []*Link{l}}
		got, err := fitLatency(r, l)
		if err != nil {
			t.Fatal(err)
		}
		if hop > 100_000 && math.Abs(got-hop) > 0.05*hop {
			t.Errorf("hop %.0f ns: fitted start latency %.0f ns gives a simulated hop of %.0f ns: expected within 5 %%", hop, l.StartLatencyNs, got)
		}
		if l.StartLatencyNs <= 0 || l.StartLatencyNs >= hop {
			t.Errorf("hop %.0f ns: start latency %.0f ns: expected between 0 and the hop", hop, l.StartLatencyNs)
		}
	}
	l := &Link{Worker: "w1", Units: 2, HopNs: 1, Bandwidth: 1e9}
	if _, err := fitLatency(&Result{Host: fakeHost(), Links: []*Link{l}}, l); err != nil || l.StartLatencyNs != 0 {
		t.Errorf("hop of 1 ns: start latency %g, %v: expected 0", l.StartLatencyNs, err)
	}
}
