package flowmodel_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/flowmodel"
	"github.com/sluicehq/sluice/graph"
)

// TestStreamTypesAreGraphScalars: a flow-model stream carries exactly the
// scalar token types of graph's table: each is accepted with its size, and
// a name the graph refuses (f16, a misspelling) is refused with the
// table's list.
func TestStreamTypesAreGraphScalars(t *testing.T) {
	t.Parallel()
	model := func(typ string) string {
		return fmt.Sprintf("name: a\nkernel: {builtin: saxpy_f32}\nout:\n  - {name: y, type: %s, length: 4}\n", typ)
	}
	for _, typ := range graph.ScalarTypes() {
		m, err := flowmodel.Parse("m.yaml", []byte(model(typ)))
		if err == nil {
			err = m.Validate()
		}
		if err != nil {
			t.Errorf("stream of %s: %v: expected every scalar of graph's table to be accepted", typ, err)
			continue
		}
		size, _ := graph.ScalarSize(typ)
		if got := m.Out[0].Bytes(); got != int64(4*size) {
			t.Errorf("stream of 4 %s: %d bytes, want %d (graph.ScalarSize)", typ, got, 4*size)
		}
	}
	for _, typ := range []string{"f16", "f33", "bf16"} {
		if _, err := graph.ParseTokenType(typ); err == nil {
			t.Fatalf("graph accepts %s: this test expects a type the graph refuses", typ)
		}
		m, err := flowmodel.Parse("m.yaml", []byte(model(typ)))
		if err == nil {
			err = m.Validate()
		}
		want := fmt.Sprintf(`stream "y": type %q: expected one of %s`, typ, strings.Join(graph.ScalarTypes(), ", "))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("stream of %s: %v: expected an error containing %q", typ, err, want)
		}
	}
}
