package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/graph"
)

// solo is one broker and one worker (w1, direct TCP data streams on).
type solo struct {
	b  *Broker
	w  *Worker
	cl *Client
}

func startSolo(t testing.TB, o WorkerOptions) *solo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := StartBroker(ctx, BrokerOptions{Name: "solo", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Shutdown)
	o.Broker = b.ClientURL()
	if o.Name == "" {
		o.Name = "w1"
	}
	o.Devices = []device.Info{testCPU}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval, o.HeartbeatTimeout = 100*time.Millisecond, time.Second
	}
	if o.DataListen == "" {
		o.DataListen = "127.0.0.1:0"
	}
	w, err := StartWorker(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	cl, err := Connect(ctx, b.ClientURL(), Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &solo{b: b, w: w, cl: cl}
}

// baseRun is a valid run request: scale, 4 f32 tokens per firing.
func baseRun(job string) RunRequest {
	return RunRequest{Job: job, Client: "test", Device: "cpu", Target: 10, Transport: "nats", Chunk: 4096,
		Actor: ActorSpec{Name: "scale",
			Inputs:  []PortSpec{{Name: "x", Type: "f32", Rate: "4"}},
			Outputs: []PortSpec{{Name: "y", Type: "f32", Rate: "4"}},
			Impls:   []ImplSpec{{Kind: graph.ImplBuiltin, Source: "scale", Params: map[string]any{"gain": 2}}}},
		Ins: []StreamSpec{{Capacity: 8, Bytes: -1}}, Outs: []StreamSpec{{Capacity: 8, Bytes: -1}}}
}

// mutated is baseRun's JSON with f applied to it as a generic map (so
// that fields may take any type).
func mutated(t testing.TB, f func(m map[string]any)) []byte {
	t.Helper()
	b, err := json.Marshal(baseRun("corpus"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return b
}

func actorOf(m map[string]any) map[string]any { return m["actor"].(map[string]any) }

func port(m map[string]any, dir string) map[string]any {
	return actorOf(m)[dir].([]any)[0].(map[string]any)
}

// malformedRuns is the corpus of malformed run requests: each must be
// refused (ok: false) with a reason containing want.
func malformedRuns(t testing.TB) []struct {
	name string
	data []byte
	want string
} {
	set := func(k string, v any) []byte { return mutated(t, func(m map[string]any) { m[k] = v }) }
	good, _ := json.Marshal(baseRun("truncated"))
	garbage := make([]byte, 8<<20-4096) // under the broker's 8 MiB message limit, over the worker's 4 MiB
	r := rand.New(rand.NewPCG(1, 2))
	for i := range garbage {
		garbage[i] = byte(r.UintN(256))
	}
	deep := []byte(`{"job":"deep","actor":{"name":"a","impls":[{"kind":"builtin","source":"scale","params":{"x":` +
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}]}}`)
	return []struct {
		name string
		data []byte
		want string
	}{
		{"wildcard job a.>.*", set("job", "a.>.*"), "field job"},
		{"wildcard job >", set("job", ">"), "field job"},
		{"wildcard job *", set("job", "*"), "field job"},
		{"job with a space", set("job", "a b"), "field job"},
		{"empty job", set("job", ""), "field job"},
		{"over-long job", set("job", strings.Repeat("j", MaxJobID+1)), "field job"},
		{"job of wrong type", set("job", 5), "expected a JSON run request"},
		{"capacity 1<<40", mutated(t, func(m map[string]any) { m["ins"].([]any)[0].(map[string]any)["capacity"] = 1 << 40 }), "field ins[0].capacity"},
		{"negative capacity", mutated(t, func(m map[string]any) { m["outs"].([]any)[0].(map[string]any)["capacity"] = -3 }), "field outs[0].capacity"},
		{"capacity of wrong type", mutated(t, func(m map[string]any) { m["ins"].([]any)[0].(map[string]any)["capacity"] = "lots" }), "expected a JSON run request"},
		{"chunk -5", set("chunk", -5), "field chunk"},
		{"chunk 1<<40", set("chunk", 1<<40), "field chunk"},
		{"replicas 1e9", set("replicas", 1e9), "field replicas"},
		{"negative replicas", set("replicas", -1), "field replicas"},
		{"work groups -1", set("work_groups", -1), "field work_groups"},
		{"work items 1e12", set("work_items", 1e12), "field work_items"},
		{"target -7", set("target", -7), "field target"},
		{"unknown transport", set("transport", "carrier-pigeon"), "field transport"},
		{"unknown impl", set("impl", "fortran"), "field impl"},
		{"unknown device", set("device", "cuda:9"), "field device"},
		{"rate 999999999999", mutated(t, func(m map[string]any) { port(m, "inputs")["rate"] = "999999999999" }), "field actor.inputs[0].rate"},
		{"rate 1<<30", mutated(t, func(m map[string]any) { port(m, "outputs")["rate"] = "1073741824" }), "field actor.outputs[0].rate"},
		{"negative rate", mutated(t, func(m map[string]any) { port(m, "inputs")["rate"] = "-1" }), "field actor.inputs[0].rate"},
		{"huge token", mutated(t, func(m map[string]any) { port(m, "inputs")["type"] = "bytes1073741824" }), "field actor.inputs[0].type"},
		{"bad token type", mutated(t, func(m map[string]any) { port(m, "inputs")["type"] = "f33" }), "field actor.inputs[0].type"},
		{"negative block", mutated(t, func(m map[string]any) { port(m, "inputs")["block"] = -2 }), "field actor.inputs[0].block"},
		{"empty actor name", mutated(t, func(m map[string]any) { actorOf(m)["name"] = "" }), "field actor.name"},
		{"control character in name", mutated(t, func(m map[string]any) { actorOf(m)["name"] = "a\x00b" }), "field actor.name"},
		{"negative iterations", mutated(t, func(m map[string]any) { actorOf(m)["iterations"] = -1 }), "field actor.iterations"},
		{"kernel read from the worker's files", mutated(t, func(m map[string]any) {
			actorOf(m)["impls"] = []any{map[string]any{"kind": "opencl", "source": "/etc/passwd", "entry": "k"}}
		}), "field actor.impls[0].code"},
		{"streams missing", set("ins", []any{}), "field ins"},
		{"resume at a negative firing", set("resume", map[string]any{"Firing": -4}), "field resume.firing"},
		{"bad distribution", set("distribution", map[string]any{"y": "diagonal"}), "field distribution.y"},
		{"distribution of no port", set("distribution", map[string]any{"nope": "strided"}), "field distribution"},
		{"deep JSON nesting", deep, "nested at most"},
		{"8 MiB of garbage", garbage, "at most 4194304 bytes"},
		{"top-level array", []byte(`[1,2,3]`), "expected a JSON run request"},
		{"null", []byte(`null`), "field job"},
		{"a string", []byte(`"run"`), "expected a JSON run request"},
		{"truncated JSON", good[:len(good)/2], "expected a JSON run request"},
		{"empty message", nil, "expected a JSON run request"},
	}
}

// alive checks that the worker answers its info request and is listed by
// the query `sluice devices` makes.
func alive(t *testing.T, s *solo, after string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.cl.Worker(ctx, s.w.Name()); err != nil {
		t.Fatalf("after %s: worker info: %v", after, err)
	}
	ds, err := s.cl.Devices(ctx)
	if err != nil {
		t.Fatalf("after %s: devices: %v", after, err)
	}
	if !slices.ContainsFunc(ds, func(d RemoteDevice) bool { return d.Worker == s.w.Name() }) {
		t.Fatalf("after %s: worker %s not listed as a device (%d devices)", after, s.w.Name(), len(ds))
	}
}

// TestMalformedRequests sends a corpus of malformed run, snapshot and
// hold requests to a live worker: each is refused with a reason naming
// the field, and after each the worker answers and is listed as a
// device. A real job then runs on it. It waits more than it computes
// (each device listing waits out its quiet time) and has a broker of its
// own, so it runs beside the package's other tests.
func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	s := startSolo(t, WorkerOptions{})
	nc := s.cl.nc
	for _, c := range malformedRuns(t) {
		m, err := nc.Request(runSubject(anonymous, "w1"), c.data, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: no reply: %v", c.name, err)
		}
		var rep RunReply
		if err := json.Unmarshal(m.Data, &rep); err != nil {
			t.Fatalf("%s: reply %q: %v", c.name, m.Data, err)
		}
		if rep.OK || !strings.Contains(rep.Error, c.want) || !strings.Contains(rep.Error, "expected") {
			t.Fatalf("%s: reply %+v: expected ok: false with a reason containing %q", c.name, rep, c.want)
		}
		if len(rep.Error) > 600 {
			t.Fatalf("%s: a reason of %d bytes: expected one short sentence", c.name, len(rep.Error))
		}
		alive(t, s, c.name)
	}

	// A job that waits for input: its snapshot and hold subjects take
	// malformed requests too.
	req := baseRun("snapjob")
	data, _ := json.Marshal(req)
	m, err := nc.Request(runSubject(anonymous, "w1"), data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var rep RunReply
	if json.Unmarshal(m.Data, &rep); !rep.OK {
		t.Fatalf("valid run request refused: %s", rep.Error)
	}
	stopBeat := make(chan struct{})
	var beat sync.WaitGroup
	beat.Add(1)
	go func() { // the client's heartbeats keep the job
		defer beat.Done()
		for {
			_ = nc.Publish(jobSubject(anonymous, "snapjob", "hb.c"), nil)
			select {
			case <-stopBeat:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	dup, _ := nc.Request(runSubject(anonymous, "w1"), data, 5*time.Second)
	if json.Unmarshal(dup.Data, &rep); rep.OK || !strings.Contains(rep.Error, "not running here") {
		t.Fatalf("a second job under a running job's ID: %+v: expected refused", rep)
	}
	for _, c := range []struct {
		name, what string
		data       []byte
		want       string
	}{
		{"empty snapshot request", "snap", nil, "expected 8 bytes"},
		{"9-byte snapshot request", "snap", make([]byte, 9), "expected 8 bytes"},
		{"snapshot at firing 2^64-1", "snap", binary.LittleEndian.AppendUint64(nil, 1<<64-1), "expected a firing from 0"},
		{"hold with a body", "hold", []byte("x"), "expected an empty message"},
		{"release with a body", "release", []byte("{}"), "expected an empty message"},
	} {
		m, err := nc.Request(jobSubject(anonymous, "snapjob", c.what), c.data, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: no reply: %v", c.name, err)
		}
		if !strings.Contains(string(m.Data), c.want) {
			t.Fatalf("%s: reply %s: expected an error containing %q", c.name, m.Data, c.want)
		}
		alive(t, s, c.name)
	}
	// A flood of snapshot requests far ahead: the worker keeps at most
	// MaxInFlight waiting and answers the others at once.
	lim := DefaultRequestLimits().MaxInFlight
	var busy int
	for i := 0; i < 4*lim; i++ {
		inbox := nc.NewRespInbox()
		sub, _ := nc.SubscribeSync(inbox)
		_ = nc.PublishRequest(jobSubject(anonymous, "snapjob", "snap"), inbox, binary.LittleEndian.AppendUint64(nil, 1<<40))
		if m, err := sub.NextMsg(200 * time.Millisecond); err == nil && strings.Contains(string(m.Data), "already wait") {
			busy++
		}
		_ = sub.Unsubscribe()
	}
	if busy != 3*lim {
		t.Fatalf("%d of %d snapshot requests answered busy: expected %d (at most %d waiting)", busy, 4*lim, 3*lim, lim)
	}
	alive(t, s, "a flood of snapshot requests")
	_ = nc.Publish(jobSubject(anonymous, "snapjob", "cancel"), nil)
	close(stopBeat)
	beat.Wait()

	// A real job still runs, with the local run's output.
	want, _, err := runPipe(t, nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := runPipe(t, fastExecutor(s.cl), &graph.Mapping{Actors: map[string]*graph.Placement{"fir": {Device: "worker:w1/cpu"}}}, 0)
	if err != nil {
		t.Fatalf("a real job after the corpus: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("a real job after the corpus: %d tokens differing from the local run's %d", len(got), len(want))
	}
	alive(t, s, "the real job")
}

// TestRunRequestLimits: the request limits are the worker's (options),
// and a request inside them is taken.
func TestRunRequestLimits(t *testing.T) {
	t.Parallel()
	l := RequestLimits{MaxReplicas: 4}.withDefaults()
	ids := []string{"cpu"}
	req := baseRun("j1")
	if err := l.validateRun(&req, ids); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	req.Replicas = 5
	if err := l.validateRun(&req, ids); err == nil || err.Error() != "field replicas: expected 0 to 4 (the worker's limit), found 5" {
		t.Fatalf("replicas 5 over a limit of 4: %v", err)
	}
	req = baseRun("j1")
	req.Ins[0].Capacity = int(l.MaxChannelBytes/4) + 1
	if err := l.validateRun(&req, ids); err == nil || !strings.Contains(err.Error(), "field ins[0].capacity: expected at most 268435456 bytes of f32 tokens") {
		t.Fatalf("capacity over the channel limit: %v", err)
	}
}
