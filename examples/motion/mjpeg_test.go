package motion

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/textproto"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// testFrames returns n JPEG frames of the default scene.
func testFrames(t testing.TB, n int) [][]byte {
	t.Helper()
	s := NewScene()
	frame := make([]uint8, Pixels)
	var out [][]byte
	for i := 0; i < n; i++ {
		s.Render(i, frame)
		jpg, err := EncodeGray(frame, ClipQuality)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, jpg)
	}
	return out
}

func readAll(t *testing.T, r FrameReader) [][]byte {
	t.Helper()
	var got [][]byte
	for {
		b, err := r.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
}

func sameFrames(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d frames, expected %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d: read %d bytes differing from the %d written", i, len(got[i]), len(want[i]))
		}
	}
}

// An AVI written by AVIWriter reads back frame for frame, with odd-sized
// frames padded, and its header carries the frame count.
func TestAVIRoundTrip(t *testing.T) {
	frames := testFrames(t, 5)
	frames[2] = append(append([]byte(nil), frames[2]...), 0) // an odd size
	if len(frames[2])%2 == 0 {
		frames[2] = append(frames[2], 0)
	}
	path := filepath.Join(t.TempDir(), "clip.avi")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	aw, err := NewAVIWriter(f, W, H, 25)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range frames {
		if err := aw.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := aw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, _ := os.ReadFile(path)
	if got := int(data[aviTotalFramesOff]); got != len(frames) {
		t.Errorf("avih total frames %d, expected %d", got, len(frames))
	}
	if got := int(uint32(data[4]) | uint32(data[5])<<8 | uint32(data[6])<<16 | uint32(data[7])<<24); got != len(data)-8 {
		t.Errorf("RIFF size %d, expected %d", got, len(data)-8)
	}
	r, c, err := OpenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sameFrames(t, readAll(t, r), frames)
}

// A multipart/x-mixed-replace stream gives its JPEG parts, with or without
// the HTTP response's headers in front, with and without Content-Length.
func TestMultipartStream(t *testing.T) {
	frames := testFrames(t, 4)
	for _, c := range []struct {
		name   string
		header bool
		length bool
	}{{"bare", false, true}, {"http-header", true, true}, {"no-length", false, false}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			mw := multipart.NewWriter(&b)
			if c.header {
				b.Reset()
				fmt.Fprintf(&b, "HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=%s\r\n\r\n", mw.Boundary())
			}
			for _, f := range frames {
				h := textproto.MIMEHeader{"Content-Type": {"image/jpeg"}}
				if c.length {
					h.Set("Content-Length", fmt.Sprint(len(f)))
				}
				w, err := mw.CreatePart(h)
				if err != nil {
					t.Fatal(err)
				}
				w.Write(f)
			}
			mw.Close()
			r, err := NewStream(&b, c.name)
			if err != nil {
				t.Fatal(err)
			}
			sameFrames(t, readAll(t, r), frames)
		})
	}
}

// Concatenated JPEG images (ffmpeg's -f mjpeg) split at their EOI markers.
func TestRawStream(t *testing.T) {
	frames := testFrames(t, 3)
	r, err := NewStream(bytes.NewReader(bytes.Join(frames, nil)), "raw")
	if err != nil {
		t.Fatal(err)
	}
	sameFrames(t, readAll(t, r), frames)
}

// Errors name what was expected: a file in no known format, a truncated
// AVI, a frame of the wrong size.
func TestStreamErrors(t *testing.T) {
	if _, err := NewStream(bytes.NewReader([]byte("hello world\n")), "x.txt"); err == nil {
		t.Error("text file: expected an error")
	} else {
		t.Log(err)
	}
	path, err := clipPath()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	r, err := NewStream(bytes.NewReader(data[:len(data)/2]), "cut.avi")
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for last == nil {
		_, last = r.Next()
	}
	if last == io.EOF {
		t.Error("truncated AVI: expected an error, got a clean end")
	} else {
		t.Log(last)
	}
	img := image.NewGray(image.Rect(0, 0, 64, 48))
	var b bytes.Buffer
	jpeg.Encode(&b, img, nil)
	for _, d := range decodersHere(t) {
		if err := DecodeWith(d, b.Bytes(), make([]uint8, Pixels)); err == nil || !strings.Contains(err.Error(), "a 64×48 JPEG image: expected 320×240") {
			t.Errorf("%s, a 64×48 frame: %v: expected an error naming both sizes", d, err)
		}
		if err := DecodeWith(d, b.Bytes()[:b.Len()/2], make([]uint8, Pixels)); err == nil {
			t.Errorf("%s, a truncated JPEG: expected an error", d)
		}
	}
}

// decodersHere lists the decoders this machine has: image/jpeg, and
// TurboJPEG where the library loads (a failure when it does not and
// SLUICE_REQUIRE_TURBOJPEG=1).
func decodersHere(t testing.TB) []Decoder {
	if err := TurboJPEG(); err != nil {
		if os.Getenv("SLUICE_REQUIRE_TURBOJPEG") == "1" {
			t.Fatalf("SLUICE_REQUIRE_TURBOJPEG=1: %v", err)
		}
		t.Logf("TurboJPEG not tested: %v", err)
		return []Decoder{DecoderGo}
	}
	return []Decoder{DecoderGo, DecoderTurbo}
}

// DecodeGrayGo gives image/jpeg's pixels for a grey JPEG and its luma
// plane for a colour one.
func TestDecodeGray(t *testing.T) {
	jpg := testFrames(t, 1)[0]
	got := make([]uint8, Pixels)
	if err := DecodeGrayGo(jpg, got); err != nil {
		t.Fatal(err)
	}
	ref, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if want := ref.(*image.Gray).GrayAt(i%W, i/W).Y; got[i] != want {
			t.Fatalf("pixel %d: %d, image/jpeg %d", i, got[i], want)
		}
	}
	rgb := image.NewRGBA(image.Rect(0, 0, W, H))
	for i := 0; i < Pixels; i++ {
		rgb.Set(i%W, i/W, color.RGBA{uint8(i), uint8(i / W), got[i], 255})
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, rgb, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	if err := DecodeGrayGo(b.Bytes(), got); err != nil {
		t.Fatal(err)
	}
	ycc, _ := jpeg.Decode(bytes.NewReader(b.Bytes()))
	for i := range got {
		if want := ycc.(*image.YCbCr).Y[(i/W)*ycc.(*image.YCbCr).YStride+i%W]; got[i] != want {
			t.Fatalf("colour pixel %d: %d, image/jpeg's luma %d", i, got[i], want)
		}
	}
}

// The default clip is the same file every time it is generated.
func TestClipReproducible(t *testing.T) {
	// The package's shared clip (written once for every test) against a
	// second generation.
	a, err := clipPath()
	if err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(t.TempDir(), "b.avi")
	if err := WriteClip(b); err != nil {
		t.Fatal(err)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("two generations of the clip differ")
	}
	r, c, err := OpenStream(a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n := len(readAll(t, r)); n != ClipFrames {
		t.Fatalf("clip has %d frames, expected %d", n, ClipFrames)
	}
	t.Logf("clip: %d bytes, %d frames", len(da), ClipFrames)
}

// TurboJPEG decodes every frame of the clip within one grey level of
// image/jpeg (the two libraries' inverse DCTs round differently), and a
// colour frame's luma likewise.
func TestDecodeGrayTurbo(t *testing.T) {
	if len(decodersHere(t)) < 2 {
		t.Skip("no TurboJPEG here (install libturbojpeg0)")
	}
	got, want := make([]uint8, Pixels), make([]uint8, Pixels)
	check := func(what string, jpg []byte) {
		t.Helper()
		if err := DecodeGrayTurbo(jpg, got); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := DecodeGrayGo(jpg, want); err != nil {
			t.Fatal(err)
		}
		differ := 0
		for i := range got {
			if d := int(got[i]) - int(want[i]); d > 1 || d < -1 {
				t.Fatalf("%s, pixel %d: TurboJPEG %d, image/jpeg %d: expected within one level", what, i, got[i], want[i])
			} else if d != 0 {
				differ++
			}
		}
		if differ > Pixels/20 {
			t.Fatalf("%s: %d pixels of %d differ by one level: expected at most 5 %%", what, differ, Pixels)
		}
	}
	for i, jpg := range testFrames(t, ClipFrames) {
		check(fmt.Sprintf("frame %d", i), jpg)
	}
	rgb := image.NewRGBA(image.Rect(0, 0, W, H))
	for i := range Pixels {
		rgb.Set(i%W, i/W, color.RGBA{uint8(i), uint8(i / W), want[i], 255})
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, rgb, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	check("a colour frame", b.Bytes())
}

// TestDecoderAttribute: the decode actor's attribute picks the decoder;
// a name it does not know is refused, naming the choices.
func TestDecoderAttribute(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Decoder
	}{{"", DecoderAuto}, {"auto", DecoderAuto}, {"go", DecoderGo}, {"turbojpeg", DecoderTurbo}} {
		if d, err := ParseDecoder(c.in); err != nil || d != c.want {
			t.Errorf("ParseDecoder(%q) = %q, %v: want %q", c.in, d, err, c.want)
		}
	}
	if _, err := ParseDecoder("nvjpeg"); err == nil || !strings.Contains(err.Error(), "expected auto, go or turbojpeg") {
		t.Errorf("ParseDecoder(nvjpeg): %v: want a refusal naming the choices", err)
	}
	if want := DecoderGo; TurboJPEG() == nil {
		want = DecoderTurbo
		if got := DecoderAuto.Resolve(); got != want {
			t.Errorf("auto with TurboJPEG loaded resolves to %q, want %q", got, want)
		}
	} else if got := DecoderAuto.Resolve(); got != want {
		t.Errorf("auto without TurboJPEG resolves to %q, want %q", got, want)
	}
}

// BenchmarkDecode times decoding one 320×240 grey frame of the default
// clip (the decoder actor's work) with each decoder this machine has.
func BenchmarkDecode(b *testing.B) {
	s := NewScene()
	frame := make([]uint8, Pixels)
	s.Render(10, frame)
	jpg, _ := EncodeGray(frame, ClipQuality)
	for _, d := range decodersHere(b) {
		b.Run(string(d), func(b *testing.B) {
			b.SetBytes(Pixels)
			for b.Loop() {
				if err := DecodeWith(d, jpg, frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzDecodeGray feeds any bytes, as a frame from a file would arrive, to
// both decoders: each decodes a 320×240 frame or returns an error; neither
// crashes, and TurboJPEG (a C library) writes no more than the frame.
func FuzzDecodeGray(f *testing.F) {
	for _, jpg := range testFrames(f, 2) {
		f.Add(jpg)
		f.Add(jpg[:len(jpg)/3])
	}
	f.Add([]byte{0xff, 0xd8, 0xff, 0xd9})
	decs := decodersHere(f)
	f.Fuzz(func(t *testing.T, jpg []byte) {
		for _, d := range decs {
			out := make([]uint8, Pixels+64)
			for i := Pixels; i < len(out); i++ {
				out[i] = 0xa5
			}
			_ = DecodeWith(d, jpg, out[:Pixels])
			for i := Pixels; i < len(out); i++ {
				if out[i] != 0xa5 {
					t.Fatalf("%s wrote past the frame, at byte %d", d, i)
				}
			}
		}
	})
}

// A frame whose header claims 65280×65280 is refused from its header by
// both decoders, without allocating the image it claims (4 GiB).
func TestDecodeHugeHeader(t *testing.T) {
	jpg := append([]byte(nil), testFrames(t, 1)[0]...)
	sof := bytes.Index(jpg, []byte{0xff, 0xc0})
	if sof < 0 {
		t.Fatal("no SOF0 marker in the test frame")
	}
	// SOF0: marker, length (2), precision (1), height (2), width (2)
	copy(jpg[sof+5:], []byte{0xff, 0x00, 0xff, 0x00})
	for _, d := range decodersHere(t) {
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		err := DecodeWith(d, jpg, make([]uint8, Pixels))
		goruntime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "a 65280×65280 JPEG image: expected 320×240") {
			t.Errorf("%s: %v: expected the header's size refused", d, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("%s: %d MiB allocated to refuse it: expected the header alone read", d, n>>20)
		}
	}
}
