package spec_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/spec"
)

// shape is what the ETH formats can say about a graph, for comparing an
// imported XML graph with its YAML equivalent.
func shape(g *graph.Graph) []string {
	var s []string
	for _, a := range g.Actors {
		line := "actor " + a.Name
		for _, im := range a.Impls {
			line += " impl:" + string(im.Kind) + ":" + im.Source
		}
		s = append(s, line)
		for _, p := range a.Ports() {
			s = append(s, strings.Join([]string{"  port", p.FullName(), p.Dir.String(), p.Type.Name, p.Rate.String(), "block", itoa(p.Block)}, " "))
		}
	}
	for _, c := range g.Channels {
		s = append(s, strings.Join([]string{"channel", c.Name, c.From.FullName(), c.To.FullName(), "capacity", itoa(c.Capacity), "initial", itoa(c.Initial)}, " "))
	}
	return s
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	neg := n < 0
	if neg {
		n = -n
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}

func TestETHEqualsYAML(t *testing.T) {
	dir := filepath.Join("..", "examples", "eth")
	gx, err := spec.Load(filepath.Join(dir, "graph.xml"))
	if err != nil {
		t.Fatal(err)
	}
	gy, err := spec.Load(filepath.Join(dir, "graph.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sx, sy := shape(gx), shape(gy)
	if !reflect.DeepEqual(sx, sy) {
		t.Errorf("XML:\n%s\nYAML:\n%s", strings.Join(sx, "\n"), strings.Join(sy, "\n"))
	}
	want := []string{
		"actor prod impl:opencl:" + filepath.Join(dir, "prod.c"),
		"  port prod.out1 out bytes4 1 block 1",
		"actor worker impl:opencl:" + filepath.Join(dir, "worker.c"),
		"  port worker.in1 in bytes4 1 block 0",
		"  port worker.out1 out bytes1 4 block 2",
		"actor cons impl:opencl:" + filepath.Join(dir, "cons.c"),
		"  port cons.in1 in bytes1 2 block 0",
		"channel channel1 prod.out1 worker.in1 capacity 8 initial 0",
		"channel channel2 worker.out1 cons.in1 capacity 32 initial 0",
	}
	if !reflect.DeepEqual(sx, want) {
		t.Errorf("XML graph:\n%s\nwant:\n%s", strings.Join(sx, "\n"), strings.Join(want, "\n"))
	}
	if o := gx.Actor("worker").Port("out1").Origin; o != filepath.Join(dir, "graph.xml")+":8:5" {
		t.Errorf("port origin %q", o)
	}
	if o := gx.Channel("channel2").Origin; o != filepath.Join(dir, "graph.xml")+":20:3" {
		t.Errorf("channel origin %q", o)
	}

	mx, err := spec.LoadMapping(filepath.Join(dir, "mapping.xml"))
	if err != nil {
		t.Fatal(err)
	}
	my, err := spec.LoadMapping(filepath.Join(dir, "mapping.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(mx.Actors) != 1 || len(my.Actors) != 1 {
		t.Fatalf("mappings: %v %v", mx.Actors, my.Actors)
	}
	px, py := *mx.Actors["worker"], *my.Actors["worker"]
	px.Origin, py.Origin = "", ""
	if !reflect.DeepEqual(px, py) {
		t.Errorf("XML placement %+v\nYAML placement %+v", px, py)
	}
	wantPl := graph.Placement{Device: "gpu_0", WorkGroups: 4, WorkItems: 2, Distribution: map[string]graph.Distribution{"out1": graph.Strided}}
	if !reflect.DeepEqual(px, wantPl) {
		t.Errorf("placement %+v, want %+v", px, wantPl)
	}
	if err := mx.Check(gx); err != nil {
		t.Errorf("mapping check: %v", err)
	}
}

func TestETHErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"malformed", "<graph>\n  <actor name=\"a\">\n</graph>\n", []string{
			"e.xml:3:9: malformed XML: element <actor> closed by </graph>"}},
		{"wrong root", "<graf/>", []string{"e.xml:1:1: expected a <graph> root element, found <graf>"}},
		{"unknown element and attribute", `<graph>
  <actor name="a" kind="x">
    <prot type="out" name="o" rate="1"/>
  </actor>
</graph>`, []string{
			`e.xml:2:3: <actor>: unknown attribute "kind"; allowed: name`,
			`e.xml:3:5: <actor>: unknown element <prot> (did you mean "port"?); allowed: <port>, <src>`}},
		{"bad rate and missing attribute", `<graph>
  <actor name="a">
    <port type="out" name="o" rate="x"/>
    <port type="in" rate="1"/>
  </actor>
</graph>`, []string{
			`e.xml:3:5: <port>: rate="x": expected a positive integer, phases such as "1,2,1", or dynamic`,
			`e.xml:4:5: <port>: missing attribute "name"`,
			`e.xml:3:5: output port a.o is not connected: expected a channel from it or a graph output bound to it`}},
		{"unknown actor and missing source", `<graph>
  <actor name="prod">
    <port type="out" name="out1" rate="1"/>
    <src type="c" location="nothere.c"/>
  </actor>
  <actor name="cons">
    <port type="in" name="in1" rate="1"/>
  </actor>
  <channel capacity="8" tokensize="4" name="c1">
    <sender actor="prd" port="out1"/>
    <receiver actor="cons" port="in1"/>
  </channel>
</graph>`, []string{
			`e.xml:4:5: <src> location: kernel file "nothere.c" not found (looked for nothere.c, relative to the spec file's directory)`,
			`e.xml:10:5: <sender>: unknown actor "prd" in "prd.out1" (did you mean "prod"?)`}},
		{"block does not divide", `<graph>
  <actor name="a">
    <port type="out" name="o" rate="3" blocksize="2"/>
  </actor>
  <actor name="b">
    <port type="in" name="i" rate="3"/>
  </actor>
  <channel tokensize="4"><sender actor="a" port="o"/><receiver actor="b" port="i"/></channel>
</graph>`, []string{`e.xml:3:5: port a.o: block size 2 does not divide rate 3`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := spec.ImportETHGraph("e.xml", []byte(tt.src))
			if err == nil {
				t.Fatal("no error")
			}
			if got := errorLines(t, err); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestETHMapping(t *testing.T) {
	src := `<mapping>
  <binding>
    <actor name="a"><port name="o" work-dist="consecutive"/></actor>
    <actor name="b"/>
    <device name="cpu_0"/>
    <workgroups count="2"/>
  </binding>
  <binding>
    <actor name="c"/>
    <device name="gpu_0"/>
    <workitems count="64"/>
  </binding>
</mapping>`
	m, err := spec.ImportETHMapping("m.xml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Actors["a"]; a.Device != "cpu_0" || a.WorkGroups != 2 || a.Distribution["o"] != graph.Consecutive || a.Origin != "m.xml:3:5" {
		t.Errorf("a = %+v", a)
	}
	if b := m.Actors["b"]; b.Device != "cpu_0" || b.Distribution != nil {
		t.Errorf("b = %+v", b)
	}
	if c := m.Actors["c"]; c.Device != "gpu_0" || c.WorkItems != 64 {
		t.Errorf("c = %+v", c)
	}
	bad := `<binding>
  <actor name="w"><port name="o" work-dist="stride"/></actor>
  <device name="gpu_0"/>
  <device name="gpu_1"/>
  <workgroups count="-1"/>
</binding>`
	_, err = spec.ImportETHMapping("m.xml", []byte(bad))
	want := []string{
		`m.xml:2:19: <port>: work-dist="stride": expected consecutive or strided (did you mean "strided"?)`,
		`m.xml:4:3: <binding>: more than one <device> (first at line 3, column 3)`,
		`m.xml:5:3: <workgroups>: count="-1": expected an integer from 1 to 2147483647`,
	}
	if got := errorLines(t, err); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
