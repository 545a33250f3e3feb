#!/usr/bin/env bash
# The kernel verifier's cost of each program of bpf/profile.bpf.c, loaded alone as a recording
# loads it (bench/verifier_stats.c): its verification time (median of REPS loads, usec), verified
# instructions and states, with DWARF and with frame pointers, every walker on. OLD=BINARY: a
# verifier_stats built from another tree, run alternated with this one's (issue 51's before and
# after). Needs root. Usage: [REPS=5] [OLD=...] BUILD=build bash bench/verifier.sh
set -euo pipefail
BUILD=${BUILD:-build}
REPS=${REPS:-5}
PROGS=${PROGS:-"on_sample on_sample_python on_sample_go on_sample_stub on_usdt start_waits start_wait_exit on_toy"}
NEW=$BUILD/bench/verifier_stats
mkdir -p "$BUILD/bench"
cc -O2 -I"$BUILD" -Ilib -o "$NEW" bench/verifier_stats.c -lbpf -lelf -lz

# one BINARY PROG UNWIND: "usec insns states" of one load
one() {
	"$1" "$2" "$3" 0xffffffff 1 |
		sed -E 's/.*verification time ([0-9]+) usec.*processed ([0-9]+) insns.*total_states ([0-9]+).*/\1 \2 \3/'
}

# median of the numbers on stdin
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# row FILE: the median time of the loads in FILE, and the last one's instructions and states
row() { echo "$(cut -d' ' -f1 "$1" | median) $(tail -1 "$1" | cut -d' ' -f2-)"; }

printf '%-18s %-5s %s\n' program unwind "${OLD:+old: usec insns states | }new: usec insns states"
for p in $PROGS; do
	for u in dwarf fp; do
		: >"$BUILD/bench/v.new"
		: >"$BUILD/bench/v.old"
		for _ in $(seq "$REPS"); do
			[ -n "${OLD:-}" ] && one "$OLD" "$p" "$u" >>"$BUILD/bench/v.old"
			one "$NEW" "$p" "$u" >>"$BUILD/bench/v.new"
		done
		printf '%-18s %-5s %s\n' "$p" "$u" "${OLD:+$(row "$BUILD/bench/v.old") | }$(row "$BUILD/bench/v.new")"
	done
done
