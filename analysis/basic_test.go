package analysis

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
)

func TestCDToDAT(t *testing.T) {
	g := cdToDAT()
	mustValid(t, g)
	rv, err := RepetitionVector(g)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"A": 147, "B": 147, "C": 98, "D": 28, "E": 32, "F": 160}
	for k, v := range want {
		if rv.Firings[k] != v {
			t.Errorf("%s fires %d, want %d", k, rv.Firings[k], v)
		}
	}
	if got := strings.Join(rv.Order, " "); got != "A B C D E F" {
		t.Errorf("order %q", got)
	}
	d, err := Deadlock(g, rv)
	if err != nil || d.Deadlock {
		t.Fatalf("deadlock %+v %v", d, err)
	}
	buf, err := MinimalBuffers(g, rv)
	if err != nil {
		t.Fatal(err)
	}
	// Chains: p+c-gcd(p,c) per channel.
	wantBuf := []int{1, 4, 8, 14, 5}
	for i, c := range g.Channels {
		if buf[c.Name] != wantBuf[i] {
			t.Errorf("buffer %s = %d, want %d", c.Name, buf[c.Name], wantBuf[i])
		}
	}
}

func TestThreeCycleDeadlock(t *testing.T) {
	b := newB("ring")
	b.sdf("A", 1, "B", 1)
	b.sdf("B", 1, "C", 1)
	b.sdf("C", 1, "A", 1)
	mustValid(t, b.g)
	rv, err := RepetitionVector(b.g)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Deadlock(b.g, rv)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Deadlock || len(d.Initialize) != 1 || d.Initialize["C->A#3"] != 1 {
		t.Fatalf("want deadlock with C->A#3 +1, got %+v", d)
	}
	if len(d.Cycles) != 1 || len(d.Cycles[0]) != 3 {
		t.Fatalf("cycles %v", d.Cycles)
	}
	t.Log(d.Cycles, d.Blocked)
	if _, err := MinimalBuffers(b.g, rv); !errors.As(err, new(*DeadlockError)) {
		t.Fatalf("MinimalBuffers: want DeadlockError, got %v", err)
	}
	for name, n := range d.Initialize {
		b.g.Channel(name).Initial += n
	}
	d, err = Deadlock(b.g, rv)
	if err != nil || d.Deadlock {
		t.Fatalf("still deadlocks: %+v %v", d, err)
	}
}

func TestInconsistentPaths(t *testing.T) {
	b := newB("diamond")
	b.sdf("A", 1, "B", 1)
	b.sdf("B", 3, "D", 2)
	b.sdf("A", 1, "C", 1)
	b.sdf("C", 2, "D", 1)
	mustValid(t, b.g)
	_, err := RepetitionVector(b.g)
	var ie *InconsistentError
	if !errors.As(err, &ie) {
		t.Fatalf("want InconsistentError, got %v", err)
	}
	msg := err.Error()
	for _, s := range []string{"A→B→D", "A→C→D", "3/2", "2/1"} {
		if !strings.Contains(msg, s) {
			t.Errorf("message %q lacks %q", msg, s)
		}
	}
	t.Log(msg)
}

func TestInconsistentCycle(t *testing.T) {
	b := newB("cyc")
	b.sdf("A", 2, "B", 1)
	b.sdf("B", 1, "C", 1)
	b.sdf("C", 1, "A", 1, graph.Initial(4))
	_, err := RepetitionVector(b.g)
	var ie *InconsistentError
	if !errors.As(err, &ie) || !ie.Cycle {
		t.Fatalf("want cycle InconsistentError, got %v", err)
	}
	if !strings.Contains(err.Error(), "A→B→C→A") || !strings.Contains(err.Error(), "2/1") {
		t.Errorf("message %q", err)
	}
	t.Log(err)
}
