#!/usr/bin/env bash
# BPF cost of JavaScript frames: the run time of firn's on_sample program per sample of node
# spinning about 30 JavaScript frames deep (tests/fixtures/js/split.js with DEPTH 30: 28 x
# firnDeep above firnAlpha/firnBeta and firnWork, under round and processImmediate), with
# JavaScript frames read from V8 (bpf/v8.bpf.h: each frame stepped by frame pointer is looked at,
# each JavaScript one checked through its JSFunction's and SFI's maps) and with --no-js (the
# native stack alone, frame pointers through V8's code); beside them, frame-pointer-only native
# stacks (the deep-fp fixture, 35 frames, --call-graph fp), as in bench/python.sh. Per sample as
# in bench/bpf.sh: (run_time_ns - (run_cnt - target samples) x early return) / target samples.
# Prints result lines (bench/bench_lib.sh).
source "$(dirname "$0")/bench_lib.sh"
need_tools
command -v node >/dev/null || die "no node installed"
bpf_stats_on
W=$(workdir v8)
B=v8
REPS=${REPS:-3}
SECONDS_ON=2
[ -n "$QUICK" ] && REPS=1 SECONDS_ON=1 SETTLE=0.5
NODEDEEP="node $ROOT/tests/fixtures/js/split.js 3600 30"
CASES=("node 20, 30 JavaScript frames" "node 20, 30 JavaScript frames, --no-js" "native, fp, 35 frames")

# case_cmd CASE: "FIXTURE-COMMAND|FIRN-OPTIONS".
case_cmd() {
	case $1 in
	*--no-js) echo "$NODEDEEP|--no-js" ;;
	node*) echo "$NODEDEEP|" ;;
	native*) echo "$DEEP_FP -t 2 -1|--call-graph fp" ;;
	idle) echo "sleep 3600|" ;;
	esac
}

# measure CASE: runs the case's fixture and `firn record -p` for SECONDS_ON; sets CNT NS TAKEN.
measure() {
	local fix opts
	IFS='|' read -r fix opts <<<"$(case_cmd "$1")"
	# shellcheck disable=SC2086
	(cd "$W" && exec $fix >/dev/null 2>&1) &
	local fx=$!
	sleep 1 # node past its start-up (its functions compiled, optimized)
	measure_attached "$fx" "$opts"
}

# depth_check: "N samples, P% with 28 firnDeep frames" from the last profile (JavaScript named).
depth_check() {
	"$FIRN" report --folded "$W/prof.pb.gz" 2>/dev/null | awk '
		{ n = $NF; t += n; if (gsub(/;firnDeep/, "") >= 28) ok += n }
		END { printf "%d samples, %.1f%% with 28 firnDeep frames", t, t ? 100 * ok / t : 0 }'
}

per_sample() {
	awk -v c="$CNT" -v n="$NS" -v t="$TAKEN" -v z="$1" 'BEGIN { printf "%.0f", (n - (c - t) * z) / t }'
}

emit H "$B" "BPF run time per sample with JavaScript frames (999 Hz)"
emit C "$B" "early return" firn "sleep 3600 & firn record -F 999 -p PID -o OUT"
for c in "${CASES[@]}"; do
	IFS='|' read -r fix opts <<<"$(case_cmd "$c")"
	emit C "$B" "$c" firn "$(show "$fix") & firn record -F 999${opts:+ $opts} -p PID -o OUT"
done
emit N "$B" "node 20 = nodesource's /usr/bin/node (V8 11.3) running tests/fixtures/js/split.js 3600 30: one thread about 33 JavaScript frames deep (28 x firnDeep, firnAlpha or firnBeta, firnWork, round, processImmediate) over node's C++ and libuv frames (DWARF-unwound; V8's own code by frame pointer in both rows). With JavaScript frames each frame-pointer step also reads the frame's marker and function slots (from the stack window) and, for a JavaScript frame, its JSFunction and SFI with their maps' instance types (6 reads of process memory; 2 more to tell baseline from optimized code) and looks its id up, once per function per sample (a per-sample cache: the 28 firnDeep frames cost one)."

declare -A PER
for ((rep = 1; rep <= REPS; rep++)); do
	say "v8: rep $rep/$REPS, early return"
	if measure idle; then
		C0=$((NS / CNT))
		emit S "$B" "early return" firn "ns/sample" "$C0" ns
	fi
	for c in "${CASES[@]}"; do
		say "v8: rep $rep/$REPS, $c"
		if ! measure "$c" || [ "$TAKEN" -le 0 ]; then
			emit V "$B" "$c" firn FAIL "no samples counted; $(tail -1 "$W/prof.err")"
			continue
		fi
		detail="$TAKEN of $CNT program runs were the fixture's samples"
		[[ $c == "node 20, 30 JavaScript frames" ]] && detail="$(depth_check); $detail"
		emit V "$B" "$c" firn ok "$detail"
		PER[$c]=$(per_sample "${C0:-0}")
		emit S "$B" "$c" firn "ns/sample" "${PER[$c]}" ns
	done
done
exit 0
