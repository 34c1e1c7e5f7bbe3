package actors

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/graph"
	"github.com/sluicehq/sluice/runtime"
)

// drain fires a source until end of stream and returns what it produced.
func drain(t *testing.T, a *graph.Actor, impl any, window int) [][]byte {
	t.Helper()
	start(t, impl)
	defer stop(t, impl)
	var got [][]byte
	for k := int64(0); ; k++ {
		if k > 1000 {
			t.Fatal("source never ended")
		}
		b := make([]byte, window)
		for i := range b {
			b[i] = 0xAA // must be overwritten, padding included
		}
		err := fire(a, impl, k, nil, [][]byte{b})
		if errors.Is(err, runtime.ErrEndOfStream) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
}

func TestFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.f32")
	// Write 3 firings of 4 f32 tokens.
	a, impl := build(t, "file.write", map[string]any{"path": path}, "in x f32 4")
	start(t, impl)
	var all []float32
	for k := 0; k < 3; k++ {
		w := []float32{float32(k), 1.5, -2, float32(10 * k)}
		all = append(all, w...)
		if err := fire(a, impl, int64(k), [][]byte{bytesOf(w)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	stop(t, impl)
	data, err := os.ReadFile(path)
	if err != nil || string(data) != string(bytesOf(all)) {
		t.Fatalf("file holds %d bytes (%v), want the 48 bytes written", len(data), err)
	}
	// Read back 5 tokens per firing: 12 tokens = 2 full windows + 2 tokens
	// then 3 zero tokens.
	a, impl = build(t, "file.read", map[string]any{"path": path}, "out y f32 5")
	got := drain(t, a, impl, 20)
	if len(got) != 3 {
		t.Fatalf("%d firings, want 3", len(got))
	}
	var back []float32
	for _, b := range got {
		back = append(back, tokensOf[float32](b)...)
	}
	for i := range back {
		want := float32(0)
		if i < len(all) {
			want = all[i]
		}
		if back[i] != want {
			t.Fatalf("token %d = %v, want %v (tokens %v)", i, back[i], want, back)
		}
	}
	// Loop: the stream wraps around; count bounds it.
	a, impl = build(t, "file.read", map[string]any{"path": path, "loop": true, "count": 4}, "out y f32 5")
	got = drain(t, a, impl, 20)
	if len(got) != 4 {
		t.Fatalf("loop: %d firings, want 4", len(got))
	}
	for k, b := range got {
		for i, v := range tokensOf[float32](b) {
			if want := all[(5*k+i)%12]; v != want {
				t.Fatalf("loop firing %d token %d = %v, want %v", k, i, v, want)
			}
		}
	}
	// Append.
	a, impl = build(t, "file.write", map[string]any{"path": path, "append": true}, "in x u8 2")
	start(t, impl)
	if err := fire(a, impl, 0, [][]byte{{1, 2}}, nil); err != nil {
		t.Fatal(err)
	}
	stop(t, impl)
	if fi, _ := os.Stat(path); fi.Size() != 50 {
		t.Fatalf("after append the file has %d bytes, want 50", fi.Size())
	}
}

func TestFileErrorsNamePath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope", "x.bin")
	_, impl := build(t, "file.read", map[string]any{"path": missing}, "out y u8 1")
	err := impl.(runtime.Starter).Start(t.Context())
	wantErr(t, err, missing)
	_, impl = build(t, "file.write", map[string]any{"path": missing}, "in x u8 1")
	err = impl.(runtime.Starter).Start(t.Context())
	wantErr(t, err, missing)
	_, impl = build(t, "csv.read", map[string]any{"path": missing}, "out y u8 1")
	wantErr(t, impl.(runtime.Starter).Start(t.Context()), missing)
	wantErr(t, buildErr(t, "image.read", map[string]any{"path": missing}, "out y u8 1"), missing)
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o644)
	a, impl := build(t, "file.read", map[string]any{"path": empty, "loop": true}, "out y u8 4")
	start(t, impl)
	defer stop(t, impl)
	wantErr(t, fire(a, impl, 0, nil, [][]byte{make([]byte, 4)}), empty, "empty")
}

func TestCSVRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v.csv")
	a, impl := build(t, "csv.write", map[string]any{"path": path, "header": "x,y,z"}, "in v [3]f32 2")
	start(t, impl)
	v := []float32{1, 2.5, -3, 0.1, 1e-7, 4}
	if err := fire(a, impl, 0, [][]byte{bytesOf(v)}, nil); err != nil {
		t.Fatal(err)
	}
	stop(t, impl)
	data, _ := os.ReadFile(path)
	if want := "x,y,z\n1,2.5,-3\n0.1,1e-07,4\n"; string(data) != want {
		t.Fatalf("csv.write wrote %q, want %q", data, want)
	}
	a, impl = build(t, "csv.read", map[string]any{"path": path, "header": true}, "out v [3]f32 3")
	got := drain(t, a, impl, 36)
	if len(got) != 1 {
		t.Fatalf("%d firings, want 1", len(got))
	}
	back := tokensOf[float32](got[0])
	for i := range back {
		want := float32(0) // third token is padding
		if i < len(v) {
			want = v[i]
		}
		if back[i] != want {
			t.Fatalf("csv read back %v, want %v then zeros", back, v)
		}
	}
	// Complex and integer tokens, other separators, comments, blank lines.
	os.WriteFile(path, []byte("# re im\n1 2\n\n3;-4\r\n"), 0o644)
	a, impl = build(t, "csv.read", map[string]any{"path": path}, "out z c64 2")
	got = drain(t, a, impl, 16)
	if z := tokensOf[complex64](got[0]); len(got) != 1 || z[0] != 1+2i || z[1] != 3-4i {
		t.Fatalf("c64 csv read %v", z)
	}
	a, impl = build(t, "csv.write", map[string]any{"path": path}, "in z i32 3")
	start(t, impl)
	if err := fire(a, impl, 0, [][]byte{bytesOf([]int32{-1, 0, 2147483647})}, nil); err != nil {
		t.Fatal(err)
	}
	stop(t, impl)
	if data, _ := os.ReadFile(path); string(data) != "-1\n0\n2147483647\n" {
		t.Fatalf("i32 csv %q", data)
	}
}

func TestCSVErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(path, []byte("1,2\n3\n"), 0o644)
	a, impl := build(t, "csv.read", map[string]any{"path": path}, "out v [2]f32 2")
	start(t, impl)
	wantErr(t, fire(a, impl, 0, nil, [][]byte{make([]byte, 16)}), path+":2:", "expected 2 columns", "found 1")
	stop(t, impl)
	os.WriteFile(path, []byte("1\n300\n"), 0o644)
	a, impl = build(t, "csv.read", map[string]any{"path": path}, "out v u8 2")
	start(t, impl)
	wantErr(t, fire(a, impl, 0, nil, [][]byte{make([]byte, 2)}), path+":2:", "300", "u8")
	stop(t, impl)
	wantErr(t, buildErr(t, "csv.read", map[string]any{"path": path}, "out v bytes3 1"), "no text form")
}

// testImage is a small gradient with a few distinct colors.
func testImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / max(w-1, 1)), uint8(y * 255 / max(h-1, 1)), 128, 255})
		}
	}
	return img
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestImageRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.png")
	src := testImage(16, 8)
	writePNG(t, in, src)
	for _, typ := range []string{"u8", "[3]u8", "[4]u8", "f32"} {
		out := filepath.Join(dir, "out.png")
		a, impl := build(t, "image.read", map[string]any{"path": in}, "out p "+typ+" 128")
		got := drain(t, a, impl, a.Outputs[0].Type.Size*128)
		if len(got) != 1 {
			t.Fatalf("%s: %d firings, want 1 (count defaults to 1)", typ, len(got))
		}
		wa, wimpl := build(t, "image.write", map[string]any{"path": out, "width": 16}, "in p "+typ+" 128")
		start(t, wimpl)
		if err := fire(wa, wimpl, 0, [][]byte{got[0]}, nil); err != nil {
			t.Fatal(err)
		}
		stop(t, wimpl)
		back := readPNG(t, out)
		if back.Bounds().Dx() != 16 || back.Bounds().Dy() != 8 {
			t.Fatalf("%s: written image is %v, want 16×8", typ, back.Bounds())
		}
		for y := 0; y < 8; y++ {
			for x := 0; x < 16; x++ {
				var want, have color.Color = src.At(x, y), back.At(x, y)
				if typ == "u8" || typ == "f32" {
					want = color.GrayModel.Convert(want)
					have = color.GrayModel.Convert(have)
				}
				r1, g1, b1, a1 := want.RGBA()
				r2, g2, b2, a2 := have.RGBA()
				if r1>>8 != r2>>8 || g1>>8 != g2>>8 || b1>>8 != b2>>8 || a1>>8 != a2>>8 {
					t.Fatalf("%s: pixel (%d,%d) = %v, want %v", typ, x, y, have, want)
				}
			}
		}
	}
	// u8 values are the gray conversion, row-major.
	a, impl := build(t, "image.read", map[string]any{"path": in, "count": 2}, "out p u8 128")
	got := drain(t, a, impl, 128)
	if len(got) != 2 {
		t.Fatalf("count 2: %d firings", len(got))
	}
	if want := color.GrayModel.Convert(src.At(5, 3)).(color.Gray).Y; got[1][3*16+5] != want {
		t.Fatalf("pixel (5,3) = %d, want %d", got[1][3*16+5], want)
	}
}

func TestImageWrite(t *testing.T) {
	dir := t.TempDir()
	// One file per firing with a %d verb; square default width; JPEG.
	a, impl := build(t, "image.write", map[string]any{"path": filepath.Join(dir, "f%03d.png")}, "in p u8 16")
	start(t, impl)
	for k := int64(0); k < 2; k++ {
		if err := fire(a, impl, k, [][]byte{make([]byte, 16)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	stop(t, impl)
	for _, n := range []string{"f000.png", "f001.png"} {
		if img := readPNG(t, filepath.Join(dir, n)); img.Bounds().Dx() != 4 {
			t.Fatalf("%s is %v, want 4×4", n, img.Bounds())
		}
	}
	jp := filepath.Join(dir, "x.jpg")
	a, impl = build(t, "image.write", map[string]any{"path": jp, "quality": 80}, "in p [4]u8 64")
	start(t, impl)
	if err := fire(a, impl, 0, [][]byte{make([]byte, 256)}, nil); err != nil {
		t.Fatal(err)
	}
	stop(t, impl)
	f, _ := os.Open(jp)
	defer f.Close()
	if _, format, err := image.DecodeConfig(f); err != nil || format != "jpeg" {
		t.Fatalf("x.jpg: %v %v", format, err)
	}
}

func TestImageErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.png")
	writePNG(t, in, testImage(16, 8))
	wantErr(t, buildErr(t, "image.read", map[string]any{"path": in}, "out p u8 100"),
		"16×8 = 128 pixels", "port a.p has rate 100", "expected rate 128")
	wantErr(t, buildErr(t, "image.read", map[string]any{"path": in}, "out p i32 128"), "i32 is not supported", "u8, [3]u8, [4]u8, f32")
	wantErr(t, buildErr(t, "image.write", map[string]any{"path": "x.png"}, "in p u8 10"), "width", "not a square")
	wantErr(t, buildErr(t, "image.write", map[string]any{"path": "x.png", "width": 3}, "in p u8 10"), "width\" is 3", "rate 10")
	wantErr(t, buildErr(t, "image.write", map[string]any{"path": "x.gif"}, "in p u8 16"), ".gif", "expected .png")
	notImage := filepath.Join(dir, "x.png")
	os.WriteFile(notImage, []byte("hello"), 0o644)
	wantErr(t, buildErr(t, "image.read", map[string]any{"path": notImage}, "out p u8 16"), notImage, "PNG or JPEG")
}

// withStdio replaces os.Stdin and os.Stdout for the duration of fn.
func withStdio(t *testing.T, stdin string, fn func()) string {
	t.Helper()
	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.WriteFile(inPath, []byte(stdin), 0o644)
	in, _ := os.Open(inPath)
	out, _ := os.Create(outPath)
	oldIn, oldOut := os.Stdin, os.Stdout
	os.Stdin, os.Stdout = in, out
	defer func() {
		os.Stdin, os.Stdout = oldIn, oldOut
		in.Close()
		out.Close()
	}()
	fn()
	data, _ := os.ReadFile(outPath)
	return string(data)
}

func TestStdio(t *testing.T) {
	var got [][]byte
	out := withStdio(t, "1\n2\n3\n", func() {
		a, impl := build(t, "stdin", nil, "out y f64 2")
		got = drain(t, a, impl, 16)
		a, impl = build(t, "stdout", nil, "in x f64 2")
		start(t, impl)
		for k, b := range got {
			if err := fire(a, impl, int64(k), [][]byte{b}, nil); err != nil {
				t.Fatal(err)
			}
		}
		stop(t, impl)
	})
	if out != "1\n2\n3\n0\n" {
		t.Fatalf("stdin → stdout (text) = %q, want 1 2 3 and a zero of padding", out)
	}
	raw := string(bytesOf([]int16{5, -6, 7}))
	out = withStdio(t, raw, func() {
		a, impl := build(t, "stdin", map[string]any{"format": "binary"}, "out y i16 3")
		got = drain(t, a, impl, 6)
		a, impl = build(t, "stdout", map[string]any{"format": "binary"}, "in x i16 3")
		start(t, impl)
		if err := fire(a, impl, 0, [][]byte{got[0]}, nil); err != nil {
			t.Fatal(err)
		}
		stop(t, impl)
	})
	if out != raw {
		t.Fatalf("binary stdin → stdout = %q, want %q", out, raw)
	}
	wantErr(t, buildErr(t, "stdout", map[string]any{"format": "hex"}, "in x f32 1"), "text or binary", "hex")
}

func TestFactoryErrors(t *testing.T) {
	for _, tc := range []struct {
		use    string
		params map[string]any
		ports  []string
		want   []string
	}{
		{"fir", map[string]any{"taps": []any{1}}, []string{"in x f32 4"}, []string{"expected 1 output port, found 0"}},
		{"fir", map[string]any{"taps": []any{1}}, []string{"in x f32 4", "in w f32 4", "out y f32 4"}, []string{"expected 1 input port, found 2 (x, w)"}},
		{"fir", map[string]any{"taps": []any{1}}, []string{"in x i32 4", "out y i32 4"}, []string{"port a.x", "i32 is not supported", "f32, f64"}},
		{"fir", map[string]any{"taps": []any{1}}, []string{"in x f32 4", "out y f64 4"}, []string{"port a.y has token type f64", "a.x has f32"}},
		{"fir", map[string]any{"taps": []any{1}}, []string{"in x f32 4", "out y f32 8"}, []string{"a.x has rate 4", "a.y has rate 8", "equal rates"}},
		{"fir", nil, []string{"in x f32 4", "out y f32 4"}, []string{"\"taps\" is missing"}},
		{"fir", map[string]any{"taps": []any{1}, "tapz": 2}, []string{"in x f32 4", "out y f32 4"}, []string{"unknown parameter \"tapz\""}},
		{"fir", map[string]any{"cutoff": 0.7}, []string{"in x f32 4", "out y f32 4"}, []string{"0 < cutoff < 0.5", "0.7"}},
		{"decimate", map[string]any{"factor": 4}, []string{"in x f32 12", "out y f32 4"}, []string{"a.x has rate 12", "a.y has rate 4", "factor (4) × output rate", "a.y rate 3"}},
		{"decimate", nil, []string{"in x f32 12", "out y f32 4"}, []string{"\"factor\" is missing"}},
		{"decimate", map[string]any{"factor": 2, "taps": []any{1, 1}}, []string{"in x c64 4", "out y c64 2"}, []string{"taps need f32 or f64"}},
		{"interpolate", map[string]any{"factor": 2}, []string{"in x f32 4", "out y f32 4"}, []string{"output rate = factor (2) × input rate", "a.y rate 8"}},
		{"interpolate", map[string]any{"factor": 2, "mode": "linear"}, []string{"in x f32 4", "out y f32 8"}, []string{"zero or hold", "linear"}},
		{"fft", nil, []string{"in x c64 100", "out y c64 100"}, []string{"size (the rate of port a.x) is 100", "power of two", "e.g. 64"}},
		{"fft", map[string]any{"size": 64}, []string{"in x c64 96", "out y c64 96"}, []string{"rate 96", "multiple of the transform size 64"}},
		{"fft", nil, []string{"in x f32 64", "out y f32 64"}, []string{"port a.y", "f32 is not supported", "expected c64"}},
		{"fft", nil, []string{"in x c64 [32,32]", "out y c64 [32,32]"}, []string{"fixed (SDF) rate"}},
		{"ifft", nil, []string{"in x f32 64", "out y c64 64"}, []string{"port a.x", "expected c64"}},
		{"scale", nil, []string{"in x u8 4", "out y u8 4"}, []string{"u8 is not supported"}},
		{"add", nil, []string{"in x f32 4", "out y f32 4"}, []string{"no parameter \"value\""}},
		{"add", map[string]any{"value": 1}, []string{"in x f32 4", "in y f32 4", "out z f32 4"}, []string{"both given"}},
		{"add", nil, []string{"in x f32 4", "in y f32 2", "out z f32 4"}, []string{"a.y has rate 2"}},
		{"saxpy", nil, []string{"in x f32 4", "in y f64 4", "out z f32 4"}, []string{"a.y has token type f64"}},
		{"threshold", nil, []string{"in x c64 4", "out y c64 4"}, []string{"c64 is not supported"}},
		{"gen.ramp", nil, []string{"in x f32 4", "out y f32 4"}, []string{"expected 0 input ports, found 1 (x)"}},
		{"gen.ramp", nil, []string{"out y bytes4 4"}, []string{"bytes4 is not supported"}},
		{"gen.random", map[string]any{"min": 2, "max": 1}, []string{"out y f32 4"}, []string{"min < max"}},
		{"gen.const", map[string]any{"count": -1}, []string{"out y f32 4"}, []string{"count", "found -1"}},
		{"gen.const", map[string]any{"value": "x"}, []string{"out y f32 4"}, []string{"parameter \"value\": expected a number"}},
		{"gen.sine", nil, []string{"out y i32 4"}, []string{"i32 is not supported", "f32, f64, c64"}},
		{"file.read", nil, []string{"out y f32 4"}, []string{"\"path\" is missing"}},
		{"file.read", map[string]any{"path": "x"}, []string{"out y f32 dynamic"}, []string{"a.y", "dynamic", "expected a fixed or cyclo-static rate"}},
		{"file.write", map[string]any{"path": "x"}, []string{"out y f32 4"}, []string{"expected 1 input port, found 0"}},
		{"magnitude", nil, []string{"in x c64 4", "out y c64 4"}, []string{"port a.y", "expected f32"}},
		{"limit", nil, []string{"in x f32 4", "out y f32 4"}, []string{"\"count\" is missing"}},
		{"nope", nil, nil, []string{"unknown built-in actor \"nope\""}},
	} {
		err := buildErr(t, tc.use, tc.params, tc.ports...)
		if err == nil {
			t.Errorf("%s %v %v: no error, want %q", tc.use, tc.params, tc.ports, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: error %q does not contain %q", tc.use, tc.ports, err, w)
			}
		}
	}
}

// TestImageWriteCheckpoint: image.write's snapshot holds its last frame,
// which a restored sink writes at Stop, as the stopped one would have.
func TestImageWriteCheckpoint(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "last.png")
	frame := make([]byte, 16)
	for i := range frame {
		frame[i] = byte(16 * i)
	}
	a, impl := build(t, "image.write", map[string]any{"path": path}, "in p u8 16")
	start(t, impl)
	if err := fire(a, impl, 0, [][]byte{frame}, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := impl.(runtime.Checkpointer).Snapshot()
	if err != nil || len(snap) != 16 {
		t.Fatalf("snapshot: %d bytes, %v: expected the 16-pixel frame", len(snap), err)
	}
	_, impl2 := build(t, "image.write", map[string]any{"path": path}, "in p u8 16")
	if err := impl2.(runtime.Checkpointer).Restore(snap); err != nil {
		t.Fatal(err)
	}
	start(t, impl2)
	stop(t, impl2)
	img := readPNG(t, path)
	if g := img.(*image.Gray); !bytes.Equal(g.Pix, frame) {
		t.Fatalf("the restored sink wrote %v: expected %v", g.Pix, frame)
	}
}
