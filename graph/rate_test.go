package graph

import "testing"

// TestTokensBefore checks the tokens firings 0 … k−1 move, for SDF, CSDF
// (a zero phase included) and dynamic rates.
func TestTokensBefore(t *testing.T) {
	for _, c := range []struct {
		r    Rate
		k    int64
		want int64
	}{
		{SDF(4), 0, 0}, {SDF(4), 3, 12},
		{CSDF(1, 0, 2), 0, 0}, {CSDF(1, 0, 2), 1, 1}, {CSDF(1, 0, 2), 2, 1}, {CSDF(1, 0, 2), 4, 4}, {CSDF(1, 0, 2), 7, 7},
		{Dynamic(), 5, 0},
	} {
		if got := c.r.TokensBefore(c.k); got != c.want {
			t.Errorf("%v.TokensBefore(%d) = %d, want %d", c.r, c.k, got, c.want)
		}
	}
}
