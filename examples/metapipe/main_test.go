package main

import (
	"context"
	"testing"
	"time"
)

// TestFig15 checks the exit blocks against the pipeline computed by hand:
// fm0 adds the entrance block and the loop, fm1 doubles, fm2 feeds the
// result back; the loop is re-initialised every 3 firings and the exit
// delivers every third output.
func TestFig15(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const n = 9
	outs, err := run(ctx, "fig15.yaml", n)
	if err != nil {
		t.Fatal(err)
	}
	var want []float32
	var fb float32
	for k := 0; k < n; k++ {
		if k%3 == 0 {
			fb = float32(100 * (k/3 + 1))
		}
		fb = 2 * (float32(k+1) + fb)
		if (k+1)%3 == 0 {
			want = append(want, fb)
		}
	}
	if len(outs) != len(want) {
		t.Fatalf("got %d exit blocks, want %d", len(outs), len(want))
	}
	for i, o := range outs {
		for _, v := range o {
			if v != want[i] {
				t.Fatalf("exit block %d = %v, want all %v (all: %v)", i, o, want[i], outs)
			}
		}
	}
}
