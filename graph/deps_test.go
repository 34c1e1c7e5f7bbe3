package graph

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNothingOfSluice holds graph at the bottom of the layers: of
// sluice's packages it imports only internal/suggest (the one "did you
// mean" rule, itself importing nothing of sluice), so that every package
// may import graph.
func TestImportsNothingOfSluice(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	allowed := map[string]bool{
		"github.com/sluicehq/sluice/graph":            true,
		"github.com/sluicehq/sluice/internal/suggest": true,
	}
	found := false
	for _, p := range strings.Fields(string(out)) {
		found = found || p == "github.com/sluicehq/sluice/graph"
		if strings.HasPrefix(p, "github.com/sluicehq/sluice/") && !allowed[p] {
			t.Errorf("graph depends on %s: expected no sluice package but internal/suggest", p)
		}
		if strings.Contains(p, ".") && !strings.HasPrefix(p, "github.com/sluicehq/sluice/") && !strings.HasPrefix(p, "vendor/") {
			t.Errorf("graph depends on %s: expected the standard library only", p)
		}
	}
	if !found {
		t.Fatalf("go list -deps .: expected graph among the packages: %s", out)
	}
}
