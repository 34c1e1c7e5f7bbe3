package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// TestRecoverBrokerRestart: the broker restarts under a run with
// checkpoints: the recovery names the broker, not a worker, keeps every
// worker eligible (fir, pinned to w2 with strict: true, goes back to w2,
// which stayed healthy) and the output is the local run's.
func TestRecoverBrokerRestart(t *testing.T) {
	const count, rate = 60_000, 64
	ref := &fileSink{}
	if _, err := runtime.Run(context.Background(), recoverPipeline(count, rate, ref), runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	s := startSolo(t, WorkerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w2, err := StartWorker(ctx, WorkerOptions{Broker: s.b.ClientURL(), Name: "w2", Devices: []device.Info{testCPU},
		HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w2.Close)
	for {
		if _, err := s.cl.Worker(ctx, "w2"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	u, err := url.Parse(s.b.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	var restarted *Broker
	t.Cleanup(func() {
		if restarted != nil {
			restarted.Shutdown()
		}
	})
	var once sync.Once
	var recs []Recovery
	var logs []string
	sink := &fileSink{}
	// Pinned: a recovery that blamed w2 would fail rather than move fir.
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"fir": {Device: "worker:w2/cpu", Strict: true}}}
	st, err := RunRecovering(ctx, recoverPipeline(count, rate, sink), runtime.Options{Mapping: mp, Remote: fastExecutor(s.cl),
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: &runtime.DirStore{Dir: t.TempDir()}, Completed: func(cp *runtime.Checkpoint) {
			if cp.ID == 2 {
				once.Do(func() {
					s.b.Shutdown()
					b, err := StartBroker(context.Background(), BrokerOptions{Name: "solo", Listen: u.Host})
					if err != nil {
						t.Errorf("restarting the broker on %s: %v", u.Host, err)
						return
					}
					restarted = b
				})
			}
		}}}, RecoveryOptions{Recovered: func(r Recovery) { recs = append(recs, r) },
		Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }})
	if err != nil {
		t.Fatalf("run: %v (recoveries: %+v; log: %q)", err, recs, logs)
	}
	if restarted == nil {
		t.Fatal("the run ended before the broker restarted (a vacuous test): make it longer")
	}
	if len(recs) == 0 || recs[0].Broker == "" || !strings.Contains(recs[0].Broker, u.Host) {
		t.Fatalf("recoveries %+v: expected the first from the loss of broker %s's connection", recs, u.Host)
	}
	if st.Checkpoints.Recoveries < 1 {
		t.Fatalf("stats %+v: expected a recovery", st.Checkpoints)
	}
	if !slices.Equal(sink.got, ref.got) {
		t.Fatalf("output after the broker's restart: %d tokens, expected %d equal to the local run's", sink.len(), ref.len())
	}
	t.Logf("recoveries: %d, first: broker %s, worker %s (%v); log: %q", len(recs), recs[0].Broker, recs[0].Worker, recs[0].Err, logs)
}

// stuckStore is a checkpoint store that does not answer until its
// context ends.
type stuckStore struct{}

func (stuckStore) Save(ctx context.Context, _ *runtime.Checkpoint) error {
	<-ctx.Done()
	return ctx.Err()
}
func (stuckStore) Latest(ctx context.Context) (*runtime.Checkpoint, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("store not reachable: %w", ctx.Err())
}

// TestLatestUnreachable: a recovery reports a checkpoint store that does
// not answer within StoreAttempt, says so again while it retries, and
// gives up after the store wait with an error naming it.
func TestLatestUnreachable(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var at []time.Duration
	start := time.Now()
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, time.Since(start))
		t.Logf(format, args...)
	}
	_, err := latest(context.Background(), stuckStore{}, 10*time.Second, logf)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "did not answer for 10s") {
		t.Fatalf("latest of a stuck store: %v: expected it to give up naming the wait", err)
	}
	if took > 10*time.Second+StoreAttempt+time.Second {
		t.Fatalf("gave up after %s: expected about 10 s", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) < 2 || at[0] > 5*time.Second {
		t.Fatalf("reports at %v: expected the first within 5 s and another while retrying", at)
	}
	// The run's context ends the retries at once.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := latest(ctx, stuckStore{}, time.Minute, func(string, ...any) {}); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("latest with an ended context: %v", err)
	}
	// Without a store timeout (wait 0) it retries until the run's time
	// limit, says so, and the error wraps the limit's cause.
	limit := errors.New("the run's --max-time passed")
	lctx, lcancel := context.WithTimeoutCause(context.Background(), 3*time.Second, limit)
	defer lcancel()
	var lmu sync.Mutex
	var lines []string
	_, err = latest(lctx, stuckStore{}, 0, func(format string, args ...any) {
		lmu.Lock()
		lines = append(lines, fmt.Sprintf(format, args...))
		lmu.Unlock()
	})
	lmu.Lock()
	defer lmu.Unlock()
	if err == nil || !errors.Is(err, limit) || !strings.Contains(err.Error(), "retried until the run ended") {
		t.Fatalf("latest without a store timeout: %v: expected the time limit's cause", err)
	}
	if len(lines) == 0 || !strings.Contains(lines[0], "until the run's time limit") {
		t.Fatalf("reports %q: expected one saying it retries until the run's time limit", lines)
	}
}
