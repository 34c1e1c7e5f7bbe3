// Package all registers every device backend built into sluice: import it
// for its side effect.
//
//	import _ "github.com/sluicehq/sluice/device/all"
package all

import (
	// The host CPU.
	_ "github.com/sluicehq/sluice/device/cpu"
	// CUDA (a probe in this build).
	_ "github.com/sluicehq/sluice/device/cuda"
	// OpenCL.
	_ "github.com/sluicehq/sluice/device/opencl"
)
