// Code generated from the OpenCL 3.0 headers' error codes; DO NOT EDIT.

package cl

// OpenCL status codes as Go errors. Compare with errors.Is:
//
//	if errors.Is(err, cl.ErrOutOfResources) { ... }
const (
	// ErrDeviceNotFound is CL_DEVICE_NOT_FOUND (-1).
	ErrDeviceNotFound Status = -1
	// ErrDeviceNotAvailable is CL_DEVICE_NOT_AVAILABLE (-2).
	ErrDeviceNotAvailable Status = -2
	// ErrCompilerNotAvailable is CL_COMPILER_NOT_AVAILABLE (-3).
	ErrCompilerNotAvailable Status = -3
	// ErrMemObjectAllocationFailure is CL_MEM_OBJECT_ALLOCATION_FAILURE (-4).
	ErrMemObjectAllocationFailure Status = -4
	// ErrOutOfResources is CL_OUT_OF_RESOURCES (-5).
	ErrOutOfResources Status = -5
	// ErrOutOfHostMemory is CL_OUT_OF_HOST_MEMORY (-6).
	ErrOutOfHostMemory Status = -6
	// ErrProfilingInfoNotAvailable is CL_PROFILING_INFO_NOT_AVAILABLE (-7).
	ErrProfilingInfoNotAvailable Status = -7
	// ErrMemCopyOverlap is CL_MEM_COPY_OVERLAP (-8).
	ErrMemCopyOverlap Status = -8
	// ErrImageFormatMismatch is CL_IMAGE_FORMAT_MISMATCH (-9).
	ErrImageFormatMismatch Status = -9
	// ErrImageFormatNotSupported is CL_IMAGE_FORMAT_NOT_SUPPORTED (-10).
	ErrImageFormatNotSupported Status = -10
	// ErrBuildProgramFailure is CL_BUILD_PROGRAM_FAILURE (-11).
	ErrBuildProgramFailure Status = -11
	// ErrMapFailure is CL_MAP_FAILURE (-12).
	ErrMapFailure Status = -12
	// ErrMisalignedSubBufferOffset is CL_MISALIGNED_SUB_BUFFER_OFFSET (-13).
	ErrMisalignedSubBufferOffset Status = -13
	// ErrExecStatusErrorForEventsInWaitList is CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14).
	ErrExecStatusErrorForEventsInWaitList Status = -14
	// ErrCompileProgramFailure is CL_COMPILE_PROGRAM_FAILURE (-15).
	ErrCompileProgramFailure Status = -15
	// ErrLinkerNotAvailable is CL_LINKER_NOT_AVAILABLE (-16).
	ErrLinkerNotAvailable Status = -16
	// ErrLinkProgramFailure is CL_LINK_PROGRAM_FAILURE (-17).
	ErrLinkProgramFailure Status = -17
	// ErrDevicePartitionFailed is CL_DEVICE_PARTITION_FAILED (-18).
	ErrDevicePartitionFailed Status = -18
	// ErrKernelArgInfoNotAvailable is CL_KERNEL_ARG_INFO_NOT_AVAILABLE (-19).
	ErrKernelArgInfoNotAvailable Status = -19
	// ErrInvalidValue is CL_INVALID_VALUE (-30).
	ErrInvalidValue Status = -30
	// ErrInvalidDeviceType is CL_INVALID_DEVICE_TYPE (-31).
	ErrInvalidDeviceType Status = -31
	// ErrInvalidPlatform is CL_INVALID_PLATFORM (-32).
	ErrInvalidPlatform Status = -32
	// ErrInvalidDevice is CL_INVALID_DEVICE (-33).
	ErrInvalidDevice Status = -33
	// ErrInvalidContext is CL_INVALID_CONTEXT (-34).
	ErrInvalidContext Status = -34
	// ErrInvalidQueueProperties is CL_INVALID_QUEUE_PROPERTIES (-35).
	ErrInvalidQueueProperties Status = -35
	// ErrInvalidCommandQueue is CL_INVALID_COMMAND_QUEUE (-36).
	ErrInvalidCommandQueue Status = -36
	// ErrInvalidHostPtr is CL_INVALID_HOST_PTR (-37).
	ErrInvalidHostPtr Status = -37
	// ErrInvalidMemObject is CL_INVALID_MEM_OBJECT (-38).
	ErrInvalidMemObject Status = -38
	// ErrInvalidImageFormatDescriptor is CL_INVALID_IMAGE_FORMAT_DESCRIPTOR (-39).
	ErrInvalidImageFormatDescriptor Status = -39
	// ErrInvalidImageSize is CL_INVALID_IMAGE_SIZE (-40).
	ErrInvalidImageSize Status = -40
	// ErrInvalidSampler is CL_INVALID_SAMPLER (-41).
	ErrInvalidSampler Status = -41
	// ErrInvalidBinary is CL_INVALID_BINARY (-42).
	ErrInvalidBinary Status = -42
	// ErrInvalidBuildOptions is CL_INVALID_BUILD_OPTIONS (-43).
	ErrInvalidBuildOptions Status = -43
	// ErrInvalidProgram is CL_INVALID_PROGRAM (-44).
	ErrInvalidProgram Status = -44
	// ErrInvalidProgramExecutable is CL_INVALID_PROGRAM_EXECUTABLE (-45).
	ErrInvalidProgramExecutable Status = -45
	// ErrInvalidKernelName is CL_INVALID_KERNEL_NAME (-46).
	ErrInvalidKernelName Status = -46
	// ErrInvalidKernelDefinition is CL_INVALID_KERNEL_DEFINITION (-47).
	ErrInvalidKernelDefinition Status = -47
	// ErrInvalidKernel is CL_INVALID_KERNEL (-48).
	ErrInvalidKernel Status = -48
	// ErrInvalidArgIndex is CL_INVALID_ARG_INDEX (-49).
	ErrInvalidArgIndex Status = -49
	// ErrInvalidArgValue is CL_INVALID_ARG_VALUE (-50).
	ErrInvalidArgValue Status = -50
	// ErrInvalidArgSize is CL_INVALID_ARG_SIZE (-51).
	ErrInvalidArgSize Status = -51
	// ErrInvalidKernelArgs is CL_INVALID_KERNEL_ARGS (-52).
	ErrInvalidKernelArgs Status = -52
	// ErrInvalidWorkDimension is CL_INVALID_WORK_DIMENSION (-53).
	ErrInvalidWorkDimension Status = -53
	// ErrInvalidWorkGroupSize is CL_INVALID_WORK_GROUP_SIZE (-54).
	ErrInvalidWorkGroupSize Status = -54
	// ErrInvalidWorkItemSize is CL_INVALID_WORK_ITEM_SIZE (-55).
	ErrInvalidWorkItemSize Status = -55
	// ErrInvalidGlobalOffset is CL_INVALID_GLOBAL_OFFSET (-56).
	ErrInvalidGlobalOffset Status = -56
	// ErrInvalidEventWaitList is CL_INVALID_EVENT_WAIT_LIST (-57).
	ErrInvalidEventWaitList Status = -57
	// ErrInvalidEvent is CL_INVALID_EVENT (-58).
	ErrInvalidEvent Status = -58
	// ErrInvalidOperation is CL_INVALID_OPERATION (-59).
	ErrInvalidOperation Status = -59
	// ErrInvalidGLObject is CL_INVALID_GL_OBJECT (-60).
	ErrInvalidGLObject Status = -60
	// ErrInvalidBufferSize is CL_INVALID_BUFFER_SIZE (-61).
	ErrInvalidBufferSize Status = -61
	// ErrInvalidMipLevel is CL_INVALID_MIP_LEVEL (-62).
	ErrInvalidMipLevel Status = -62
	// ErrInvalidGlobalWorkSize is CL_INVALID_GLOBAL_WORK_SIZE (-63).
	ErrInvalidGlobalWorkSize Status = -63
	// ErrInvalidProperty is CL_INVALID_PROPERTY (-64).
	ErrInvalidProperty Status = -64
	// ErrInvalidImageDescriptor is CL_INVALID_IMAGE_DESCRIPTOR (-65).
	ErrInvalidImageDescriptor Status = -65
	// ErrInvalidCompilerOptions is CL_INVALID_COMPILER_OPTIONS (-66).
	ErrInvalidCompilerOptions Status = -66
	// ErrInvalidLinkerOptions is CL_INVALID_LINKER_OPTIONS (-67).
	ErrInvalidLinkerOptions Status = -67
	// ErrInvalidDevicePartitionCount is CL_INVALID_DEVICE_PARTITION_COUNT (-68).
	ErrInvalidDevicePartitionCount Status = -68
	// ErrInvalidPipeSize is CL_INVALID_PIPE_SIZE (-69).
	ErrInvalidPipeSize Status = -69
	// ErrInvalidDeviceQueue is CL_INVALID_DEVICE_QUEUE (-70).
	ErrInvalidDeviceQueue Status = -70
	// ErrInvalidSpecID is CL_INVALID_SPEC_ID (-71).
	ErrInvalidSpecID Status = -71
	// ErrMaxSizeRestrictionExceeded is CL_MAX_SIZE_RESTRICTION_EXCEEDED (-72).
	ErrMaxSizeRestrictionExceeded Status = -72
	// ErrPlatformNotFoundKHR is CL_PLATFORM_NOT_FOUND_KHR (-1001).
	ErrPlatformNotFoundKHR Status = -1001
)

var statusNames = map[Status]string{
	0:     "CL_SUCCESS",
	-1:    "CL_DEVICE_NOT_FOUND",
	-2:    "CL_DEVICE_NOT_AVAILABLE",
	-3:    "CL_COMPILER_NOT_AVAILABLE",
	-4:    "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	-5:    "CL_OUT_OF_RESOURCES",
	-6:    "CL_OUT_OF_HOST_MEMORY",
	-7:    "CL_PROFILING_INFO_NOT_AVAILABLE",
	-8:    "CL_MEM_COPY_OVERLAP",
	-9:    "CL_IMAGE_FORMAT_MISMATCH",
	-10:   "CL_IMAGE_FORMAT_NOT_SUPPORTED",
	-11:   "CL_BUILD_PROGRAM_FAILURE",
	-12:   "CL_MAP_FAILURE",
	-13:   "CL_MISALIGNED_SUB_BUFFER_OFFSET",
	-14:   "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	-15:   "CL_COMPILE_PROGRAM_FAILURE",
	-16:   "CL_LINKER_NOT_AVAILABLE",
	-17:   "CL_LINK_PROGRAM_FAILURE",
	-18:   "CL_DEVICE_PARTITION_FAILED",
	-19:   "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
	-30:   "CL_INVALID_VALUE",
	-31:   "CL_INVALID_DEVICE_TYPE",
	-32:   "CL_INVALID_PLATFORM",
	-33:   "CL_INVALID_DEVICE",
	-34:   "CL_INVALID_CONTEXT",
	-35:   "CL_INVALID_QUEUE_PROPERTIES",
	-36:   "CL_INVALID_COMMAND_QUEUE",
	-37:   "CL_INVALID_HOST_PTR",
	-38:   "CL_INVALID_MEM_OBJECT",
	-39:   "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
	-40:   "CL_INVALID_IMAGE_SIZE",
	-41:   "CL_INVALID_SAMPLER",
	-42:   "CL_INVALID_BINARY",
	-43:   "CL_INVALID_BUILD_OPTIONS",
	-44:   "CL_INVALID_PROGRAM",
	-45:   "CL_INVALID_PROGRAM_EXECUTABLE",
	-46:   "CL_INVALID_KERNEL_NAME",
	-47:   "CL_INVALID_KERNEL_DEFINITION",
	-48:   "CL_INVALID_KERNEL",
	-49:   "CL_INVALID_ARG_INDEX",
	-50:   "CL_INVALID_ARG_VALUE",
	-51:   "CL_INVALID_ARG_SIZE",
	-52:   "CL_INVALID_KERNEL_ARGS",
	-53:   "CL_INVALID_WORK_DIMENSION",
	-54:   "CL_INVALID_WORK_GROUP_SIZE",
	-55:   "CL_INVALID_WORK_ITEM_SIZE",
	-56:   "CL_INVALID_GLOBAL_OFFSET",
	-57:   "CL_INVALID_EVENT_WAIT_LIST",
	-58:   "CL_INVALID_EVENT",
	-59:   "CL_INVALID_OPERATION",
	-60:   "CL_INVALID_GL_OBJECT",
	-61:   "CL_INVALID_BUFFER_SIZE",
	-62:   "CL_INVALID_MIP_LEVEL",
	-63:   "CL_INVALID_GLOBAL_WORK_SIZE",
	-64:   "CL_INVALID_PROPERTY",
	-65:   "CL_INVALID_IMAGE_DESCRIPTOR",
	-66:   "CL_INVALID_COMPILER_OPTIONS",
	-67:   "CL_INVALID_LINKER_OPTIONS",
	-68:   "CL_INVALID_DEVICE_PARTITION_COUNT",
	-69:   "CL_INVALID_PIPE_SIZE",
	-70:   "CL_INVALID_DEVICE_QUEUE",
	-71:   "CL_INVALID_SPEC_ID",
	-72:   "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
	-1001: "CL_PLATFORM_NOT_FOUND_KHR",
}
