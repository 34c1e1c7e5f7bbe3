package actors

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/runtime"
)

// FuzzCSVRead feeds arbitrary text to csv.read: it must produce tokens or
// an error naming the file, never panic.
func FuzzCSVRead(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "# c\n\n1 2\r\n", "1\n", "x,y\n", "1e400,-0\n", "\"1\",\"2\"\n", ",,,\n"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, data string, header bool) {
		path := filepath.Join(t.TempDir(), "f.csv")
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{"[2]f32", "i16", "c64"} {
			a, impl := build(t, "csv.read", map[string]any{"path": path, "header": header}, "out y "+typ+" 3")
			start(t, impl)
			for k := int64(0); k < 100; k++ {
				err := fire(a, impl, k, nil, [][]byte{make([]byte, 3*a.Outputs[0].Type.Size)})
				if errors.Is(err, runtime.ErrEndOfStream) {
					break
				}
				if err != nil {
					wantErr(t, err, path)
					break
				}
			}
			stop(t, impl)
		}
	})
}
