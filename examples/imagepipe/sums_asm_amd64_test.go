//go:build !goexperiment.simd

package imagepipe

import (
	"reflect"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// sumsImpls returns the implementations of frameSums this CPU runs.
func sumsImpls() []namedSums {
	impls := []namedSums{{"swarSums", swarSums}}
	if cpu.X86.HasAVX2 {
		impls = append(impls, namedSums{"sumsAVX2", sumsAVX2})
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
