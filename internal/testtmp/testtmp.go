// Package testtmp gives a test binary a temporary directory of its own.
//
// Tests start processes that cannot always tidy up after themselves: a
// worker killed with SIGKILL leaves its job folders, Chromium leaves its
// org.chromium.Chromium.* folders when the test stops it, and a sluice
// built once for a whole test binary has no test whose cleanup could
// remove it. Pointing TMPDIR at a directory made for the binary, and
// removing that directory when its tests end, takes all of it away:
// every process the tests start inherits the variable.
package testtmp

import (
	"fmt"
	"os"
	"testing"
)

// Run points TMPDIR at a new temporary directory, calls run, removes the
// directory with everything in it, and returns run's result. When the
// directory cannot be made, run is called with TMPDIR as it was.
func Run(run func() int) int {
	dir, err := os.MkdirTemp("", "sluice-test-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "testtmp: making a temporary directory for the tests: %v (they use TMPDIR as it is)\n", err)
		return run()
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	code := run()
	if had {
		os.Setenv("TMPDIR", old)
	} else {
		os.Unsetenv("TMPDIR")
	}
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintf(os.Stderr, "testtmp: removing %s: %v\n", dir, err)
	}
	return code
}

// Main runs m's tests inside Run and exits with their code: a package's
// whole TestMain when it needs nothing else.
func Main(m *testing.M) { os.Exit(Run(m.Run)) }
