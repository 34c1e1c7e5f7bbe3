package cli

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/doccmd"
	"github.com/sluicehq/sluice/internal/filekind"
)

// docCommand is a command a user can read: in the README, in a docs/*.md
// code block marked sh, or in an example's header comment.
type docCommand struct {
	where string // file:line
	line  string // the command, continuation lines joined
	exit  int    // the status the text promises ("# exits N"), else 0
	says  string // for a failing command of a transcript, the message shown after it
}

// skipReasons tells the commands CI does not run here, and why: they need a
// GPU, a cluster of processes, a browser build or long benchmarks, or they
// are this test suite itself. GPU commands run in scripts/gpu-check.sh.
var skipReasons = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(gpuRe), "needs a CUDA GPU (scripts/gpu-check.sh runs it)"},
	{regexp.MustCompile(`-nats |sluice broker|sluice worker`), "a sequence of processes on a broker (examples/mpi's and cluster's tests run it on loopback)"},
	{regexp.MustCompile(`scripts/test\.sh|go test|\.test |build\.sh|npm `), "a test or build command (run by CI itself)"},
	{regexp.MustCompile(`go run \S*\bbench\b`), "a benchmark (BENCHMARKS.md and docs/apps.md give its figures, with the machine)"},
	{regexp.MustCompile(`#.*takes minutes`), "takes minutes (the seed's problem size): its figures are in docs/apps.md"},
	{regexp.MustCompile(`\b(URL|NAME|DIR|FILE)\b`), "a pattern with placeholders"},
	{regexp.MustCompile(`^sluice sh\s*(#.*)?$|sluice sh --device|sluice ui\b|…`), "interactive, serves until stopped, or a pattern with placeholders"},
	{regexp.MustCompile(`&\s*(#.*)?$|& done`), "starts background processes"},
	{regexp.MustCompile(`^#`), "a comment"},
}

// gpuRe matches the commands that need a CUDA GPU.
const gpuRe = `--mapping \S*cuda|cuda\.yaml|cuda-map|SLUICE_REQUIRE_CUDA|gpu-check|\.test `

// brokerURL is the broker address documented commands use; the test
// starts a broker and workers w1, w2 on loopback and substitutes its URL.
const brokerURL = "nats://127.0.0.1:4222"

var (
	exitsRe       = regexp.MustCompile(`#.*\bexits (\d)`)
	headerCmdRe   = regexp.MustCompile(`^(#|//)\s+((go run \S+|sluice)( .*)?)$`) // a command in a header comment
	commentRe     = regexp.MustCompile(`^(#|//)\s+`)
	goRunSluiceRe = regexp.MustCompile(`go run (\./|\.\./\.\./)cmd/sluice`)
	gpuCmdRe      = regexp.MustCompile(gpuRe)
)

// harvest collects the commands of one file: lines of ```sh blocks in
// markdown, `#   cmd` / `//	cmd` lines of header comments elsewhere.
func harvest(t *testing.T, path string) []docCommand {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	md := strings.HasSuffix(path, ".md")
	var out []docCommand
	var cur *docCommand
	inBlock, console := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		var cmd string
		switch {
		case md && strings.HasPrefix(l, "```"):
			inBlock = strings.TrimSpace(l) == "```sh"
			console = strings.TrimSpace(l) == "```console"
			cur = nil
			continue
		case md && console:
			if rest, ok := strings.CutPrefix(l, "$ "); ok {
				cmd = rest
			} else if cur != nil && cur.says == "" && strings.TrimSpace(l) != "" {
				cur.says = strings.TrimSpace(l)
				continue
			} else {
				continue
			}
		case md && inBlock:
			cmd = l
		case !md:
			m := headerCmdRe.FindStringSubmatch(l)
			if m == nil {
				if cur != nil && commentRe.MatchString(l) && strings.HasSuffix(cur.line, `\`) {
					cmd = commentRe.ReplaceAllString(l, "")
				} else {
					cur = nil
					continue
				}
			} else {
				cmd = m[2]
			}
		default:
			continue
		}
		if cur != nil && strings.HasSuffix(cur.line, `\`) {
			cur.line = strings.TrimSuffix(cur.line, `\`) + " " + strings.TrimSpace(cmd)
		} else if strings.TrimSpace(cmd) != "" {
			out = append(out, docCommand{where: fmt.Sprintf("%s:%d", path, n), line: strings.TrimSpace(cmd)})
			cur = &out[len(out)-1]
		}
	}
	for i := range out {
		if m := exitsRe.FindStringSubmatch(out[i].line); m != nil {
			out[i].exit, _ = strconv.Atoi(m[1])
		}
	}
	return out
}

// TestDocumentedCommands runs every command the README, docs/*.md (```sh
// blocks) and the examples' header comments show, in a copy of the
// repository, with `go run ./cmd/sluice` replaced by a built binary. Each
// must exit as its text says (0 unless "# exits N").
func TestDocumentedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented command")
	}
	root, _ := filepath.Abs("..")
	work := copyRepo(t, root)
	bin := doccmd.Sluice(t, root)
	// Alongside the other long tests (TestMapEveryExample): every command
	// runs as a process in the copy, nothing here uses the working
	// directory.
	t.Parallel()
	var files []string
	files = append(files, filepath.Join(root, "README.md"))
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, docs...)
	_ = filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && regexp.MustCompile(`\.(ya?ml|go|sh)$`).MatchString(p) {
			files = append(files, p)
		}
		return nil
	})
	var cmds []docCommand
	var cmdFiles []string
	for _, file := range files {
		for _, c := range harvest(t, file) {
			c.where = strings.TrimPrefix(c.where, root+"/")
			cmds, cmdFiles = append(cmds, c), append(cmdFiles, file)
		}
	}
	if out := os.Getenv("SLUICE_GPU_COMMANDS"); out != "" {
		writeGPUCommands(t, out, cmds)
		return
	}
	url := ""
	ran := 0
	// A command written in several places (the README, a doc, an
	// example's comment) runs once: the same line in the same directory,
	// promising the same status and message.
	first := map[string]string{}
	for i, c := range cmds {
		if why := skipped(c.line); why != "" {
			t.Logf("skip %s: %s: %s", c.where, c.line, why)
			continue
		}
		key := docCommandKey(root, c, cmdFiles[i])
		if at, ok := first[key]; ok {
			t.Logf("ran %s: the same command as %s: %s", c.where, at, c.line)
			continue
		}
		first[key] = c.where
		if strings.Contains(c.line, brokerURL) {
			if url == "" {
				url = startCluster(t, filepath.Join(bin, "sluice"))
			}
			c.line = strings.ReplaceAll(c.line, brokerURL, url)
		}
		ran++
		runDocCommand(t, work, bin, c, cmdFiles[i])
	}
	if ran < 20 {
		t.Fatalf("ran %d documented commands: expected at least 20 (did the harvest break?)", ran)
	}
}

func skipped(line string) string {
	if strings.Contains(line, "--svg") && os.Getenv("SLUICE_REQUIRE_GRAPHVIZ") != "1" {
		if _, err := exec.LookPath("dot"); err != nil {
			return "needs Graphviz's dot (scripts/test.sh installs it)"
		}
	}
	for _, s := range skipReasons {
		if s.re.MatchString(line) {
			return s.why
		}
	}
	return ""
}

// runDocCommand runs one command with bash in the copy, in the directory
// the text implies (the repository root; an example's own directory when
// its header uses a bare file name).
// docCommandKey is what makes two documented commands the same: the line
// as run (go run of sluice as sluice, a trailing comment and repeated
// spaces left out), the directory it runs in, the status and the message
// promised.
func docCommandKey(root string, c docCommand, file string) string {
	line := goRunSluiceRe.ReplaceAllString(c.line, "sluice")
	line = trailingCommentRe.ReplaceAllString(line, "")
	line = strings.Join(strings.Fields(line), " ")
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s", docCommandDir(".", root, line, file), line, c.exit, c.says)
}

// trailingCommentRe matches a shell comment at the end of a line, with no
// quote after its #.
var trailingCommentRe = regexp.MustCompile(`\s+#[^'"]*$`)

// docCommandDir is where the command line from file runs, in the copy
// work of the repository at root: the copy's root, or examples/carsh for
// that example's own commands.
func docCommandDir(work, root, line, file string) string {
	if rel, _ := filepath.Rel(root, file); strings.Contains(rel, "examples/carsh") && !strings.Contains(line, "examples/") {
		return filepath.Join(work, "examples", "carsh")
	}
	return work
}

func runDocCommand(t *testing.T, work, bin string, c docCommand, file string) {
	line := goRunSluiceRe.ReplaceAllString(c.line, "sluice")
	dir := docCommandDir(work, filepath.Join(work, ".."), line, file)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", line)
	doccmd.KillGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir = dir
	cmd.Env = doccmd.Env(bin)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("ran %s (%.2fs): %s", c.where, time.Since(start).Seconds(), c.line)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("%s: %s: %v", c.where, c.line, err)
		return
	}
	if ctx.Err() != nil {
		t.Errorf("%s: %s: still running after 3 minutes (a documented command must end: give it -n)", c.where, c.line)
		return
	}
	if code != c.exit {
		t.Errorf("%s: %s: exit status %d, the text says %d\n%s", c.where, c.line, code, c.exit, tail(out, 1500))
	}
	if c.exit != 0 && c.says != "" && !strings.Contains(string(out), c.says) {
		t.Errorf("%s: %s: the text shows the message %q; the command printed:\n%s", c.where, c.line, c.says, tail(out, 1500))
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// copyRepo copies the repository's files (as git lists them, tracked and
// untracked but not ignored) into a temporary directory, so that commands
// writing files leave the checkout alone.
func copyRepo(t *testing.T, root string) string {
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // listed but deleted in the work tree
		}
		fi, _ := os.Stat(filepath.Join(root, f))
		p := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestExampleFileKinds checks every YAML file under examples/: its kind:
// key agrees with the kind its content shows, and check accepts it (the
// deadlocking example is refused, as its name says).
func TestExampleFileKinds(t *testing.T) {
	files, _ := filepath.Glob("../examples/*.yaml")
	more, _ := filepath.Glob("../examples/*/*.yaml")
	deeper, _ := filepath.Glob("../examples/*/*/*.yaml")
	files = append(append(files, more...), deeper...)
	if len(files) < 40 {
		t.Fatalf("found %d example files: expected the examples tree", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		declared, err := filekind.Detect(f, data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		bare := regexp.MustCompile(`(?m)^kind:.*\n`).ReplaceAll(data, nil)
		detected, _ := filekind.Detect(f, bare)
		if !regexp.MustCompile(`(?m)^kind: `).Match(data) {
			t.Errorf("%s: no kind: key (its content says %q)", f, detected)
		}
		if declared != detected {
			t.Errorf("%s: kind: %s, but its keys show a %s", f, declared, detected)
		}
		want := 0
		if strings.Contains(f, "deadlock") {
			want = 1
		}
		var out strings.Builder
		root := newRoot()
		root.SetArgs([]string{"check", "--budget", "100ms", f})
		root.SetOut(&out)
		root.SetErr(&out)
		if got := codeOf(root.Execute()); got != want {
			t.Errorf("sluice check %s: exit %d, want %d\n%s", f, got, want, out.String())
		}
	}
}

func codeOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}

// writeGPUCommands writes the documented commands that need a CUDA GPU, one
// per line, for scripts/gpu-check.sh to run on a GPU machine.
func writeGPUCommands(t *testing.T, path string, cmds []docCommand) {
	var b strings.Builder
	for _, c := range cmds {
		line := goRunSluiceRe.ReplaceAllString(c.line, "sluice")
		if !gpuCmdRe.MatchString(line) || !strings.HasPrefix(line, "sluice ") || strings.Contains(line, "--broker") {
			continue
		}
		if g := regexp.MustCompile(`examples/\S+\.yaml`).FindString(line); g != "" {
			if data, err := os.ReadFile(filepath.Join("..", g)); err == nil && regexp.MustCompile(`(?m)^go:`).Match(data) {
				t.Logf("%s: %s: its Go actors need the Go toolchain, which the GPU machine lacks; the runtime's CUDA tests cover its kernels", c.where, line)
				continue
			}
		}
		fmt.Fprintf(&b, "%s\t%s\n", c.where, line)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startCluster starts, on loopback, a broker and the workers w1 and w2 the
// documented cluster commands name, and returns the broker's URL. They are
// stopped when the test ends.
func startCluster(t *testing.T, sluice string) string {
	port := freeTCPPort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	start := func(args ...string) *exec.Cmd {
		c := exec.Command(sluice, args...)
		var out strings.Builder
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.Process.Signal(os.Interrupt)
			_ = c.Wait()
			if t.Failed() {
				t.Logf("sluice %s:\n%s", strings.Join(args, " "), out.String())
			}
		})
		return c
	}
	start("broker", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
	start("worker", "--broker", url, "--name", "w1")
	start("worker", "--broker", url, "--name", "w2")
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _ := exec.Command(sluice, "devices", "--broker", url).CombinedOutput()
		if strings.Contains(string(out), "w1") && strings.Contains(string(out), "w2") {
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker and workers w1, w2 did not come up within 20s:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freeTCPPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
