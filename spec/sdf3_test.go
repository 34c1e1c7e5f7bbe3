package spec

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analysis"
)

// period runs the throughput analysis on unbounded channels.
func sdf3Period(t *testing.T, path string, unit time.Duration) (map[string]int64, float64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ImportSDF3Graph(path, data, unit)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := analysis.RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	th, err := analysis.ThroughputBound(g, rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := map[string]int64{}
	for _, a := range g.Actors {
		q[a.Name] = int64(rv.Firings[a.Name])
	}
	return q, th.PeriodNS
}

// TestSDF3Examples checks the shipped SDF3 files against figures worked
// out by hand in their comments.
func TestSDF3Examples(t *testing.T) {
	t.Parallel()
	q, p := sdf3Period(t, "../examples/sdf3/cd2dat.xml", time.Nanosecond)
	want := map[string]int64{"A": 147, "B": 147, "C": 98, "D": 28, "E": 32, "F": 160}
	for a, n := range want {
		if q[a] != n {
			t.Errorf("cd2dat: %s fires %d times an iteration, want %d", a, q[a], n)
		}
	}
	// C bounds the period: 98 firings × 900 ns.
	if p != 88200 {
		t.Errorf("cd2dat: period %v ns, want 88200", p)
	}
	q, p = sdf3Period(t, "../examples/sdf3/loop-csdf.xml", 0)
	if q["P"] != 2 || q["C"] != 1 {
		t.Errorf("loop: repetitions %v, want P=2 (one cycle of two phases) C=1", q)
	}
	// The loop's 3 tokens are one iteration: P (1+3 us) and C (6 us) alternate.
	if p != 10000 {
		t.Errorf("loop: period %v ns, want 10000", p)
	}
}

func TestSDF3Graph(t *testing.T) {
	t.Parallel()
	const doc = `<?xml version="1.0"?>
<sdf3 type="sdf" version="1.0">
 <applicationGraph name="pair">
  <sdf name="pair" type="t">
   <actor name="a" type="x"><port name="o" type="out" rate="2"/><port name="s" type="out" rate="1"/><port name="si" type="in" rate="1"/></actor>
   <actor name="b" type="y"><port name="i" type="in" rate="3"/></actor>
   <channel name="ab" srcActor="a" srcPort="o" dstActor="b" dstPort="i"/>
   <channel name="self" srcActor="a" srcPort="s" dstActor="a" dstPort="si" initialTokens="1"/>
  </sdf>
  <sdfProperties>
   <actorProperties actor="a">
    <processor type="slow"><executionTime time="9"/></processor>
    <processor type="fast" default="true"><executionTime time="1"/></processor>
   </actorProperties>
   <actorProperties actor="b"><processor type="p" default="true"><executionTime time="2"/></processor></actorProperties>
   <channelProperties channel="ab"><tokenSize sz="12"/></channelProperties>
  </sdfProperties>
 </applicationGraph>
</sdf3>`
	if !IsSDF3([]byte(doc)) {
		t.Fatal("IsSDF3 = false for an SDF3 document")
	}
	g, err := ImportSDF3Graph("pair.xml", []byte(doc), 10*time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	a, b := g.Actor("a"), g.Actor("b")
	if a.Cost != 10*time.Nanosecond || b.Cost != 20*time.Nanosecond {
		t.Errorf("costs a=%v b=%v: want the default processor's times × 10ns (10ns, 20ns)", a.Cost, b.Cost)
	}
	if typ := a.Port("o").Type; typ.Size != 2 {
		t.Errorf("12-bit tokens became %v: want 2 bytes", typ)
	}
	if typ := a.Port("s").Type; typ.Size != 1 {
		t.Errorf("a channel without a token size carries %v: want 1-byte tokens", typ)
	}
	rv, err := analysis.RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	if rv.Firings["a"] != 3 || rv.Firings["b"] != 2 {
		t.Errorf("repetitions %v: want a=3 b=2", rv.Firings)
	}
	th, err := analysis.ThroughputBound(g, rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	// a: 3 × 10 ns = 30; b: 2 × 20 ns = 40 bounds it.
	if th.PeriodNS != 40 {
		t.Errorf("period %v ns, want 40", th.PeriodNS)
	}
}

func TestSDF3Errors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ doc, want string }{
		{`<graph/>`, `expected an <sdf3> root element`},
		{`<sdf3 type="fsm-sadf"/>`, `type="fsm-sadf": expected sdf or csdf`},
		{`<sdf3 type="sdf"><applicationGraph name="x"/></sdf3>`, `missing <sdf>`},
		{"<sdf3 type=\"sdf\"><applicationGraph name=\"x\"><sdf name=\"x\">\n<actor name=\"a\"><port name=\"o\" type=\"out\" rate=\"1\"/></actor>\n<channel name=\"c\" srcActor=\"a\" srcPort=\"o\" dstActor=\"bb\" dstPort=\"i\"/>\n</sdf></applicationGraph></sdf3>",
			`x.xml:3:1: <channel c>: unknown actor "bb"`},
		{`<sdf3 type="sdf"><applicationGraph name="x"><sdf name="x"><actor name="a"><port name="o" type="out" rate="1,2"/></actor></sdf></applicationGraph></sdf3>`,
			`phases in an SDF graph`},
		{`<sdf3 type="sdf"><applicationGraph name="x"><sdf name="x"><actor name="a"><port name="o" type="out" rate="1"/></actor></sdf><sdfProperties><actorProperties actor="z"><processor type="p"><executionTime time="1"/></processor></actorProperties></sdfProperties></applicationGraph></sdf3>`,
			`actor="z": no such actor`},
		{`<sdf3 type="sdf"><applicationGraph name="x"><sdf name="x"><actor name="a"><port name="o" type="out" rate="1"/></actor></sdf><sdfProperties><actorProperties actor="a"><processor type="p"><executionTime time="-4"/></processor></actorProperties></sdfProperties></applicationGraph></sdf3>`,
			`time="-4": expected a non-negative number`},
		{`<sdf3 type="sdf"><applicationGraph`, `malformed XML`},
	} {
		_, err := ImportSDF3Graph("x.xml", []byte(c.doc), 0)
		var el ErrorList
		if err == nil || !errors.As(err, &el) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s…: got %v, want an ErrorList containing %q", c.doc, err, c.want)
		}
	}
	if IsSDF3([]byte(`<?xml version="1.0"?><!-- x --><graph name="eth"/>`)) {
		t.Error("IsSDF3 = true for an ETH graph")
	}
}

// FuzzSDF3Graph: any input gives a graph or an ErrorList, never a panic.
func FuzzSDF3Graph(f *testing.F) {
	for _, p := range []string{"../examples/sdf3/cd2dat.xml", "../examples/sdf3/loop-csdf.xml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`<sdf3 type="csdf"><applicationGraph><csdf><actor name="a"><port name="p" type="out" rate="0,0"/></actor></csdf></applicationGraph></sdf3>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ImportSDF3Graph("fuzz.xml", data, 0)
		if err == nil && g == nil {
			t.Fatal("no graph and no error")
		}
		var el ErrorList
		if err != nil && !errors.As(err, &el) {
			t.Fatalf("error %T is not an ErrorList: %v", err, err)
		}
	})
}
