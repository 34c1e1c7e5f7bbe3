#!/bin/sh
# Checkpoint overhead on the image pipeline (examples/imagepipe): PAIRS
# alternating runs without and with checkpoints every 1 s, on the CPU (every
# actor in Go, the default mapping) and, where a CUDA device is present, with
# the filters as CUDA kernel actors (cuda.yaml; motion's previous frame is a
# channel with an initial frame on the device, copied out at each
# checkpoint). Needs sluice built with the pipeline's Go actors, as
# `sluice run` builds it for the graph's go: key; on a machine without Go,
# build it elsewhere:
#
#	mkdir -p /tmp/iprun && printf 'package main\n\nimport (\n\t"github.com/sluicehq/sluice/cli"\n\t_ "github.com/sluicehq/sluice/device/all"\n\t_ "github.com/sluicehq/sluice/examples/imagepipe"\n)\n\nfunc main() { cli.Main() }\n' > /tmp/iprun/main.go
#	cp -r /tmp/iprun ./iprun && CGO_ENABLED=0 go build -o sluice-ip ./iprun && rm -r ./iprun
#
# and run from the repository root:
#
#	sh bench/recovery/imagepipe.sh ./sluice-ip OUTDIR [CPU_FRAMES [GPU_FRAMES [PAIRS]]]
#
# It writes OUTDIR/imagepipe.txt: per run the wall time (`elapsed`), the
# checkpoint line of --stats, and a summary per mapping.
set -u
bin=${1:?usage: imagepipe.sh SLUICE OUTDIR [CPU_FRAMES [GPU_FRAMES [PAIRS]]]}
out=${2:?usage: imagepipe.sh SLUICE OUTDIR [CPU_FRAMES [GPU_FRAMES [PAIRS]]]}
cpuN=${3:-20000}
gpuN=${4:-2000000}
pairs=${5:-5}
mkdir -p "$out"
ck=$(mktemp -d)
trap 'rm -rf "$ck"' EXIT
log="$out/imagepipe.txt"
: > "$log"
elapsed() { sed -n 's/^ *elapsed *\([0-9.]*\)s$/\1/p' "$1"; }
pair() { # name frames mapping-args...
	name=$1 n=$2
	shift 2
	offs="" ons=""
	i=1
	while [ "$i" -le "$pairs" ]; do
		"$bin" run examples/imagepipe/imagepipe.yaml "$@" -n "$n" --progress off --stats > "$ck/off.txt" 2>&1 || { cat "$ck/off.txt" >> "$log"; return 1; }
		rm -rf "$ck/dir"
		"$bin" run examples/imagepipe/imagepipe.yaml "$@" -n "$n" --progress off --stats --checkpoint-dir "$ck/dir" --checkpoint-interval 1s > "$ck/on.txt" 2>&1 || { cat "$ck/on.txt" >> "$log"; return 1; }
		off=$(elapsed "$ck/off.txt") on=$(elapsed "$ck/on.txt")
		echo "$name pair $i: off ${off}s on ${on}s; $(grep '^checkpoints:' "$ck/on.txt")" >> "$log"
		offs="$offs $off" ons="$ons $on"
		i=$((i + 1))
	done
	echo "$offs" "|" "$ons" | awk -v name="$name" -v n="$n" '{
		k = 0; for (i = 1; $i != "|"; i++) { off[++k] = $i }; j = 0; for (i++; i <= NF; i++) { on[++j] = $i }
		s = 0; r = ""; for (i = 1; i <= k; i++) { d = (on[i] / off[i] - 1) * 100; s += d; r = r sprintf(" %+.1f%%", d) }
		printf "%s (%d frames): per pair%s; mean %+.1f%% (off %.0f frames/s in the first pair)\n", name, n, r, s / k, n / off[1] }' >> "$log"
}
{ date -u; nproc; } >> "$log"
pair cpu "$cpuN"
if "$bin" devices 2>/dev/null | grep -q '^cuda:[0-9]'; then
	pair cuda "$gpuN" --mapping examples/imagepipe/cuda.yaml
else
	echo "no CUDA device: the cuda mapping is not measured" >> "$log"
fi
cat "$log"
