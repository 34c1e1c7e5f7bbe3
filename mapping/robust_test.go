package mapping

import (
	"math"
	"testing"
	"time"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/machine"
	"github.com/sluicehq/sluice/sim"
)

// TestSlowerCPU: every cost on a processor other than a GPU is scaled
// (cost-file entries by name and kind, "*" entries on CPU kinds, profile
// means, per-G profiles' CPU actors, declared costs without a profile, a
// synthetic actor's as its busy loop lasts);
// kernel actors' times and GPU entries are not.
func TestSlowerCPU(t *testing.T) {
	g := graph.New("g")
	for _, n := range []string{"a", "b", "k", "d", "s", "y"} {
		g.AddActor(n)
	}
	g.Actor("d").Cost = 10 * time.Microsecond
	g.Actor("y").Cost = 10 * time.Microsecond
	m := &machine.Machine{Name: "m", Processors: []*machine.Processor{
		{Name: "cpu0", Kind: "cpu", ClockHz: 1e9, Units: 1}, {Name: "gpu0", Kind: "gpu", ClockHz: 1e9, Units: 1}}}
	kp := sim.KernelProfile{Device: "gpu0", WorkGroups: 64, Mode: "callback"}
	c := &sim.Costs{
		Actors:  map[string]map[string]sim.Cost{"a": {"cpu0": {Seconds: 1}, "gpu": {Seconds: 2}, "gpu0": {Cycles: 30, IsCycles: true}}, "s": {"*": {Seconds: 3}}},
		Profile: map[string]float64{"b": 4, "k": 5},
		Kernels: map[string]sim.KernelProfile{"k": kp},
		AtG:     map[int64]*sim.Profile{64: {Mean: map[string]float64{"b": 6, "k": 7}, Kernels: map[string]sim.KernelProfile{"k": kp}}},
		Burn:    &sim.Burn{Extra: 1e-6, Stretch: 0.5, Actors: map[string]bool{"y": true}},
	}
	s := slowerCPU(c, g, m, 2)
	for _, x := range []struct {
		what      string
		got, want float64
	}{
		{"a on cpu0", s.Actors["a"]["cpu0"].Seconds, 2},
		{"a on gpu", s.Actors["a"]["gpu"].Seconds, 2},
		{"a on gpu0 (cycles)", float64(s.Actors["a"]["gpu0"].Cycles), 30},
		{"s on *", s.Actors["s"]["*"].Seconds, 3},
		{"s on cpu", s.Actors["s"]["cpu"].Seconds, 6},
		{"b's profile", s.Profile["b"], 8},
		{"k's profile (a kernel)", s.Profile["k"], 5},
		{"b at G 64", s.AtG[64].Mean["b"], 12},
		{"k at G 64 (a kernel)", s.AtG[64].Mean["k"], 7},
		{"d declared, on cpu", s.Actors["d"]["cpu"].Seconds, 20e-6},
		{"y declared, synthetic, on cpu", s.Actors["y"]["cpu"].Seconds, 32e-6},
		{"the original b", c.Profile["b"], 4},
		{"the original b at G 64", c.AtG[64].Mean["b"], 6},
	} {
		if math.Abs(x.got-x.want) > 1e-12*math.Abs(x.want) {
			t.Errorf("%s: %g, want %g", x.what, x.got, x.want)
		}
	}
	if _, ok := s.Actors["d"]["gpu"]; ok {
		t.Errorf("d's declared cost was given to the gpu kind: %v", s.Actors["d"])
	}
	if _, ok := s.Actors["b"]; ok {
		t.Errorf("b, profiled, got cost-file entries %v: its profile comes first", s.Actors["b"])
	}
}

// TestRobustBetter: the shorter period wins; within tieTolerance the
// shorter period with slower CPU actors; then the fewer resources; then
// the wider spread over the pool.
func TestRobustBetter(t *testing.T) {
	for _, c := range []struct {
		a, b robustScore
		want bool
	}{
		{robustScore{1, 9, 9, 0}, robustScore{1.1, 1, 0, 0}, true},
		{robustScore{1.01, 1, 9, 0}, robustScore{1, 2, 0, 0}, true},
		{robustScore{1, 2, 0, 0}, robustScore{1.01, 1, 9, 0}, false},
		{robustScore{1, 1, 1, 0}, robustScore{1, 1.01, 2, 0}, true},
		{robustScore{1, 1, 2, 0}, robustScore{1, 1.01, 1, 0}, false},
		{robustScore{1, 1, 1, 0}, robustScore{1, 1.01, 1, 14}, false},
		{robustScore{1, 1.01, 1, 14}, robustScore{1, 1, 1, 0}, true},
		{robustScore{1, 1, 0, 14}, robustScore{1, 1, 1, 30}, true},
	} {
		if got := robustBetter(c.a, c.b); got != c.want {
			t.Errorf("robustBetter(%+v, %+v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
