package machine

import "testing"

func FuzzParse(f *testing.F) {
	f.Add([]byte("processors: {a: {clock: 1GHz}, b: {}}\ninterconnects: {l: {elements: [a, b], bandwidth: 4}}\n"))
	f.Add([]byte("processors: {a: &x {units: 2}, b: {<<: *x}}\ninterconnects: {l: {elements: [a, b], routing: cut-through, duplex: {a: false}}}\n"))
	f.Add([]byte("memories: [1, 2]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("f.yaml", data)
		if err == nil {
			if err := m.Validate(); err != nil {
				t.Fatalf("Parse accepted a machine that does not validate: %v", err)
			}
			for _, p := range m.Processors {
				_, _ = m.Route(m.Processors[0].Name, p.Name)
			}
		}
	})
}
