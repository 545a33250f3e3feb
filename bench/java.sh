#!/usr/bin/env bash
# BPF cost of Java frames: the run time of firn's on_sample program per sample of a JVM running
# tests/fixtures/JavaSplit.java (no JVM flags: its main thread in JavaSplit.firnOne or firnTwo,
# compiled, under JavaSplit.main, interpreted, and StubRoutines' call stub, over the launcher's
# and libjvm's DWARF-unwound frames), with Java frames read from HotSpot (bpf/hotspot.bpf.h: each
# frame in the CodeCache finds its CodeBlob through the segment map, reads its kind or name, its
# Method* and ConstMethod, and looks its id up; compiled frames stepped by frame size) and with
# --no-java (frame pointers through HotSpot's code). JDK: $JAVA_HOME, else OpenJDK 17. Per sample
# as in bench/bpf.sh: (run_time_ns - (run_cnt - target samples) x early return) / target samples.
# Prints result lines (bench/bench_lib.sh).
source "$(dirname "$0")/bench_lib.sh"
need_tools
JDK=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
[ -x "$JDK/bin/javac" ] || die "no JDK at $JDK (set JAVA_HOME)"
bpf_stats_on
W=$(workdir java)
B=java
REPS=${REPS:-3}
SECONDS_ON=2
[ -n "$QUICK" ] && REPS=1 SECONDS_ON=1 SETTLE=0.5
"$JDK/bin/javac" -d "$W" "$ROOT/tests/fixtures/JavaSplit.java" || die "javac failed"
JAVASPLIT="$JDK/bin/java -cp $W JavaSplit 3600"
CASES=("JavaSplit, Java frames" "JavaSplit, --no-java")

# case_cmd CASE: "FIXTURE-COMMAND|FIRN-OPTIONS".
case_cmd() {
	case $1 in
	*--no-java) echo "$JAVASPLIT|--no-java" ;;
	Java*) echo "$JAVASPLIT|" ;;
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
	sleep 2 # the JVM past its start-up (the hot methods compiled)
	measure_attached "$fx" "$opts"
}

# named: "N samples, P% in a named JavaSplit method" from the last profile.
named() {
	"$FIRN" report --folded "$W/prof.pb.gz" 2>/dev/null | awk '
		{ n = $NF; t += n; if ($0 ~ /JavaSplit\.firn/) ok += n }
		END { printf "%d samples, %.1f%% in a named JavaSplit method", t, t ? 100 * ok / t : 0 }'
}

per_sample() {
	awk -v c="$CNT" -v n="$NS" -v t="$TAKEN" -v z="$1" 'BEGIN { printf "%.0f", (n - (c - t) * z) / t }'
}

emit H "$B" "BPF run time per sample with Java frames (999 Hz)"
emit C "$B" "early return" firn "sleep 3600 & firn record -F 999 -p PID -o OUT"
for c in "${CASES[@]}"; do
	IFS='|' read -r fix opts <<<"$(case_cmd "$c")"
	emit C "$B" "$c" firn "$(show "$fix") & firn record -F 999${opts:+ $opts} -p PID -o OUT"
done
emit N "$B" "$("$JDK/bin/java" -version 2>&1 | head -1) running JavaSplit 3600: the main thread in a compiled method under interpreted main and the call stub (3 CodeCache frames), ~10 native frames under them. With Java frames each CodeCache frame costs the segment map's hops, the blob's used flag, size, frame size and name (or kind), its Method* and ConstMethod, and the id's lookup."

for ((rep = 1; rep <= REPS; rep++)); do
	say "java: rep $rep/$REPS, early return"
	if measure idle; then
		C0=$((NS / CNT))
		emit S "$B" "early return" firn "ns/sample" "$C0" ns
	fi
	for c in "${CASES[@]}"; do
		say "java: rep $rep/$REPS, $c"
		if ! measure "$c" || [ "$TAKEN" -le 0 ]; then
			emit V "$B" "$c" firn FAIL "no samples counted; $(tail -1 "$W/prof.err")"
			continue
		fi
		emit V "$B" "$c" firn ok "$(named); $TAKEN of $CNT program runs were the fixture's samples"
		emit S "$B" "$c" firn "ns/sample" "$(per_sample "${C0:-0}")" ns
	done
done
exit 0
