#!/usr/bin/env bash
# tone.sh compares examples/cluster/tone-filter.yaml made endless (count: 0)
# run locally with the same graph run with examples/cluster/map-two-workers.yaml
# on a broker and two workers over loopback (direct TCP streams): ROUNDS
# alternating runs of ITERS iterations each, every run's output (the
# spectra, CSV) hashed and compared, the medians of the wall times and
# their ratio printed, with the CPU time every process of a run used (the
# client's, and the broker's and workers' during it), which the load of a
# shared host disturbs less than the wall time. A third argument names a sluice binary to use
# instead of building one.
#
#	bench/cluster/tone.sh 100000 5
set -euo pipefail
iters=${1:-100000}
rounds=${2:-5}
bin=${3:-}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ -n "$bin" ]; then
	cp "$bin" "$tmp/sluice"
else
	go build -o "$tmp/sluice" ./cmd/sluice
fi
sed 's/count: 16/count: 0/g' examples/cluster/tone-filter.yaml >"$tmp/tone.yaml"
port=$((20000 + RANDOM % 20000))
url=nats://127.0.0.1:$port
"$tmp/sluice" broker --name root --listen 127.0.0.1:$port >"$tmp/broker.log" 2>&1 &
pids+=($!)
sleep 1
for w in w1 w2; do
	"$tmp/sluice" worker --broker "$url" --name $w --data-listen 127.0.0.1:0 >"$tmp/$w.log" 2>&1 &
	pids+=($!)
done
sleep 2
tck=$(getconf CLK_TCK)
srvcpu() { # the CPU seconds the broker and workers used so far
	local sum=0 p
	for p in "${pids[@]}"; do
		sum=$((sum + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "scale=3; $sum / $tck" | bc
}
run() { # run NAME ARGS...: prints the wall seconds, adds the CPU seconds to $tmp/NAME.cpu, leaves the output's hash in $tmp/NAME.sum
	local name=$1
	shift
	local t0 t1 c0 c1
	c0=$(srvcpu)
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$tmp/sluice" run "$tmp/tone.yaml" -n "$iters" "$@" 2>"$tmp/$name.err" | sha256sum >"$tmp/$name.sum"
	t1=$(date +%s.%N)
	c1=$(srvcpu)
	read -r u s <"$tmp/time"
	echo "$u + $s + $c1 - $c0" | bc >>"$tmp/$name.cpu"
	echo "$t1 - $t0" | bc
}
local_t=()
remote_t=()
for i in $(seq "$rounds"); do
	if ((i % 2)); then
		local_t+=("$(run local)")
		remote_t+=("$(run remote --mapping examples/cluster/map-two-workers.yaml --broker "$url")")
	else
		remote_t+=("$(run remote --mapping examples/cluster/map-two-workers.yaml --broker "$url")")
		local_t+=("$(run local)")
	fi
	if ! cmp -s "$tmp/local.sum" "$tmp/remote.sum"; then
		echo "round $i: the outputs differ" >&2
		exit 1
	fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
lm=$(median "${local_t[@]}")
rm_=$(median "${remote_t[@]}")
echo "local:  ${local_t[*]} s (median $lm); CPU $(tr '\n' ' ' <"$tmp/local.cpu")s (median $(median $(cat "$tmp/local.cpu")))"
echo "remote: ${remote_t[*]} s (median $rm_); CPU $(tr '\n' ' ' <"$tmp/remote.cpu")s (median $(median $(cat "$tmp/remote.cpu")))"
echo "throughput across two workers / local: $(echo "scale=3; $lm / $rm_" | bc) (outputs identical: $(cut -c1-16 "$tmp/local.sum"))"
