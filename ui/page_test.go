package ui

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

// tempExample is a copy of examples/cd2dat.yaml of the test's own.
func tempExample(t *testing.T) string {
	t.Helper()
	return exampleCopy(t, "cd2dat.yaml")
}

func TestPageServed(t *testing.T) {
	h := (&Server{File: example, Token: "s3cret"}).Handler()
	for _, p := range []string{"/", "/app.js", "/app.css", "/style.css", "/favicon.svg", "/favicon.ico"} {
		rec := doRaw(t, h, "GET", p, "")
		if rec.Code != 200 || rec.Body.Len() == 0 {
			t.Fatalf("GET %s: expected the page's file, found status %d", p, rec.Code)
		}
	}
	if rec := doRaw(t, h, "GET", "/", ""); !strings.Contains(rec.Body.String(), `id="yaml"`) {
		t.Fatalf("GET /: expected index.html, found %q", rec.Body.String())
	}
	if rec := doRaw(t, h, "GET", "/api/graph", ""); rec.Code != 401 {
		t.Fatalf("GET /api/graph without the token: expected 401, found %d", rec.Code)
	}
}

func TestSave(t *testing.T) {
	file := tempExample(t)
	h := (&Server{File: file, Token: "s3cret"}).Handler()
	orig, _ := os.ReadFile(file)
	edited := strings.Replace(string(orig), "CD-to-DAT", "CD-to-DAT (edited)", 1) + "\n# saved\n"
	if rec, _ := do(t, h, "POST", "/api/save", edited); rec.Code != 401 {
		t.Fatalf("save without the token: expected 401, found %d", rec.Code)
	}
	rec, m := do(t, h, "POST", "/api/save", edited, "Authorization", "Bearer s3cret")
	if rec.Code != 200 {
		t.Fatalf("save: status %d: %v", rec.Code, m)
	}
	if got, _ := os.ReadFile(file); string(got) != edited {
		t.Fatalf("save: the file does not hold the YAML sent")
	}
	rec, m = do(t, h, "POST", "/api/save", "name: x\nactors: [\n", "Authorization", "Bearer s3cret")
	if rec.Code != 422 {
		t.Fatalf("save of YAML that does not parse: expected 422, found %d: %v", rec.Code, m)
	}
	errs, _ := m["errors"].([]any)
	if len(errs) == 0 || !strings.Contains(errs[0].(string), file+":") {
		t.Fatalf("save of bad YAML: expected an error with %s:line:col, found %v", file, m)
	}
	if got, _ := os.ReadFile(file); string(got) != edited {
		t.Fatalf("a refused save changed the file")
	}
	if rec, _ := do(t, h, "POST", "/api/save", strings.Repeat("#", MaxBody+1), "Authorization", "Bearer s3cret"); rec.Code != 413 {
		t.Fatalf("save of a body over MaxBody: expected 413, found %d", rec.Code)
	}
	if rec, _ := do(t, (&Server{}).Handler(), "POST", "/api/save", edited); rec.Code != 404 {
		t.Fatalf("save without a file: expected 404, found %d", rec.Code)
	}
}

func doRaw(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, newReq(h, method, path, body))
	return rec
}

func TestMappingInAnswer(t *testing.T) {
	m := &graph.Mapping{Actors: map[string]*graph.Placement{"C": {Device: "opencl:0:0", Replicas: 2}}}
	rec := doRaw(t, (&Server{File: example, Mapping: m}).Handler(), "GET", "/api/graph", "")
	var res CheckResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != 200 {
		t.Fatalf("status %d: %v", rec.Code, err)
	}
	if p := res.Mapping["C"]; len(res.Mapping) != 1 || p.Device != "opencl:0:0" || p.Replicas != 2 {
		t.Fatalf("mapping: expected C on opencl:0:0 ×2 only, found %v", res.Mapping)
	}
	rec = doRaw(t, (&Server{File: example}).Handler(), "GET", "/api/graph", "")
	if strings.Contains(rec.Body.String(), `"mapping"`) {
		t.Fatal("without a mapping: expected no mapping in the answer")
	}
}
