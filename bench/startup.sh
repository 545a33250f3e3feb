#!/usr/bin/env bash
# Start-up bench: the wall time (and CPU seconds) of recording `true`: firn record -- true against
# perf record -g -- true and perf record --call-graph dwarf -- true, interleaved, each output
# checked (it must read back). Target (issue 18): firn <= 0.06 s wall.
# Prints result lines (see bench/bench_lib.sh). REPS_STARTUP (default 10); QUICK=1: 2.
source "$(dirname "$0")/bench_lib.sh"
need_tools
W=$(workdir startup)
B=startup
REPS=${REPS_STARTUP:-10}
[ -n "$QUICK" ] && REPS=2
CASE="record -- true"
TOOLS=(firn "perf -g" "perf dwarf")

# cmd_of TOOL OUT: the command line.
cmd_of() {
	case $1 in
	firn) echo "$FIRN record -q -o $2 -- true" ;;
	"perf -g") echo "$PERF record -g -q -o $2 -- true" ;;
	"perf dwarf") echo "$PERF record --call-graph dwarf -q -o $2 -- true" ;;
	esac
}

# valid TOOL OUT: the output reads back.
valid() {
	if [ "$1" = firn ]; then
		"$FIRN" report "$2" >/dev/null 2>&1
	else
		"$PERF" report --header-only -i "$2" 2>/dev/null | grep -q 'cmdline.*true'
	fi
}

emit H "$B" "Start-up: recording \`true\`, wall time"
for t in "${TOOLS[@]}"; do
	emit C "$B" "$CASE" "$t" "$(show "$(cmd_of "$t" OUT)")"
done
emit T "$B" "$CASE" "wall s" max 0.06 "<= 0.06 s"
emit N "$B" "$REPS runs of each, interleaved (firn, perf -g, perf dwarf, firn, ...), wall time from a monotonic clock around the whole command, CPU = user+sys of the profiler and \`true\`."

for ((rep = 1; rep <= REPS; rep++)); do
	say "startup: rep $rep/$REPS"
	for t in "${TOOLS[@]}"; do
		out=$W/out.${t// /-}
		rm -f "$out" "$out.old"
		# shellcheck disable=SC2046
		timed "$W/run.ru" $(cmd_of "$t" "$out") >/dev/null 2>"$W/run.err"
		ru_read "$W/run.ru"
		if [ "$RU_RC" -ne 0 ] || ! valid "$t" "$out"; then
			emit V "$B" "$CASE" "$t" FAIL "exit $RU_RC; output does not read back; $(tail -1 "$W/run.err")"
			continue
		fi
		emit V "$B" "$CASE" "$t" ok "exit 0, output reads back"
		emit S "$B" "$CASE" "$t" "wall s" "$RU_WALL" s
		emit S "$B" "$CASE" "$t" "CPU s" "$RU_CPU" s
	done
done
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
