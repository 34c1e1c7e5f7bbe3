package machine

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestExamplesLoad(t *testing.T) {
	files, _ := filepath.Glob("../examples/machines/*.yaml")
	if len(files) < 4 {
		t.Fatalf("found %d example machines", len(files))
	}
	for _, f := range files {
		m, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, a := range m.Processors {
			for _, b := range m.Processors {
				if _, err := m.Route(a.Name, b.Name); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
		}
	}
	m, err := Load("../examples/machines/mesh2x2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ab := m.Interconnect("A <-> B")
	if ab == nil || ab.StartLatency != 0 || ab.StartCost != 2 || ab.Bandwidth != 4 || ab.FinishCost != 2 || ab.Channels != 1 {
		t.Errorf("A <-> B = %+v", ab)
	}
	hops, err := m.Route("A", "D")
	if err != nil || len(hops) != 2 || hops[0].To != "B" || hops[1].Forward != StoreAndForward {
		t.Errorf("route A→D = %+v, %v: want A→B→D store-and-forward", hops, err)
	}
	// 8 bytes over two links, store-and-forward: 2 × (S + 8/4).
	if got := RouteLatency(hops, 8); got != 8e-9 {
		t.Errorf("route latency %g, want 8ns", got)
	}
	cell, err := Load("../examples/machines/cell.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spe := cell.Processor("SPE3")
	if spe == nil || spe.Kind != "spe" || spe.AddressSpace[0].Memory != "LS3" || spe.PushSend.Unit != 16384 {
		t.Errorf("SPE3 = %+v", spe)
	}
	if cell.Interconnect("EIB").Channels != 4 || cell.Memory("LS5").Size != 256<<10 {
		t.Error("EIB or LS5 wrong")
	}
	if p := cell.Resolve("cpu"); p == nil || p.Name != "PPE" {
		t.Errorf("Resolve(cpu) = %v", p)
	}
}

func TestStaircase(t *testing.T) {
	s := Staircase{Fixed: 100, Unit: 16, UnitCost: 10}
	for _, tc := range []struct{ n, want int64 }{{0, 100}, {1, 100}, {16, 100}, {17, 110}, {32, 110}, {33, 120}} {
		if got := s.Cycles(tc.n); got != tc.want {
			t.Errorf("Cycles(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	if (Staircase{Fixed: 5}).Cycles(1<<20) != 5 {
		t.Error("no unit: fixed cost expected")
	}
}

func TestLoadErrors(t *testing.T) {
	src := `name: bad
processors:
  A: {clock: 1GHz, colck: 2}
  B: {clock: fast, address_space: [nowhere]}
  bus: {}
  C: {wake_cost: -5}
memories:
  m: {size: 12 parsecs}
interconnects:
  bus: {elements: [A, B]}
  x: {elements: [A, y, Q], routing: {Z: cut-through}, channels: 0}
  y: {elements: [B]}
`
	_, err := Parse("bad.yaml", []byte(src))
	var el ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("got %v, want an ErrorList", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`bad.yaml:3:20: processor A: unknown key "colck"`,
		`bad.yaml:4:14: processor B: clock: expected a positive clock rate`,
		`bad.yaml:4:3: processor B: address space names unknown memory "nowhere"`,
		`bad.yaml:8:13: memory m: size: expected a size in bytes`,
		`bad.yaml:6:18: processor C: wake_cost: -5 out of range: expected 0 to`,
		`duplicate name "bus"`,
		`interconnect x lists interconnect "y" as an element: the topology is bipartite`,
		`interconnect x names unknown element "Q"`,
		`interconnect x gives routing for "Z", which is not one of its elements`,
		`interconnect x has 0 channels`,
		`interconnect y joins 1 element(s)`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if _, err := Parse("syntax.yaml", []byte("processors: [\n")); err == nil || !strings.HasPrefix(err.Error(), "syntax.yaml:") {
		t.Errorf("syntax error: %v", err)
	}
}

func TestCheckRoutes(t *testing.T) {
	m, err := Parse("m.yaml", []byte(`processors: {a: {}, b: {}}
interconnects:
  fifo: {elements: [a, b], multiplexable: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := m.Route("a", "b")
	if err := m.CheckRoutes([]Use{{"s1", h}}); err != nil {
		t.Errorf("one stream: %v", err)
	}
	err = m.CheckRoutes([]Use{{"s1", h}, {"s2", h}})
	if err == nil || !strings.Contains(err.Error(), "m.yaml:3:3") || !strings.Contains(err.Error(), "2 streams over it: s1, s2") {
		t.Errorf("two streams: %v", err)
	}
}
