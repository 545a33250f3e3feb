#!/usr/bin/env bash
# BPF cost bench: the run time of firn's on_sample program per sample (kernel.bpf_stats_enabled,
# run_time_ns / run_cnt) on 35-frame user stacks — the deep fixtures, two threads, recorded with
# `firn record -F 999 -p PID` — with frame pointers and with DWARF, with and without kernel stacks,
# beside bpftrace taking the same stacks with the kernel's helpers (the floor on this machine).
# firn's events are per CPU, so its program also runs, and returns early, for every sample of
# another process; a run on an idle process measures that early return (c0), and the cost per
# fixture sample is (run_time_ns - (run_cnt - fixture samples) * c0) / fixture samples, where the
# fixture samples are read from firn's own counter at the same moment. bpftrace likewise. Then
# a system-wide `firn record -a` over the same fixtures: the mean run time over all program runs.
# Targets (issue 18), all against figures of the same run: FP no slower than bpftrace, DWARF
# <= 1.2x bpftrace's (bpftrace can only take the frame-pointer fixture's stacks), the system-wide
# mean <= 1.5x the targeted case's.
# Prints result lines (see bench/bench_lib.sh). REPS (default 3); QUICK=1: 1 rep, fewer cases.
source "$(dirname "$0")/bench_lib.sh"
need_tools
bpf_stats_on
W=$(workdir bpf)
B=bpf
REPS=${REPS:-3}
SECONDS_ON=1
CASES=("fp, 35 frames" "fp, 35 frames, --no-kernel" "dwarf, 35 frames" "dwarf, 35 frames, --no-kernel")
HAVE_BT=$(command -v bpftrace || true)
SYSTEM=(fp dwarf)
if [ -n "$QUICK" ]; then
	REPS=1 SECONDS_ON=1 SETTLE=0.5
	CASES=("fp, 35 frames" "dwarf, 35 frames")
fi
BT_STACKS='profile:hz:999 /comm == "COMM"/ { @[ustack(perf, 127), kstack(perf, 127)] = count(); }'
BT_USTACK='profile:hz:999 /comm == "COMM"/ { @[ustack(perf, 127)] = count(); }'

# fixture_cmd COMM: the fixture's command line: two threads, forever (sleep for "idle").
fixture_cmd() {
	case $1 in
	deep) echo "$DEEP -t 2 -1" ;;
	deep-fp) echo "$DEEP_FP -t 2 -1" ;;
	idle) echo "sleep 3600" ;;
	esac
}

# case_args CASE: "COMM CALL_GRAPH [--no-kernel]" for a firn case.
case_args() {
	local comm=deep-fp cg=fp nk=
	[[ $1 == dwarf* ]] && comm=deep cg=dwarf
	[[ $1 == *--no-kernel ]] && nk=--no-kernel
	echo "$comm $cg $nk"
}

# wait_progs PID: until PID holds a BPF program (bpftrace), then SETTLE seconds.
wait_progs() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -n "$(bpf_fd_ids "$1" prog)" ] && break
		sleep 0.05
	done
	sleep "$SETTLE"
}

# measure TOOL COMM CMD...: runs the fixture COMM and the profiler CMD ("PID" in it becomes the
# fixture's pid) for SECONDS_ON; sets CNT NS (program statistics) and TAKEN (fixture samples at the
# same moment for firn, at the end for bpftrace); leaves the profiler's output in $W/prof.*.
measure() {
	local tool=$1 comm=$2
	shift 2
	# shellcheck disable=SC2046,SC2091
	$(fixture_cmd "$comm") >/dev/null 2>&1 &
	local fx=$!
	CNT=0 NS=0 TAKEN=0
	bpf_stats_on
	bg_start prof "$W" "${@//PID/$fx}" || { kill "$fx"; wait "$fx" 2>/dev/null; return 1; }
	if [ "$tool" = firn ]; then bg_ready prof; else wait_progs "${BG_PID[prof]}"; fi
	sleep "$SECONDS_ON"
	if [ "$tool" = firn ]; then
		# firn's own counter of the target's samples, read with the program's statistics
		firn_snapshot "${BG_PID[prof]}"
		bg_stop prof
		kill "$fx"
		wait "$fx" 2>/dev/null
	else
		# the fixture ends first, so bpftrace's final counts match the statistics read after
		kill "$fx"
		wait "$fx" 2>/dev/null
		read -r CNT NS < <(bpf_prog_stats "${BG_PID[prof]}" "")
		bg_stop prof again
		TAKEN=$(awk '/\]: [0-9]+$/ { n += $NF } END { print n + 0 }' "$W/prof.out")
	fi
	# fewer runs than samples: the statistics were switched off meanwhile (by another job)
	[ "${CNT:-0}" -gt 0 ] && [ "$CNT" -ge "$TAKEN" ]
}

# per_sample: the cost per fixture sample from CNT NS TAKEN and the early-return cost C0.
per_sample() {
	awk -v c="$CNT" -v n="$NS" -v t="$TAKEN" -v z="$1" 'BEGIN { printf "%.0f", (n - (c - t) * z) / t }'
}

# firn_c0: firn's early return (samples of a process it does not record): sets C0_FIRN.
firn_c0() {
	measure firn idle "$FIRN" record -F 999 -q -p PID -o "$W/prof.pb.gz" || {
		emit V "$B" "early return" firn FAIL "no program runs counted (kernel.bpf_stats_enabled turned off meanwhile?)"
		return
	}
	C0_FIRN=$((NS / CNT))
	emit V "$B" "early return" firn ok "$CNT runs, $TAKEN of them samples of the idle target"
	emit S "$B" "early return" firn "ns/sample" "$C0_FIRN" ns
}

# firn_case CASE: one firn measurement of a case.
firn_case() {
	local comm cg nk detail
	read -r comm cg nk <<<"$(case_args "$1")"
	# shellcheck disable=SC2086
	if ! measure firn "$comm" "$FIRN" record -F 999 --call-graph "$cg" $nk -q -p PID -o "$W/prof.pb.gz"; then
		emit V "$B" "$1" firn FAIL "no program runs counted; $(tail -1 "$W/prof.err")"
		return
	fi
	if ! detail=$(firn_chain_check "$W/prof.pb.gz" "$comm") || [ "$RU_RC" -ne 0 ] || [ "$TAKEN" -le 0 ]; then
		emit V "$B" "$1" firn FAIL "exit $RU_RC; $detail; $(tail -1 "$W/prof.err")"
		return
	fi
	emit V "$B" "$1" firn ok "$detail; $TAKEN of $CNT program runs were the fixture's samples (raw mean $((NS / CNT)) ns/run)"
	emit S "$B" "$1" firn "ns/sample" "$(per_sample "${C0_FIRN:-0}")" ns
}

# bpftrace_cases: the floor: bpftrace's early return, then the same stacks taken by bpftrace.
bpftrace_cases() {
	if measure bpftrace idle bpftrace -e "${BT_STACKS//COMM/no-such-comm}"; then
		C0_BT=$((NS / CNT))
		emit V "$B" "early return" bpftrace ok "$CNT runs"
		emit S "$B" "early return" bpftrace "ns/sample" "$C0_BT" ns
	fi
	bpftrace_case "fp, 35 frames" "$BT_STACKS"
	[ -n "$QUICK" ] || bpftrace_case "fp, 35 frames, --no-kernel" "$BT_USTACK"
}

# bpftrace_case CASE PROGRAM: bpftrace taking the deep-fp fixture's stacks with PROGRAM.
bpftrace_case() {
	if measure bpftrace deep-fp bpftrace -e "${2//COMM/deep-fp}" && [ "$TAKEN" -gt 0 ]; then
		emit V "$B" "$1" bpftrace ok "$TAKEN of $CNT program runs were the fixture's samples (raw mean $((NS / CNT)) ns/run)"
		emit S "$B" "$1" bpftrace "ns/sample" "$(per_sample "${C0_BT:-0}")" ns
	else
		emit V "$B" "$1" bpftrace FAIL "no samples counted; $(tail -1 "$W/prof.err")"
	fi
}

# system_case CG: firn record -a over the fixture of CG's targeted case: the mean run time of
# on_sample over every program run of SECONDS_ON s (read after start-up, twice).
system_case() {
	local cg=$1 c="system-wide -a, $1" comm=deep-fp fx c0 n0 c1 n1 t0 t1 detail
	[ "$cg" = dwarf ] && comm=deep
	# shellcheck disable=SC2046,SC2091
	$(fixture_cmd "$comm") >/dev/null 2>&1 &
	fx=$!
	bpf_stats_on
	if bg_start prof "$W" "$FIRN" record -a -F 999 --call-graph "$cg" -q -o "$W/prof.pb.gz" && bg_ready prof; then
		read -r c0 n0 < <(bpf_prog_stats "${BG_PID[prof]}" on_sample)
		t0=$EPOCHREALTIME
		sleep "$SECONDS_ON"
		read -r c1 n1 < <(bpf_prog_stats "${BG_PID[prof]}" on_sample)
		t1=$EPOCHREALTIME
	fi
	bg_stop prof
	kill "$fx"
	wait "$fx" 2>/dev/null
	if ! detail=$(firn_chain_check "$W/prof.pb.gz" "$comm") || [ "$RU_RC" -ne 0 ] || [ "$((${c1:-0} - ${c0:-0}))" -le 0 ]; then
		emit V "$B" "$c" firn FAIL "exit $RU_RC; $detail; runs counted: $((${c1:-0} - ${c0:-0})); $(tail -1 "$W/prof.err")"
		return
	fi
	emit V "$B" "$c" firn ok "$detail; $((c1 - c0)) program runs between the two reads ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s apart)"
	emit S "$B" "$c" firn "ns/sample" "$(((n1 - n0) / (c1 - c0)))" ns
}

emit H "$B" "BPF run time per sample: 999 Hz, the deep fixtures in two threads"
emit C "$B" "early return" firn "sleep 3600 & firn record -F 999 -p PID -o OUT"
for case in "${CASES[@]}"; do
	read -r comm cg nk <<<"$(case_args "$case")"
	emit C "$B" "$case" firn "$(show "$(fixture_cmd "$comm")") & firn record -F 999 --call-graph $cg${nk:+ $nk} -p PID -o OUT"
	[ -n "$nk" ] && continue
	if [ "$cg" = fp ]; then
		emit T "$B" "$case" "ns/sample" times "1 bpftrace" "no slower than bpftrace's"
	else
		emit T "$B" "$case" "ns/sample" times "1.2 bpftrace" "<= 1.2x bpftrace's (fp, 35 frames)" "fp, 35 frames"
	fi
done
for cg in "${SYSTEM[@]}"; do
	comm=deep-fp
	[ "$cg" = dwarf ] && comm=deep
	emit C "$B" "system-wide -a, $cg" firn "$(show "$(fixture_cmd "$comm")") & firn record -a -F 999 --call-graph $cg -o OUT"
	emit T "$B" "system-wide -a, $cg" "ns/sample" times "1.5 firn" "<= 1.5x firn's '$cg, 35 frames'" "$cg, 35 frames"
done
if [ -n "$HAVE_BT" ]; then
	emit C "$B" "early return" bpftrace "sleep 3600 & bpftrace -e '${BT_STACKS//COMM/no-such-comm}'"
	emit C "$B" "fp, 35 frames" bpftrace "$(show "$(fixture_cmd deep-fp)") & bpftrace -e '${BT_STACKS//COMM/deep-fp}'"
	emit C "$B" "fp, 35 frames, --no-kernel" bpftrace "$(show "$(fixture_cmd deep-fp)") & bpftrace -e '${BT_USTACK//COMM/deep-fp}'"
else
	emit N "$B" "bpftrace is not installed: no reference rows (apt-get install bpftrace)."
fi
emit N "$B" "Each run samples ${SECONDS_ON} s after start-up; statistics come from kernel.bpf_stats_enabled=1 (set for the bench, restored after). ns/sample = (run_time_ns - (run_cnt - fixture samples) x early-return cost) / fixture samples: the program also runs for every sample of other processes on this shared machine, and returns early for them ('early return' row, measured on a sleeping target). deep-fp = tests/fixtures/deep.c built by clang -O2 -fno-omit-frame-pointer; deep = gcc -O2 without frame pointers; both 34 user frames + the kernel's."
emit N "$B" "system-wide -a: firn record -a over the same fixture as the targeted case of that --call-graph mode; ns/sample there is the mean run time over every program run (every CPU, every process: the fixture, idle CPUs, the machine's other jobs) between two reads of the statistics about ${SECONDS_ON} s apart after start-up, with no early-return correction."
emit N "$B" "The bpftrace rows take the same stacks (user and kernel, or user only) with bpf_get_stackid under the same comm filter: what the kernel's stack helpers cost on this machine, a floor under any BPF profiler that takes these stacks here; its early return is a filtered-out run of that program."

for ((rep = 1; rep <= REPS; rep++)); do
	say "bpf: rep $rep/$REPS, early return"
	firn_c0
	for case in "${CASES[@]}"; do
		say "bpf: rep $rep/$REPS, $case"
		firn_case "$case"
	done
	if [ -n "$HAVE_BT" ]; then
		say "bpf: rep $rep/$REPS, bpftrace"
		bpftrace_cases
	fi
	for cg in "${SYSTEM[@]}"; do
		say "bpf: rep $rep/$REPS, system-wide, $cg"
		system_case "$cg"
	done
done
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
