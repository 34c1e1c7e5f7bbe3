package flowmodel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/flowmodel"
)

// TestServeMalformed sends malformed flow-model requests to a Server: each
// is answered with an error naming what was expected, and the server
// still maps and fires a model afterwards.
func TestServeMalformed(t *testing.T) {
	nc := startNATS(t)
	srv, err := flowmodel.Serve(nc, "w1", flowmodel.Limited{Host: flowmodel.Local{}, MaxStream: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	in, err := (flowmodel.Remote{Conn: nc, Name: "w1"}).Map(ctx, builtinSaxpy(16), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release(ctx)
	// The instance's ID, as the server gave it: map one by hand.
	req, _ := json.Marshal(map[string]any{"model": builtinSaxpy(16), "device": "cpu"})
	m := nats.NewMsg(flowmodel.Subject("w1"))
	m.Header.Set("Op", "map")
	m.Data = req
	rep, err := nc.RequestMsg(m, 5*time.Second)
	if err != nil || rep.Header.Get("Error") != "" {
		t.Fatalf("map: %v %s", err, rep.Header.Get("Error"))
	}
	var mr struct{ ID string }
	_ = json.Unmarshal(rep.Data, &mr)
	for _, c := range []struct {
		name string
		hdr  map[string]string
		data []byte
		want string
	}{
		{"unknown op", map[string]string{"Op": "explode", "Id": mr.ID}, nil, "unknown operation"},
		{"map of garbage", map[string]string{"Op": "map"}, []byte("{{{{"), "expected a JSON model"},
		{"map of wrong types", map[string]string{"Op": "map"}, []byte(`{"model": 7}`), "expected a JSON model"},
		{"write of a huge total", map[string]string{"Op": "write", "Id": mr.ID, "Stream": "x", "Off": "0", "Total": "999999999999"}, []byte("abcd"), "expected at most 1048576"},
		{"write of a negative total", map[string]string{"Op": "write", "Id": mr.ID, "Stream": "x", "Off": "0", "Total": "-4"}, nil, "message of -4 bytes"},
		{"write of a negative offset", map[string]string{"Op": "write", "Id": mr.ID, "Stream": "x", "Off": "-9", "Total": "64"}, []byte("abcd"), "at offset -9: expected it within"},
		{"fire of a huge count", map[string]string{"Op": "fire", "Id": mr.ID, "Iterations": "99999999999"}, nil, "expected 0 to"},
		{"fire of no count", map[string]string{"Op": "fire", "Id": mr.ID, "Iterations": "many"}, nil, "expected 0 to"},
		{"read at a negative offset", map[string]string{"Op": "read", "Id": mr.ID, "Stream": "y", "Off": "-1"}, nil, "expected a byte offset"},
		{"unknown instance", map[string]string{"Op": "fire", "Id": "a.>.*", "Iterations": "1"}, nil, "no flow-model instance"},
	} {
		m := nats.NewMsg(flowmodel.Subject("w1"))
		for k, v := range c.hdr {
			m.Header.Set(k, v)
		}
		m.Data = c.data
		rep, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: no reply: %v", c.name, err)
		}
		if e := rep.Header.Get("Error"); !strings.Contains(e, c.want) {
			t.Fatalf("%s: error %q: expected one containing %q", c.name, e, c.want)
		}
	}
	runSaxpy(t, flowmodel.Remote{Conn: nc, Name: "w1"}, builtinSaxpy(64), "cpu", 2)
}
