// Package doccmd helps tests run the commands a user reads in sluice's
// documentation as written: it lists the command lines of a markdown file's
// ```sh blocks, builds the sluice command once per test binary, and runs a
// line with a shell, the built sluice first on PATH.
package doccmd

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/flock"
)

// ShellBlockLines returns the non-empty, non-comment lines of the ```sh
// blocks of a markdown file, in order.
func ShellBlockLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "```"):
			in = l == "```sh"
		case in && l != "" && !strings.HasPrefix(l, "#"):
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	buildOut  []byte
)

// Sluice builds ./cmd/sluice of the module rooted at root, once per test
// binary, and returns the directory holding the binary (to put first on
// PATH). It skips the test when there is no Go toolchain and fails it when
// the build fails.
//
// The binary goes to one place per module directory in the user's cache
// (sluice/doccmd/KEY/sluice), shared by the test binaries of a run and by
// later runs: the go command leaves a binary whose build ID matches the
// sources as it is, so only the first of them links it (several seconds
// of CPU each). The builds take turns (a lock in that directory), so that
// the go command renames a new binary into place rather than copying it
// under a process running the old one. Without DWARF (-w): no test
// debugs it. The folders of module directories that no longer exist
// (clones deleted after their run) are removed on the way.
func Sluice(tb testing.TB, root string) string {
	tb.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		tb.Skip("no go command on PATH: the documented commands need a built sluice")
	}
	buildOnce.Do(func() {
		dir, unlock, err := binDir(root)
		if err != nil {
			buildErr = err
			return
		}
		defer unlock()
		// -trimpath as sluice run builds a graph's Go actors: the
		// packages compiled here serve those builds too (a build without
		// it keys its packages by their directory).
		c := exec.Command("go", "build", "-trimpath", "-ldflags=-w", "-o", filepath.Join(dir, "sluice"), "./cmd/sluice")
		c.Dir = root
		// GOTMPDIR: the go command's work files on the binary's own file
		// system, where a new binary is renamed into place.
		c.Env = append(os.Environ(), "GOTMPDIR="+dir)
		buildOut, buildErr = c.CombinedOutput()
		buildDir = dir
	})
	if buildErr != nil {
		tb.Fatalf("go build ./cmd/sluice: %v\n%s", buildErr, buildOut)
	}
	return buildDir
}

// binDir is the directory Sluice builds into for the module at root, and
// the function that ends the build's hold on it: in the user's cache
// (else the temporary directory), keyed by root's absolute path, locked
// while the build runs; where a lock cannot be had, a directory of the
// test binary's own.
func binDir(root string) (string, func(), error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", nil, err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	sum := sha256.Sum256([]byte(abs))
	parent := filepath.Join(base, "sluice", "doccmd")
	dir := filepath.Join(parent, hex.EncodeToString(sum[:8]))
	pruneGone(parent, dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	// The test binaries of one run (and of runs side by side) build the
	// shared sluice one at a time, so that the go command renames each
	// binary into place rather than copying it under a process running it.
	unlock, err := flock.Lock(context.Background(), filepath.Join(dir, "lock"))
	if err != nil {
		own, err := os.MkdirTemp("", "sluice-doccmd-")
		return own, func() {}, err
	}
	_ = os.WriteFile(filepath.Join(dir, "root"), []byte(abs), 0o644)
	return dir, unlock, nil
}

// pruneGone removes the folders beside keep whose module directory (named
// in their root file) no longer exists — a clone made for one run of the
// suite and deleted — so that each such clone's sluice (tens of MB) does
// not stay in the cache. A folder being built in (its lock held) is left.
func pruneGone(parent, keep string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "*"))
	for _, d := range dirs {
		if d == keep {
			continue
		}
		root, err := os.ReadFile(filepath.Join(d, "root"))
		if err != nil {
			continue
		}
		if _, err := os.Stat(string(root)); !os.IsNotExist(err) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		unlock, err := flock.Lock(ctx, filepath.Join(d, "lock"))
		cancel()
		if err != nil {
			continue
		}
		_ = os.RemoveAll(d)
		unlock()
	}
}

// goCache is the go command's build cache as the test process sees it,
// or "" when the go command cannot say.
var goCache = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// Run runs line with sh -c in dir, binDir first on PATH and env added to
// the environment, and returns its combined output. The go command's build
// cache is named explicitly, so that a command whose env moves
// XDG_CACHE_HOME (sluice's own cache) still reuses the compiled packages
// when it builds a graph's Go actors, instead of compiling the standard
// library and every dependency again.
func Run(ctx context.Context, dir, binDir, line string, env ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, "sh", "-c", line)
	KillGroup(c)
	c.WaitDelay = 5 * time.Second // a grandchild holding the output open
	c.Dir = dir
	c.Env = append(Env(binDir), env...)
	return c.CombinedOutput()
}

// Env is the environment documented commands run in: this process's, with
// binDir first on PATH, the go command's build cache named explicitly
// (see Run) and -trimpath added to GOFLAGS, so that a documented `go run`
// reuses the packages Sluice compiled (a build without -trimpath keys its
// packages by their directory, and the commands run in a copy of the
// repository) instead of compiling them again.
func Env(binDir string) []string {
	env := append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if gc := goCache(); os.Getenv("GOCACHE") == "" && gc != "" {
		env = append(env, "GOCACHE="+gc)
	}
	return append(env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
}
