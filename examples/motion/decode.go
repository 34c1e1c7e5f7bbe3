package motion

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
)

// DecodeGray decodes a JPEG image into a W×H grey frame with the decoder
// auto stands for here: TurboJPEG where the library loads, else image/jpeg.
func DecodeGray(jpg []byte, out []uint8) error {
	return DecodeWith(DecoderAuto, jpg, out)
}

// DecodeWith decodes a JPEG image into a W×H grey frame with decoder d.
func DecodeWith(d Decoder, jpg []byte, out []uint8) error {
	if d.Resolve() == DecoderTurbo {
		return DecodeGrayTurbo(jpg, out)
	}
	return DecodeGrayGo(jpg, out)
}

// DecodeGrayGo decodes a JPEG image with image/jpeg into a W×H grey frame:
// a grey image's pixels, a colour (YCbCr) image's luma plane, or for other
// colour models (CMYK) image/color's grey conversion.
func DecodeGrayGo(jpg []byte, out []uint8) error {
	// The header first: image/jpeg allocates the size a header claims, so
	// a damaged or hostile frame claiming 65535×65535 would take gigabytes.
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(jpg))
	if err != nil {
		return err
	}
	if cfg.Width != W || cfg.Height != H {
		return fmt.Errorf("a %d×%d JPEG image: expected %d×%d", cfg.Width, cfg.Height, W, H)
	}
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		return err
	}
	b := img.Bounds()
	if b.Dx() != W || b.Dy() != H {
		return fmt.Errorf("a %d×%d JPEG image: expected %d×%d", b.Dx(), b.Dy(), W, H)
	}
	out = out[:Pixels]
	switch m := img.(type) {
	case *image.Gray:
		for y := 0; y < H; y++ {
			copy(out[y*W:(y+1)*W], m.Pix[y*m.Stride:])
		}
	case *image.YCbCr:
		for y := 0; y < H; y++ {
			copy(out[y*W:(y+1)*W], m.Y[y*m.YStride:])
		}
	default:
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				out[y*W+x] = color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
			}
		}
	}
	return nil
}
