package namelist

import (
	"fmt"
	"testing"
)

func TestJoin(t *testing.T) {
	t.Parallel()
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("a%d", i)
	}
	for _, c := range []struct {
		names []string
		max   int
		sep   string
		want  string
	}{
		{nil, 8, ", ", ""},
		{[]string{"A"}, 8, ", ", "A"},
		{many[:8], 8, ", ", "a0, a1, a2, a3, a4, a5, a6, a7"},
		{many[:9], 8, ", ", "a0, a1, a2, a3, … (1 more), a5, a6, a7, a8"},
		{many, 8, ", ", "a0, a1, a2, a3, … (4992 more), a4996, a4997, a4998, a4999"},
		{many[:5], 3, " → ", "a0 → … (3 more) → a4"},
		{many[:5], 0, " ", "a0 a1 a2 a3 a4"},
	} {
		if got := Join(c.names, c.max, c.sep); got != c.want {
			t.Errorf("Join(%d names, %d, %q) = %q: expected %q", len(c.names), c.max, c.sep, got, c.want)
		}
	}
	if got := Short(many); got != "a0, a1, a2, a3, … (4992 more), a4996, a4997, a4998, a4999" {
		t.Errorf("Short(5000 names) = %q", got)
	}
}
