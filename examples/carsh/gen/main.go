// Command gen writes the carsh example's input: a 512 x 512 f32 image (a
// rectangle, a disc and a fine texture), raw little-endian, to image.bin.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
)

func main() {
	out := flag.String("o", "image.bin", "output file")
	flag.Parse()
	const w = 512
	b := make([]byte, 4*w*w)
	for y := 0; y < w; y++ {
		for x := 0; x < w; x++ {
			var v float32
			if x >= 100 && x < 220 && y >= 150 && y < 300 {
				v = 1
			}
			if (x-350)*(x-350)+(y-350)*(y-350) < 80*80 {
				v += 0.5
			}
			v += 0.1 * float32((x*7+y*13)%5) / 4
			binary.LittleEndian.PutUint32(b[4*(y*w+x):], math.Float32bits(v))
		}
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
