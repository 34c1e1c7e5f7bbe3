package cuda_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/device"
	"github.com/sluicehq/sluice/device/cuda"
)

func TestProbeSaysWhy(t *testing.T) {
	err := cuda.Probe()
	if err == nil {
		t.Fatal("the probe must report why CUDA is unavailable in this build")
	}
	msg := err.Error()
	if !strings.Contains(msg, "libcuda.so.1 not found") && !strings.Contains(msg, "driver present") {
		t.Fatalf("unexpected reason %q", msg)
	}
	t.Log(msg)
	if _, err := device.Open(context.Background(), "cuda:0"); err == nil {
		t.Fatal("opening a CUDA device must fail in this build")
	}
}
