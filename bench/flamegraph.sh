#!/usr/bin/env bash
# Flame graph bench: folded stacks -> SVG with `firn report --svg` for 200k distinct stacks of
# depth 10-40 (about 80 MB, generated with a fixed seed by bench/gen_folded.py), once with shared
# prefixes and once with random frames: wall and CPU time and peak RSS (also over the input's
# size), beside Brendan Gregg's flamegraph.pl on the same input where one is found (FLAMEGRAPH_PL,
# else flamegraph.pl on PATH; Debian 12 does not package it). Targets (issue 18): <= 0.5 s wall and
# peak RSS <= 2x the input. Inputs are kept in $BENCH_DIR (default /tmp/firn-bench) and reused.
# Prints result lines (see bench/bench_lib.sh). REPS (default 3); REPS_REF, flamegraph.pl's
# (default 1: 15-30 CPU seconds and 1-2 GB a run here); QUICK=1: 20k stacks, 1 rep.
source "$(dirname "$0")/bench_lib.sh"
[ -x "$FIRN" ] || die "no firn binary at '$FIRN' (make)"
B=flamegraph
REPS=${REPS:-3}
REPS_REF=${REPS_REF:-1}
STACKS=200000
[ -n "$QUICK" ] && REPS=1 STACKS=20000
FGPL=${FLAMEGRAPH_PL:-$(command -v flamegraph.pl || true)}
[ -n "$FGPL" ] && [ ! -x "$FGPL" ] && die "FLAMEGRAPH_PL '$FGPL' is not executable"
mkdir -p "$BENCH_DIR" || exit 1
W=$(workdir flamegraph)
TOOLS=(firn)
[ -n "$FGPL" ] && TOOLS+=(flamegraph.pl)

# input KIND: the folded file of KIND (shared or random), generated once; printed.
input() {
	local in=$BENCH_DIR/fg-$1-$STACKS.folded
	if [ ! -s "$in" ]; then
		"$PY" "$ROOT/bench/gen_folded.py" --kind "$1" --stacks "$STACKS" --seed 1 >"$in.tmp" || die "cannot write '$in.tmp'"
		mv "$in.tmp" "$in" || die "cannot write '$in'"
	fi
	printf '%s\n' "$in"
}

# case_of KIND: the case's name.
case_of() {
	local what="shared prefixes"
	[ "$1" = random ] && what="random frames"
	echo "$((STACKS / 1000))k stacks, $what"
}

# draw TOOL IN OUT: TOOL's SVG of IN into OUT, its resource use into $W/run.ru.
# shellcheck disable=SC2016
draw() {
	case $1 in
	firn) timed "$W/run.ru" "$FIRN" report --svg -o "$3" "$2" ;;
	flamegraph.pl) timed "$W/run.ru" bash -c 'exec "$1" "$2" >"$0"' "$3" "$FGPL" "$2" ;;
	esac
}

# one_run TOOL KIND: one SVG drawn from KIND's input; emits its check and figures.
one_run() {
	local tool=$1 c in size svg
	c=$(case_of "$2")
	in=$(input "$2")
	size=$(stat -c %s "$in")
	svg=$W/$2.$tool.svg
	rm -f "$svg"
	draw "$tool" "$in" "$svg" >/dev/null 2>"$W/run.err"
	ru_read "$W/run.ru"
	if [ "$RU_RC" -ne 0 ] || ! grep -q '</svg>' "$svg" 2>/dev/null; then
		emit V "$B" "$c" "$tool" FAIL "exit $RU_RC; no complete SVG; $(tail -1 "$W/run.err")"
		return
	fi
	emit V "$B" "$c" "$tool" ok "SVG of $(stat -c %s "$svg") bytes from $size input bytes"
	emit S "$B" "$c" "$tool" "wall s" "$RU_WALL" s
	emit S "$B" "$c" "$tool" "CPU s" "$RU_CPU" s
	emit S "$B" "$c" "$tool" "peak RSS MB" "$RU_RSS_MB" MB
	emit S "$B" "$c" "$tool" "peak RSS / input" "$(awk -v r="$RU_RSS_MB" -v s="$size" 'BEGIN { printf "%.3f", r * 1048576 / s }')" "×"
}

emit H "$B" "Flame graph: folded stacks to SVG, $((STACKS / 1000))k distinct stacks"
for kind in shared random; do
	c=$(case_of "$kind")
	emit C "$B" "$c" firn "firn report --svg -o OUT IN"
	[ -n "$FGPL" ] && emit C "$B" "$c" flamegraph.pl "flamegraph.pl IN > OUT"
	emit T "$B" "$c" "wall s" max 0.5 "<= 0.5 s"
	emit T "$B" "$c" "peak RSS / input" max 2 "<= 2x the input"
done
emit N "$B" "IN = \$BENCH_DIR/fg-KIND-$STACKS.folded, written once by bench/gen_folded.py --kind KIND --stacks $STACKS --seed 1 (depth 10-40; shared: paths in a skewed call tree, random: frames drawn from a large pool). Runs: firn $REPS, flamegraph.pl (where found) $REPS_REF, interleaved; wall from a monotonic clock, CPU = user+sys, peak RSS = wait4's ru_maxrss."
if [ -n "$FGPL" ]; then
	emit N "$B" "flamegraph.pl: $FGPL (sha256 $(sha256sum "$FGPL" | cut -c1-12)), Brendan Gregg's FlameGraph script, with its defaults (1200 px wide, frames under 0.1 px left out, as firn's)."
else
	emit N "$B" "No flamegraph.pl reference: Debian 12 does not package it (nor inferno); FLAMEGRAPH_PL=/path/to/flamegraph.pl adds it beside firn."
fi

for ((rep = 1; rep <= REPS; rep++)); do
	for kind in shared random; do
		for t in "${TOOLS[@]}"; do
			[ "$t" != firn ] && [ "$rep" -gt "$REPS_REF" ] && continue
			say "flamegraph: rep $rep/$REPS, $kind, $t"
			one_run "$t" "$kind"
		done
	done
done
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
