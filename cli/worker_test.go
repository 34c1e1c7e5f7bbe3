package cli

import (
	"os"
	"strings"
	"testing"
)

// TestWorkerWarnsAsRoot: sluice worker warns on start when it runs as
// root (uid 0), and not otherwise; a --data-dir that is not a directory is
// refused before it joins anything.
func TestWorkerWarnsAsRoot(t *testing.T) {
	// Nothing listens on port 1: the worker stops right after its start.
	_, errs, code := sluice(t, "", "worker", "--broker", "nats://127.0.0.1:1", "--name", "w1")
	if code == 0 {
		t.Fatalf("worker with no broker: exit 0: %s", errs)
	}
	warned := strings.Contains(errs, "warning: worker runs as root (uid 0)")
	if root := os.Geteuid() == 0; warned != root {
		t.Fatalf("uid %d: warned %v: %s", os.Geteuid(), warned, errs)
	}
	missing := t.TempDir() + "/nope"
	_, errs, code = sluice(t, "", "worker", "--broker", "nats://127.0.0.1:1", "--data-dir", missing)
	if code == 0 || !strings.Contains(errs, "--data-dir: file root "+missing+": expected an existing directory") {
		t.Fatalf("--data-dir %s: exit %d: %s", missing, code, errs)
	}
}
