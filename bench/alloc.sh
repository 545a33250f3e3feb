#!/usr/bin/env bash
# Allocation profiling cost (-e alloc, issue 47): a malloc-heavy workload — bench/allocloop.c,
# ROUNDS rounds of malloc+write+free (16..1040 bytes) with a calloc/realloc/free cycle every 8,
# timed around its loop — run bare, with libfirn-alloc.so preloaded and no tracer (the
# library's own cost per call), under firn record -e alloc at the default rate (512 KiB) and at
# --alloc-rate 4096, under heaptrack (Debian's 1.4: every call written out), and with empty
# uprobes on libc's malloc, calloc, realloc and free (bpftrace: the floor of a uprobe-per-call
# design, bcc's memleak, which cannot be built here; a hundredth of the rounds: a trap a call). Reports the loop's time, its ns per round
# and the slowdown against the bare run of the same repetition; a note derives the cost at
# 100 MB/s of allocation. Prints result lines (see bench/bench_lib.sh). REPS (default 3),
# QUICK=1: 1 rep of fewer rounds. Needs root, heaptrack and bpftrace (make deps-bench).
source "$(dirname "$0")/bench_lib.sh"
[ "$(id -u)" -eq 0 ] || die "needs root (BPF)"
[ -x "$FIRN" ] || die "no firn binary at '$FIRN' (make)"
W=$(workdir alloc)
B=alloc
REPS=${REPS:-3}
ROUNDS=${ROUNDS:-20000000}
[ -n "$QUICK" ] && REPS=1 ROUNDS=2000000
LOOP=$ROOT/$BUILD/bench/allocloop
LIB=$ROOT/$BUILD/libfirn-alloc.so
LIBC=$(ldd /bin/true | awk '/libc.so/ { print $3 }')
CASES=(none preload "firn -e alloc" "firn -e alloc --alloc-rate 4096" heaptrack uprobes)
UPROBES="uprobe:$LIBC:malloc {} uprobe:$LIBC:calloc {} uprobe:$LIBC:realloc {} uprobe:$LIBC:free {}"

# build_loop: the workload (gcc -O2, frame pointers: the sampled stacks walk into it).
build_loop() {
	local src=$ROOT/bench/allocloop.c
	[ -x "$LOOP" ] && [ "$LOOP" -nt "$src" ] && return 0
	mkdir -p "$(dirname "$LOOP")"
	gcc -O2 -g -fno-omit-frame-pointer -o "$LOOP" "$src" || die "cannot build '$LOOP'"
}

# field FILE NAME: a field of allocloop's result line.
field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1" | tail -1; }

# command_of CASE: the command line of a case (the workload last).
command_of() {
	case $1 in
	none) echo "$LOOP $ROUNDS" ;;
	preload) echo "env LD_PRELOAD=$LIB $LOOP $ROUNDS" ;;
	firn*) echo "$FIRN record ${1#firn } -o $W/out.pb.gz -- $LOOP $ROUNDS" ;;
	heaptrack) echo "heaptrack -o $W/heaptrack $LOOP $ROUNDS" ;;
	uprobes) echo "bpftrace -e '$UPROBES' -c '$LOOP $((ROUNDS / 100))'" ;;
	esac
}

# run_case CASE: one run; sets NS (ns per round; empty on failure) and emits its measurements.
run_case() {
	local c=$1 tool=${1%% *}
	NS=
	case $c in
	uprobes) bpftrace -e "$UPROBES" -c "$LOOP $((ROUNDS / 100))" >"$W/out" 2>"$W/err" ;;
	*) eval "$(command_of "$c")" >"$W/out" 2>"$W/err" ;;
	esac
	NS=$(field "$W/out" ns_per_round)
	[ -z "$NS" ] && NS=$(field "$W/err" ns_per_round)
	if [ -z "$NS" ]; then
		emit V "$B" "$c" "$tool" FAIL "no result line; $(tail -1 "$W/err")"
		return
	fi
	[ "$tool" = firn ] && emit V "$B" "$c" firn ok "$(grep -h 'alloc:' "$W/err" | sed 's/^firn: //' | tr '\n' ' ')"
	emit S "$B" "$c" "$tool" "ns/round" "$NS" ns
	emit S "$B" "$c" "$tool" "loop s" "$(field "$W/out" elapsed_s)$(field "$W/err" elapsed_s)" s
}

command -v heaptrack >/dev/null || die "needs heaptrack (make deps-bench)"
command -v bpftrace >/dev/null || die "needs bpftrace"
[ -f "$LIB" ] || die "no '$LIB' (make)"
build_loop
emit H "$B" "Allocation profiling: cost on a malloc-heavy workload (libfirn-alloc.so, heaptrack, uprobes)"
for c in "${CASES[@]}"; do emit C "$B" "$c" "$c" "$(command_of "$c")"; done
for ((rep = 1; rep <= REPS; rep++)); do
	declare -A got=()
	for c in "${CASES[@]}"; do
		say "alloc: rep $rep: $c"
		run_case "$c"
		got[$c]=$NS
	done
	for c in "${CASES[@]:1}"; do
		[ -n "${got[none]}" ] && [ -n "${got[$c]}" ] &&
			emit S "$B" "$c" "${c%% *}" "slowdown x" "$(awk -v a="${got[$c]}" -v b="${got[none]}" 'BEGIN { printf "%.3f", a / b }')" x
	done
done
emit N "$B" "allocloop ($BUILD/bench/allocloop, bench/allocloop.c) makes 2.375 calls of the malloc family per round (malloc+free, and calloc+realloc+free every 8th) of 440 bytes on average per allocation; 'ns/round' is its own loop's time per round (the tool's start-up and end are not in it), ('uprobes' runs a hundredth of the rounds: a trap a call), 'slowdown x' pairs each run with the bare run of the same repetition. At full speed the loop allocates several GB/s: the cost at 100 MB/s of allocation is (ns/round − bare) × the rounds of 100 MB (100e6 / 550 bytes per round ≈ 182,000 a second)."
