#!/usr/bin/env bash
# The VCA measurements of docs/apps.md on a GPU machine without Go:
# build the binaries where Go is, run them from the repository root there.
#
#   examples/vca/device.sh build DIR       # here: DIR/vcabench and DIR/vca.test (CGO_ENABLED=0)
#   examples/vca/device.sh run DIR OUT     # there: results in OUT (results.jsonl, test.txt, *.err)
#
# run measures, on the seed's cubes (vca-seed.yaml: 224 bands × 128×128,
# CUBES cubes, default 200):
#   - the sequential version on one core (taskset -c 0);
#   - the graph on all cores and on 8, 4, 2, 1 (taskset), J = 8;
#   - the unfolding factor J = 1, 2, 4, 8, 16, 32 on all cores (Fig. 6.9);
#   - the GPU mapping (cuda.yaml: stats, project, unmix as CUDA kernels, a
#     cube of 16 blocks per launch of 1024 threads a block: -G 16 -I 1024)
#     on 1, 4 and all cores, J = 8, and J = 1, 4, 16, 32 on all cores; and
#     cuda.yaml as written (4 blocks per launch, 256 threads) for comparison;
# after the package's kernel tests with SLUICE_REQUIRE_CUDA=1. Each
# configuration is one process (its own peak RSS) under `timeout 100`; once
# BUDGET seconds (default 260) have passed the rest are skipped, so a run
# stays under five minutes. Each line of results.jsonl is one
# configuration (the fields of examples/vca/bench's Report, plus "name").
set -uo pipefail

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

build() {
  local dir=$1
  cd "$(dirname "$0")/../.." || exit 2
  mkdir -p "$dir"
  CGO_ENABLED=0 go build -o "$dir/vcabench" ./examples/vca/bench || exit 1
  CGO_ENABLED=0 go test -c -o "$dir/vca.test" ./examples/vca || exit 1
  echo "vca: built $dir/vcabench and $dir/vca.test" >&2
}

run() {
  local dir out
  dir=$(cd "$1" && pwd) || exit 2
  mkdir -p "$2" || exit 2
  out=$(cd "$2" && pwd)
  cd "$(dirname "$0")/../.." || exit 2
  local cubes=${CUBES:-200} budget=${BUDGET:-260} all
  all=$(nproc)
  local start=$SECONDS
  : >"$out/results.jsonl"
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "host: $(uname -srm), $(nproc) cores"
    grep -m1 'model name' /proc/cpuinfo
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  } >"$out/machine.txt"
  (cd examples/vca && SLUICE_REQUIRE_CUDA=1 timeout 120 "$dir/vca.test" -test.run 'TestKernels|TestGraph$|TestSequential' -test.v -test.short) >"$out/test.txt" 2>&1
  echo "vca: kernel tests exit $? ($(grep -c -- '--- PASS' "$out/test.txt") passed, $(grep -c -- '--- FAIL' "$out/test.txt") failed, $(grep -c -- '--- SKIP' "$out/test.txt") skipped)" >&2

  # one NAME CORES ARGS...: one configuration on cores 0 … CORES−1.
  one() {
    local name=$1 n=$2
    shift 2
    if ((SECONDS - start > budget)); then
      echo "vca: $name skipped (budget of ${budget}s spent)" >&2
      return
    fi
    ((n > all)) && n=$all
    local line
    if line=$(timeout 100 taskset -c "0-$((n - 1))" "$dir/vcabench" -json -cubes "$cubes" "$@" 2>"$out/$name.err"); then
      echo "${line%\}},\"name\":\"$name\"}" >>"$out/results.jsonl"
      echo "vca: $name: $line" >&2
    else
      echo "vca: $name failed (see $out/$name.err)" >&2
    fi
  }

  # Most important first (the budget may cut the tail): Table 6.2's three
  # columns, then Fig. 6.9's J sweeps, then the core counts.
  local gpu=(-mapping examples/vca/cuda.yaml -G 16 -I 1024)
  one seq-c1 1 -seq
  one "graph-c$all-J8" "$all" -J 8
  one "cuda-c$all-J8" "$all" -J 8 "${gpu[@]}"
  for j in 1 2 4 16 32; do
    one "graph-c$all-J$j" "$all" -J "$j"
  done
  for j in 1 4 16 32; do
    one "cuda-c$all-J$j" "$all" -J "$j" "${gpu[@]}"
  done
  one "cuda-c$all-J8-G4-I256" "$all" -J 8 -mapping examples/vca/cuda.yaml
  for n in 1 4; do
    one "cuda-c$n-J8" "$n" -J 8 "${gpu[@]}"
  done
  for n in 8 4 2 1; do
    ((n < all)) && one "graph-c$n-J8" "$n" -J 8
  done
  echo "vca: done in $((SECONDS - start)) s; results in $out/results.jsonl" >&2
}

case ${1:-} in
build) [ $# -eq 2 ] || usage; build "$2" ;;
run) [ $# -eq 3 ] || usage; run "$2" "$3" ;;
*) usage ;;
esac
