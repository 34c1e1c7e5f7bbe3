package motion

import (
	"bufio"
	"context"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/doccmd"
)

// readmeCommands returns the command lines in README.md's code blocks that
// run sluice or go.
func readmeCommands(t *testing.T) []string {
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		fields := strings.Fields(line)
		for len(fields) > 0 && strings.Contains(fields[0], "=") {
			fields = fields[1:]
		}
		if len(fields) > 0 && (fields[0] == "sluice" || fields[0] == "go") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// writeMultipart writes the clip's frames as a multipart JPEG stream.
func writeMultipart(clip, path string) error {
	fr, c, err := OpenStream(clip)
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	mw := multipart.NewWriter(f)
	for i := 0; i < 20; i++ {
		jpg, err := fr.Next()
		if err != nil {
			return err
		}
		w, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"image/jpeg"}, "Content-Length": {fmt.Sprint(len(jpg))}})
		if err != nil {
			return err
		}
		w.Write(jpg)
	}
	mw.Close()
	return f.Close()
}

// Every sluice and go command of README.md works as written, run in the
// module's root with the files the README names (camera.avi, stream.mjpeg,
// mask.avi) in a temporary directory.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sluice command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin := doccmd.Sluice(t, root)
	clip, err := clipPath()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(clip)
	os.WriteFile(filepath.Join(work, "camera.avi"), data, 0o644)
	if err := writeMultipart(clip, filepath.Join(work, "stream.mjpeg")); err != nil {
		t.Fatal(err)
	}
	// The README's file names, in the work directory.
	files := strings.NewReplacer("=camera.avi", "="+filepath.Join(work, "camera.avi"),
		"=stream.mjpeg", "="+filepath.Join(work, "stream.mjpeg"), "=mask.avi", "="+filepath.Join(work, "mask.avi"))
	cache := filepath.Join(work, "cache")
	for i, line := range readmeCommands(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if strings.HasPrefix(line, "go test") {
				t.Skip("the package's tests: this test runs in them")
			}
			out, err := doccmd.Run(ctx, root, bin, files.Replace(line), "XDG_CACHE_HOME="+cache)
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			if strings.Contains(line, "sluice run") && !strings.Contains(string(out), "frames: flow estimated") {
				t.Errorf("%s: no summary in the output:\n%s", line, out)
			}
			if strings.Contains(line, "SLUICE_MOTION_OUTPUT=mask.avi") {
				if fr, c, err := OpenStream(filepath.Join(work, "mask.avi")); err != nil {
					t.Errorf("mask video: %v", err)
				} else {
					n := len(readAll(t, fr))
					c.Close()
					if n != 20 {
						t.Errorf("mask video has %d frames, expected 20", n)
					}
				}
			}
			t.Logf("%s:\n%s", line, out)
		})
	}
}
