package stitch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/analysis"
	"github.com/sluicehq/sluice/examples/stitch"
	"github.com/sluicehq/sluice/runtime"
	"github.com/sluicehq/sluice/spec"
)

// TestGraphRecoversKnownPositions runs stitch.yaml and checks every solved
// position against the known one, and the mosaic file.
func TestGraphRecoversKnownPositions(t *testing.T) {
	g, err := spec.Load("stitch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := analysis.Check(g, analysis.CheckOptions{})
	if len(r.Errors) > 0 || r.Deadlock {
		t.Fatalf("check: errors %v, deadlock %v", r.Errors, r.Deadlock)
	}
	dir := t.TempDir()
	mosaic := filepath.Join(dir, "m.png")
	for _, a := range g.Actors {
		a.Attrs["mosaic"] = mosaic
	}
	stitch.Last()
	if _, err := runtime.Run(context.Background(), g, runtime.Options{CheckEmpty: true}); err != nil {
		t.Fatal(err)
	}
	res := stitch.Last()
	if res == nil {
		t.Fatal("solve did not reach the last tile")
	}
	if res.Mismatches != 0 {
		t.Errorf("%d of %d positions differ from the known ones", res.Mismatches, res.Config.Tiles())
	}
	if st, err := os.Stat(mosaic); err != nil || st.Size() < 1000 {
		t.Errorf("mosaic: %v", err)
	}
}

// TestGraphRateMismatch: attributes that disagree with the ports' rates
// fail the run with a message naming the port.
func TestGraphRateMismatch(t *testing.T) {
	g, err := spec.Load("stitch.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g.Actor("src").Attrs = map[string]string{"tile": "64x64", "jitter": "2"}
	_, err = runtime.Run(context.Background(), g, runtime.Options{})
	if err == nil || !strings.Contains(err.Error(), "port src.tile: rate 16384: expected one 64×64 tile, 4096 tokens per firing") {
		t.Errorf("error %v: want one naming src.tile's rate and the tile size", err)
	}
}
