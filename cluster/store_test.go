package cluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// TestJetStreamStore: checkpoints saved in a broker's JetStream store
// outlive a restart of the broker; a broker without --store says so.
func TestJetStreamStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	b, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	url := b.ClientURL()
	cl := connect(t, url, Credentials{})
	s, err := NewJetStreamStore(ctx, cl, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if cp, err := s.Latest(ctx); cp != nil || err != nil {
		t.Fatalf("empty store: %v, %v", cp, err)
	}
	for id := int64(1); id <= 2; id++ {
		if err := s.Save(ctx, &runtime.Checkpoint{ID: id, Graph: "g", Iteration: 7 * id, Actors: map[string]runtime.ActorSnapshot{"a": {Firing: 7 * id, Impl: make([]byte, 3<<20)}}}); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	b.Shutdown()

	listen := strings.TrimPrefix(url, "nats://")
	b2, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: listen, StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Shutdown()
	cl2 := connect(t, b2.ClientURL(), Credentials{})
	s2, err := NewJetStreamStore(ctx, cl2, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s2.Latest(ctx)
	if err != nil || cp == nil || cp.ID != 2 || cp.Actors["a"].Firing != 14 || len(cp.Actors["a"].Impl) != 3<<20 {
		t.Fatalf("after the broker's restart: %v, %v: expected checkpoint 2 of 3 MiB", cp, err)
	}

	plain, err := StartBroker(ctx, BrokerOptions{Name: "plain", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Shutdown()
	if _, err := NewJetStreamStore(ctx, connect(t, plain.ClientURL(), Credentials{}), "run-1"); err == nil || !strings.Contains(err.Error(), "start it with --store DIR") {
		t.Fatalf("store on a broker without JetStream: %v", err)
	}
}

// TestCheckpointsPerUser: under --auth, a client (not an admin) checkpoints
// a run into the broker's JetStream and resumes it from there: its bucket
// is its own, made by the broker on its first request, and the resumed
// run's output is the local run's. Another client has a bucket of its own
// and cannot read, write, purge or delete the first's, nor create a
// stream or a consumer (which could capture or redirect any subject): each
// attempt is a permission violation, and the first's checkpoint is intact.
func TestCheckpointsPerUser(t *testing.T) {
	auth := &Auth{Users: []User{
		{User: "alice", Password: "pa", Role: RoleClient},
		{User: "bob", Password: "pb", Role: RoleClient},
		{User: "w", Password: "pw", Role: RoleWorker},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	w1, err := StartWorker(ctx, WorkerOptions{Broker: b.ClientURL(), Creds: Credentials{User: "w", Password: "pw"}, Name: "w1", Devices: []device.Info{testCPU},
		HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w1.Close)
	alice := connect(t, b.ClientURL(), Credentials{User: "alice", Password: "pa"})
	for {
		if _, err := alice.Worker(ctx, "w1"); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("worker w1 not reachable")
		}
		time.Sleep(20 * time.Millisecond)
	}

	const count, rate = 40_000, 64
	ref := &fileSink{}
	if _, err := runtime.Run(ctx, recoverPipeline(count, rate, ref), runtime.Options{}); err != nil {
		t.Fatal(err)
	}
	store, err := NewJetStreamStore(ctx, alice, "run-a")
	if err != nil {
		t.Fatalf("alice's store (a client, not an admin): %v", err)
	}
	if store.Bucket() != "sluice-ckpt-alice" {
		t.Fatalf("alice's bucket %q, want sluice-ckpt-alice", store.Bucket())
	}
	ex := NewExecutor(alice, ExecutorOptions{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 10 * time.Second})
	mp := &graph.Mapping{Actors: map[string]*graph.Placement{"fir": {Device: "worker:w1/cpu"}}}
	sink := &fileSink{}
	rctx, stop := context.WithCancel(ctx)
	_, err = runtime.Run(rctx, recoverPipeline(count, rate, sink), runtime.Options{Mapping: mp, Remote: ex,
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: store, Completed: func(cp *runtime.Checkpoint) {
			if cp.ID == 2 {
				stop()
			}
		}}})
	stop()
	if err == nil {
		t.Fatal("the first run ended before its second checkpoint stopped it (a vacuous test): make it longer")
	}
	cp, err := store.Latest(ctx)
	if err != nil || cp == nil || cp.ID < 2 {
		t.Fatalf("alice's last checkpoint: %v, %v: expected checkpoint 2 or later", cp, err)
	}

	// bob, another client, tries alice's bucket.
	bob := connect(t, b.ClientURL(), Credentials{User: "bob", Password: "pb"})
	var berr asyncErrs
	bob.Conn().SetErrorHandler(berr.handler)
	bobStore, err := NewJetStreamStore(ctx, bob, "run-a")
	if err != nil {
		t.Fatalf("bob's own store: %v", err)
	}
	if mine, err := bobStore.Latest(ctx); mine != nil || err != nil {
		t.Fatalf("bob's run-a: %v, %v: expected none (alice's is in her bucket)", mine, err)
	}
	js, err := jetstream.New(bob.Conn())
	if err != nil {
		t.Fatal(err)
	}
	tryJS := func(what string, f func(ctx context.Context) error) {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		defer acancel()
		if err := f(actx); err == nil {
			t.Errorf("bob %s: succeeded, expected a refusal", what)
		}
	}
	const aliceStream, aliceBucket = "OBJ_sluice-ckpt-alice", "sluice-ckpt-alice"
	tryJS("reads alice's bucket", func(ctx context.Context) error {
		ob, err := js.ObjectStore(ctx, aliceBucket)
		if err == nil {
			_, err = ob.GetBytes(ctx, "run-a")
		}
		return err
	})
	tryJS("deletes alice's bucket", func(ctx context.Context) error { return js.DeleteObjectStore(ctx, aliceBucket) })
	tryJS("creates a stream on alice's subjects", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SPY", Subjects: []string{"sluice.u.alice.>"}})
		return err
	})
	tryJS("creates a consumer on his own bucket", func(ctx context.Context) error {
		_, err := js.CreateOrUpdateConsumer(ctx, "OBJ_sluice-ckpt-bob", jetstream.ConsumerConfig{Name: "c"})
		return err
	})
	for _, s := range []string{"$JS.API.DIRECT.GET." + aliceStream, "$JS.API.STREAM.PURGE." + aliceStream, "$O." + aliceBucket + ".M.cnVuLWE=", ckptOpenSubject("alice")} {
		if err := bob.Conn().Publish(s, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bob.Conn().SubscribeSync("$O." + aliceBucket + ".>"); err != nil {
		t.Fatal(err)
	}
	if err := bob.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, v := range []struct{ kind, subject string }{
		{"Publish", "$JS.API.STREAM.INFO." + aliceStream},
		{"Publish", "$JS.API.STREAM.DELETE." + aliceStream},
		{"Publish", "$JS.API.STREAM.CREATE.SPY"},
		{"Publish", "$JS.API.CONSUMER.CREATE.OBJ_sluice-ckpt-bob.c"},
		{"Publish", "$JS.API.DIRECT.GET." + aliceStream},
		{"Publish", "$JS.API.STREAM.PURGE." + aliceStream},
		{"Publish", "$O." + aliceBucket + ".M.cnVuLWE="},
		{"Publish", ckptOpenSubject("alice")},
		{"Subscription", "$O." + aliceBucket + ".>"},
	} {
		for !berr.has(v.kind, v.subject) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !berr.has(v.kind, v.subject) {
			t.Errorf("bob's %s on %s: no permission violation reported", v.kind, v.subject)
		}
	}

	// alice resumes from her checkpoint, untouched by bob's attempts.
	again, err := store.Latest(ctx)
	if err != nil || again == nil || again.ID != cp.ID {
		t.Fatalf("alice's checkpoint after bob's attempts: %v, %v: expected checkpoint %d", again, err, cp.ID)
	}
	st, err := runtime.Run(ctx, recoverPipeline(count, rate, sink), runtime.Options{Mapping: mp, Remote: ex,
		Checkpoint: &runtime.CheckpointOptions{Interval: 30 * time.Millisecond, Store: store, Resume: again}})
	if err != nil {
		t.Fatalf("alice's resumed run: %v", err)
	}
	if st.Checkpoints == nil || st.Checkpoints.ResumedFrom != again.ID {
		t.Fatalf("resumed run's checkpoint stats %+v: expected it resumed from %d", st.Checkpoints, again.ID)
	}
	if !slices.Equal(sink.got, ref.got) {
		t.Fatalf("alice's resumed output: %d tokens, expected %d equal to the local run's", sink.len(), ref.len())
	}
}

// TestJetStreamStoreStopBy: a store operation still waiting for a broker
// that went away ends at StopBy's time, not its caller's longer one.
func TestJetStreamStoreStopBy(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := StartBroker(ctx, BrokerOptions{Name: "root", Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cl := connect(t, b.ClientURL(), Credentials{})
	s, err := NewJetStreamStore(ctx, cl, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	b.Shutdown()
	s.StopBy(time.Now().Add(time.Second))
	start := time.Now()
	err = s.Save(ctx, &runtime.Checkpoint{ID: 1, Graph: "g"})
	if err == nil {
		t.Fatal("a save to a broker that is gone succeeded")
	}
	if took := time.Since(start); took >= storeAPITimeout-time.Second {
		t.Fatalf("the save gave up after %s: expected about 1 s (StopBy), not %s (a request's bound) or the caller's 30 s", took, storeAPITimeout)
	}
}
