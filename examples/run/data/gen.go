//go:build ignore

// gen writes shapes.png, the input of examples/run/image-threshold.yaml:
// a 128×128 gray image with a gradient background, a bright disc and a dark
// square. Run it from the repository root:
//
//	go run examples/run/data/gen.go
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
)

func main() {
	const n = 128
	img := image.NewGray(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			v := 40 + (x+y)*60/(2*n) // background 40..100
			dx, dy := x-80, y-48
			if dx*dx+dy*dy < 30*30 {
				v = 200 + (x-50)/2 // bright disc
			}
			if x >= 16 && x < 56 && y >= 72 && y < 112 {
				v = 150 // mid-gray square
			}
			img.SetGray(x, y, color.Gray{Y: uint8(v)})
		}
	}
	f, err := os.Create("examples/run/data/shapes.png")
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
