package sim

import "testing"

func FuzzParseCosts(f *testing.F) {
	f.Add([]byte("unit: ns\ncosts: {a: 3, b: {cpu: 2ms, gpu: never}}\ncontrol: {a: {if: \"!c\"}}\nprobabilities: {c: 0.5}\nloops: {n: 2}\n"))
	f.Add([]byte("costs: [1]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCosts("f.yaml", data)
		if err == nil && c == nil {
			t.Fatal("nil costs without an error")
		}
		_, _ = ParseProfile("p.yaml", data)
	})
}
