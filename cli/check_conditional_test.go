package cli

import (
	"bytes"
	"testing"
)

func TestWriteBranches(t *testing.T) {
	var buf bytes.Buffer
	writeBranches(&buf, map[string][]map[string]int64{"route": {{"f": 1}, {"sum": 2, "dup": 2}}})
	want := "conditional route: firings per firing of the pattern, by control value:\n  0: f=1\n  1: dup=2 sum=2\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
