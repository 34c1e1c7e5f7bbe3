package actors

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestCancelReaderPassesThrough: the bytes and the end of the input come
// through unchanged, in reads of any size.
func TestCancelReaderPassesThrough(t *testing.T) {
	t.Parallel()
	want := strings.Repeat("0123456789\n", 20000) // more than one inner read
	r := newCancelReader(context.Background(), strings.NewReader(want))
	var got strings.Builder
	buf := make([]byte, 7)
	for {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want {
		t.Fatalf("read %d bytes, expected the input's %d", got.Len(), len(want))
	}
}

// TestCancelReaderStops: a read waiting on an input nobody writes returns
// the context's cause soon after the context is cancelled.
func TestCancelReaderStops(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	stop := errors.New("stopped at --max-time")
	ctx, cancel := context.WithCancelCause(context.Background())
	r := newCancelReader(ctx, pr)
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 16))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the read returned (%v) before any input or cancellation", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel(stop)
	select {
	case err := <-done:
		if !errors.Is(err, stop) {
			t.Fatalf("the read returned %v: expected the context's cause %q", err, stop)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read still waits 5 s after its context was cancelled")
	}
}
