package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

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
