package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runtime"
)

func TestBarsLineWidth(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cols int
		err  error
		want int
	}{
		{0, nil, defaultBarsWidth}, // a pseudo-terminal reporting 0 columns
		{-1, errors.New("not a terminal"), defaultBarsWidth},
		{120, nil, 120},
		{33, nil, 33},
	} {
		if got := barsLineWidth(c.cols, c.err); got != c.want {
			t.Errorf("barsLineWidth(%d, %v) = %d, want %d", c.cols, c.err, got, c.want)
		}
	}
}

func TestFiringRateFirstFrame(t *testing.T) {
	t.Parallel()
	// The first snapshot comes moments after the start: no rate yet.
	if rate, ok := firingRate(88715, 1*time.Millisecond); ok {
		t.Errorf("firingRate over 1ms = %g, want none before %v", rate, minRateInterval)
	}
	if rate, ok := firingRate(1000, 2*time.Second); !ok || rate != 500 {
		t.Errorf("firingRate(1000, 2s) = %g, %v; want 500, true", rate, ok)
	}
	var r rateText
	r.set("src", 88715, time.Microsecond)
	if got := r.get("src"); got != "" {
		t.Errorf("rate text after 1µs = %q, want none", got)
	}
	r.set("src", 3000, 1500*time.Millisecond)
	if got := r.get("src"); got != " 2000/s" {
		t.Errorf("rate text after 1.5s = %q, want \" 2000/s\"", got)
	}
}

// TestBarsDrawWithoutTerminalWidth draws the bars into an output that
// reports no width: they must still be drawn, with a rate computed over
// the run's elapsed time.
func TestBarsDrawWithoutTerminalWidth(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	d := newBars(&buf)
	d.update(runtime.Snapshot{Elapsed: time.Millisecond, Actors: []runtime.ActorProgress{{Name: "src", Firings: 5, Target: 100}}})
	d.update(runtime.Snapshot{Elapsed: 2 * time.Second, Actors: []runtime.ActorProgress{{Name: "src", Firings: 100, Target: 100, Done: true}}})
	d.finish(nil)
	out := buf.String()
	if !strings.Contains(out, "src") || !strings.Contains(out, "100 firings") || !strings.Contains(out, "[") {
		t.Fatalf("bars output = %q, want a bar for src at 100 firings", out)
	}
	if !strings.Contains(out, " 50/s") {
		t.Errorf("bars output = %q, want the rate 50/s (100 firings over 2s)", out)
	}
}
