#!/usr/bin/env bash
# Predicted against measured throughput on the device machine: calibrates
# the host and its GPUs (sluice calibrate), then, under taskset at 2 and at
# 16 cores (and on two SMT siblings of one core, "2smt", where the host
# has SMT), runs bench/predict (profile and declared-cost predictions
# against fresh runs, medians of 3) and the drift test
# TestSimulatorTracksRuntime. Needs prebuilt binaries (no Go toolchain
# there); build them from the repository root with
#
#	mkdir -p bin
#	CGO_ENABLED=0 go build -o bin/sluice ./cmd/sluice
#	CGO_ENABLED=0 go build -o bin/predict ./bench/predict
#	CGO_ENABLED=0 go test -c -o bin/predict.test ./bench/predict
#
# and run, from the repository root (the graphs are read from examples/):
#
#	bash bench/predict/device.sh OUTDIR [BINDIR (default bin)]
#
# It writes under OUTDIR: host.txt (lscpu, nproc, GPUs), machine.yaml (the
# calibrated model of the whole host; calibrate.log its figures),
# predict-N.json, predict-N.txt and predict-N.log (bench/predict at N
# cores, one JSON object per graph), drift-N.log (the drift test at N
# cores), cluster.txt (two workers on loopback), and for the GPU chain
# (examples/predict/gpu-chain.yaml) on one and on two GPUs:
# CASE.profile.yaml, CASE.stats.json, CASE.sim.json and CASE.txt
# (measured against predicted). It takes about 4 to 6 minutes.
set -u
out=${1:?usage: device.sh OUTDIR [BINDIR]}
bin=${2:-bin}
mkdir -p "$out"
bin=$(cd "$bin" && pwd)
out=$(cd "$out" && pwd)
for b in sluice predict predict.test; do
	if [ ! -x "$bin/$b" ]; then
		echo "device.sh: $bin/$b missing: build it first (see the header of this script)" >&2
		exit 2
	fi
done
{
	date -u
	nproc
	lscpu 2>/dev/null
	nvidia-smi -L 2>/dev/null
	"$bin/sluice" devices 2>&1
} >"$out/host.txt" 2>&1
echo "== calibrate (all cores, GPUs)"
timeout 60 "$bin/sluice" calibrate --out "$out/machine.yaml" >/dev/null 2>"$out/calibrate.log"
echo "calibrate: exit $?"
cat "$out/calibrate.log"
ncpu=$(nproc)
# CPUs on distinct physical cores first (lscpu's CORE column), then their
# SMT siblings: "2 cores" are then two physical cores, not two hyperthreads
# of one. "2smt" (run when the host has SMT) is two siblings of one core.
order=$(lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | sort -t, -k2,2n -k1,1n | awk -F, '!seen[$2]++ {print $1}'
	lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | sort -t, -k2,2n -k1,1n | awk -F, 'seen[$2]++ {print $1}')
pick() { # pick N: the first N CPUs of $order (or 0..N-1), comma-separated
	local l
	l=$(echo "$order" | grep -v '^$' | head -n "$1" | paste -sd, -)
	if [ -z "$l" ] || [ "$(echo "$l" | tr ',' '\n' | wc -l)" -lt "$1" ]; then
		l=$(seq -s, 0 $(($1 - 1)))
	fi
	echo "$l"
}
sib=$(lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' | awk -F, '{c[$2]=c[$2] (c[$2]==""?"":",") $1; n[$2]++} END {for (k in c) if (n[k]>1) {split(c[k], a, ","); print a[1] "," a[2]; exit}}')
settings="2 16"
if [ -n "$sib" ]; then
	settings="2 2smt 16"
fi
echo "CPU order (distinct cores first): $(echo $order)" >>"$out/host.txt"
for n in $settings; do
	if [ "$n" = 2smt ]; then
		cores=$sib
	elif [ "$n" -gt "$ncpu" ]; then
		echo "skipping $n cores: this host has $ncpu" | tee "$out/predict-$n.log"
		continue
	else
		cores=$(pick "$n")
	fi
	echo "== bench/predict on CPUs $cores ($n)"
	timeout 100 taskset -c "$cores" "$bin/predict" -reps 3 -iterations 10000 -warmup 1000 -out "$out/predict-$n.json" >"$out/predict-$n.txt" 2>"$out/predict-$n.log"
	echo "predict on CPUs $cores: exit $?"
	cat "$out/predict-$n.txt"
	echo "== drift test on cores $cores"
	(cd bench/predict && timeout 40 taskset -c "$cores" "$bin/predict.test" -test.run 'TestSimulatorTracksRuntime' -test.v >"$out/drift-$n.log" 2>&1)
	echo "drift test on CPUs $cores: exit $?"
	grep -E -- '^(--- |    --- |PASS|FAIL|ok)' "$out/drift-$n.log"
done

# Two workers on loopback (bench/predict -cluster: a broker here and two
# worker processes, the cluster calibrated, examples/predict/cluster-chain.yaml
# run across them and predicted).
echo "== bench/predict -cluster"
timeout 150 "$bin/predict" -cluster -reps 3 -iterations 5000 -warmup 500 >"$out/cluster.txt" 2>"$out/cluster.log"
echo "predict -cluster: exit $?"
cat "$out/cluster.txt"

# GPUs: examples/predict/gpu-chain.yaml (two kernel actors between CPU
# actors) on the first CUDA device (the first OpenCL device where there is
# no CUDA), and on two CUDA devices where there are two: run with a
# profile, simulate on the calibrated model with that profile, compare.
devs=$("$bin/sluice" devices 2>/dev/null)
cases=""
if echo "$devs" | grep -q '^cuda:0'; then
	cases="gpu-chain-cuda"
	if echo "$devs" | grep -q '^cuda:1'; then
		cases="$cases gpu-chain-two-gpus"
	fi
elif echo "$devs" | grep -q '^opencl:'; then
	# No CUDA: the first OpenCL device, measured as an accelerator whatever
	# its kind (PoCL's CPU device on a host without GPU).
	cases="gpu-chain-opencl"
	cl=$(echo "$devs" | grep -o '^opencl:[0-9]*:[0-9]*' | head -n 1)
	timeout 60 "$bin/sluice" calibrate --device "$cl" --out "$out/machine-opencl.yaml" >/dev/null 2>>"$out/calibrate.log"
fi
for c in $cases; do
	mach="$out/machine.yaml"
	if [ "$c" = gpu-chain-opencl ]; then
		mach="$out/machine-opencl.yaml"
	fi
	echo "== $c"
	n=20000
	timeout 60 "$bin/sluice" run examples/predict/gpu-chain.yaml -n $n --mapping "examples/predict/$c.yaml" --progress off \
		--profile "$out/$c.profile.yaml" --stats-json "$out/$c.stats.json" >/dev/null 2>"$out/$c.log"
	echo "run: exit $?"
	timeout 60 "$bin/sluice" simulate examples/predict/gpu-chain.yaml --machine "$mach" --mapping "examples/predict/$c.yaml" \
		--profile "$out/$c.profile.yaml" --iterations $n --json >"$out/$c.sim.json" 2>>"$out/$c.log"
	echo "simulate: exit $?"
	python3 - "$out/$c.stats.json" "$out/$c.sim.json" $n <<'PY' | tee "$out/$c.txt"
import json, sys
st, sim, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
measured = n / (st["elapsed_ns"] / 1e9)
predicted = n / sim["makespan"]
print(f"measured {measured:.0f} it/s, predicted {predicted:.0f} it/s (steady {sim['throughput']:.0f}), error {100 * (predicted - measured) / measured:+.1f}%")
print("utilization", {k: round(v, 3) for k, v in sim["utilization"].items()})
PY
done
