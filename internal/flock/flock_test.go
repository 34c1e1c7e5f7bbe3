//go:build unix

package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A second Lock waits for the first's unlock, and gives up with the
// context's error when it ends first.
func TestLockExcludes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second lock while the first is held: %v, expected the context's deadline", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := Lock(context.Background(), path)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("a second lock returned (%v) while the first was held", err)
	default:
	}
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a second lock still waiting 10 s after the first's unlock")
	}
}
