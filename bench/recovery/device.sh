#!/bin/sh
# Checkpoint overhead, kill-resume and recovery from a lost worker, with a
# prebuilt sluice binary, on a quiet machine (loopback only).
#
#   CGO_ENABLED=0 go build -o sluice ./cmd/sluice
#   sh bench/recovery/device.sh ./sluice examples/recovery/tone-chain.yaml OUTDIR
#
# Writes into OUTDIR:
#   overhead.txt  wall times of the chain on this host without and with
#                 checkpoints every 1 s, alternating, 5 rounds each;
#   cluster.txt   the same with lowpass on worker w1 and down on worker w2
#                 (a broker and two worker processes on 127.0.0.1);
#   resume.txt    a local run killed with SIGKILL after 2 s, resumed,
#                 compared byte for byte with an uninterrupted run;
#   recover.txt   a run across three workers whose w1 is killed a third of the way:
#                 the client's recovery line and the output comparison.
set -u
bin=$(realpath "$1"); graph=$(realpath "$2"); out=$(realpath -m "$3")
mkdir -p "$out"; work=$(mktemp -d); cd "$work"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
pairs() { # pairs FILE ARGS...: five alternating pairs of runs
	f=$1; shift
	: > "$f"
	for i in 1 2 3 4 5; do
		rm -rf ck tone-chain.f32
		t0=$(now); "$bin" run "$graph" --progress off "$@"; t1=$(now)
		echo "off $(secs "$t0" "$t1")" >> "$f"
		rm -rf ck tone-chain.f32
		t0=$(now); "$bin" run "$graph" --progress off "$@" --checkpoint-dir ck --checkpoint-interval 1s --stats 2> stats.txt; t1=$(now)
		echo "on $(secs "$t0" "$t1")" >> "$f"
		grep '^checkpoints:' stats.txt >> "$f"
	done
}
pairs "$out/overhead.txt"

rm -rf ck tone-chain.f32
t0=$(now); "$bin" run "$graph" --progress off; t1=$(now); mv tone-chain.f32 ref.f32
third=$(awk -v d="$(secs "$t0" "$t1")" 'BEGIN { printf "%.2f", d / 3 }') # kill a third of the way
"$bin" run "$graph" --progress off --checkpoint-dir ck --checkpoint-interval 200ms & pid=$!
sleep "$third"; kill -9 $pid || true; wait $pid || true
{
	echo "killed at $third s with $(stat -c %s tone-chain.f32) bytes written; checkpoints: $(ls ck)"
	t0=$(now); "$bin" run "$graph" --progress off --resume ck --stats 2>&1 | grep -E '^checkpoints:'; t1=$(now)
	echo "resumed run: $(secs "$t0" "$t1") s"
	cmp tone-chain.f32 ref.f32 && echo "output byte-identical to the uninterrupted run"
} > "$out/resume.txt" 2>&1

# A broker and three workers on loopback.
port=4399; url=nats://127.0.0.1:$port
"$bin" broker --listen 127.0.0.1:$port --store "$work/store" 2> broker.log & bpid=$!
sleep 1
"$bin" worker --broker $url --name w1 --devices cpu --data-listen 127.0.0.1:0 2> w1.log & w1=$!
"$bin" worker --broker $url --name w2 --devices cpu --data-listen 127.0.0.1:0 2> w2.log & w2=$!
"$bin" worker --broker $url --name w3 --devices cpu --data-listen 127.0.0.1:0 2> w3.log & w3=$!
sleep 2
printf 'kind: mapping\nname: two\nmapping:\n  lowpass: {device: worker:w1/cpu}\n  down: {device: worker:w2/cpu}\n' > map.yaml
pairs "$out/cluster.txt" --mapping map.yaml --broker $url
off=$(awk '/^off/ { s += $2; n++ } END { printf "%.2f", s / n / 3 }' "$out/cluster.txt")
rm -rf ck tone-chain.f32
"$bin" run "$graph" --progress off --mapping map.yaml --broker $url --checkpoint-dir nats:bench --checkpoint-interval 200ms --stats 2> rec.log & pid=$!
sleep "$off"; kill -9 $w1 || true
echo "w1 killed $off s into the run" > "$out/recover.txt"
wait $pid || true
{
	grep -E '^(recovered|checkpoints:)' rec.log || tail -5 rec.log
	cmp tone-chain.f32 ref.f32 && echo "output byte-identical to the local uninterrupted run"
} >> "$out/recover.txt" 2>&1
kill $w2 $w3 $bpid 2>/dev/null || true
cat "$out/overhead.txt" "$out/cluster.txt" "$out/resume.txt" "$out/recover.txt"
cd /; rm -rf "$work"
