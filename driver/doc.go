// Package driver is the one sequence every front end of sluice runs a
// graph through — the command line (check, run, simulate, map), the
// workbench, the benchmarks and meta-pipelines — as explicit steps, each
// with one result type:
//
//	Load     a file (any kind sluice reads) → *Loaded: parsed, flow-models
//	         resolved by an injected resolver, every path read through a
//	         file root
//	Prepare  *Loaded → *Prepared: Go actors this program lacks reported,
//	         actors with only a cost made synthetic, the analysis gate
//	Place    *Prepared + a mapping → *Placed: the mapping checked against
//	         the graph and the machine it was made for, kernel-only and
//	         flow-model actors placed, element-wise chains fused
//	Map      *Prepared + a machine model → *Mapped: the best mapping found,
//	         made runnable and naming its machine
//	Predict  *Prepared + one machine model → *Prediction: the simulator
//	         under one policy (HEFT when no mapping, iterations until the
//	         steady state), so that a graph and a machine model give the
//	         same number wherever it is shown
//	Run      *Placed → *runtime.Stats
//
// Front ends keep their flags, rendering and transport; what a graph means
// and how it is checked, placed, predicted and run is decided here once.
package driver
