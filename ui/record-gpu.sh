#!/usr/bin/env bash
# Records a run of the image pipeline on a GPU machine for the workbench:
# its statistics and trace, which `sluice ui --run-stats --run-trace` shows
# on the drawing (docs/ui.md, "A run recorded elsewhere"); the GPU machine
# needs no Go toolchain.
#
#   ui/record-gpu.sh build DIR       # here (with Go): DIR/sluice-imagepipe and the graph's files
#   ui/record-gpu.sh run DIR OUT     # on the GPU machine: OUT/stats.json, OUT/trace.json, OUT/run.log
#
# The binary is sluice with the image pipeline's Go actors built in
# (CGO_ENABLED=0: it loads libcuda.so.1 at run time). `run` runs
# examples/imagepipe/imagepipe.yaml with the mapping cuda.yaml (blur,
# sobel and motion as CUDA kernels, src and stats on 8 CPU cores) for
# FRAMES frames (default 3000) and takes well under a minute. MAPPING
# names another mapping beside the graph (opencl.yaml runs on PoCL too).
set -euo pipefail

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

build() {
  local dir=$1 repo pkg
  repo="$(cd "$(dirname "$0")/.." && pwd)"
  mkdir -p "$dir/imagepipe"
  dir="$(cd "$dir" && pwd)"
  pkg="$(mktemp -d "$repo/uirecord_XXXXXX")"
  trap 'rm -rf "$pkg"' RETURN
  cat > "$pkg/main.go" <<'GO'
package main

import (
	"github.com/sluicehq/sluice/cli"
	_ "github.com/sluicehq/sluice/device/all" // every backend: CUDA, OpenCL, the CPU

	_ "github.com/sluicehq/sluice/examples/imagepipe"
)

func main() { cli.Main() }
GO
  (cd "$repo" && CGO_ENABLED=0 go build -o "$dir/sluice-imagepipe" "./$(basename "$pkg")")
  cp "$repo"/examples/imagepipe/*.yaml "$repo"/examples/imagepipe/*.cu "$repo"/examples/imagepipe/*.cl "$dir/imagepipe/"
  echo "built $dir: copy it to the GPU machine, then run: ui/record-gpu.sh run DIR OUT"
}

run() {
  local dir=$1 out=$2
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  dir="$(cd "$dir" && pwd)"
  cd "$dir/imagepipe"
  "$dir/sluice-imagepipe" devices > "$out/devices.txt" 2>&1 || true
  if ! "$dir/sluice-imagepipe" run imagepipe.yaml --mapping "${MAPPING:-cuda.yaml}" -n "${FRAMES:-3000}" --progress off \
    --stats-json "$out/stats.json" --trace "$out/trace.json" > "$out/run.log" 2>&1; then
    tail -5 "$out/run.log" >&2
    exit 1
  fi
  echo "recorded $out (stats.json, trace.json, run.log, devices.txt)"
}

case "${1:-}" in
  build) [ $# -eq 2 ] || usage; build "$2" ;;
  run) [ $# -eq 3 ] || usage; run "$2" "$3" ;;
  *) usage ;;
esac
