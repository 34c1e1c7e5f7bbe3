package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPipeline(t *testing.T) {
	out, _, code := sluice(t, "", "check", "examples/metapipe/fig15.yaml")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"✓ pipeline-model (≥1 exit port, ≥1 stage, connected): entrance fm0.x; exit fm2.y; initonce fm0.fb",
		"initonce  fm0.fb               every 3 firing(s): 0.3333 exchange(s) of 4 token(s) per iteration",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = sluice(t, "", "check", "--json", "examples/metapipe/fig15.yaml")
	if !strings.Contains(out, `"pipeline": {`) || !strings.Contains(out, `"initonce": [`) {
		t.Errorf("JSON report lacks the pipeline object:\n%s", out)
	}
}

func TestCheckPipelineErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte(`name: bad
actors:
  a: {in: {x: {type: f32, rate: 1}}, out: {y: {type: f32, rate: 1}}}
inputs: {x: a.x}
outputs: {y: a.y}
pipeline:
  ports:
    a.y: {role: initonce}
`), 0o644)
	out, _, code := sluice(t, "", "check", bad)
	if code != 1 || !strings.Contains(out, "bad.yaml:8:5: pipeline port a.y has role initonce but is an output port: expected an input port") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
