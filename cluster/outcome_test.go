package cluster

import (
	"context"
	"errors"
	"testing"
)

// TestJobOutcome checks the words of the worker's log line for each way a
// job ends; an aborted job is never logged as an error of <nil>.
func TestJobOutcome(t *testing.T) {
	if got := jobOutcome(context.Background(), nil); got != "done" {
		t.Errorf("done: %q", got)
	}
	if got := jobOutcome(context.Background(), errors.New("boom")); got != "failed: boom" {
		t.Errorf("failed: %q", got)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("the client cancelled the job"))
	if got := jobOutcome(ctx, nil); got != "aborted: the client cancelled the job" {
		t.Errorf("aborted by the client: %q", got)
	}
	ctx, stop := context.WithCancel(context.Background())
	stop()
	if got := jobOutcome(ctx, nil); got != "aborted: the worker is stopping" {
		t.Errorf("aborted by the worker: %q", got)
	}
}
