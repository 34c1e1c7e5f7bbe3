#!/bin/sh
# Times image stitching on a many-core machine (with a GPU where OpenCL has
# one): the sequential Go version and the graph on 1, 2, 4, 8 and 16 cores
# (taskset) on the first 6 rows of the seed's 42×59 grid of 1024×1024
# tiles, then the whole grid on 16 cores, on 16 cores with every FFT on
# the GPU through cuFFT, on 16 cores with PCIAM on the GPU
# (stitch-42x59-gpu.yaml), on 16 cores with the tiles' FFTs as the OpenCL
# kernel actor, and on 8 cores while time is left. Each run is one process
# and prints one JSON line (time, tiles/s, peak RSS, positions that differ
# from the known ones); GPU memory is sampled with nvidia-smi during the
# GPU runs. Runs in about 3 minutes; stops starting runs after 240 s. With
# a test binary as third argument it first runs the package's GPU tests
# (cuFFT and OpenCL against the Go FFT, the graph on each).
#
# Build on any machine with Go, from the repository root:
#
#   CGO_ENABLED=0 go build -o stitch-bench ./examples/stitch/bench
#   CGO_ENABLED=0 go test -c -o stitch.test ./examples/stitch
#
# and run, from the repository root:
#
#   sh examples/stitch/device.sh ./stitch-bench RESULTS_DIR ./stitch.test
#
# RESULTS_DIR/stitch.jsonl gets the JSON lines, RESULTS_DIR/stitch.log the
# rest, RESULTS_DIR/gpu-mem-*.csv the GPU memory samples (MiB),
# RESULTS_DIR/tests.txt the tests' output.
set -u
BIN=$(realpath "${1:?usage: device.sh STITCH_BENCH_BINARY RESULTS_DIR [STITCH_TEST_BINARY]}")
OUT=${2:?usage: device.sh STITCH_BENCH_BINARY RESULTS_DIR [STITCH_TEST_BINARY]}
TEST=${3:-}
mkdir -p "$OUT"
HERE=$(dirname "$0")
GRAPH=${STITCH_GRAPH:-$HERE/stitch-42x59.yaml} # STITCH_GRAPH=…/stitch.yaml: a quick dry run
[ -f "$GRAPH" ] || GRAPH=examples/stitch/stitch-42x59.yaml
[ -f "$GRAPH" ] || { echo "device.sh: stitch-42x59.yaml not found beside the script or under examples/stitch" >&2; exit 2; }
NCPU=$(nproc)
START=$(date +%s)
LOG=$OUT/stitch.log
JSON=$OUT/stitch.jsonl
: >"$JSON"
{ echo "date: $(date -u +%FT%TZ)"; echo "host: $(uname -a)"; echo "cpus: $NCPU"
  grep -m1 'model name' /proc/cpuinfo; nvidia-smi -L 2>/dev/null; } >"$LOG"

# run NAME CORES ARGS...: one timed run pinned to the first CORES cores.
run() {
	name=$1 cores=$2
	shift 2
	if [ $(( $(date +%s) - START )) -gt 240 ]; then
		echo "skipped $name: past the time budget" >>"$LOG"
		return
	fi
	[ "$cores" -gt "$NCPU" ] && cores=$NCPU
	echo "== $name (cores 0-$((cores - 1))): $*" >>"$LOG"
	taskset -c 0-$((cores - 1)) timeout 150 "$BIN" -graph "$GRAPH" -workers "$cores" "$@" >"$OUT/$name.out" 2>>"$LOG"
	rc=$?
	cat "$OUT/$name.out" >>"$LOG"
	if [ $rc -eq 0 ]; then
		tail -n 1 "$OUT/$name.out" | sed "s/^{/{\"run\":\"$name\",/" >>"$JSON"
	else
		echo "$name: exit $rc" >>"$LOG"
	fi
}

if [ -n "$TEST" ]; then
	TEST=$(realpath "$TEST")
	(cd "$HERE" && SLUICE_REQUIRE_CUDA=1 timeout 120 "$TEST" -test.run 'CUFFT|OpenCL|GPU' -test.v) >"$OUT/tests.txt" 2>&1
	echo "tests: exit $?" >>"$LOG"
fi

# gpu NAME: sample GPU memory into gpu-mem-NAME.csv until stopgpu.
gpu() {
	SMI=
	command -v nvidia-smi >/dev/null 2>&1 || return 0
	nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$OUT/gpu-mem-$1.csv" 2>/dev/null &
	SMI=$!
}
stopgpu() { [ -n "${SMI:-}" ] && kill "$SMI" 2>/dev/null; SMI=; }

run seq-6rows 1 -mode seq -rows 6
for c in 1 2 4 8 16; do
	run graph-6rows-${c}c "$c" -mode graph -rows 6
done
run graph-full-16c 16 -mode graph
gpu cufft
run graph-full-16c-cufft 16 -mode graph -fft cufft
stopgpu
run graph-6rows-4c-cufft 4 -mode graph -rows 6 -fft cufft
run seq-6rows-cufft 1 -mode seq -rows 6 -fft cufft
gpu pciam
run graph-full-16c-gpu 16 -mode graph -graph "$(dirname "$GRAPH")/stitch-42x59-gpu.yaml"
stopgpu
gpu opencl
run graph-full-16c-opencl 16 -mode graph -opencl gpu -work-groups 8 -work-items 256
stopgpu
run graph-full-8c 8 -mode graph
echo "total $(( $(date +%s) - START )) s" >>"$LOG"
cat "$JSON"
