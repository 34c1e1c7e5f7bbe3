#!/usr/bin/env bash
# Records a run on a GPU machine for the workbench: its statistics and
# trace, which `sluice ui --run-stats --run-trace` shows on the drawing
# (docs/ui.md, "A run recorded elsewhere"); the GPU machine needs no Go
# toolchain.
#
#   ui/record-gpu.sh build DIR       # here (with Go): DIR/sluice-record and the graphs' files
#   ui/record-gpu.sh run DIR OUT     # on the GPU machine: OUT/stats.json, OUT/trace.json, OUT/run.log
#
# The binary is sluice with the Go actors of the image pipeline and of the
# stitching application built in (CGO_ENABLED=0: it loads libcuda.so.1 at
# run time). `run` runs APP (default imagepipe): imagepipe runs
# examples/imagepipe/imagepipe.yaml with the mapping cuda.yaml (blur, sobel
# and motion as CUDA kernels, src and stats on 8 CPU cores) for FRAMES
# frames (default 3000), well under a minute; MAPPING names another
# mapping beside the graph (opencl.yaml runs on PoCL too). APP=stitch runs
# examples/stitch/stitch-42x59-gpu.yaml with cuda16.yaml (the seed's grid,
# PCIAM on the GPU; a few seconds on an H200).
set -euo pipefail

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

build() {
  local dir=$1 repo pkg
  repo="$(cd "$(dirname "$0")/.." && pwd)"
  mkdir -p "$dir/imagepipe" "$dir/stitch"
  dir="$(cd "$dir" && pwd)"
  pkg="$(mktemp -d "$repo/uirecord_XXXXXX")"
  trap 'rm -rf "$pkg"' RETURN
  cat > "$pkg/main.go" <<'GO'
package main

import (
	"github.com/sluicehq/sluice/cli"
	_ "github.com/sluicehq/sluice/device/all" // every backend: CUDA, OpenCL, the CPU

	_ "github.com/sluicehq/sluice/examples/imagepipe"
	_ "github.com/sluicehq/sluice/examples/stitch"
)

func main() { cli.Main() }
GO
  # -trimpath: packages compiled once serve any clone; -s -w: a smaller
  # binary to copy to the GPU machine.
  (cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$dir/sluice-record" "./$(basename "$pkg")")
  cp "$repo"/examples/imagepipe/*.yaml "$repo"/examples/imagepipe/*.cu "$repo"/examples/imagepipe/*.cl "$dir/imagepipe/"
  cp "$repo"/examples/stitch/*.yaml "$dir/stitch/"
  echo "built $dir: copy it to the GPU machine, then run: ui/record-gpu.sh run DIR OUT"
}

run() {
  local dir=$1 out=$2
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  dir="$(cd "$dir" && pwd)"
  local app=${APP:-imagepipe} args
  case "$app" in
    imagepipe) cd "$dir/imagepipe"
      args=(imagepipe.yaml --mapping "${MAPPING:-cuda.yaml}" -n "${FRAMES:-3000}") ;;
    stitch) cd "$dir/stitch"
      args=(stitch-42x59-gpu.yaml --mapping "${MAPPING:-cuda16.yaml}") ;;
    *) echo "record-gpu.sh: APP=$app: expected imagepipe or stitch" >&2; exit 2 ;;
  esac
  "$dir/sluice-record" devices > "$out/devices.txt" 2>&1 || true
  if ! "$dir/sluice-record" run "${args[@]}" --progress off \
    --stats-json "$out/stats.json" --trace "$out/trace.json" > "$out/run.log" 2>&1; then
    tail -5 "$out/run.log" >&2
    exit 1
  fi
  echo "recorded $app in $out (stats.json, trace.json, run.log, devices.txt)"
}

case "${1:-}" in
  build) [ $# -eq 2 ] || usage; build "$2" ;;
  run) [ $# -eq 3 ] || usage; run "$2" "$3" ;;
  *) usage ;;
esac
