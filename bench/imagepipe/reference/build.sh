#!/bin/sh
# Builds the hand-written reference programs (imagepipe: one stream;
# streams: several streams, a host thread each) with nvcc (sm_90: H100), next
# to this script. Without nvcc, build the NVRTC-based driver instead:
#   CGO_ENABLED=0 go build -o imagepipe-nvrtc ./bench/imagepipe/reference
set -e
cd "$(dirname "$0")"
NVCC=${NVCC:-$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)}
if [ -z "$NVCC" ]; then
	echo "build.sh: nvcc not found (set NVCC); use the NVRTC driver (reference.go) instead" >&2
	exit 1
fi
"$NVCC" -O3 -arch=${ARCH:-sm_90} -o imagepipe imagepipe.cu
"$NVCC" -O3 -arch=${ARCH:-sm_90} -std=c++17 -Xcompiler -O3,-march=native -o streams streams.cu
echo "built $(pwd)/imagepipe and $(pwd)/streams with $NVCC"
