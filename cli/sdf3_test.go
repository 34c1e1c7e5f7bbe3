package cli

import (
	"strings"
	"testing"
)

// TestSDF3TimeUnit: an SDF3 graph's execution times are read in units of
// --time-unit; check, run and dot take it like any graph.
func TestSDF3TimeUnit(t *testing.T) {
	out, errs, code := sluice(t, "", "check", "examples/sdf3/cd2dat.xml", "--time-unit", "1ns")
	if code != 0 || !strings.Contains(out, "A=147 B=147 C=98 D=28 E=32 F=160") ||
		!strings.Contains(out, "one iteration every 88.2 µs") || !strings.Contains(out, "set by: C\n") {
		t.Fatalf("check cd2dat.xml --time-unit 1ns: exit %d, want the YAML graph's repetitions, 88.2 µs set by C:\n%s%s", code, out, errs)
	}
	out, _, _ = sluice(t, "", "check", "examples/sdf3/cd2dat.xml")
	if !strings.Contains(out, "one iteration every 88.2 ms") {
		t.Fatalf("check cd2dat.xml with the default unit (1µs): want 88.2 ms:\n%s", out)
	}
	_, errs, code = sluice(t, "", "run", "examples/sdf3/loop-csdf.xml", "-n", "5", "--progress", "off")
	if code != 0 {
		t.Fatalf("run loop-csdf.xml: exit %d: %s", code, errs)
	}
	out, errs, code = sluice(t, "", "dot", "examples/sdf3/loop-csdf.xml")
	if code != 0 || !strings.Contains(out, `"P"`) || !strings.Contains(out, `"C"`) {
		t.Fatalf("dot loop-csdf.xml: exit %d: %s%s", code, out, errs)
	}
}
