#!/usr/bin/env bash
# The fused-chain measurements on a many-core host (the GPU machine's 16
# cores): bench/chain (sluice fused and unfused, the goroutine pipeline and
# the hand-fused loop, 16 and 64 stages), bench/scale (replicas and the
# 256-actor DAG), the FIFO hop (bench/fifo -hop), the frame sums of
# examples/imagepipe in a default and a GOEXPERIMENT=simd build, and, where
# a CUDA GPU is present, the CUDA image pipeline in both builds. Core
# counts 2, 4, 8 and 16, each in a child confined to that many CPUs
# (GOMAXPROCS and sched_setaffinity, as taskset does).
#
#   bench/chain/device.sh build DIR      # here (with Go): build the binaries into DIR
#   bench/chain/device.sh run DIR OUT    # on the device machine: run them, results in OUT
#
# Run it from the repository root. It takes about six minutes on a
# 16-core host; each step has a time limit (STEP_TIMEOUT, default 90 s).
# OUT gets one file per step (JSON lines, or the benchmark's text) and
# summary.txt with the ratios the goals name.
set -uo pipefail

STEP_TIMEOUT=${STEP_TIMEOUT:-90}

build() {
	local dir=$1
	mkdir -p "$dir"
	CGO_ENABLED=0 go build -o "$dir/chain" ./bench/chain &&
		CGO_ENABLED=0 go build -o "$dir/scale" ./bench/scale &&
		CGO_ENABLED=0 go build -o "$dir/fifo" ./bench/fifo &&
		CGO_ENABLED=0 go build -o "$dir/imagepipe" ./bench/imagepipe &&
		GOEXPERIMENT=simd CGO_ENABLED=0 go build -o "$dir/imagepipe-simd" ./bench/imagepipe &&
		CGO_ENABLED=0 go test -c -o "$dir/sums.test" ./examples/imagepipe &&
		GOEXPERIMENT=simd CGO_ENABLED=0 go test -c -o "$dir/sums-simd.test" ./examples/imagepipe
}

step() { # step NAME COMMAND...: run with the time limit, output in OUT/NAME
	local name=$1
	shift
	echo "== $name: $*" >&2
	if ! timeout "$STEP_TIMEOUT" "$@" >"$OUT/$name" 2>"$OUT/$name.err" </dev/null; then
		echo "   $name failed or timed out (see $OUT/$name.err)" >&2
	fi
}

run() {
	local dir=$1
	OUT=$2
	mkdir -p "$OUT"
	{
		date -u
		nproc
		grep -m1 'model name' /proc/cpuinfo
		uptime
	} >"$OUT/machine.txt"
	# The chain, 16 and 64 stages: sluice (fused, the default) and the
	# unfused runtime, alternating, with their baselines in each row.
	step chain16.jsonl "$dir/chain" -json -gnuradio no -cpus 2,4,8,16 -n-per-sample 262144
	step chain16-nofuse.jsonl "$dir/chain" -json -gnuradio no -cpus 2,4,8,16 -n-per-sample 262144 -no-fuse-cpu
	step chain64.jsonl "$dir/chain" -json -gnuradio no -cpus 2,4,8,16 -stages 64 -n 8388608 -n-per-sample 65536
	step chain16-b.jsonl "$dir/chain" -json -gnuradio no -cpus 2,4,8,16 -n-per-sample 262144
	# The source stateful (one core generates every sample, as before the
	# source was fused with the stages).
	step chain16-stateful.jsonl "$dir/chain" -json -gnuradio no -cpus 2,4,8,16 -n-per-sample 262144 -stateful-source
	# The 256-actor DAG and the replicated actor (1 core for the DAG's
	# scaling), fused and not.
	step scale.jsonl "$dir/scale" -json -cpus 1,2,4,8,16 -rounds 2 -seconds 0.5
	step scale-nofuse.jsonl "$dir/scale" -json -cpus 1,2,16 -rounds 2 -seconds 0.5 -no-fuse-cpu
	# The hop: parked, spinning, spin-park and a channel, side by side.
	step hop.jsonl "$dir/fifo" -hop -json -cpus 2,4,8,16
	step hop-b.jsonl "$dir/fifo" -hop -json -cpus 2,16
	# Frame sums: default build (AVX2 in assembly, or SWAR) vs simd build.
	step sums.txt "$dir/sums.test" -test.run XXX -test.bench FrameSums -test.benchtime 20000x -test.count 3
	step sums-simd.txt "$dir/sums-simd.test" -test.run XXX -test.bench FrameSums -test.benchtime 20000x -test.count 3
	# The CUDA image pipeline, default build vs simd build, alternating.
	if command -v nvidia-smi >/dev/null 2>&1; then
		for i in 1 2; do
			step "imagepipe-$i.json" "$dir/imagepipe" -json -backend cuda -frames 300000 -G 64 -I 1024 -replicas 14
			step "imagepipe-simd-$i.json" "$dir/imagepipe-simd" -json -backend cuda -frames 300000 -G 64 -I 1024 -replicas 14
		done
	fi
	summary >"$OUT/summary.txt"
	cat "$OUT/summary.txt"
}

# summary prints the ratios the goals name, from the JSON lines.
summary() {
	python3 - "$OUT" <<'EOF'
import json, os, sys
out = sys.argv[1]
def rows(name):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        return []
    rs = []
    for line in open(p):
        line = line.strip()
        if line.startswith("{"):
            try:
                rs.append(json.loads(line))
            except ValueError:
                pass
    return rs
for f in ["chain16.jsonl", "chain16-b.jsonl", "chain64.jsonl", "chain16-nofuse.jsonl", "chain16-stateful.jsonl"]:
    for r in rows(f):
        print("%-22s %2d cores %2d stages: sluice %.3g fused-loop %.3g goroutines %.3g samples/s; sluice/fused %.2f sluice/goroutines %.2f" % (
            f, r["gomaxprocs"], r["stages"], r["sluice_samples_per_s"], r["fused_samples_per_s"],
            r["goroutines_samples_per_s"], r["ratio_fused"], r["ratio"]))
for f in ["scale.jsonl", "scale-nofuse.jsonl"]:
    for r in rows(f):
        print("%-22s %2d cores: dag sluice/goroutines %.2f, dag scaling per core %s, replica speed-up per core %.2f" % (
            f, r["cores"], r["dag_ratio"], "%.2f" % r["dag_scaling_per_core"] if "dag_scaling_per_core" in r else "-",
            r["replica_speedup_per_core"]))
for f in ["hop.jsonl", "hop-b.jsonl"]:
    for r in rows(f):
        print("%-22s %2d cores: hop parked %.0f, spinning %.0f, spin-park %.0f, channel %.0f ns; parked/channel %.2f, spinning/parked %.2f" % (
            f, r["gomaxprocs"], r["hop_ns_parked"], r["hop_ns_spinning"], r["hop_ns_spin_park"], r["hop_ns_gochan"],
            r["hop_ns_parked"] / r["hop_ns_gochan"], r["hop_ns_spinning"] / r["hop_ns_parked"]))
for i in (1, 2):
    for b in ("imagepipe", "imagepipe-simd"):
        p = os.path.join(out, "%s-%d.json" % (b, i))
        if os.path.exists(p):
            try:
                d = json.load(open(p))
                print("%-22s cuda %.0f frames/s" % ("%s-%d" % (b, i), d.get("cuda_fps", 0)))
            except ValueError:
                print("%-22s unreadable" % p)
EOF
}

case "${1:-}" in
build)
	[ $# -eq 2 ] || { echo "usage: $0 build DIR" >&2; exit 2; }
	build "$2"
	;;
run)
	[ $# -eq 3 ] || { echo "usage: $0 run DIR OUT" >&2; exit 2; }
	run "$2" "$3"
	;;
*)
	echo "usage: $0 build DIR | run DIR OUT" >&2
	exit 2
	;;
esac
