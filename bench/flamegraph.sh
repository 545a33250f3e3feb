#!/usr/bin/env bash
# Flame graph bench: folded stacks -> SVG with `firn report --svg` for 200k distinct stacks of
# depth 10-40 (about 80 MB, generated with a fixed seed by bench/gen_folded.py), once with shared
# prefixes and once with random frames. Prints wall and CPU time and peak RSS next to the
# targets: <= 0.5 s wall and peak RSS <= 2x the input size. Inputs are kept in $BENCH_DIR
# (default /tmp/firn-bench) and reused. QUICK=1 uses 20k stacks; STRICT=1 exits 1 when a target
# is missed.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
FIRN=${FIRN:-$ROOT/$BUILD/firn}
DIR=${BENCH_DIR:-/tmp/firn-bench}
STACKS=200000
[ -n "${QUICK:-}" ] && STACKS=20000
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench/flamegraph.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
mkdir -p "$DIR"

missed=0
printf '%-8s %9s %8s %8s %8s %9s %7s %9s  %s\n' input "size MB" "wall s" "user s" "sys s" \
	"RSS MB" "RSS/in" "SVG KB" verdict
for kind in shared random; do
	in="$DIR/fg-$kind-$STACKS.folded"
	if [ ! -s "$in" ]; then
		python3 "$ROOT/bench/gen_folded.py" --kind "$kind" --stacks "$STACKS" --seed 1 >"$in.tmp"
		mv "$in.tmp" "$in"
	fi
	size=$(stat -c %s "$in")
	"$TIME" -f '%e %U %S %M' -o "$DIR/time.txt" "$FIRN" report --svg -o "$DIR/fg-$kind.svg" "$in"
	read -r wall user sys rss_kb <"$DIR/time.txt"
	verdict=$(awk -v w="$wall" -v r="$rss_kb" -v s="$size" 'BEGIN {
		v = "";
		if (w > 0.5) v = v "slow ";
		if (r * 1024 > 2 * s) v = v "big ";
		print v == "" ? "ok" : v }')
	[ "$verdict" = ok ] || missed=1
	awk -v k="$kind" -v s="$size" -v w="$wall" -v u="$user" -v y="$sys" -v r="$rss_kb" \
		-v o="$(stat -c %s "$DIR/fg-$kind.svg")" -v v="$verdict" 'BEGIN {
		printf "%-8s %9.1f %8.2f %8.2f %8.2f %9.1f %7.2f %9.0f  %s\n",
			k, s / 1e6, w, u, y, r / 1024, r * 1024 / s, o / 1024, v }'
done
[ -n "${STRICT:-}" ] && [ "$missed" -ne 0 ] && exit 1
exit 0
