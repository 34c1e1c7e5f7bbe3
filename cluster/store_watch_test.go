package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// A save the store does not answer is reported after StoreAttempt, with
// how long it will wait (the run's time limit), and no more once it ends.
func TestStoreWatchReportsASilentSave(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lines []string
	s := &JetStreamStore{Logf: func(format string, args ...any) {
		mu.Lock()
		lines = append(lines, fmtLine(format, args...))
		mu.Unlock()
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stop := s.watch(ctx, "checkpoint 3")
	time.Sleep(StoreAttempt + 500*time.Millisecond)
	stop()
	mu.Lock()
	got := append([]string(nil), lines...)
	mu.Unlock()
	if len(got) != 1 || !strings.HasPrefix(got[0], "checkpoint 3: the checkpoint store does not answer (nothing for 2s): waiting for up to ") ||
		!strings.HasSuffix(got[0], "until the run's time limit") {
		t.Fatalf("lines %q: expected one saying the store does not answer and how long the save waits", got)
	}
	time.Sleep(100 * time.Millisecond)
	// A save that ends in time says nothing.
	s.watch(ctx, "checkpoint 4")()
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 {
		t.Fatalf("lines after stop: %q, expected none more", lines[1:])
	}
}

func fmtLine(format string, args ...any) string { return fmt.Sprintf(format, args...) }
