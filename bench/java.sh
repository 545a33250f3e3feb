#!/usr/bin/env bash
# BPF cost of Java frames: the run time of firn's on_sample program per sample of a JVM running
# tests/fixtures/JavaSplit.java (no JVM flags: its main thread in JavaSplit.firnOne or firnTwo,
# compiled, under JavaSplit.main, interpreted, and StubRoutines' call stub, over the launcher's
# and libjvm's DWARF-unwound frames), with Java frames read from HotSpot (bpf/hotspot.bpf.h: each
# frame in the CodeCache finds its CodeBlob through the segment map, reads its kind or name, its
# Method* and ConstMethod, and looks its id up; compiled frames stepped by frame size) and with
# --no-java (frame pointers through HotSpot's code). JDK: $JAVA_HOME, else OpenJDK 17. Per sample
# as in bench/bpf.sh: (run_time_ns - (run_cnt - target samples) x early return) / target samples.
# Then, against JDK Flight Recorder (bench java-jfr; PARTS="cost jfr" by default): on each JDK of
# $JDKS (OpenJDK 17 and Temurin 25 where installed; a JDK without jfr is left out, saying so),
# one JVM running JavaSplit and one running JitFix for $JFR_SECONDS (20) with JFR sampling Java
# every 1 ms (tests/fixtures/jfr-1ms.jfc), recorded by firn at 999 Hz: the self shares of JFR's
# top 10 methods in both, |firn - JFR| in pp against the issue's 3 pp, 3 standard errors of the
# difference and the ratio firn/JFR (bench/jfr_compare.py).
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

PARTS=${PARTS:-cost jfr}
JDKS=${JDKS:-/usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-25-jdk-amd64}
JFR_SECONDS=${JFR_SECONDS:-20}
[ -n "$QUICK" ] && JFR_SECONDS=5

# jfr_case JDK CLASS: CLASS's JVM on JDK recorded by firn and by JFR at once, compared.
jfr_case() {
	local jdk=$1 cls=$2 name out
	name=$(basename "$jdk")
	out=$W/jfr-$name-$cls
	mkdir -p "$out" && "$jdk/bin/javac" -d "$out" "$ROOT/tests/fixtures/$cls.java" || return 1
	emit C "$B-jfr" "$name, $cls" firn "firn record -F 999 -o OUT -- $jdk/bin/java -XX:StartFlightRecording:filename=R.jfr,settings=tests/fixtures/jfr-1ms.jfc -cp DIR $cls $JFR_SECONDS; jfr print --events jdk.ExecutionSample R.jfr"
	say "java: $name, $cls against JFR ($JFR_SECONDS s)"
	"$FIRN" record -F 999 -o "$out/firn.pb.gz" -- "$jdk/bin/java" \
		"-XX:StartFlightRecording:filename=$out/r.jfr,settings=$ROOT/tests/fixtures/jfr-1ms.jfc" \
		-cp "$out" "$cls" "$JFR_SECONDS" >/dev/null 2>"$out/firn.err" || return 1
	"$jdk/bin/jfr" print --events jdk.ExecutionSample "$out/r.jfr" >"$out/jfr.txt" &&
		"$PY" "$ROOT/tests/fixtures/pprof_stacks.py" "$out/firn.pb.gz" >"$out/firn.txt" &&
		"$PY" "$ROOT/bench/jfr_compare.py" "$B-jfr" "$name, $cls" "$out/firn.txt" "$out/jfr.txt"
}

if [[ " $PARTS " == *" jfr "* ]]; then
	emit H "$B-jfr" "Java methods' self shares against JDK Flight Recorder (1 ms) on the same JVM"
	emit N "$B-jfr" "One JVM sampled by both: JFR's jdk.ExecutionSample every 1 ms (tests/fixtures/jfr-1ms.jfc; JFR's default is 20 ms), firn at 999 Hz. A method's self share: its samples as the innermost Java frame over the samples of JFR's top 10 methods (>= 1 % of JFR's samples). 3 se: three standard errors of the difference of the two shares. JFR samples threads in Java code whether on CPU or not; firn samples on CPU."
	for jdk in $JDKS; do
		if [ ! -x "$jdk/bin/jfr" ] || [ ! -x "$jdk/bin/javac" ]; then
			say "java: $jdk has no jfr or javac: not compared"
			continue
		fi
		for cls in JavaSplit JitFix; do
			jfr_case "$jdk" "$cls" || emit V "$B-jfr" "$(basename "$jdk"), $cls" firn FAIL "the run failed"
		done
	done
fi
[[ " $PARTS " == *" cost "* ]] || exit 0

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
