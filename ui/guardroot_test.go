package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/fsroot"
)

// sentinel is planted in every file outside the root; no answer may hold it.
const sentinel = "SLUICE-SENTINEL-7f3a9c"

// rootFixture makes DIR/root (the file root, with a composite's graph, a
// kernel, a flow model and data files inside) and DIR/outside (files
// holding the sentinel as their first line, as /etc/passwd would), and in
// the root a link to a file outside and a link to the outside directory.
func rootFixture(t testing.TB) (root, outside string) {
	t.Helper()
	dir := t.TempDir()
	root, outside = filepath.Join(dir, "root"), filepath.Join(dir, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := sentinel + ":x:0:0:root:/root:/bin/sh\n"
	files := map[string]string{
		filepath.Join(outside, "secret"):    secret,
		filepath.Join(outside, "secret.cl"): secret,
		filepath.Join(root, "sub.yaml"): "name: sub\nactors:\n  src: {use: gen.ramp, with: {count: 4}, out: {y: {type: f32, rate: 1}}}\n" +
			"  sink: {use: file.write, with: {path: " + filepath.Join(root, "sub.f32") + "}, in: {x: {type: f32, rate: 1}}, stateful: true}\n" +
			"channels:\n  - {from: src.y, to: sink.x}\n",
		filepath.Join(root, "k.cl"):   "__kernel void f(__global const float *x) {}\n",
		filepath.Join(root, "in.f32"): "0123456789abcdef",
		// A flow model inside the root whose kernel file is outside it.
		filepath.Join(root, "leaky.yaml"): "kind: flowmodel\nname: leaky\nkernel:\n  opencl_file: ../outside/secret\n  entry: saxpy\n" +
			"in:\n  - {name: x, type: f32, length: 16}\nout:\n  - {name: y, type: f32, length: 16}\n",
	}
	for _, f := range []string{"saxpy.yaml", "saxpy.cl", "saxpy.cu"} {
		b, err := os.ReadFile(filepath.Join("../examples/flowmodel", f))
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join(root, f)] = string(b)
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.cl"), filepath.Join(root, "link.cl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

// pathField is one field of a graph that names a path, as a graph using
// @PATH@ for it.
type pathField struct {
	name   string
	actor  bool   // an actor's path (relative to the working directory), not one spec reads
	inside string // a path inside the root that works
	graph  string // the graph, with @PATH@ for the path
}

var ramp = "  src: {use: gen.ramp, with: {count: 4}, out: {y: {type: f32, rate: 16}}}\n"

func pathFields(root string) []pathField {
	sink := "  out: {use: file.write, with: {path: " + filepath.Join(root, "out.f32") + "}, in: {x: {type: f32, rate: 16}}, stateful: true}\n"
	return []pathField{
		{"composite graph", false, "sub.yaml", "name: t\nactors:\n  c: {graph: @PATH@}\n"},
		{"flow-model file", false, "saxpy.yaml", "name: t\nactors:\n" + ramp +
			"  one: {use: gen.const, with: {value: 1, count: 4}, out: {y: {type: f32, rate: 16}}}\n" +
			"  axpy: {flowmodel: {src: @PATH@, params: {a: 3}}}\n" + sink +
			"channels:\n  - {from: src.y, to: axpy.x}\n  - {from: one.y, to: axpy.y0}\n  - {from: axpy.y, to: out.x}\n"},
		{"flow-model file (short form)", false, "saxpy.yaml", "name: t\nactors:\n" + ramp +
			"  one: {use: gen.const, with: {value: 1, count: 4}, out: {y: {type: f32, rate: 16}}}\n" +
			"  axpy: {flowmodel: @PATH@}\n" + sink +
			"channels:\n  - {from: src.y, to: axpy.x}\n  - {from: one.y, to: axpy.y0}\n  - {from: axpy.y, to: out.x}\n"},
		{"kernel source", false, "k.cl", "name: t\nactors:\n" + ramp +
			"  k: {in: {x: {type: f32, rate: 16}}, kernel: {opencl: @PATH@, entry: f}, cost: 1us}\n" +
			"channels:\n  - {from: src.y, to: k.x}\n"},
		{"file.read path", true, filepath.Join(root, "in.f32"), "name: t\nactors:\n" +
			"  r: {use: file.read, with: {path: @PATH@, count: 1}, out: {y: {type: f32, rate: 16}}, stateful: true}\n" +
			sink + "channels:\n  - {from: r.y, to: out.x}\n"},
		{"file.write path", true, filepath.Join(root, "w.f32"), "name: t\nactors:\n" + ramp +
			"  w: {use: file.write, with: {path: @PATH@}, in: {x: {type: f32, rate: 16}}, stateful: true}\n" +
			"channels:\n  - {from: src.y, to: w.x}\n"},
		{"image.read path", true, filepath.Join(root, "img.png"), "name: t\nactors:\n" +
			"  img: {use: image.read, with: {path: @PATH@}, out: {p: {type: u8, rate: 16}}}\n" +
			"  w: {use: file.write, with: {path: " + filepath.Join(root, "px.u8") + "}, in: {x: {type: u8, rate: 16}}, stateful: true}\n" +
			"channels:\n  - {from: img.p, to: w.x}\n"},
		{"image.write path", true, filepath.Join(root, "img-%d.png"), "name: t\nactors:\n" +
			"  src: {use: gen.const, with: {value: 1, count: 1}, out: {y: {type: u8, rate: 16}}}\n" +
			"  img: {use: image.write, with: {path: @PATH@}, in: {x: {type: u8, rate: 16}}, stateful: true}\n" +
			"channels:\n  - {from: src.y, to: img.x}\n"},
		{"csv.read path", true, filepath.Join(root, "in.f32"), "name: t\nactors:\n" +
			"  r: {use: csv.read, with: {path: @PATH@, count: 1}, out: {y: {type: f32, rate: 16}}, stateful: true}\n" +
			sink + "channels:\n  - {from: r.y, to: out.x}\n"},
		{"csv.write path", true, filepath.Join(root, "out.csv"), "name: t\nactors:\n" + ramp +
			"  w: {use: csv.write, with: {path: @PATH@}, in: {x: {type: f32, rate: 16}}, stateful: true}\n" +
			"channels:\n  - {from: src.y, to: w.x}\n"},
	}
}

// escapes are the ways out of the root: "..", an absolute path, a link to
// a file outside, a path through a link to a directory outside.
func escapes(outside string) []string {
	return []string{"../outside/secret", filepath.Join(outside, "secret"), "link", "linkdir/secret", "./sub/../../outside/secret"}
}

// rootServer serves FILE = ROOT/g.yaml holding graph; actors' relative
// paths start from the root, as for `sluice ui` run in it.
func rootServer(t *testing.T, root, graph string) (*Server, func(method, path, body string) (int, map[string]any, string)) {
	t.Helper()
	file := filepath.Join(root, "g.yaml")
	if err := os.WriteFile(file, []byte(graph), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{File: file}
	h := s.Handler()
	s.cwd = root
	return s, func(method, path, body string) (int, map[string]any, string) {
		t.Helper()
		rec, m := do(t, h, method, path, body)
		if strings.Contains(rec.Body.String(), sentinel) {
			t.Fatalf("%s %s: the answer holds the content of a file outside the root: %s", method, path, rec.Body)
		}
		return rec.Code, m, rec.Body.String()
	}
}

// TestPathsConfinedToRoot: for every field of a graph that names a path,
// through POST /api/check and POST /api/run/start, a path inside the root
// works, and "..", absolute and linked escapes are refused with 422, the
// rule named and nothing of the outside file quoted; no refused run starts.
func TestPathsConfinedToRoot(t *testing.T) {
	t.Parallel()
	root, outside := rootFixture(t)
	for _, f := range pathFields(root) {
		t.Run(strings.ReplaceAll(f.name, " ", "_"), func(t *testing.T) {
			g := strings.ReplaceAll(f.graph, "@PATH@", f.inside)
			s, req := rootServer(t, root, g)
			if code, m, _ := req("POST", "/api/check", g); code != 200 {
				t.Fatalf("inside the root (%s): check expected 200, found %d %v", f.inside, code, m["errors"])
			}
			if code, m, _ := req("POST", "/api/run/start?iterations=1", ""); code != 202 {
				t.Fatalf("inside the root (%s): run start expected 202, found %d %v", f.inside, code, m["errors"])
			}
			waitRun(t, s)
			// The run's actors reach their files inside the root
			// (runtime.FileAccess): whatever else a fixture lacks, no path
			// of it is refused.
			if st := s.ctl.state(); strings.Contains(st.Error, "file root") {
				t.Fatalf("inside the root (%s): the run refused the path: %s", f.inside, st.Error)
			}
			for _, p := range escapes(outside) {
				g := strings.ReplaceAll(f.graph, "@PATH@", p)
				s, req := rootServer(t, root, g)
				for _, path := range []string{"/api/check", "/api/run/start?iterations=1", "/api/save", "/api/gogen"} {
					code, _, body := req("POST", path, g)
					if code != 422 || !strings.Contains(body, "is outside the file root") || !strings.Contains(body, "g.yaml:") {
						t.Fatalf("%s %q: POST %s: expected 422 naming the rule and the position, found %d %s", f.name, p, path, code, body)
					}
				}
				if st := s.ctl.state(); st.Runs != 0 {
					t.Fatalf("%s %q: expected no run, found %+v", f.name, p, st)
				}
				if code, _, body := req("GET", "/api/graph", ""); code != 422 || !strings.Contains(body, "is outside the file root") {
					t.Fatalf("%s %q: GET /api/graph: expected 422, found %d %s", f.name, p, code, body)
				}
			}
		})
	}
}

// TestFlowModelKernelConfined: a flow model inside the root whose kernel
// file lies outside it is refused, quoting nothing.
func TestFlowModelKernelConfined(t *testing.T) {
	t.Parallel()
	root, _ := rootFixture(t)
	g := strings.ReplaceAll(pathFields(root)[1].graph, "@PATH@", "leaky.yaml")
	_, req := rootServer(t, root, g)
	if code, _, body := req("POST", "/api/check", g); code != 422 || !strings.Contains(body, "leaky.yaml:4:16") || !strings.Contains(body, "../outside/secret") {
		t.Fatalf("expected 422 at leaky.yaml:4:16, found %d %s", code, body)
	}
}

// TestEditPathsConfined: POST /api/edit refuses an added composite, kernel
// or actor path outside the root, and answers one inside it.
func TestEditPathsConfined(t *testing.T) {
	t.Parallel()
	root, outside := rootFixture(t)
	base := "name: t\nactors:\n" + ramp
	_, req := rootServer(t, root, base)
	for _, p := range escapes(outside) {
		for _, op := range []OpJSON{
			{Op: "add_actor", Name: "c", Graph: p},
			{Op: "add_actor", Name: "k", Kernel: p + ".cl", In: []PortJSON{{Name: "x", Type: "f32", Rate: "16"}}},
			{Op: "add_actor", Name: "w", Use: "file.write", With: map[string]any{"path": p}, In: []PortJSON{{Name: "x", Type: "f32", Rate: "16"}}},
		} {
			body, _ := json.Marshal(EditJSON{YAML: base, Ops: []OpJSON{op}})
			if code, _, ans := req("POST", "/api/edit", string(body)); code != 422 || !strings.Contains(ans, "is outside the file root") {
				t.Fatalf("edit %+v: expected 422 naming the rule, found %d %s", op, code, ans)
			}
		}
	}
	body, _ := json.Marshal(EditJSON{YAML: "", Ops: []OpJSON{{Op: "add_actor", Name: "c", Graph: "sub.yaml"}}})
	if code, m, _ := req("POST", "/api/edit", string(body)); code != 200 {
		t.Fatalf("edit adding sub.yaml from inside the root: expected 200, found %d %v", code, m["errors"])
	}
}

// TestNullDeviceAllowed: the null device is a path every actor may name
// (examples write to it).
func TestNullDeviceAllowed(t *testing.T) {
	t.Parallel()
	root, _ := rootFixture(t)
	g := strings.ReplaceAll(pathFields(root)[5].graph, "@PATH@", os.DevNull)
	_, req := rootServer(t, root, g)
	if code, m, _ := req("POST", "/api/check", g); code != 200 {
		t.Fatalf("file.write to %s: expected 200, found %d %v", os.DevNull, code, m["errors"])
	}
}

// TestRootGiven: by default the root is the file's directory (a composite
// in its parent is refused); a Root given to the server (--root) holding
// the composite lets it in.
func TestRootGiven(t *testing.T) {
	t.Parallel()
	root, _ := rootFixture(t)
	if err := os.Mkdir(filepath.Join(root, "narrow"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "narrow", "g.yaml")
	g := "name: t\nactors:\n  c: {graph: ../sub.yaml}\n"
	if err := os.WriteFile(file, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	h := (&Server{File: file}).Handler()
	if rec, _ := do(t, h, "POST", "/api/check", g); rec.Code != 422 || !strings.Contains(rec.Body.String(), "is outside the file root") {
		t.Fatalf("root = the file's directory: expected 422, found %d %s", rec.Code, rec.Body)
	}
	wide, err := fsroot.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer wide.Close()
	h = (&Server{File: file, Root: wide}).Handler()
	if rec, m := do(t, h, "POST", "/api/check", g); rec.Code != 200 {
		t.Fatalf("a root holding the composite: expected 200, found %d %v", rec.Code, m["errors"])
	}
}

// TestPathsThroughAliases: a path written through YAML anchors, aliases
// (as the value or as the key) and merge keys is checked as spec reads it.
func TestPathsThroughAliases(t *testing.T) {
	t.Parallel()
	root, _ := rootFixture(t)
	for _, g := range []string{
		"name: t\nx: &p ../outside/secret\nactors:\n  c: {graph: *p}\n",
		"name: t\nactors:\n  a: {&k graph: sub.yaml}\n  c: {*k : ../outside/secret}\n",
		"name: t\nactors:\n  a: &base {graph: ../outside/secret}\n  c: {<<: *base}\n",
		"name: t\nactors:\n  c: {\"graph\": ../outside/secret}\n",
		"name: t\nactors:\n  c: {graph: !!str ../outside/secret}\n",
	} {
		_, req := rootServer(t, root, g)
		if code, _, body := req("POST", "/api/check", g); code != 422 || !strings.Contains(body, "is outside the file root") {
			t.Fatalf("%q: expected 422 naming the rule, found %d %s", g, code, body)
		}
	}
}

// TestSystemFileNotQuoted: the composite that named /etc/passwd by climbing
// out of the served file's directory is refused, and no answer quotes the
// file's first line (it used to come back in the YAML error).
func TestSystemFileNotQuoted(t *testing.T) {
	t.Parallel()
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil || len(passwd) == 0 {
		t.Skip("no /etc/passwd to plant the test on")
	}
	first, _, _ := strings.Cut(string(passwd), "\n")
	file := tempExample(t)
	h := (&Server{File: file}).Handler()
	for _, p := range []string{"../../../../../../etc/passwd", "/etc/passwd"} {
		g := "name: x\nactors:\n  X: {graph: " + p + ", cost: 1us}\n"
		rec, _ := do(t, h, "POST", "/api/check", g)
		if rec.Code != 422 || !strings.Contains(rec.Body.String(), "is outside the file root") || strings.Contains(rec.Body.String(), first) {
			t.Fatalf("graph: %s: expected 422 naming the rule and quoting nothing, found %d %s", p, rec.Code, rec.Body)
		}
	}
}
