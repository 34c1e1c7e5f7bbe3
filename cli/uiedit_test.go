package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/ui"
)

// A graph edited on the workbench's drawing and saved is a file `sluice
// check` reads as it is: C's rate 3 → 4 and a new actor G fed by E.
func TestUIEditSavedChecks(t *testing.T) {
	src, err := os.ReadFile("../examples/cd2dat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cd2dat.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := &ui.Server{File: file}
	h := srv.Handler()
	post := func(path, body string) map[string]any {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Host = "127.0.0.1"
		req.Header.Set("Authorization", "Bearer "+srv.Token)
		h.ServeHTTP(rec, req)
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || rec.Code != 200 {
			t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
		}
		return m
	}
	ops, _ := json.Marshal(ui.EditJSON{YAML: string(src), Ops: []ui.OpJSON{
		{Op: "set_port", Actor: "C", Port: "i", Rate: "4"},
		{Op: "add_actor", Name: "G", In: []ui.PortJSON{{Name: "i", Type: "f32", Rate: "1"}}},
		{Op: "add_channel", From: "E.o", To: "G.i"},
	}})
	edited := post("/api/edit", string(ops))["yaml"].(string)
	post("/api/save", edited)
	out, errs, code := sluice(t, "", "check", file)
	if code != 0 || !strings.Contains(out, "A=98 B=98 C=49 D=14 E=16 F=80 G=80") {
		t.Fatalf("sluice check of the saved edit: exit %d\n%s%s", code, out, errs)
	}
}
