package machine

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestFormatRoundTrip: every example machine, formatted and parsed back,
// is the machine it was (origins aside), pool fields, a GPU's threads and
// the calibration record included.
func TestFormatRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "machines", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no example machines found under examples/machines")
	}
	for _, f := range files {
		m, err := Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m.Processors[0].Pool, m.Processors[0].FiringCost, m.Processors[0].RoundCost = true, 40, 300
		m.Processors[0].SpinTime, m.Processors[0].TimeSlice = 30000, 50000
		m.Processors[0].WakeLatency, m.Processors[0].WakeCost = 90000, 17000
		m.Processors[len(m.Processors)-1].Threads = 132 * 2048
		m.Calibration = map[string]string{"host": "h: 1", "cpu_model": "AMD EPYC"}
		out := Format(m, "calibrated\nby a test")
		back, err := Parse("back.yaml", out)
		if err != nil {
			t.Fatalf("%s: formatted machine does not parse: %v\n%s", f, err, out)
		}
		clearOrigins(m)
		clearOrigins(back)
		if !reflect.DeepEqual(m, back) {
			t.Errorf("%s: round trip differs:\nformatted:\n%s\nwant %+v\ngot  %+v", f, out, m, back)
		}
	}
}

func clearOrigins(m *Machine) {
	m.Origin = ""
	for _, p := range m.Processors {
		p.Origin = ""
	}
	for _, x := range m.Memories {
		x.Origin = ""
	}
	for _, x := range m.Interconnects {
		x.Origin = ""
		if len(x.Duplex) == 0 {
			x.Duplex = nil
		}
		if len(x.Routing) == 0 {
			x.Routing = nil
		}
	}
}
