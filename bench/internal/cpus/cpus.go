// Package cpus runs benchmark variants in child processes confined to a
// number of CPUs: GOMAXPROCS=N and, on Linux, an affinity mask of the first
// N CPUs the parent may use, so that one invocation prints one row per core
// count with every variant measured in the same run.
package cpus

import (
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"strings"
)

// ParseList parses a comma-separated list of core counts such as
// "2,4,8,16". An empty string means the current GOMAXPROCS only.
func ParseList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return []int{goruntime.GOMAXPROCS(0)}, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-cpus: expected a comma-separated list of positive core counts, found %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Output runs exe with args on n CPUs (see the package comment) and returns
// its standard output. The child's standard error goes to ours.
func Output(n int, exe string, args ...string) ([]byte, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", n))
	cmd.Stderr = os.Stderr
	var out []byte
	err := pinned(n, func() error {
		var err error
		out, err = cmd.Output()
		return err
	})
	return out, err
}

// StartProfile starts a CPU profile of this process (a variant run in it)
// into path and returns what stops the profile and closes the file.
func StartProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
