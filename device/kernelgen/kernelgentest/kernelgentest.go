// Package kernelgentest holds what the kernel-actor tests of every backend
// share: the "worker" actor of the ETH paper's Listing 2 and its Go model.
package kernelgentest

import "github.com/sluicehq/sluice/graph"

// Worker returns the "worker" actor of Listing 2, made concrete: per firing
// it reads 3 f32 tokens on in1 and writes 12 f32 tokens on out1 in 6 blocks
// of 2; a second output, owner, records (an i32 per block) which work-item
// computed each block.
func Worker() *graph.Actor {
	g := graph.New("listing2")
	a := g.AddActor("worker")
	f32 := graph.MustTokenType("f32")
	a.AddPort("in1", graph.In, f32, graph.SDF(3), "")
	a.AddPort("out1", graph.Out, f32, graph.SDF(12), "").Block = 2
	a.AddPort("owner", graph.Out, graph.MustTokenType("i32"), graph.SDF(6), "").Block = 1
	return a
}

// Reference is the Go model of one invocation of Worker's FIRE: g firings
// of inputs in, out1's tokens.
func Reference(in []float32, g int) (out []float32) {
	for f := range g {
		scale, shift, tilt := in[3*f], in[3*f+1], in[3*f+2]
		for blk := range 6 {
			for j := range 2 {
				out = append(out, scale*float32(blk*2+j)+shift-tilt*float32(j))
			}
		}
	}
	return out
}
