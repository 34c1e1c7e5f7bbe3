package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/calibrate"
	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/driver"
	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/internal/doccmd"
	"github.com/sluicehq/sluice/internal/filekind"
)

// closedExamples lists the example graphs sluice run runs here without
// building a program: closed, consistent, deadlock-free, with no Go
// actors from another package (paths relative to the repository root).
func closedExamples(t *testing.T) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir("../examples", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		if k, _ := driver.Kind(path); k != filekind.Graph || strings.Contains(path, "/eth/") {
			return nil
		}
		l, err := driver.Load(context.Background(), path, driver.Options{})
		if err != nil {
			return nil
		}
		if _, err := driver.Prepare(context.Background(), l, driver.PrepareOptions{Run: true}); err != nil {
			return nil
		}
		out = append(out, strings.TrimPrefix(path, "../"))
		return nil
	})
	return out
}

// deviceOnlyActor returns the first actor of the example graph at path
// whose implementations are all kernels (OpenCL, CUDA) with no Go or
// built-in one, or "": such an actor needs a gpu processor in the model.
func deviceOnlyActor(t *testing.T, path string) string {
	t.Helper()
	l, err := driver.Load(context.Background(), "../"+path, driver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := driver.Prepare(context.Background(), l, driver.PrepareOptions{Run: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.Graph.Flatten()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.Actors {
		cpu := false
		for _, im := range a.Impls {
			cpu = cpu || im.Kind == graph.ImplGo || im.Kind == graph.ImplBuiltin
		}
		if len(a.Impls) > 0 && !cpu {
			return a.Name
		}
	}
	return ""
}

// TestMapEveryExample maps every closed example graph with sluice map, on
// examples/machines/two-cpus.yaml and on this host's model, and runs each
// mapping written for this host: a failure to map on two-cpus is explained
// (never "<nil>"), a mapping onto the hand-written model is refused by run
// with the machine it was made for, and every example maps on this host's
// model and runs with the mapping written. Graphs of processes (dynamic
// ports) map under the estimate sluice map states ("assumed: ..."). The
// one exception is a graph with an actor that has only OpenCL or CUDA
// kernels: the host's model here (examples/machines/host2.yaml) has no gpu
// processor, so sluice map refuses it with a sentence naming the need —
// an actor without a Go implementation runs on no CPU processor. Where
// this host has an OpenCL device (PoCL on the CPU counts), those examples
// are then mapped onto a model of the CPU pool and that device, and run.
func TestMapEveryExample(t *testing.T) {
	if testing.Short() {
		t.Skip("maps and runs every example")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(doccmd.Sluice(t, root), "sluice")
	// Alongside the other long tests: the commands run as processes in
	// the repository's root, with a cache of their own holding this
	// host's model (examples/machines/host2.yaml).
	t.Parallel()
	cache := t.TempDir()
	model, err := os.ReadFile("../examples/machines/host2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path, err := cachedModelPath(cache)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, model, 0o644); err != nil {
		t.Fatal(err)
	}
	shareRunPrograms(t, cache)
	sluice := func(t *testing.T, _ string, args ...string) (string, string, int) {
		t.Helper()
		return sluiceProcess(t, bin, root, []string{"XDG_CACHE_HOME=" + cache}, args...)
	}
	dir := t.TempDir()
	files := closedExamples(t)
	ran := 0
	var refused []string
	for i, f := range files {
		two := filepath.Join(dir, "two"+string(rune('a'+i%26))+".yaml")
		_, errs, code := sluice(t, "", "map", f, "--machine", "examples/machines/two-cpus.yaml", "--evaluations", "20", "-o", two)
		if code != 0 {
			if strings.Contains(errs, "<nil>") || strings.TrimSpace(errs) == "" {
				t.Errorf("%s: sluice map on two-cpus failed without a reason: %q", f, errs)
			}
		} else if _, errs, code := sluice(t, "", "run", f, "--mapping", two, "-n", "2", "--progress", "off"); code == 0 || !strings.Contains(errs, "written for machine two-cpus") {
			t.Errorf("%s: run with a mapping for two-cpus: exit %d, %q: expected a refusal naming the machine", f, code, errs)
		}
		host := filepath.Join(dir, "host"+string(rune('a'+i%26))+".yaml")
		_, errs, code = sluice(t, "", "map", f, "--evaluations", "20", "-o", host)
		if code != 0 {
			if a := deviceOnlyActor(t, f); a != "" && strings.Contains(errs, "actor "+a+" is a ") && strings.Contains(errs, "it needs a gpu processor, and machine host2 has none") {
				t.Logf("%s: refused on this host's CPU-only model, as expected: %s", f, strings.TrimSpace(errs))
				refused = append(refused, f)
				continue
			}
			t.Errorf("%s: sluice map on this host's model: exit %d: %s", f, code, errs)
			continue
		}
		if b, _ := os.ReadFile(host); strings.Contains(string(b), "dynamic") != strings.Contains(errs, "assumed: actor") {
			t.Errorf("%s: sluice map states assumptions %v but the mapping's doc says %v: expected both or neither", f, strings.Contains(errs, "assumed: actor"), strings.Contains(string(b), "dynamic"))
		}
		// --max-time: examples/pipeline2.yaml's synthetic actors burn
		// seconds a firing; a run stopped there has taken the mapping.
		if _, errs, code := sluice(t, "", "run", f, "--mapping", host, "-n", "2", "--progress", "off", "--max-time", "2s"); code != 0 && (code != 124 || !strings.Contains(errs, "stopped at --max-time")) {
			b, _ := os.ReadFile(host)
			t.Errorf("%s: sluice run with the mapping sluice map wrote for this host: exit %d: %s\n%s", f, code, errs, b)
			continue
		}
		ran++
	}
	if ran+len(refused) != len(files) || ran < 8 {
		t.Fatalf("ran %d and refused %d of %d closed examples on this host's model: expected every one mapped and run but those with kernel-only actors", ran, len(refused), len(files))
	}
	t.Logf("%d of %d closed examples mapped and run; %d refused for want of a gpu processor", ran, len(files), len(refused))
	t.Run("kernel-only actors on this host's OpenCL device", func(t *testing.T) {
		mapKernelOnly(t, sluice, dir, refused)
	})
}

// shareRunPrograms points the Go-actor programs' folder of the cache
// directory cache at the user's own (sluice run links each program once
// there, several seconds of CPU), so that a test with a cache of its own
// for other things does not link them again.
func shareRunPrograms(t *testing.T, cache string) {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		return
	}
	real := filepath.Join(base, "sluice", "run")
	if err := os.MkdirAll(real, 0o755); err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Join(cache, "sluice"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(cache, "sluice", "run")); err != nil {
		t.Fatal(err)
	}
}

// cachedModelPath is where sluice looks for this host's calibrated model
// (calibrate.CachePath) when its cache directory is cache.
func cachedModelPath(cache string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	p, err := calibrate.CachePath()
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(base, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("the model's cache path %s is not under the cache directory %s", p, base)
	}
	return filepath.Join(cache, rel), nil
}

// sluiceProcess runs the sluice binary bin in dir with env added, and
// returns its standard output, standard error and exit status (as the
// in-process sluice does, for tests that run beside others).
func sluiceProcess(t *testing.T, bin, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(doccmd.Env(filepath.Dir(bin)), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("sluice %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), code
}

// mapKernelOnly maps the examples refused on the CPU-only model onto a
// model of the CPU pool and this host's first OpenCL device (a processor
// named by its device ID, as a calibrated model names it) and runs each
// mapping written.
func mapKernelOnly(t *testing.T, sluice func(*testing.T, string, ...string) (string, string, int), dir string, files []string) {
	needOpenCL(t)
	id := ""
	for _, r := range device.Discover(context.Background()) {
		if r.Backend == "opencl" && len(r.Devices) > 0 {
			id = r.Devices[0].ID
			break
		}
	}
	proc := strings.ReplaceAll(id, ":", "")
	mach := filepath.Join(dir, "cpu-and-opencl.yaml")
	model := fmt.Sprintf("kind: machine\nname: cpu-and-opencl\nprocessors:\n  cpu: {kind: cpu, units: 2, io: true, pool: true, firing_cost: 100}\n  %s: {kind: gpu, firing_cost: 2000}\ninterconnects:\n  pcie: {elements: [cpu, %s], start_latency: 10000, bandwidth: 10}\n", proc, proc)
	if err := os.WriteFile(mach, []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		out := filepath.Join(dir, "opencl"+string(rune('a'+i%26))+".yaml")
		if _, errs, code := sluice(t, "", "map", f, "--machine", mach, "--strategy", "heft", "-o", out); code != 0 {
			t.Errorf("%s: sluice map onto the CPU pool and %s: exit %d: %s", f, id, code, errs)
			continue
		}
		b, _ := os.ReadFile(out)
		if !strings.Contains(string(b), `device: "`+id+`", impl: opencl`) {
			t.Errorf("%s: the mapping places no actor on %s with its OpenCL kernel:\n%s", f, id, b)
		}
		if _, errs, code := sluice(t, "", "run", f, "--mapping", out, "-n", "2", "--progress", "off"); code != 0 {
			t.Errorf("%s: sluice run with the mapping onto %s: exit %d: %s\n%s", f, id, code, errs, b)
		}
	}
}

// TestErrorFormatSameEverywhere: for a malformed file, a binary file, a
// misspelt key, a directory and a missing file, check, run and simulate
// print the same file:line:col lines, causes first.
func TestErrorFormatSameEverywhere(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		want []string
	}{
		{write("open.yaml", []byte("kind: graph\nname: x\nactors: [\n")), []string{"open.yaml:4:1: malformed YAML: did not find expected node content (the file ends inside a block or flow collection that is not closed)"}},
		{write("bin.yaml", []byte("kind: graph\n\x00\x01\xff")), []string{"bin.yaml:2:1: binary data (not UTF-8 text): expected a YAML text file"}},
		{write("typo.yaml", []byte("kind: graph\nname: x\nactors:\n  A: {out: {o: {type: f32, rate: 1}}}\n  B: {in: {i: {type: f32, rate: 1}}}\nchanels:\n  - {from: A.o, to: B.i}\n")), []string{
			`typo.yaml:6:1: graph: unknown key "chanels" (did you mean "channels"?)`,
			"typo.yaml:4:13: output port A.o is not connected",
			"typo.yaml:5:12: input port B.i is not connected"}},
		{filepath.Join(dir, "dir.yaml"), []string{"dir.yaml: is a directory: expected a graph of actors and channels"}},
		{filepath.Join(dir, "none.yaml"), []string{"none.yaml: no such file: expected a graph of actors and channels"}},
		{"examples/machines/cell.yaml", []string{"examples/machines/cell.yaml: a machine model, not a graph of actors and channels: use it with --machine with sluice simulate or map"}},
	} {
		outs := map[string]string{}
		cmds := [][]string{{"check", c.file}, {"run", c.file, "-n", "1"}, {"simulate", c.file, "--machine", "examples/machines/two-cpus.yaml"}}
		if strings.HasPrefix(c.file, "examples/") { // a file of another kind: check validates it; map refuses it as run does
			cmds[0] = []string{"map", c.file, "--machine", "examples/machines/two-cpus.yaml"}
		}
		for _, cmd := range cmds {
			out, errs, code := sluice(t, "", cmd...)
			if code == 0 {
				t.Errorf("%s %s: exit 0, want a refusal", cmd[0], c.file)
			}
			var lines []string
			for _, l := range strings.Split(out+errs, "\n") {
				l = strings.TrimPrefix(strings.TrimSpace(l), "sluice: ")
				if strings.HasPrefix(l, filepath.Dir(c.file)) || strings.HasPrefix(l, c.file) {
					lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, dir), "/"))
				}
			}
			if len(lines) != len(c.want) {
				t.Errorf("%s %s: lines %q, want %d like %q", cmd[0], c.file, lines, len(c.want), c.want)
				continue
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("%s %s: line %d %q, want %q", cmd[0], c.file, i, lines[i], w)
				}
			}
			outs[cmd[0]] = strings.Join(lines, "\n")
		}
		first := outs[cmds[0][0]]
		if first != outs["run"] || outs["run"] != outs["simulate"] {
			t.Errorf("%s: %s, run and simulate differ:\n%s\n--\n%s\n--\n%s", c.file, cmds[0][0], first, outs["run"], outs["simulate"])
		}
	}
}
