package cli

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// TestExitCodes holds every command to the documented statuses: 0 success,
// 1 wrong input or a failed run, 2 a usage error.
func TestExitCodes(t *testing.T) {
	t.Chdir("..")
	const bad = "examples/machines/cell.yaml" // a machine model where a graph is expected
	cases := []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"frobnicate"}, 2},
		{[]string{"check"}, 2},
		{[]string{"check", "--bogus", "examples/cd2dat.yaml"}, 2},
		{[]string{"check", "examples/cd2dat.yaml", "--budget", "100ms"}, 0},
		{[]string{"check", "examples/feedback-deadlock.yaml"}, 1},
		{[]string{"check", "examples/nothere.yaml"}, 1},
		{[]string{"check", "examples/machines/cell.yaml"}, 0},
		{[]string{"dot", "examples/cd2dat.yaml", "-o", t.TempDir() + "/g.dot"}, 0},
		{[]string{"dot", bad}, 1},
		{[]string{"dot", "a.yaml", "b.yaml"}, 2},
		{[]string{"run", "examples/cd2dat.yaml", "-n", "2", "--progress", "off"}, 0},
		{[]string{"run", "examples/feedback-deadlock.yaml", "--progress", "off"}, 1},
		{[]string{"run", bad}, 1},
		{[]string{"run"}, 2},
		{[]string{"run", "--iterations", "many", "examples/cd2dat.yaml"}, 2},
		{[]string{"builtins"}, 0},
		{[]string{"builtins", "extra"}, 2},
		{[]string{"devices"}, 0},
		{[]string{"devices", "--broker", "nats://127.0.0.1:1", "--progress"}, 2},
		{[]string{"simulate", "examples/pipeline2.yaml", "--machine", "examples/machines/two-cpus.yaml"}, 0},
		{[]string{"simulate", "examples/pipeline2.yaml", "--machine", "examples/cd2dat.yaml"}, 1},
		{[]string{"simulate", "--mapp", "x", "examples/pipeline2.yaml"}, 2},
		{[]string{"map", "examples/pipeline2.yaml", "--machine", "examples/machines/two-cpus.yaml", "-o", t.TempDir() + "/m.yaml"}, 0},
		{[]string{"map", "examples/pipeline2.yaml", "--machine", bad + ".missing"}, 1},
		{[]string{"map"}, 2},
		{[]string{"broker", "--listen", "not-an-address"}, 1},
		{[]string{"broker", "extra"}, 2},
		{[]string{"worker", "--broker", "nats://127.0.0.1:1"}, 1},
		{[]string{"worker", "extra"}, 2},
		{[]string{"sh", "-c", "help"}, 0},
		{[]string{"sh", "-c", "frobnicate"}, 1},
		{[]string{"sh", "a", "b"}, 2},
		{[]string{"ui", bad, "--listen", "127.0.0.1:0"}, 1},
		{[]string{"ui", "a", "b"}, 2},
		{[]string{"gen", "go", "examples/cd2dat.yaml", "-o", t.TempDir() + "/main.go"}, 0},
		{[]string{"gen", "go", bad}, 1},
		{[]string{"gen", "go"}, 2},
	}
	for _, c := range cases {
		root := newRoot()
		var out bytes.Buffer
		root.SetArgs(c.args)
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetIn(bytes.NewReader(nil))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got := codeOf(root.ExecuteContext(ctx))
		cancel()
		if got != c.want {
			t.Errorf("sluice %v: exit %d, want %d\n%s", c.args, got, c.want, tail(out.Bytes(), 600))
		}
	}
}
