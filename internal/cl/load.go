// Package cl is a minimal binding to the OpenCL runtime (libOpenCL.so.1),
// loaded at run time with purego: no cgo, and a machine without OpenCL still
// builds and runs sluice (Load reports why OpenCL is unavailable).
//
// It covers what sluice's device layer needs: platforms and devices, one
// context per platform, in-order queues (with profiling), buffers (device,
// pinned host memory with map/unmap, sub-buffers), programs built from source
// (with the build log on failure), kernels and their arguments, NDRange
// launches, reads, writes and copies, and events (wait, status, profiling).
// Every object has a Release method; nothing is finalised behind your back.
//
// No purego callbacks are used: events are waited on or polled. Each call
// costs a few hundred nanoseconds, so call per launch or copy, never per token.
package cl

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// Library names tried by Load, in order.
var libraryNames = []string{"libOpenCL.so.1", "libOpenCL.so"}

type symbols struct {
	GetPlatformIDs, GetPlatformInfo, GetDeviceIDs, GetDeviceInfo      uintptr
	CreateContext, ReleaseContext, RetainContext                      uintptr
	CreateCommandQueue, CreateCommandQueueWithProperties              uintptr
	ReleaseCommandQueue, Flush, Finish                                uintptr
	CreateBuffer, CreateSubBuffer, ReleaseMemObject, GetMemObjectInfo uintptr
	CreateProgramWithSource, BuildProgram, GetProgramBuildInfo        uintptr
	GetProgramInfo, ReleaseProgram                                    uintptr
	CreateKernel, SetKernelArg, ReleaseKernel, GetKernelWorkGroupInfo uintptr
	EnqueueNDRangeKernel, EnqueueReadBuffer, EnqueueWriteBuffer       uintptr
	EnqueueCopyBuffer, EnqueueFillBuffer, EnqueueMapBuffer            uintptr
	EnqueueUnmapMemObject, EnqueueMarkerWithWaitList                  uintptr
	WaitForEvents, GetEventInfo, GetEventProfilingInfo, ReleaseEvent  uintptr
	RetainEvent                                                       uintptr
}

var (
	loadOnce sync.Once
	loadErr  error
	lib      string
	fn       symbols
)

// Load opens the OpenCL library once and resolves its functions. It returns
// an error wrapping ErrLibraryNotFound when no library can be opened, and
// describes a missing function otherwise. It is safe to call many times.
func Load() error {
	loadOnce.Do(func() { loadErr = load() })
	return loadErr
}

// Library returns the name of the loaded library ("" before Load succeeds).
func Library() string {
	if Load() != nil {
		return ""
	}
	return lib
}

func load() error {
	var h uintptr
	var errs []string
	for _, name := range libraryNames {
		var err error
		h, err = purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err == nil {
			lib = name
			break
		}
		errs = append(errs, err.Error())
	}
	if h == 0 {
		return fmt.Errorf("%w: %s (install an OpenCL ICD loader, e.g. ocl-icd-libopencl1, and a driver)", ErrLibraryNotFound, strings.Join(errs, "; "))
	}
	need := []struct {
		name     string
		p        *uintptr
		optional bool
	}{
		{"clGetPlatformIDs", &fn.GetPlatformIDs, false},
		{"clGetPlatformInfo", &fn.GetPlatformInfo, false},
		{"clGetDeviceIDs", &fn.GetDeviceIDs, false},
		{"clGetDeviceInfo", &fn.GetDeviceInfo, false},
		{"clCreateContext", &fn.CreateContext, false},
		{"clReleaseContext", &fn.ReleaseContext, false},
		{"clRetainContext", &fn.RetainContext, false},
		{"clCreateCommandQueue", &fn.CreateCommandQueue, true},
		{"clCreateCommandQueueWithProperties", &fn.CreateCommandQueueWithProperties, true},
		{"clReleaseCommandQueue", &fn.ReleaseCommandQueue, false},
		{"clFlush", &fn.Flush, false},
		{"clFinish", &fn.Finish, false},
		{"clCreateBuffer", &fn.CreateBuffer, false},
		{"clCreateSubBuffer", &fn.CreateSubBuffer, false},
		{"clReleaseMemObject", &fn.ReleaseMemObject, false},
		{"clGetMemObjectInfo", &fn.GetMemObjectInfo, false},
		{"clCreateProgramWithSource", &fn.CreateProgramWithSource, false},
		{"clBuildProgram", &fn.BuildProgram, false},
		{"clGetProgramBuildInfo", &fn.GetProgramBuildInfo, false},
		{"clGetProgramInfo", &fn.GetProgramInfo, false},
		{"clReleaseProgram", &fn.ReleaseProgram, false},
		{"clCreateKernel", &fn.CreateKernel, false},
		{"clSetKernelArg", &fn.SetKernelArg, false},
		{"clReleaseKernel", &fn.ReleaseKernel, false},
		{"clGetKernelWorkGroupInfo", &fn.GetKernelWorkGroupInfo, false},
		{"clEnqueueNDRangeKernel", &fn.EnqueueNDRangeKernel, false},
		{"clEnqueueReadBuffer", &fn.EnqueueReadBuffer, false},
		{"clEnqueueWriteBuffer", &fn.EnqueueWriteBuffer, false},
		{"clEnqueueCopyBuffer", &fn.EnqueueCopyBuffer, false},
		{"clEnqueueFillBuffer", &fn.EnqueueFillBuffer, true},
		{"clEnqueueMapBuffer", &fn.EnqueueMapBuffer, false},
		{"clEnqueueUnmapMemObject", &fn.EnqueueUnmapMemObject, false},
		{"clEnqueueMarkerWithWaitList", &fn.EnqueueMarkerWithWaitList, true},
		{"clWaitForEvents", &fn.WaitForEvents, false},
		{"clGetEventInfo", &fn.GetEventInfo, false},
		{"clGetEventProfilingInfo", &fn.GetEventProfilingInfo, false},
		{"clReleaseEvent", &fn.ReleaseEvent, false},
		{"clRetainEvent", &fn.RetainEvent, false},
	}
	var missing []string
	for _, s := range need {
		p, err := purego.Dlsym(h, s.name)
		if err != nil || p == 0 {
			if !s.optional {
				missing = append(missing, s.name)
			}
			continue
		}
		*s.p = p
	}
	if fn.CreateCommandQueue == 0 && fn.CreateCommandQueueWithProperties == 0 {
		missing = append(missing, "clCreateCommandQueue")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s: expected an OpenCL 1.2 or later ICD loader", lib, strings.Join(missing, ", "))
	}
	return nil
}

// call invokes an OpenCL function returning cl_int.
//
//go:uintptrescapes
func call(f uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(f, args...)
	return int32(r)
}

// callp invokes an OpenCL function returning a pointer or handle.
//
//go:uintptrescapes
func callp(f uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(f, args...)
	return r
}
