#!/usr/bin/env bash
# The mapping sweep on the GPU machine: calibrates the host and its GPUs
# (sluice calibrate), then runs bench/mapsweep on CUDA for the image
# pipeline (examples/imagepipe, default mapping cuda.yaml and its variants
# over G and replicas) and for examples/predict/mixed.yaml (default
# mixed-cuda.yaml): every candidate measured and predicted, sluice map's
# pick measured, the ratio picked ÷ best. Needs prebuilt binaries (no Go
# toolchain there); build them from the repository root with
#
#	mkdir -p bin
#	CGO_ENABLED=0 go build -o bin/sluice ./cmd/sluice
#	CGO_ENABLED=0 go build -o bin/mapsweep ./bench/mapsweep
#
# and run, from the repository root (graphs and kernels are read from
# examples/):
#
#	bash bench/mapsweep/device.sh OUTDIR [BINDIR (default bin)]
#
# It writes under OUTDIR: host.txt (lscpu, nproc, GPUs), machine.yaml (the
# calibrated model; calibrate.log its figures), and per case (imagepipe,
# mixed): CASE.json (the report: candidates with measured, predicted and
# error, the cost table, the pick and the ratio), CASE.txt (the table),
# CASE.log (progress), CASE.costs.yaml (the cost file sluice map was given)
# and CASE.picked.yaml (the mapping it picked); then summary.txt (with
# the pick and the three fastest candidates measured three times each, in
# turn, and the ratio of their medians). About 10 to 15 minutes.
set -u
out=${1:?usage: device.sh OUTDIR [BINDIR]}
bin=${2:-bin}
mkdir -p "$out"
bin=$(cd "$bin" && pwd)
out=$(cd "$out" && pwd)
for b in sluice mapsweep; do
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
if ! "$bin/sluice" devices 2>/dev/null | grep -q '^cuda:0'; then
	echo "device.sh: no CUDA device (sluice devices in $out/host.txt)" >&2
	exit 1
fi
echo "== calibrate (all cores, GPUs)"
timeout 120 "$bin/sluice" calibrate --out "$out/machine.yaml" >/dev/null 2>"$out/calibrate.log"
echo "calibrate: exit $?"
cat "$out/calibrate.log"
run_case() { # run_case NAME GRAPH MAPPING ITERATIONS WARMUP MAX
	echo "== $1"
	timeout 540 "$bin/mapsweep" -graph "$2" -backend cuda -mapping "$3" -machine "$out/machine.yaml" \
		-iterations "$4" -warmup "$5" -max "$6" -G 16,64,256 -min-time 1s \
		-out "$out/$1.json" -costs-out "$out/$1.costs.yaml" -picked-out "$out/$1.picked.yaml" \
		>"$out/$1.txt" 2>"$out/$1.log"
	echo "$1: exit $?"
	cat "$out/$1.txt"
}
run_case imagepipe examples/imagepipe/imagepipe.yaml examples/imagepipe/cuda.yaml 2000 500 30
run_case mixed examples/predict/mixed.yaml examples/predict/mixed-cuda.yaml 5000 500 40
python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sys
out = sys.argv[1]
for case in ("imagepipe", "mixed"):
    p = os.path.join(out, case + ".json")
    if not os.path.exists(p):
        print(f"{case}: no report")
        continue
    r = json.load(open(p))
    print(f"{case}: best {r['best']} {r['best_iter_per_s']:.0f} it/s; picked by {r['picked_by']} {r['picked']['measured_iter_per_s']:.0f} it/s; ratio {r['ratio']:.3f} (goal >= 0.9)")
    if r.get("finals"):
        print(f"  measured again in turn: ratio of the medians {r['ratio_rounds']:.3f} (best: {r['final_best']})")
        for f in r["finals"]:
            print(f"    {f['name']:16s} median {f['median_iter_per_s']:10.0f}  runs " + " ".join(f"{v:.0f}" for v in f["measured_runs_iter_per_s"]))
    for c in r["candidates"]:
        if c["name"].startswith("default") and not c.get("error"):
            print(f"  {c['name']:16s} measured {c['measured_iter_per_s']:10.0f} predicted {c['predicted_iter_per_s']:10.0f} error {c['error_pct']:+6.1f}% (goal within 20%)  {c['mapping']}")
PY
