package suggest

import (
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3},
		{"chanels", "channels", 1}, {"flaw", "lawn", 2}, {"same", "same", 0},
	} {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := EditDistance(c.b, c.a); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	many := make([]string, MaxKnown+1)
	for i := range many {
		many[i] = strings.Repeat("q", i+10)
	}
	for _, c := range []struct {
		name  string
		names []string
		want  string
	}{
		{"colr", []string{"color", "size"}, ` (did you mean "color"?)`},
		{"Aa", []string{"A", "B"}, ` (did you mean "A"?)`},
		{"CHANELS", []string{"channels"}, ` (did you mean "channels"?)`},
		{"xx", []string{"x", "y"}, ` (did you mean "x"?)`},
		{"abc", []string{"xyz", "a"}, " (known: a, xyz)"}, // 2 edits from "a": too far for a 3-letter name
		{"zzzz", []string{"b", "a"}, " (known: a, b)"},    // nothing close: the list, sorted
		{"zzzz", many, ""}, // nothing close and too many to list
		{"zzzz", nil, ""},  // nothing known
		{"kernal", []string{"kernel", "kernels"}, ` (did you mean "kernel"?)`}, // nearest wins
	} {
		if got := Suggest(c.name, c.names); got != c.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", c.name, c.names, got, c.want)
		}
	}
	if got := DidYouMean("zzzz", []string{"a"}); got != "" {
		t.Errorf("DidYouMean with nothing close = %q, want \"\"", got)
	}
	if got := Closest(strings.Repeat("a", 257), []string{strings.Repeat("a", 257)}); got != "" {
		t.Errorf("Closest of a 257-byte name = %q: expected no search", got)
	}
}
