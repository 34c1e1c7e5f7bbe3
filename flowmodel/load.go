package flowmodel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/fsroot"
)

// LoadOptions limit what Load fetches.
type LoadOptions struct {
	// MaxBytes is the largest file accepted (model or kernel source);
	// default 4 MiB.
	MaxBytes int64
	// Timeout bounds each http(s) fetch; default 30 s.
	Timeout time.Duration
	// SHA256 pins the model file's content: when set (hex), a file whose
	// digest differs is refused.
	SHA256 string
	// Client fetches URLs (default http.DefaultClient).
	Client *http.Client
	// Root confines the model file and the kernel files it names (nil:
	// unconfined); a path leaving it is refused with fsroot's rule.
	Root *fsroot.Root
}

func (o LoadOptions) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return 4 << 20
}

func (o LoadOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 30 * time.Second
}

// isURL reports whether src is an http(s) URL.
func isURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// Load reads a flow-model from a path or an http(s) URL, checks its sha256
// pin when one is given, reads the kernel files it names (relative to it),
// and validates it.
func Load(ctx context.Context, src string, o LoadOptions) (*Model, error) {
	data, err := fetch(ctx, src, o)
	if err != nil {
		return nil, err
	}
	if o.SHA256 != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, o.SHA256) {
			return nil, fmt.Errorf("%s: sha256 %s: expected the pinned %s", src, got, o.SHA256)
		}
	}
	m, err := Parse(src, data)
	if err != nil {
		return nil, err
	}
	if err := m.readKernelFiles(ctx, src, o); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// readKernelFiles reads opencl_file and cuda_file relative to src.
func (m *Model) readKernelFiles(ctx context.Context, src string, o LoadOptions) error {
	for _, f := range []struct {
		name string
		dst  *string
	}{{m.Kernel.OpenCLFile, &m.Kernel.OpenCL}, {m.Kernel.CUDAFile, &m.Kernel.CUDA}} {
		if f.name == "" {
			continue
		}
		if *f.dst != "" {
			return fmt.Errorf("%s: kernel: both inline source and the file %q: expected one", src, f.name)
		}
		if !isURL(src) && o.Root != nil {
			if _, err := o.Root.Rel(filepath.Dir(src), f.name); err != nil {
				return fmt.Errorf("%s: kernel: %w", src, err)
			}
		}
		ref, err := relative(src, f.name)
		if err != nil {
			return err
		}
		o.SHA256 = ""
		b, err := fetch(ctx, ref, o)
		if err != nil {
			return fmt.Errorf("%s: kernel: %w", src, err)
		}
		*f.dst = string(b)
	}
	return nil
}

// relative resolves name against the path or URL base.
func relative(base, name string) (string, error) {
	if isURL(base) {
		b, err := url.Parse(base)
		if err != nil {
			return "", err
		}
		r, err := url.Parse(name)
		if err != nil {
			return "", fmt.Errorf("%s: kernel file %q: %w", base, name, err)
		}
		return b.ResolveReference(r).String(), nil
	}
	if filepath.IsAbs(name) {
		return name, nil
	}
	return filepath.Join(filepath.Dir(base), name), nil
}

// fetch reads a file or URL, at most o.maxBytes().
func fetch(ctx context.Context, src string, o LoadOptions) ([]byte, error) {
	limit := o.maxBytes()
	var r io.ReadCloser
	if isURL(src) {
		ctx, cancel := context.WithTimeout(ctx, o.timeout())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, err
		}
		c := o.Client
		if c == nil {
			c = http.DefaultClient
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", src, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("fetch %s: HTTP status %s: expected 200 OK", src, resp.Status)
		}
		r = resp.Body
	} else {
		var f *os.File
		var err error
		if o.Root != nil {
			f, err = o.Root.Open(filepath.Dir(src), filepath.Base(src))
		} else {
			f, err = os.Open(src)
		}
		if err != nil {
			return nil, err
		}
		r = f
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than the limit of %d bytes", src, limit)
	}
	return b, nil
}
