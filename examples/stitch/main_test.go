package stitch_test

import (
	"testing"

	"github.com/sluicehq/sluice/internal/testtmp"
)

// TestMain gives the tests a TMPDIR of their own, removed after them,
// with the binary they build and whatever the processes they start leave
// there.
func TestMain(m *testing.M) { testtmp.Main(m) }
