package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/flowmodel"
)

func TestShCommands(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.csv"), filepath.Join(dir, "out.bin")
	if err := os.WriteFile(in, []byte("1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := sluice(t, "", "sh", "--device", "host", "-c", "virtbuf create x i32 4; virtbuf fill x "+in+"; virtbuf dump x "+out)
	if code != 0 {
		t.Fatalf("sh -c: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(out)
	if err != nil || len(b) != 16 || b[0] != 1 || b[4] != 2 || b[12] != 4 {
		t.Fatalf("dumped %v, %v: expected 1, 2, 3, 4 as i32", b, err)
	}
	script := filepath.Join(dir, "s.sh")
	os.WriteFile(script, []byte("help\nvirtbuf list\nvirtbuf fill nope x.csv\n"), 0o644)
	_, errs, code = sluice(t, "", "sh", "--device", "host", script)
	if code == 0 || !strings.Contains(errs, "s.sh:3: no virtual buffer \"nope\"") {
		t.Fatalf("script error: exit %d, %q: expected the line named", code, errs)
	}
}

// sluice worker serves flow-models under its name.
func TestWorkerServesFlowModels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "fm", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"worker", "--broker", b.ClientURL(), "--name", "fmw", "--devices", "cpu", "--max-stream", "1MiB", "-q"})
		root.SetOut(&strings.Builder{})
		root.SetErr(&strings.Builder{})
		done <- root.ExecuteContext(wctx)
	}()
	cl, err := cluster.Connect(ctx, b.ClientURL(), cluster.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r := flowmodel.Remote{Conn: cl.Conn(), Name: "fmw"}
	for {
		if hi, err := r.Devices(ctx); err == nil {
			if len(hi.Platforms) != 1 || hi.Platforms[0].Devices[0].ID != "cpu" {
				t.Errorf("worker --devices cpu offers %+v: expected only cpu", hi.Platforms)
			}
			break
		} else if ctx.Err() != nil {
			t.Fatalf("worker never served flow-models: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := &flowmodel.Model{Name: "big", Kernel: flowmodel.Kernel{Builtin: "saxpy_f32"},
		In:  []flowmodel.Stream{{Name: "x", Type: "f32", Length: 1 << 20}, {Name: "y0", Type: "f32", Length: 1 << 20}},
		Out: []flowmodel.Stream{{Name: "y", Type: "f32", Length: 1 << 20}}}
	if _, err := r.Map(ctx, m, ""); err == nil || !strings.Contains(err.Error(), "at most 1 MiB") {
		t.Errorf("4 MiB stream on a --max-stream 1MiB worker: %v, expected a refusal", err)
	}
	for i := range m.In {
		m.In[i].Length = 4
	}
	m.Out[0].Length = 4
	in, err := r.Map(ctx, m, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Fire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := in.Release(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
