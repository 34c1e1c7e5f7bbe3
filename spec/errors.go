package spec

import "github.com/sluicehq/sluice/internal/yamlpos"

// Error is one problem in a spec file, at a position. Line and Col count
// from 1; a zero Col means the position is known only to the line (the YAML
// syntax checker reports lines only), a zero Line that it is known only to
// the file. Error() renders "file:line:col: msg".
type Error = yamlpos.Error

// ErrorList is every problem found in a spec file (and the files it
// includes), sorted by file and position. Parsers return it as their error
// when anything is wrong, so all problems are reported at once; Unwrap
// gives the problems to errors.As and errors.Is.
type ErrorList = yamlpos.ErrorList
