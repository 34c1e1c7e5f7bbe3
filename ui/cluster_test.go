package ui

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cluster"
	"github.com/sluicehq/sluice/device"
)

// TestClusterView starts a broker and a worker on loopback and reads them
// back through GET /api/cluster.
func TestClusterView(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if rec, body := do(t, (&Server{}).Handler(), "GET", "/api/cluster", ""); rec.Code != 200 || body["broker"] != false {
		t.Fatalf("without a broker: expected 200 with broker false, found %d %s", rec.Code, body)
	}
	b, err := cluster.StartBroker(ctx, cluster.BrokerOptions{Name: "root", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	cpu := device.Info{ID: "cpu", Backend: "cpu", Name: "test cpu", Kind: device.CPU, ComputeUnits: 2, GlobalMem: 1 << 30, HostUnified: true}
	w, err := cluster.StartWorker(ctx, cluster.WorkerOptions{Broker: b.ClientURL(), Name: "w1", Devices: []device.Info{cpu}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c, err := cluster.Connect(ctx, b.ClientURL(), cluster.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := (&Server{Cluster: c}).Handler()
	var got ClusterJSON
	for ctx.Err() == nil {
		rec, _ := do(t, h, "GET", "/api/cluster", "")
		if rec.Code != 200 {
			t.Fatalf("expected 200, found %d: %s", rec.Code, rec.Body)
		}
		got = ClusterJSON{}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Workers) == 1 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(got.Brokers) != 1 || got.Brokers[0].Name != "root" {
		t.Fatalf("expected the broker root, found %+v", got.Brokers)
	}
	if len(got.Workers) != 1 || got.Workers[0].Name != "w1" || got.Workers[0].Broker != "root" ||
		len(got.Workers[0].Devices) != 1 || got.Workers[0].Devices[0].Name != "test cpu" {
		t.Fatalf("expected worker w1 on root lending \"test cpu\", found %+v", got.Workers)
	}
}
