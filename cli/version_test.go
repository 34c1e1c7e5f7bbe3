package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	out, errs, code := sluice(t, "", "version")
	if code != 0 {
		t.Fatalf("sluice version: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "sluice ") || !strings.Contains(lines[0], "go1.") {
		t.Errorf("first line %q: want sluice VERSION … goX.Y", lines[0])
	}
	if !strings.Contains(out, "module github.com/sluicehq/sluice") || !strings.Contains(out, "backend cpu") {
		t.Errorf("sluice version does not name the module and the cpu backend:\n%s", out)
	}
	short, _, code := sluice(t, "", "--version")
	if code != 0 || strings.TrimSpace(short) != lines[0] {
		t.Errorf("sluice --version = %q (exit %d), want the first line of sluice version, %q", short, code, lines[0])
	}
	js, _, code := sluice(t, "", "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(js), &v); code != 0 || err != nil || v.Go == "" || len(v.Backends) == 0 {
		t.Errorf("sluice version --json = %q (exit %d, %v)", js, code, err)
	}
}

// TestFlagErrorNamesTheCommandOnce: "see sluice run --help", never "sluice sluice".
func TestFlagErrorNamesTheCommandOnce(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"run", "--bogus"}} {
		_, errs, code := sluice(t, "", args...)
		want := "see sluice --help"
		if len(args) > 1 {
			want = "see sluice " + args[0] + " --help"
		}
		if code != 2 || !strings.Contains(errs, want) || strings.Contains(errs, "sluice sluice") {
			t.Errorf("sluice %s: exit %d, %q; want exit 2 and %q", strings.Join(args, " "), code, errs, want)
		}
	}
}
