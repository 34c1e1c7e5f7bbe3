//go:build goexperiment.simd && amd64

package imagepipe

import "simd/archsimd"

// sumsImpls returns the implementations of frameSums this CPU runs.
func sumsImpls() []namedSums {
	impls := []namedSums{{"swarSums", swarSums}}
	if archsimd.X86.AVX2() {
		impls = append(impls, namedSums{"sumsAVX2", sumsAVX2})
	}
	if archsimd.X86.AVX512() {
		impls = append(impls, namedSums{"sumsAVX512", sumsAVX512})
	}
	return impls
}
