//go:build goexperiment.simd && amd64

package imagepipe

import (
	"reflect"
	"runtime"
	"simd/archsimd"
	"testing"
)

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

func TestPickSumsWidest(t *testing.T) {
	impls := sumsImpls()
	want := impls[len(impls)-1]
	if got := reflect.ValueOf(pickSums()).Pointer(); got != reflect.ValueOf(want.sums).Pointer() {
		t.Fatalf("pickSums chose %s, want %s (the widest this CPU runs)",
			runtime.FuncForPC(got).Name(), want.name)
	}
}
