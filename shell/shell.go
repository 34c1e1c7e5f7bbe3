// Package shell is sluice's command shell (sluice sh): it runs
// executables (a flow-model bound to data files or virtual buffers) and
// batches of them, keeps virtual buffers resident on a device between
// commands, and runs steps in the background.
package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/flowmodel"
)

// Options configure a Shell.
type Options struct {
	// Out receives command output (default io.Discard).
	Out io.Writer
	// Dir is the directory relative paths start from ("" = current).
	Dir string
	// Device is the device ID that holds virtual buffers ("" = the first
	// OpenCL device, "host" = host memory).
	Device string
}

// Shell runs commands. It is safe for concurrent use.
type Shell struct {
	o    Options
	host flowmodel.Local

	mu       sync.Mutex
	bufs     map[string]*VirtBuf
	devReady bool
	dev      device.Device
	q        device.Queue
	jobs     []*job
	wg       sync.WaitGroup
}

// job is a background command.
type job struct {
	id   int
	cmd  string
	done bool
	err  error
}

// New returns a shell.
func New(o Options) *Shell {
	if o.Out == nil {
		o.Out = io.Discard
	}
	return &Shell{o: o, bufs: map[string]*VirtBuf{}}
}

// openDevice opens a device through flowmodel (serialised discovery).
func (s *Shell) openDevice(ctx context.Context, id string) (device.Device, error) {
	return flowmodel.OpenDevice(ctx, id)
}

// path resolves p against the shell's directory.
func (s *Shell) path(p string) string {
	if filepath.IsAbs(p) || s.o.Dir == "" {
		return p
	}
	return filepath.Join(s.o.Dir, p)
}

// Close waits for background jobs and frees every virtual buffer.
func (s *Shell) Close() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.names() {
		s.release(n)
	}
	if s.q != nil {
		return s.q.Release()
	}
	return nil
}

// RunScript runs a script's lines in order, stopping at the first error,
// which names the script and line.
func (s *Shell) RunScript(ctx context.Context, name string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		if err := s.Exec(ctx, sc.Text()); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return s.Sync(ctx)
}

// Exec runs one command line. A trailing & runs it in the background.
func (s *Shell) Exec(ctx context.Context, line string) error {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	if last := f[len(f)-1]; last == "&" || strings.HasSuffix(last, "&") {
		f[len(f)-1] = strings.TrimSuffix(last, "&")
		if f[len(f)-1] == "" {
			f = f[:len(f)-1]
		}
		if len(f) == 0 {
			return errors.New("& without a command")
		}
		s.background(ctx, f)
		return nil
	}
	return s.exec(ctx, f)
}

// background starts a command as a job.
func (s *Shell) background(ctx context.Context, f []string) {
	s.mu.Lock()
	j := &job{id: len(s.jobs) + 1, cmd: strings.Join(f, " ")}
	s.jobs = append(s.jobs, j)
	s.mu.Unlock()
	fmt.Fprintf(s.o.Out, "[%d] %s\n", j.id, j.cmd)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := s.exec(ctx, f)
		s.mu.Lock()
		j.done, j.err = true, err
		s.mu.Unlock()
	}()
}

// Sync waits for every background job and returns their errors.
func (s *Shell) Sync(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("sync: %w", ctx.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, j := range s.jobs {
		if j.err != nil {
			errs = append(errs, fmt.Errorf("job [%d] %s: %w", j.id, j.cmd, j.err))
		}
	}
	s.jobs = nil
	return errors.Join(errs...)
}

// exec runs one command.
func (s *Shell) exec(ctx context.Context, f []string) error {
	switch f[0] {
	case "run":
		if len(f) != 2 {
			return errors.New("usage: run FILE.yaml")
		}
		return s.runFile(ctx, f[1], 0)
	case "sync":
		return s.Sync(ctx)
	case "repeat":
		n, err := strconv.Atoi(safe(f, 1))
		if err != nil || n < 0 || len(f) < 3 {
			return errors.New("usage: repeat N COMMAND")
		}
		for i := 0; i < n; i++ {
			if err := s.exec(ctx, f[2:]); err != nil {
				return fmt.Errorf("repeat %d of %d: %w", i+1, n, err)
			}
		}
		return nil
	case "virtbuf":
		return s.virtbuf(ctx, f[1:])
	case "jobs":
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, j := range s.jobs {
			state := "running"
			if j.done {
				state = "done"
				if j.err != nil {
					state = "failed: " + j.err.Error()
				}
			}
			fmt.Fprintf(s.o.Out, "[%d] %s\t%s\n", j.id, state, j.cmd)
		}
		return nil
	case "devices":
		hi, err := s.host.Devices(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(s.o.Out, "host %s\n", hi.Host)
		for _, p := range hi.Platforms {
			fmt.Fprintf(s.o.Out, "  %s (%s)\n", p.Name, p.Backend)
			for _, d := range p.Devices {
				fmt.Fprintf(s.o.Out, "    %s\t%s\t%s\t%d CUs\t%s\n", d.ID, d.Name, d.Kind, d.ComputeUnits, device.Size(d.GlobalMem))
			}
		}
		return nil
	case "help":
		fmt.Fprint(s.o.Out, Help)
		return nil
	}
	if strings.HasSuffix(f[0], ".yaml") || strings.HasSuffix(f[0], ".yml") {
		if len(f) != 1 {
			return fmt.Errorf("%s takes no arguments", f[0])
		}
		return s.runFile(ctx, f[0], 0)
	}
	return fmt.Errorf("unknown command %q: expected FILE.yaml, run, sync, repeat, virtbuf, jobs, devices or help", f[0])
}

func safe(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// Help is the shell's help text.
const Help = `Commands:
  FILE.yaml [&]            run an executable or a batch (& in the background)
  run FILE.yaml            the same
  sync                     wait for every background job
  repeat N COMMAND         run COMMAND N times
  virtbuf list             list virtual buffers
  virtbuf create NAME TYPE LEN   make a buffer of LEN tokens of TYPE (f32, c64, …)
  virtbuf fill NAME FILE   load it from a .csv or raw binary file
  virtbuf dump NAME FILE   save it to a .csv or raw binary file
  virtbuf swap A B         exchange two buffers' contents (no copy)
  virtbuf delete NAME | --all
  jobs                     list background jobs
  devices                  list devices (host → platform → device)
  help                     this text
`
