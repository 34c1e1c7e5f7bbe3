package yamlpos

import "github.com/sluicehq/sluice/internal/suggest"

// Suggest returns ` (did you mean "x"?)` when a close name exists, or the
// list of known names when there are few, or "": suggest.Suggest, the one
// rule every message follows, here for the readers built on this package.
func Suggest(name string, names []string) string { return suggest.Suggest(name, names) }

// DidYouMean returns ` (did you mean "x"?)` when a close name exists, or ""
// (suggest.DidYouMean).
func DidYouMean(name string, names []string) string { return suggest.DidYouMean(name, names) }

// Closest returns the name nearest to name within a small edit distance,
// or "" (suggest.Closest).
func Closest(name string, names []string) string { return suggest.Closest(name, names) }
