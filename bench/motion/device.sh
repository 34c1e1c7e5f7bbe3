#!/usr/bin/env bash
# Seed 002's Fig. 12a configurations of the Motion-JPEG motion detector
# (examples/motion) on a machine with many cores and an NVIDIA GPU that has
# no Go toolchain, from binaries built elsewhere.
#
#   bench/motion/device.sh build BIN        # with Go: build BIN/motion and BIN/motion.test
#   bench/motion/device.sh run BIN OUT      # on the GPU machine, from the repository root
#
# run writes OUT/<config>-<decoder>.json (one bench/motion result each: go
# is image/jpeg, turbojpeg libjpeg-turbo where libturbojpeg loads), OUT/test.txt
# (the CUDA and OpenCL correctness tests), OUT/bench.txt (per-frame costs of
# the decoder and the Go filters on this CPU) and OUT/summary.txt. It takes
# about two minutes per decoder (FRAMES_DIV=N divides the frames of every run). Configurations (taskset pins the one-core ones; Go
# then runs with GOMAXPROCS 1):
#
#   one-core        all actors on CPU core 0
#   all-cores       decode, filters and stats replicated over all cores
#   one-core-gpu    CPU core 0 + the filters on the GPU (CUDA)
#   all-cores-gpu   all cores + the GPU, and a sweep of G (frames per launch)
set -uo pipefail

cmd=${1:-}
bin=${2:-}
[ -n "$cmd" ] && [ -n "$bin" ] || { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

if [ "$cmd" = build ]; then
  cd "$(dirname "$0")/../.." || exit 2
  mkdir -p "$bin"
  CGO_ENABLED=0 go build -o "$bin/motion" ./bench/motion || exit 1
  CGO_ENABLED=0 go test -c -o "$bin/motion.test" ./examples/motion || exit 1
  echo "built $bin/motion and $bin/motion.test"
  exit 0
fi
[ "$cmd" = run ] || { echo "device.sh: expected build or run, found $cmd" >&2; exit 2; }
out=${3:-}
[ -n "$out" ] || { echo "device.sh run: expected an output directory" >&2; exit 2; }
bin=$(cd "$bin" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -f examples/motion/motion.yaml ] || { echo "device.sh run: run it from the repository root" >&2; exit 2; }
export XDG_CACHE_HOME="$out/cache" # the generated clip
ncpu=$(nproc)
div=${FRAMES_DIV:-1} # divides every run's frames (a quick check of the script)
fail=0

{
  echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  date -u
} > "$out/summary.txt"

# Correctness first: the CUDA (and, where there is an OpenCL device, the
# OpenCL) filters against the Go ones.
(cd examples/motion && SLUICE_REQUIRE_CUDA=1 timeout 120 "$bin/motion.test" -test.v -test.count=1 \
  -test.run 'TestGraphCUDA|TestGraphOpenCL|TestGraphCPU$|TestFlowRecoversTranslation') > "$out/test.txt" 2>&1 || fail=1
tail -n 3 "$out/test.txt" >> "$out/summary.txt"

# Per-frame costs of the decoder and the Go filters on one core.
(cd examples/motion && taskset -c 0 timeout 60 "$bin/motion.test" -test.run XXX -test.bench 'Decode|Filters' -test.benchtime 1s) > "$out/bench.txt" 2>&1
grep Benchmark "$out/bench.txt" >> "$out/summary.txt"

one() { # name, then the arguments of bench/motion
  local name=$1; shift
  echo "== $name: $*" >&2
  if timeout 120 "$@" -json > "$out/$name.json" 2> "$out/$name.err"; then
    echo "$name: $(grep -o '"fps":[0-9.]*' "$out/$name.json") $(grep -o '"bottleneck":"[^"]*"' "$out/$name.json")" >> "$out/summary.txt"
  else
    echo "$name: FAILED: $(tail -n 2 "$out/$name.err")" >> "$out/summary.txt"
    fail=1
  fi
}

# Every configuration with Go's image/jpeg and, where libturbojpeg loads
# (installed, or named by SLUICE_TURBOJPEG), with libjpeg-turbo.
decs=go
if "$bin/motion" -backend cpu -replicas 1 -frames 20 -decoder turbojpeg > /dev/null 2> "$out/turbojpeg.err"; then
  decs="go turbojpeg"
else
  echo "turbojpeg: not here: $(tail -n 1 "$out/turbojpeg.err")" >> "$out/summary.txt"
fi
for d in $decs; do
  one "one-core-$d"        taskset -c 0 "$bin/motion" -decoder "$d" -backend cpu -replicas 1 -frames $((2000 / div))
  one "all-cores-$d"       "$bin/motion" -decoder "$d" -backend cpu -replicas "$ncpu" -frames $((20000 / div))
  one "one-core-gpu-$d"    taskset -c 0 "$bin/motion" -decoder "$d" -backend cuda -replicas 1 -frames $((3000 / div))
  one "all-cores-gpu-$d"   "$bin/motion" -decoder "$d" -backend cuda -replicas "$ncpu" -frames $((40000 / div))
  for g in 8 64; do
    one "all-cores-gpu-G$g-$d" "$bin/motion" -decoder "$d" -backend cuda -replicas "$ncpu" -G "$g" -frames $((40000 / div))
  done
  one "all-cores-gpu-2x-$d" "$bin/motion" -decoder "$d" -backend cuda -replicas $((2 * ncpu)) -frames $((40000 / div))
done
cat "$out/summary.txt"
exit $fail
