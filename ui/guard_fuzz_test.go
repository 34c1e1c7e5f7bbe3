package ui

import (
	"crypto/sha256"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// snapshot is every file under dir with a hash of its content and its
// mode, to tell whether anything under dir was touched.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := ""
		if st.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = string(h[:])
		}
		out[p] = st.Mode().String() + st.ModTime().String() + sum
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// names lists the names in dir (not below), to tell whether a file was
// made there.
func names(t testing.TB, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		out[e.Name()] = ""
	}
	return out
}

func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// FuzzWorkbenchAPI sends random bodies and paths to the workbench's edit
// and check API (check, edit, save, gogen, the graph and the other reads)
// over an httptest server, with the token, and holds that no answer is a
// 5xx, that nothing outside the file root is touched (the outside
// directory and the working directory are as they were) and that no answer
// holds the content of the secret file outside the root.
//
//	go test ./ui -run '^$' -fuzz FuzzWorkbenchAPI -fuzztime 60s
func FuzzWorkbenchAPI(f *testing.F) {
	root, outside := rootFixture(f)
	cd2dat, err := os.ReadFile(example)
	if err != nil {
		f.Fatal(err)
	}
	file := filepath.Join(root, "g.yaml")
	if err := os.WriteFile(file, cd2dat, 0o644); err != nil {
		f.Fatal(err)
	}
	srv := &Server{File: file}
	ts := httptest.NewServer(srv.Handler())
	f.Cleanup(ts.Close)
	srv.cwd = root
	client := &http.Client{Timeout: 20 * time.Second}
	before, cwd := snapshot(f, outside), names(f, ".")

	secret := filepath.Join(outside, "secret")
	graphWith := func(line string) string { return "name: t\nactors:\n" + ramp + line }
	for _, p := range []string{"../outside/secret", secret, "link", "linkdir/secret", "sub.yaml"} {
		f.Add(uint8(0), "", []byte(graphWith("  c: {graph: "+p+"}\n")))
		f.Add(uint8(0), "", []byte(graphWith("  m: {flowmodel: {src: "+p+"}}\n")))
		f.Add(uint8(2), "", []byte(graphWith("  k: {in: {x: {type: f32, rate: 16}}, kernel: {opencl: "+p+", entry: f}}\nchannels:\n  - {from: src.y, to: k.x}\n")))
		f.Add(uint8(3), "", []byte(graphWith("  w: {use: file.write, with: {path: "+p+"}, in: {x: {type: f32, rate: 16}}, stateful: true}\nchannels:\n  - {from: src.y, to: w.x}\n")))
		ops, _ := json.Marshal(EditJSON{YAML: graphWith(""), Ops: []OpJSON{{Op: "add_actor", Name: "c", Graph: p}}})
		f.Add(uint8(1), "", ops)
		ops, _ = json.Marshal(EditJSON{YAML: graphWith(""), Ops: []OpJSON{{Op: "add_actor", Name: "w", Use: "file.write", With: map[string]any{"path": p}}}})
		f.Add(uint8(1), "", ops)
	}
	f.Add(uint8(2), "", cd2dat)
	f.Add(uint8(0), "/api/graph", []byte(nil))
	f.Add(uint8(0), "/api/../api/check", cd2dat)
	f.Add(uint8(0x80), "/api/run/trace?px=10", []byte(nil))
	f.Add(uint8(0), "/api/mapping", []byte(`{"actor": "A", "device": "cpu"}`))
	f.Add(uint8(0), "/api/mapping/save", []byte(nil))
	f.Add(uint8(0), "/api/edit", []byte(`{"yaml": "name: [", "ops": [{"op": "add_actor", "name": "x", "graph": "../../../../../../etc/passwd"}]}`))

	endpoints := []string{"/api/check", "/api/edit", "/api/save", "/api/gogen", "/api/graph"}
	f.Fuzz(func(t *testing.T, sel uint8, path string, body []byte) {
		if !strings.HasPrefix(path, "/api/") || strings.Contains(path, "/run/start") || strings.Contains(path, "/events") || strings.ContainsAny(path, " \t\r\n#") {
			path = endpoints[int(sel&0x7f)%len(endpoints)]
		}
		method := "POST"
		if sel&0x80 != 0 || path == "/api/graph" {
			method = "GET"
		}
		req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(string(body)))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+srv.Token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		ans, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s: expected no 5xx, found %d %s", method, path, resp.StatusCode, ans)
		}
		if strings.Contains(string(ans), sentinel) {
			t.Fatalf("%s %s: the answer holds the content of a file outside the root: %s", method, path, ans)
		}
		if !sameSnapshot(before, snapshot(t, outside)) {
			t.Fatalf("%s %s: a file outside the root (in %s) was touched", method, path, outside)
		}
		if !sameSnapshot(cwd, names(t, ".")) {
			t.Fatalf("%s %s: a file in the working directory (outside the root) was touched", method, path)
		}
	})
}
